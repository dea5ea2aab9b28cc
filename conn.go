package main

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// A slow client must not hold a connection without end: a body that stops
// arriving, or a small one the handler never read (net/http reads such a
// body to its end before it answers), would keep its connection, and
// enough of them the process's files, for ever. Reading a body may pause
// at most bodyIdleTimeout between two reads that bring bytes, and take at
// most bodyTimeout in all; then the connection is closed. The deadline
// ends with the body, so a long answer (a stream) is never cut.
var (
	bodyIdleTimeout = 30 * time.Second
	bodyTimeout     = 10 * time.Minute
)

// bodyDeadlines puts those bounds on the request bodies next reads.
func bodyDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		now := time.Now()
		b := &deadlineBody{ReadCloser: r.Body, rc: rc, end: now.Add(bodyTimeout)}
		if rc.SetReadDeadline(b.next(now)) != nil {
			next.ServeHTTP(w, r)
			return
		}
		r.Body = b
		next.ServeHTTP(w, r)
	})
}

// deadlineBody moves the connection's read deadline on as the body arrives
// and lifts it once the body is read.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	end  time.Time // the whole body's deadline
	done bool
}

func (b *deadlineBody) next(now time.Time) time.Time {
	if d := now.Add(bodyIdleTimeout); d.Before(b.end) {
		return d
	}
	return b.end
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.done {
		return n, err
	}
	switch {
	case err == io.EOF:
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	case n > 0:
		b.rc.SetReadDeadline(b.next(time.Now()))
	}
	return n, err
}

// perIPListener refuses a connection from an address that already holds
// max of them: one client cannot take every file the process may open.
// Loopback and trusted proxies, which carry everybody's connections, are
// not counted.
type perIPListener struct {
	net.Listener
	max    int
	exempt func(netip.Addr) bool

	mu    sync.Mutex
	conns map[netip.Addr]int
}

func limitPerIP(ln net.Listener, max int, trusted []netip.Prefix) net.Listener {
	if max <= 0 {
		return ln
	}
	return &perIPListener{Listener: ln, max: max, conns: map[netip.Addr]int{}, exempt: func(a netip.Addr) bool {
		if a.IsLoopback() {
			return true
		}
		// A link-local proxy is seen with its interface (fe80::5%eth0):
		// no prefix contains an address with a zone.
		for _, p := range trusted {
			if p.Contains(a.WithZone("")) {
				return true
			}
		}
		return false
	}}
}

func (l *perIPListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ap, perr := netip.ParseAddrPort(c.RemoteAddr().String())
		if perr != nil || l.exempt(ap.Addr().Unmap()) {
			return c, nil
		}
		ip := blockOf(ap.Addr().Unmap())
		l.mu.Lock()
		if l.conns[ip] >= l.max {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.conns[ip]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: func() { l.release(ip) }}, nil
	}
}

// blockOf is what a client address counts as: an IPv4 address itself, an
// IPv6 address its /64, the block one subscriber is given (as the rate
// limits count it), so that walking through the block does not multiply
// the limit.
func blockOf(a netip.Addr) netip.Addr {
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return a
}

func (l *perIPListener) release(ip netip.Addr) {
	l.mu.Lock()
	if l.conns[ip]--; l.conns[ip] <= 0 {
		delete(l.conns, ip)
	}
	l.mu.Unlock()
}

// countedConn gives its place back once, when it is closed.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
