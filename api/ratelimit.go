package api

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// RateLimit allows N requests per Window for each client IP; N <= 0 turns
// the limit off.
type RateLimit struct {
	N      int
	Window time.Duration
}

// limiter is a sliding-window limiter per client IP: it remembers the time of
// each of the last N requests in a ring. Times are read from the monotonic
// clock (time.Now's, as an offset from the limiter's start), so setting the
// server's clock back or forward neither shuts an address out for the
// correction nor hands it a fresh budget.
type limiter struct {
	cfg   RateLimit
	now   func() time.Time
	epoch time.Time
	mu    sync.Mutex
	ips   map[string]*window
	done  chan struct{}
	once  sync.Once
}

type window struct {
	times []int64 // nanoseconds since epoch, a ring of at most N entries
	next  int
	last  int64
}

func newLimiter(cfg RateLimit) *limiter {
	return newLimiterClock(cfg, time.Now)
}

func newLimiterClock(cfg RateLimit, now func() time.Time) *limiter {
	l := &limiter{cfg: cfg, now: now, epoch: now(), ips: make(map[string]*window), done: make(chan struct{})}
	if cfg.N > 0 {
		go l.sweep()
	}
	return l
}

// allow records a request from ip and reports whether it is within the limit.
func (l *limiter) allow(ip string) bool {
	if l.cfg.N <= 0 {
		return true
	}
	key := limitKey(ip)
	now := int64(l.now().Sub(l.epoch))
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.ips[key]
	if w == nil {
		w = &window{}
		l.ips[key] = w
	}
	w.last = now
	if len(w.times) < l.cfg.N {
		w.times = append(w.times, now)
		return true
	}
	// The ring is full: the oldest entry is at next. One stamped after now
	// came before a clock without a monotonic reading was set back: it no
	// longer counts, or the address would wait out the correction too.
	if age := now - w.times[w.next]; age >= 0 && age < int64(l.cfg.Window) {
		return false
	}
	w.times[w.next] = now
	w.next = (w.next + 1) % len(w.times)
	return true
}

// limitKey is the budget an address counts against: an IPv4 address by
// itself, an IPv6 address by its /64, the block one subscriber is given, so
// walking through it neither escapes the limit nor grows the table.
func limitKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Is4() || a.Is4In6() {
		return ip
	}
	p, err := a.Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}

// sweep forgets IPs idle for longer than the window.
func (l *limiter) sweep() {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
			l.prune()
		}
	}
}

// prune forgets the IPs whose last request is out of the window (or after
// now, which allow no longer counts either).
func (l *limiter) prune() {
	now := int64(l.now().Sub(l.epoch))
	l.mu.Lock()
	defer l.mu.Unlock()
	for ip, w := range l.ips {
		if age := now - w.last; age < 0 || age >= int64(l.cfg.Window) {
			delete(l.ips, ip)
		}
	}
}

func (l *limiter) stop() { l.once.Do(func() { close(l.done) }) }

// clientIPs finds the client address of a request. X-Forwarded-For is read
// only when the direct peer is a trusted proxy, and then from the right: the
// first address that is not itself a trusted proxy is the client.
type clientIPs struct {
	trusted []netip.Prefix
}

func (c *clientIPs) isTrusted(a netip.Addr) bool {
	// A link-local proxy comes with its interface (fe80::5%eth0), and a
	// prefix never contains an address with a zone.
	a = a.Unmap().WithZone("")
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (c *clientIPs) of(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap()
	if len(c.trusted) == 0 || !c.isTrusted(peer) {
		return peer.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := forwardedAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		a = a.Unmap()
		if !c.isTrusted(a) {
			return a.String()
		}
	}
	return peer.String()
}

// forwardedAddr reads one X-Forwarded-For hop: an address, or an address
// with the client's port, as some proxies (Azure's Application Gateway)
// write it: 203.0.113.9:4711, [2001:db8::1]:4711, or an IPv6 address in
// brackets without one: [2001:db8::1].
func forwardedAddr(hop string) (netip.Addr, error) {
	a, err := netip.ParseAddr(hop)
	if err == nil {
		return a, nil
	}
	if ap, perr := netip.ParseAddrPort(hop); perr == nil {
		return ap.Addr(), nil
	}
	if inner, ok := strings.CutPrefix(hop, "["); ok {
		if inner, ok := strings.CutSuffix(inner, "]"); ok {
			if b, berr := netip.ParseAddr(inner); berr == nil && b.Is6() {
				return b, nil
			}
		}
	}
	return a, err
}

// ClientIP returns the client address of r under the trusted-proxy rule.
func ClientIP(trusted []netip.Prefix, r *http.Request) string {
	return (&clientIPs{trusted: trusted}).of(r)
}

// isSecure reports whether the client reached us over TLS, directly or
// through a trusted proxy that says so.
func (c *clientIPs) isSecure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	if a, err := netip.ParseAddr(host); err == nil && len(c.trusted) > 0 && c.isTrusted(a) {
		// Proxies in a chain may append theirs: the first is the client's.
		proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
		return strings.EqualFold(strings.TrimSpace(proto), "https")
	}
	return false
}
