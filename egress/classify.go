package egress

import (
	"net/netip"
	"strconv"
	"strings"
)

// class is the verdict on one destination address or name.
type class int

const (
	classPublic   class = iota // reachable by anyone
	classPrivate               // internal network; allowed by AllowPrivate
	classMetadata              // cloud metadata; allowed only by AllowedHosts
)

// privatePrefixes are the address ranges refused by default. Ranges beyond
// the usual private blocks (0/8, 192.0.0/24, 198.18/15, 240/4) are reserved
// and never host a public API, so refusing them costs nothing.
var privatePrefixes = mustPrefixes(
	// IPv4
	"0.0.0.0/8",      // "this network", includes the unspecified 0.0.0.0
	"10.0.0.0/8",     // private
	"100.64.0.0/10",  // carrier-grade NAT
	"127.0.0.0/8",    // loopback
	"169.254.0.0/16", // link-local, cloud metadata
	"172.16.0.0/12",  // private
	"192.0.0.0/24",   // IETF protocol assignments
	"192.168.0.0/16", // private
	"198.18.0.0/15",  // benchmarking
	"224.0.0.0/4",    // multicast
	"240.0.0.0/4",    // reserved, includes broadcast 255.255.255.255
	// IPv6
	"::/96",          // unspecified, loopback and IPv4-compatible forms
	"64:ff9b:1::/48", // local-use NAT64
	"fc00::/7",       // unique local
	"fe80::/10",      // link-local
	"fec0::/10",      // deprecated site-local
	"ff00::/8",       // multicast
)

// IPv6 forms that carry an IPv4 address, which decides: NAT64 and
// IPv4-translated (SIIT) addresses in their last 32 bits, 6to4 in bits
// 16-47, Teredo its client's address inverted in the last 32 bits.
var (
	nat64Prefix      = netip.MustParsePrefix("64:ff9b::/96")
	translatedPrefix = netip.MustParsePrefix("::ffff:0:0:0/96")
	sixToFourPrefix  = netip.MustParsePrefix("2002::/16")
	teredoPrefix     = netip.MustParsePrefix("2001::/32")
)

// metadataAddrs are the cloud instance metadata endpoints: AWS, GCP and
// Azure (IPv4 and AWS IPv6), AWS ECS task metadata and EKS Pod Identity
// (IPv4 and IPv6), Azure's WireServer, Alibaba Cloud and Oracle Cloud.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true,
	netip.MustParseAddr("fd00:ec2::254"):   true,
	netip.MustParseAddr("169.254.170.2"):   true,
	netip.MustParseAddr("169.254.170.23"):  true,
	netip.MustParseAddr("fd00:ec2::23"):    true,
	netip.MustParseAddr("168.63.129.16"):   true,
	netip.MustParseAddr("100.100.100.200"): true,
	netip.MustParseAddr("192.0.0.192"):     true,
}

// embeddedIPv4 returns the IPv4 address an IPv6 address carries in one of
// the forms above, or addr itself.
func embeddedIPv4(addr netip.Addr) netip.Addr {
	b := addr.As16()
	switch {
	case nat64Prefix.Contains(addr), translatedPrefix.Contains(addr):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case sixToFourPrefix.Contains(addr):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	case teredoPrefix.Contains(addr):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
	}
	return addr
}

// metadataNames are the documented host names of metadata endpoints.
var metadataNames = map[string]bool{
	"metadata.google.internal": true,
	"metadata.goog":            true,
}

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// classifyAddr returns the class of addr. IPv4-mapped, NAT64,
// IPv4-translated, 6to4 and Teredo forms are judged by the IPv4 address they
// carry, and a zone is ignored.
func classifyAddr(addr netip.Addr) class {
	if !addr.IsValid() {
		return classPrivate
	}
	addr = addr.WithZone("")
	if addr.Is4In6() {
		addr = addr.Unmap()
	}
	if addr.Is6() {
		addr = embeddedIPv4(addr)
	}
	if metadataAddrs[addr] {
		return classMetadata
	}
	for _, p := range privatePrefixes {
		if p.Contains(addr) {
			return classPrivate
		}
	}
	return classPublic
}

