package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// MaxRedirects is the number of redirects a Client follows before it stops
// with an error.
const MaxRedirects = 5

// Config configures a Client. The zero value is the strict default: public
// addresses only, no response cap, default dial and TLS timeouts.
type Config struct {
	// AllowPrivate lifts the address rules, so private, loopback and other
	// internal addresses may be reached. Cloud metadata endpoints stay
	// blocked unless AllowedHosts names them.
	AllowPrivate bool

	// AllowedHosts returns host names ("ollama.lan", "*.corp.example"), IP
	// addresses and CIDR prefixes an administrator allows even though they
	// resolve to blocked addresses. It is called on every dial so option
	// changes apply to the next new connection; nil allows nothing extra.
	AllowedHosts func() []string

	// Timeout bounds dialling, the TLS handshake and the wait for response
	// headers, each on its own. Zero means 30 s for dialling, 10 s for the
	// handshake and no limit on response headers. It never limits reading
	// the body: use the request context for that.
	Timeout time.Duration

	// MaxResponseBytes, when > 0, caps every response body read through the
	// Client; reading past it fails with an error wrapping
	// ErrResponseTooLarge.
	MaxResponseBytes int64
}

// BlockedError is returned (wrapped in a *url.Error by http.Client) when a
// destination is refused. Its message names the host only; the resolved
// addresses and the reason stay out of it so that it cannot be used to map
// the internal network.
type BlockedError struct {
	// Host is the host name or IP literal as it appeared in the URL.
	Host string
}

// Error implements the error interface. It says how an administrator
// allows the host, without saying why it was refused.
func (e *BlockedError) Error() string {
	return fmt.Sprintf("egress: destination %q is not allowed (an administrator can allow it with the EgressAllowedHosts option or --allow-private-upstreams)", e.Host)
}

// ErrScheme is wrapped by the error returned for a URL, or a redirect
// target, whose scheme is not http or https.
var ErrScheme = errors.New("egress: only http and https URLs are allowed")

// Client is a guarded HTTP client. It is safe for concurrent use and should
// be shared: its transport pools connections.
type Client struct {
	transport *guardedTransport
	client    *http.Client
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	return newClient(&guard{cfg: cfg, lookup: net.DefaultResolver.LookupNetIP})
}

func newClient(g *guard) *Client {
	// Requests marked PublicOnly go through a transport of their own whose
	// guard ignores the allowances, with its own connection pool, so they
	// never reuse a connection an administrator's URL opened to an
	// internal host.
	strict := &guard{cfg: Config{Timeout: g.cfg.Timeout, MaxResponseBytes: g.cfg.MaxResponseBytes}, lookup: g.lookup}
	t := &guardedTransport{guard: g, limit: g.cfg.MaxResponseBytes,
		newPools: func() *transportPools {
			return &transportPools{base: newTransport(g), strict: newTransport(strict)}
		},
		inline: newInlineTransport(g), strictInline: newInlineTransport(strict)}
	t.pools.Store(t.newPools())
	return &Client{
		transport: t,
		client: &http.Client{
			Transport:     t,
			CheckRedirect: checkRedirect,
		},
	}
}

// HTTP returns an *http.Client that shares the Client's guarded transport
// and redirect policy. Each call returns a new value, so a caller may set
// its Timeout (never do that for streaming requests) without affecting
// other callers.
func (c *Client) HTTP() *http.Client {
	cp := *c.client
	return &cp
}

// CloseIdleConnections closes pooled connections, so that a change to
// AllowedHosts or AllowPrivate also applies to hosts already connected.
func (c *Client) CloseIdleConnections() {
	c.transport.CloseIdleConnections()
}

// DialContext opens a TCP connection under the same rules as the HTTP
// client, for protocols other than HTTP that reach addresses an
// administrator configured (SMTP).
func (c *Client) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return c.transport.guard.dialContext(ctx, network, addr)
}

