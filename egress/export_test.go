package egress

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
)

// This file is compiled only with the package's tests.

// Do sends req through the guarded transport, following at most
// MaxRedirects redirects. A refused destination yields an error for which
// errors.As finds a *BlockedError; a non-http(s) scheme yields one wrapping
// ErrScheme.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	return c.client.Do(req)
}

// Check validates rawURL without sending a request: the scheme must be
// http or https and the host and port must pass the rules after
// resolution. Requests are checked again when they dial.
func (c *Client) Check(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("egress: invalid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: %q", ErrScheme, u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("egress: URL has no host")
	}
	port := uint16(80)
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return fmt.Errorf("egress: invalid port %q", p)
		}
		port = uint16(n)
	}
	_, err = c.transport.guard.resolve(ctx, "tcp", host, port)
	return err
}

// IsBlockedAddr reports whether addr is refused under the default rules
// (no AllowPrivate, no AllowedHosts): loopback, unspecified, link-local,
// private, CGNAT, multicast, broadcast, reserved, cloud metadata, or an
// IPv6 form that carries one of these (mapped, NAT64, translated, 6to4,
// Teredo). An invalid address is blocked.
func IsBlockedAddr(addr netip.Addr) bool {
	return classifyAddr(addr) != classPublic
}

// IsBlockedName reports whether the host name itself is refused under the
// default rules, before any resolution: localhost, *.localhost and the
// documented metadata names such as metadata.google.internal. A name that
// is not blocked here may still resolve to a blocked address.
func IsBlockedName(host string) bool {
	return classifyName(host) != classPublic
}