// classifyName returns the class a host name has before resolution:
// localhost names (RFC 6761) are private, metadata names are metadata.
func classifyName(name string) class {
	name = normalizeName(name)
	switch {
	case metadataNames[name]:
		return classMetadata
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		return classPrivate
	}
	return classPublic
}

// normalizeName lower-cases a host name and strips a trailing dot and IPv6
// brackets.
func normalizeName(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	name = strings.TrimSuffix(name, ".")
	name = strings.TrimPrefix(name, "[")
	return strings.TrimSuffix(name, "]")
}

// allowList is one parsed snapshot of Config.AllowedHosts. Each entry
// allows one port, or every port when its port is 0.
type allowList struct {
	names    map[string][]uint16
	suffixes []allowedSuffix
	prefixes []allowedPrefix
}

type allowedSuffix struct {
	suffix string // from "*.example.com", stored as ".example.com"
	port   uint16
}

type allowedPrefix struct {
	prefix netip.Prefix
	port   uint16
}

// portAllowed reports whether an entry for port allowed lets port through.
func portAllowed(allowed, port uint16) bool { return allowed == 0 || allowed == port }

// parseAllowList parses host names, "*.suffix" wildcards, IP addresses and
// CIDR prefixes. An entry written host:port allows that port only, and one
// written as a URL the URL's port (80 or 443 when it names none, by its
// scheme); a bare host, address or prefix allows every port. Entries that
// parse as nothing are ignored.
func parseAllowList(entries []string) allowList {
	var l allowList
	for _, e := range entries {
		e = strings.TrimSpace(e)
		var port uint16
		if i := strings.Index(e, "://"); i >= 0 {
			switch strings.ToLower(e[:i]) {
			case "http":
				port = 80
			case "https":
				port = 443
			default:
				continue // saving refuses other schemes: no guess at a port
			}
			e = e[i+3:]
			if j := strings.IndexAny(e, "/?#"); j >= 0 {
				e = e[:j]
			}
		} else if j := strings.IndexAny(e, "/?#"); j >= 0 {
			if _, err := netip.ParsePrefix(e); err != nil {
				e = e[:j] // host[:port]/path without a scheme
			}
		}
		if e == "" {
			continue
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			l.prefixes = append(l.prefixes, allowedPrefix{p.Masked(), port})
			continue
		}
		if a, ok := parseAddr(e); ok {
			l.prefixes = append(l.prefixes, allowedPrefix{netip.PrefixFrom(a, a.BitLen()), port})
			continue
		}
		if ap, err := netip.ParseAddrPort(e); err == nil {
			if ap.Port() == 0 {
				continue
			}
			a := ap.Addr().WithZone("").Unmap()
			l.prefixes = append(l.prefixes, allowedPrefix{netip.PrefixFrom(a, a.BitLen()), ap.Port()})
			continue
		}
		if i := strings.LastIndexByte(e, ':'); i >= 0 && !strings.Contains(e[:i], ":") {
			p, err := strconv.ParseUint(e[i+1:], 10, 16)
			if err != nil || p == 0 {
				continue
			}
			e, port = e[:i], uint16(p) // name:port
		}
		name := normalizeName(e)
		if rest, ok := strings.CutPrefix(name, "*."); ok {
			l.suffixes = append(l.suffixes, allowedSuffix{"." + rest, port})
			continue
		}
		if name != "" {
			if l.names == nil {
				l.names = make(map[string][]uint16)
			}
			l.names[name] = append(l.names[name], port)
		}
	}
	return l
}

// parseAddr parses an IP literal, with or without brackets or zone, and
// unmaps IPv4-mapped addresses.
func parseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

func (l allowList) allowsName(name string, port uint16) bool {
	name = normalizeName(name)
	for _, p := range l.names[name] {
		if portAllowed(p, port) {
			return true
		}
	}
	for _, s := range l.suffixes {
		if strings.HasSuffix(name, s.suffix) && portAllowed(s.port, port) {
			return true
		}
	}
	return false
}

func (l allowList) allowsAddr(addr netip.Addr, port uint16) bool {
	addr = addr.WithZone("").Unmap()
	for _, p := range l.prefixes {
		if p.prefix.Contains(addr) && portAllowed(p.port, port) {
			return true
		}
	}
	return false
}