// newTransport returns the guarded *http.Transport behind a Client. The
// transport alone does not refuse non-http(s) schemes on redirect nor cap
// response bodies: the Client adds both.
//
// Pooling suits a high-throughput relay: up to 256 idle connections per
// host, kept 90 s, HTTP/2 when the server offers it, TLS 1.2 or later with
// certificates verified. Environment proxies are ignored.
func newTransport(g *guard) *http.Transport {
	tlsTimeout := g.cfg.Timeout
	if tlsTimeout <= 0 {
		tlsTimeout = 10 * time.Second
	}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           g.dialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          0, // no global cap; the per-host cap applies
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   tlsTimeout,
		ResponseHeaderTimeout: g.cfg.Timeout,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
	}
}

// credentialHeaders carry provider keys. Go drops Authorization (and
// cookies) on a redirect to another host, but not headers it does not know.
var credentialHeaders = []string{"Authorization", "Api-Key", "X-Api-Key", "X-Goog-Api-Key", "Proxy-Authorization"}

// checkRedirect stops after MaxRedirects, refuses a redirect that changes
// the method (see RedirectError) and refuses redirects to a scheme other
// than http(s); a redirect to another host, or from https to plain
// http, loses every credential header, so a key never follows a provider's
// redirect elsewhere or onto the wire in clear. The destination address is
// checked when it is dialled.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fmt.Errorf("egress: stopped after %d redirects", MaxRedirects)
	}
	if len(via) > 0 && req.Method != via[len(via)-1].Method {
		// A 301, 302 or 303 after a POST would send a GET without the
		// body: the upstream would answer a request nobody made.
		status := 0
		if req.Response != nil {
			status = req.Response.StatusCode
		}
		return &RedirectError{Status: status, Method: via[len(via)-1].Method, Location: req.URL.Redacted()}
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("%w: redirect to %q", ErrScheme, req.URL.Scheme)
	}
	if len(via) > 0 && (!strings.EqualFold(req.URL.Host, via[0].URL.Host) || via[0].URL.Scheme == "https" && req.URL.Scheme != "https") {
		for _, h := range credentialHeaders {
			req.Header.Del(h)
		}
	}
	return nil
}

// RedirectError is a redirect that is not followed because it would change
// the request's method (a POST answered 301, 302 or 303 becomes a GET
// without its body). 307 and 308 keep the method and body and are followed.
type RedirectError struct {
	Status   int
	Method   string
	Location string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("egress: a %d redirect of a %s to %s is not followed (it would become a GET without the body)", e.Status, e.Method, e.Location)
}

// guardedTransport adds the scheme check and the response cap to the
// guarded *http.Transport.
type guardedTransport struct {
	// pools is replaced by CloseIdleConnections: a connection busy then
	// goes back to a transport no request uses any more, which closes it,
	// whereas http.Transport pools it again once another request came.
	pools    atomic.Pointer[transportPools]
	newPools func() *transportPools
	guard    *guard
	limit    int64

	// Plain-HTTP requests with small bodies, on the caller's goroutine
	// (see inlineTransport); one pool for each of base and strict.
	inline, strictInline *inlineTransport
}

// transportPools are the *http.Transport of a guardedTransport's
// requests: base, and strict for PublicOnly ones.
type transportPools struct {
	base   *http.Transport
	strict *http.Transport
}

type publicOnlyKey struct{}

// PublicOnly marks the requests made with the returned context as going to
// a URL a user supplied (an image in a chat request, say): they reach
// public addresses only, whatever AllowPrivate and AllowedHosts let the
// administrator's own URLs reach.
func PublicOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, publicOnlyKey{}, true)
}

func isPublicOnly(ctx context.Context) bool {
	v, _ := ctx.Value(publicOnlyKey{}).(bool)
	return v
}

