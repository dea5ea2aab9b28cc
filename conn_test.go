package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"
)

// A request whose body stops arriving loses its connection after the idle
// bound, whether the handler reads the body or never does (net/http would
// read a small unread body to its end before answering); a body that keeps
// arriving, and an answer that outlasts the bounds, are not cut.
func TestBodyDeadlines(t *testing.T) {
	// Bounds with room for a loaded machine: the client's pauses below stay
	// far inside the idle bound.
	bodyIdleTimeout, bodyTimeout = time.Second, 3*time.Second
	t.Cleanup(func() { bodyIdleTimeout, bodyTimeout = 30*time.Second, 10*time.Minute })
	m := MustRunMain(t)

	// send writes a request with a 1000-byte body of which only part arrives.
	send := func(t *testing.T, path, part string) net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", m.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"+part)
		return c
	}
	// closedWithin waits for the server to answer or close, and says how long it took.
	closedWithin := func(t *testing.T, c net.Conn, limit time.Duration) {
		t.Helper()
		start := time.Now()
		c.SetReadDeadline(start.Add(limit))
		_, err := io.ReadAll(c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("the connection was still open after %v", limit)
		}
	}
	t.Run("read by the handler", func(t *testing.T) {
		closedWithin(t, send(t, "/api/user/login", "{"), 5*time.Second)
	})
	t.Run("never read", func(t *testing.T) {
		closedWithin(t, send(t, "/v1/chat/completions", "{"), 5*time.Second) // no key: refused without reading
	})
	t.Run("dripping body hits the total bound", func(t *testing.T) {
		c := send(t, "/api/user/login", "{")
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
					if _, err := io.WriteString(c, " "); err != nil {
						return
					}
				}
			}
		}()
		start := time.Now()
		closedWithin(t, c, 10*time.Second)
		if d := time.Since(start); d < 2*time.Second {
			t.Fatalf("a body that kept arriving was cut after %v", d)
		}
	})
	t.Run("a whole body is answered", func(t *testing.T) {
		body := `{"username":"root","password":"123456"}`
		c, err := net.Dial("tcp", m.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "POST /api/user/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n")
		time.Sleep(150 * time.Millisecond) // within the idle bound
		io.WriteString(c, body)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("answer: %v %v", resp, err)
		}
		resp.Body.Close()
		// The same connection then waits past both bounds and is still served:
		// the deadline ended with the body.
		time.Sleep(3500 * time.Millisecond)
		io.WriteString(c, "GET /api/status HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err = http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("second request on the connection: %v %v", resp, err)
		}
		resp.Body.Close()
	})
}

// fakeListener hands out the connections pushed into it.
type fakeListener struct {
	conns chan net.Conn
}

func (l *fakeListener) Accept() (net.Conn, error) {
	c, ok := <-l.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}
func (l *fakeListener) Close() error   { return nil }
func (l *fakeListener) Addr() net.Addr { return &net.TCPAddr{} }

// fakeConn is one end of a pipe that says it comes from remote.
type fakeConn struct {
	net.Conn
	remote string
	mu     sync.Mutex
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr {
	ap := netip.MustParseAddrPort(c.remote)
	return net.TCPAddrFromAddrPort(ap)
}

func (c *fakeConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.Conn.Close()
}

func (c *fakeConn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// One address holds at most max connections; a closed one gives its place
// back; loopback and trusted proxies are not counted.
func TestLimitPerIP(t *testing.T) {
	fl := &fakeListener{conns: make(chan net.Conn, 16)}
	ln := limitPerIP(fl, 2, []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16")})
	conn := func(remote string) *fakeConn {
		a, _ := net.Pipe()
		return &fakeConn{Conn: a, remote: remote}
	}
	accept := func() net.Conn {
		t.Helper()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a1, a2, a3, b1 := conn("203.0.113.5:1000"), conn("203.0.113.5:1001"), conn("203.0.113.5:1002"), conn("198.51.100.7:1000")
	for _, c := range []*fakeConn{a1, a2, a3, b1} {
		fl.conns <- c
	}
	got1, got2 := accept(), accept()
	if got3 := accept(); got3.RemoteAddr().String() != b1.remote {
		t.Fatalf("the third connection of one address was accepted: %v", got3.RemoteAddr())
	}
	if !a3.isClosed() || a1.isClosed() || a2.isClosed() {
		t.Fatal("the refused connection was not closed, or an accepted one was")
	}
	got1.Close()
	got1.Close() // a second close gives nothing back twice
	a4, a5 := conn("203.0.113.5:1003"), conn("203.0.113.5:1004")
	fl.conns <- a4
	fl.conns <- a5
	accept()
	local := conn("127.0.0.1:5000")
	fl.conns <- local
	if c := accept(); c.RemoteAddr().String() != local.remote {
		t.Fatalf("after one place was given back, a second new one was accepted: %v", c.RemoteAddr())
	}
	if !a5.isClosed() {
		t.Fatal("the connection over the limit was not closed")
	}
	for i := range 5 {
		fl.conns <- conn("127.0.0.1:" + strconv.Itoa(6000+i))
		fl.conns <- conn("10.9.1.1:" + strconv.Itoa(6000+i))
	}
	for range 10 {
		accept()
	}
	_ = got2
}

// An IPv6 client counts by its /64, the block one subscriber is given (as
// the rate limits count it, docs/decisions.md): walking through the block's
// addresses does not give it max connections per address.
func TestLimitPerIPCountsIPv6ByItsBlock(t *testing.T) {
	fl := &fakeListener{conns: make(chan net.Conn, 16)}
	ln := limitPerIP(fl, 2, nil)
	conn := func(remote string) *fakeConn {
		a, _ := net.Pipe()
		return &fakeConn{Conn: a, remote: remote}
	}
	a1, a2, a3 := conn("[2001:db8:1:2::1]:1000"), conn("[2001:db8:1:2::2]:1000"), conn("[2001:db8:1:2:ffff::3]:1000")
	other := conn("[2001:db8:1:3::1]:1000")
	for _, c := range []*fakeConn{a1, a2, a3, other} {
		fl.conns <- c
	}
	for range 2 {
		if _, err := ln.Accept(); err != nil {
			t.Fatal(err)
		}
	}
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if c.RemoteAddr().String() != other.remote || !a3.isClosed() {
		t.Fatalf("a third connection from one /64 was accepted: %v", c.RemoteAddr())
	}
}

// A trusted proxy on a link-local address, seen with its interface zone,
// is exempt from the per-IP bound as any trusted proxy is.
func TestLimitPerIPExemptsAZonedTrustedProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	l := limitPerIP(ln, 1, []netip.Prefix{netip.MustParsePrefix("fe80::/10")}).(*perIPListener)
	for _, a := range []string{"fe80::5%eth0", "fe80::5", "::1"} {
		if !l.exempt(netip.MustParseAddr(a)) {
			t.Errorf("%s is not exempt", a)
		}
	}
	if l.exempt(netip.MustParseAddr("2001:db8::5")) {
		t.Error("an untrusted address is exempt")
	}
}