// RoundTrip implements http.RoundTripper.
func (t *guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		if req.Body != nil {
			req.Body.Close()
		}
		scheme := ""
		if req.URL != nil {
			scheme = req.URL.Scheme
		}
		return nil, fmt.Errorf("%w: %q", ErrScheme, scheme)
	}
	pools := t.pools.Load()
	var base http.RoundTripper = pools.base
	inline := t.inline
	if pools.strict != nil && isPublicOnly(req.Context()) {
		base, inline = pools.strict, t.strictInline
	}
	if inline != nil && inlineEligible(req) {
		base = inline
	}
	resp, err := base.RoundTrip(req)
	if err != nil || t.limit <= 0 {
		return resp, err
	}
	resp.Body = LimitedBody(resp.Body, t.limit)
	return resp, nil
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the pool.
func (t *guardedTransport) CloseIdleConnections() {
	old := t.pools.Swap(t.newPools())
	old.base.CloseIdleConnections()
	if old.strict != nil {
		old.strict.CloseIdleConnections()
	}
	for _, it := range []*inlineTransport{t.inline, t.strictInline} {
		if it != nil {
			it.CloseIdleConnections()
		}
	}
}

// guard resolves, checks and dials destinations.
type guard struct {
	cfg Config
	// lookup resolves a host name; tests replace it to simulate DNS answers.
	lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// dialContext is the transport's DialContext: it resolves the host, refuses
// the dial if any address is blocked, and then dials the checked addresses
// themselves (never the name) so the answer cannot change in between.
func (g *guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("egress: invalid port %q", portStr)
	}
	v, err := g.resolve(ctx, network, host, uint16(port))
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{
		Timeout:   g.cfg.Timeout,
		KeepAlive: 30 * time.Second,
		// Control re-checks the address the socket actually connects to,
		// a second line of defence should a future change dial a name.
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !v.permits(ap.Addr()) {
				return &BlockedError{Host: host}
			}
			return nil
		},
	}
	if d.Timeout <= 0 {
		d.Timeout = 30 * time.Second
	}
	var firstErr error
	for _, ip := range v.addrs {
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// verdict is the outcome of checking one host and port: the addresses to
// dial and what the check allowed.
type verdict struct {
	addrs       []netip.Addr
	port        uint16
	nameAllowed bool // the host name itself is in AllowedHosts, for this port
	allow       allowList
	private     bool // AllowPrivate
}

// permits reports whether dialling addr is allowed under this verdict.
func (v verdict) permits(addr netip.Addr) bool {
	switch classifyAddr(addr) {
	case classPublic:
		return true
	case classPrivate:
		if v.private {
			return true
		}
	}
	return v.nameAllowed || v.allow.allowsAddr(addr, v.port)
}

// resolve resolves host for network ("tcp", "tcp4" or "tcp6") and checks
// the name and every address, for a connection to port. It returns the
// addresses to dial, or a *BlockedError if the name or any address is
// refused.
func (g *guard) resolve(ctx context.Context, network, host string, port uint16) (verdict, error) {
	var allow allowList
	if g.cfg.AllowedHosts != nil {
		allow = parseAllowList(g.cfg.AllowedHosts())
	}
	v := verdict{port: port, allow: allow, private: g.cfg.AllowPrivate}
	blocked := &BlockedError{Host: host}

	if ip, err := netip.ParseAddr(host); err == nil {
		// Keep the zone: a link-local address needs it to be dialled.
		v.addrs = []netip.Addr{ip.Unmap()}
	} else {
		v.nameAllowed = allow.allowsName(host, port)
		switch classifyName(host) {
		case classMetadata:
			if !v.nameAllowed {
				return verdict{}, blocked
			}
		case classPrivate:
			if !v.nameAllowed && !v.private {
				return verdict{}, blocked
			}
		}
		ipNet := "ip"
		switch network {
		case "tcp4":
			ipNet = "ip4"
		case "tcp6":
			ipNet = "ip6"
		}
		addrs, err := g.lookup(ctx, ipNet, host)
		if err != nil {
			return verdict{}, fmt.Errorf("egress: resolve %q: %w", host, err)
		}
		if len(addrs) == 0 {
			return verdict{}, fmt.Errorf("egress: resolve %q: no addresses", host)
		}
		for _, a := range addrs {
			v.addrs = append(v.addrs, a.Unmap())
		}
	}
	for _, a := range v.addrs {
		if !v.permits(a) {
			return verdict{}, blocked
		}
	}
	return v, nil
}
