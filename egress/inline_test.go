//go:build linux

package egress

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingServer starts an httptest server that counts the connections
// its clients open.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func pooled(c *Client) int {
	it := c.transport.inline
	it.mu.Lock()
	defer it.mu.Unlock()
	n := 0
	for _, l := range it.idle {
		n += len(l)
	}
	return n
}

func TestInline_OneConnectionForSequentialCalls(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/length":
			w.Header().Set("Content-Length", fmt.Sprint(len(body)+5))
			io.WriteString(w, "echo:")
			w.Write(body)
		case "/chunked":
			io.WriteString(w, "part1;")
			w.(http.Flusher).Flush()
			io.WriteString(w, "part2;")
			w.(http.Flusher).Flush()
			w.Write(body)
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			http.Error(w, "no such path", http.StatusNotFound)
		}
	})
	c := New(Config{AllowPrivate: true})
	var reused, wrote atomic.Int64
	trace := &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) {
			if i.Reused {
				reused.Add(1)
			}
		},
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Add(1)
			}
		},
	}
	ctx := httptrace.WithClientTrace(context.Background(), trace)
	for i := range 10 {
		for _, tc := range []struct{ path, want string }{
			{"/length", fmt.Sprintf("echo:body %d", i)},
			{"/chunked", fmt.Sprintf("part1;part2;body %d", i)},
			{"/empty", ""},
			{"/missing", "no such path\n"},
		} {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+tc.path, strings.NewReader(fmt.Sprintf("body %d", i)))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", tc.path, err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(got) != tc.want {
				t.Fatalf("%s: got %q, %v; want %q", tc.path, got, err, tc.want)
			}
		}
		// A GET without a body goes inline too.
		resp, err := c.Do(mustRequest(t, ctx, http.MethodGet, srv.URL+"/empty"))
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("GET: %v, %v", resp, err)
		}
		resp.Body.Close()
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("the server saw %d connections, want 1", n)
	}
	if reused.Load() != 49 || wrote.Load() != 50 {
		t.Fatalf("trace: %d reused, %d written; want 49 and 50", reused.Load(), wrote.Load())
	}
	if n := pooled(c); n != 1 {
		t.Fatalf("%d idle connections pooled, want 1", n)
	}
}

func mustRequest(t *testing.T, ctx context.Context, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestInline_StreamArrivesAsSent(t *testing.T) {
	t.Parallel()
	next := make(chan struct{})
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/wait" {
			<-next
		}
		io.WriteString(w, "data: two\n\n")
	})
	c := New(Config{AllowPrivate: true})
	resp, err := c.Do(mustRequest(t, context.Background(), http.MethodPost, srv.URL+"/wait"))
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "data: one\n" {
		t.Fatalf("first event: %q, %v", line, err)
	}
	close(next)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\ndata: two\n\n" {
		t.Fatalf("rest: %q, %v", rest, err)
	}
	resp.Body.Close()
	resp, err = c.Do(mustRequest(t, context.Background(), http.MethodPost, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n := conns.Load(); n != 1 {
		t.Fatalf("the server saw %d connections, want 1 (a stream read to its end returns its connection)", n)
	}
}

// blockingStream answers with one event, then holds the stream open until
// the client goes away, which it reports on gone.
func blockingStream(t *testing.T) (*httptest.Server, chan struct{}) {
	gone := make(chan struct{}, 4)
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			gone <- struct{}{}
		case <-time.After(10 * time.Second):
		}
	})
	return srv, gone
}

func waitGone(t *testing.T, gone chan struct{}) {
	t.Helper()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not see the connection close")
	}
}

func TestInline_CancelEndsABlockedRead(t *testing.T) {
	t.Parallel()
	srv, gone := blockingStream(t)
	c := New(Config{AllowPrivate: true})
	ctx, cancel := context.WithCancelCause(context.Background())
	resp, err := c.Do(mustRequest(t, ctx, http.MethodPost, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if n, err := resp.Body.Read(buf); err != nil || string(buf[:n]) != "data: one\n\n" {
		t.Fatalf("first read: %q, %v", buf[:n], err)
	}
	why := errors.New("idle upstream")
	time.AfterFunc(50*time.Millisecond, func() { cancel(why) })
	done := make(chan error, 1)
	go func() {
		_, err := resp.Body.Read(buf)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, why) {
			t.Fatalf("read after cancel: %v, want the cancellation's cause", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled request's read did not return")
	}
	resp.Body.Close()
	waitGone(t, gone)
	if n := pooled(c); n != 0 {
		t.Fatalf("%d connections pooled after a cancelled stream, want 0", n)
	}
}

func TestInline_CloseDoesNotWaitForTheRest(t *testing.T) {
	t.Parallel()
	srv, gone := blockingStream(t)
	c := New(Config{AllowPrivate: true})
	for _, concurrent := range []bool{false, true} {
		resp, err := c.Do(mustRequest(t, context.Background(), http.MethodPost, srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		resp.Body.Read(buf)
		done := make(chan error, 1)
		if concurrent {
			// A read blocked on another goroutine returns once the body
			// is closed.
			go func() {
				_, err := resp.Body.Read(buf)
				done <- err
			}()
			time.Sleep(20 * time.Millisecond)
		}
		closed := make(chan struct{})
		go func() { resp.Body.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatal("Close waited for the rest of the stream")
		}
		if concurrent {
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("a read on a closed body succeeded")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("a blocked read did not return after Close")
			}
		}
		waitGone(t, gone)
	}
	if n := pooled(c); n != 0 {
		t.Fatalf("%d connections pooled, want 0", n)
	}
}

// rawServer accepts connections and passes each to serve, in order.
func rawServer(t *testing.T, serve func(n int, c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(n, c)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// readRequest reads one request and its body from br.
func readRequest(br *bufio.Reader) error {
	req, err := http.ReadRequest(br)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, req.Body)
	return err
}

const okAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

func TestInline_ServerClosedPooledConnection(t *testing.T) {
	t.Parallel()
	// Connection 0 answers one request and closes; every later one
	// answers all.
	u := rawServer(t, func(n int, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if readRequest(br) != nil {
				return
			}
			io.WriteString(c, okAnswer)
			if n == 0 {
				return
			}
		}
	})
	c := New(Config{AllowPrivate: true})
	for _, method := range []string{http.MethodPost, http.MethodPost} {
		req, _ := http.NewRequest(method, u, strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok" {
			t.Fatalf("got %q", b)
		}
		// Let the server's close arrive: the pooled connection is seen
		// closed and not used.
		time.Sleep(50 * time.Millisecond)
	}
}

func TestInline_ClosedAsTheRequestWentOut(t *testing.T) {
	t.Parallel()
	// Connection 0 answers its first request and closes on reading the
	// second without answering: the race http.Transport also has with a
	// server closing an idle connection.
	for _, tc := range []struct {
		method  string
		header  string
		retried bool
	}{
		{http.MethodGet, "", true},
		{http.MethodPost, "Idempotency-Key", true},
		{http.MethodPost, "", false},
	} {
		t.Run(tc.method+tc.header, func(t *testing.T) {
			var seen atomic.Int64
			u := rawServer(t, func(n int, c net.Conn) {
				br := bufio.NewReader(c)
				for i := 0; ; i++ {
					if readRequest(br) != nil {
						return
					}
					seen.Add(1)
					if n == 0 && i == 1 {
						return
					}
					io.WriteString(c, okAnswer)
				}
			})
			c := New(Config{AllowPrivate: true})
			do := func() (string, error) {
				req, _ := http.NewRequest(tc.method, u, strings.NewReader("{}"))
				if tc.header != "" {
					req.Header.Set(tc.header, "k1")
				}
				resp, err := c.Do(req)
				if err != nil {
					return "", err
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				return string(b), err
			}
			if got, err := do(); err != nil || got != "ok" {
				t.Fatalf("first: %q, %v", got, err)
			}
			got, err := do()
			if tc.retried && (err != nil || got != "ok") {
				t.Fatalf("second: %q, %v; want it sent again on a new connection", got, err)
			}
			if !tc.retried && err == nil {
				t.Fatalf("second: %q; a POST without an idempotency key must not be sent twice", got)
			}
			if want := map[bool]int64{true: 3, false: 2}[tc.retried]; seen.Load() != want {
				t.Fatalf("the server read %d requests, want %d", seen.Load(), want)
			}
		})
	}
}

// slowBody is a request body of known length that arrives in 4 KiB
// pieces, 10 ms apart.
type slowBody struct{ left, reads int }

func (b *slowBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	if b.reads > 0 {
		time.Sleep(10 * time.Millisecond)
	}
	b.reads++
	n := min(len(p), 4<<10, b.left)
	for i := range p[:n] {
		p[i] = 'x'
	}
	b.left -= n
	return n, nil
}

// A server that refuses a request on its headers alone (a 401, a 413)
// and closes the connection before the body has arrived: the write fails
// with a reset, and the caller gets the server's answer, as from
// http.Transport, not the reset.
func TestInline_AnswerBeforeTheBodyIsRead(t *testing.T) {
	t.Parallel()
	u := rawServer(t, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if line == "\r\n" {
				break
			}
		}
		io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 11\r\n\r\nbad api key")
		// Closed with the body still coming: a reset.
		time.Sleep(20 * time.Millisecond)
	})
	c := New(Config{AllowPrivate: true})
	const size = 32 << 10
	req, _ := http.NewRequest(http.MethodPost, u, &slowBody{left: size})
	req.ContentLength = size
	if !inlineEligible(req) {
		t.Fatal("the request is not sent inline")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("err = %v, want the server's 401", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || string(b) != "bad api key" || err != nil {
		t.Fatalf("got %d %q, %v; want 401 \"bad api key\"", resp.StatusCode, b, err)
	}
	if n := pooled(c); n != 0 {
		t.Fatalf("%d connections pooled, want 0", n)
	}
}

func TestInline_InformationalAnswersSkipped(t *testing.T) {
	t.Parallel()
	u := rawServer(t, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		if readRequest(br) != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"+okAnswer)
	})
	body, err := get(t, New(Config{AllowPrivate: true}), u)
	if err != nil || body != "ok" {
		t.Fatalf("got %q, %v", body, err)
	}
}

func TestInline_HeadersBounded(t *testing.T) {
	t.Parallel()
	u := rawServer(t, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		if readRequest(br) != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		line := "X-Pad: " + strings.Repeat("a", 1000) + "\r\n"
		for range 2000 {
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
	})
	_, err := get(t, New(Config{AllowPrivate: true}), u)
	if !errors.Is(err, errHeadersTooLarge) {
		t.Fatalf("err = %v, want headers too large", err)
	}
}

func TestInline_ConnectionCloseNotPooled(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "ok")
	})
	c := New(Config{AllowPrivate: true})
	for range 3 {
		if body, err := get(t, c, srv.URL); err != nil || body != "ok" {
			t.Fatalf("got %q, %v", body, err)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Fatalf("%d connections, want 3", n)
	}
	if n := pooled(c); n != 0 {
		t.Fatalf("%d pooled, want 0", n)
	}
}

func TestInline_OnlySmallPlainRequests(t *testing.T) {
	t.Parallel()
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, n)
	})
	c := New(Config{AllowPrivate: true})
	for _, tc := range []struct {
		size   int
		inline bool
	}{{inlineMaxBody + 1, false}, {inlineMaxBody, true}} {
		c.CloseIdleConnections()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(make([]byte, tc.size)))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != fmt.Sprint(tc.size) {
			t.Fatalf("the server read %s bytes, want %d", b, tc.size)
		}
		if got := pooled(c) == 1; got != tc.inline {
			t.Fatalf("a body of %d bytes: sent inline %v, want %v", tc.size, got, tc.inline)
		}
	}
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodPost, "https://example.com/", strings.NewReader("x")),
		func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, "http://example.com/", io.NopCloser(strings.NewReader("x")))
			return r // unknown length
		}(),
		func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, "http://example.com/", strings.NewReader("x"))
			r.Header.Set("Expect", "100-continue")
			return r
		}(),
	} {
		if inlineEligible(req) {
			t.Fatalf("%s %s %v is sent inline", req.Method, req.URL, req.Header)
		}
	}
}

func TestInline_IdleConnectionsSwept(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	c := New(Config{AllowPrivate: true})
	if _, err := get(t, c, srv.URL); err != nil {
		t.Fatal(err)
	}
	it := c.transport.inline
	it.mu.Lock()
	for _, l := range it.idle {
		for _, pc := range l {
			pc.idleAt = time.Now().Add(-inlineIdleTimeout)
		}
	}
	it.mu.Unlock()
	it.sweepIdle()
	if n := pooled(c); n != 0 {
		t.Fatalf("%d pooled after the sweep, want 0", n)
	}
	if _, err := get(t, c, srv.URL); err != nil {
		t.Fatal(err)
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

// A connection busy when CloseIdleConnections runs (an EgressAllowedHosts
// change) is not pooled when its exchange ends: the next request dials
// again, under the new rules, as with http.Transport, which closes the
// connections that become idle after CloseIdleConnections.
func TestInline_CloseIdleConnectionsAppliesToBusyConnections(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/wait" {
			<-release
		}
		io.WriteString(w, "data: two\n\n")
	})
	var list atomic.Value
	list.Store([]string{"127.0.0.1"})
	c := New(Config{AllowedHosts: func() []string { return list.Load().([]string) }})
	resp, err := c.Do(mustRequest(t, context.Background(), http.MethodPost, srv.URL+"/wait"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 11)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	// The host is taken off the list while the stream is still open.
	list.Store([]string{})
	c.CloseIdleConnections()
	close(release)
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	body, err := get(t, c, srv.URL)
	if err == nil {
		t.Fatalf("got %q over a kept connection: a host taken off the list was reached again (%d connections)", body, conns.Load())
	}
	requireBlocked(t, err, "127.0.0.1")
}

func TestInline_Concurrent(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Query().Get("stream") != "" {
			for i := range 3 {
				fmt.Fprintf(w, "data: %s %d\n\n", b, i)
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Write(b)
	})
	c := New(Config{AllowPrivate: true})
	const workers, calls = 16, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				msg := fmt.Sprintf("w%d-%d", w, i)
				u, want := srv.URL, msg
				if i%2 == 1 {
					u += "?stream=1"
					want = fmt.Sprintf("data: %s 0\n\ndata: %s 1\n\ndata: %s 2\n\n", msg, msg, msg)
				}
				req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(msg))
				resp, err := c.Do(req)
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || string(b) != want {
					errs <- fmt.Errorf("got %q, %v; want %q", b, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := conns.Load(); n > workers {
		t.Fatalf("%d connections for %d workers", n, workers)
	}
}

// A request whose context has already ended is neither sent nor reported
// written, even with an idle connection at hand: http.Transport returns
// the cancellation's cause before it writes anything, and the relay bills
// a prompt when WroteRequest reports the request sent.
func TestInline_EndedContextSendsNothing(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		hits.Add(1)
		io.WriteString(w, "ok")
	})
	c := New(Config{AllowPrivate: true})
	for round := range 20 {
		// One call leaves an idle connection in the pool.
		if body, err := get(t, c, srv.URL); err != nil || body != "ok" {
			t.Fatalf("got %q, %v", body, err)
		}
		if n := pooled(c); n != 1 {
			t.Fatalf("%d connections pooled, want 1", n)
		}
		why := errors.New("client left")
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(why)
		var wrote atomic.Bool
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(true)
			}
		}})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"prompt":"bill me"}`))
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("round %d: a request with an ended context succeeded", round)
		}
		if !errors.Is(err, why) {
			t.Fatalf("round %d: err = %v, want the cancellation's cause", round, err)
		}
		if wrote.Load() {
			t.Fatalf("round %d: WroteRequest reported a request whose context had ended as written", round)
		}
		time.Sleep(10 * time.Millisecond)
		if n := hits.Load(); n != int64(round+1) {
			t.Fatalf("round %d: the server received %d requests, want %d", round, n, round+1)
		}
	}
}

// An upstream that compresses its answers, asked or not, is read the same
// on the inline path as through http.Transport (a request body over
// inlineMaxBody): gzip is asked for and the answer decoded, and the
// connection is pooled once the body is read. A caller that names its own
// encoding gets the bytes as sent.
func TestInline_GzipAnswersDecoded(t *testing.T) {
	t.Parallel()
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	io.WriteString(zw, `{"ok":true}`)
	zw.Close()
	var asked sync.Map
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		asked.Store(r.ContentLength, r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zipped.Bytes())
	})
	c := New(Config{AllowPrivate: true})
	for _, size := range []int{2, inlineMaxBody + 1, 2} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(strings.Repeat("x", size)))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != `{"ok":true}` || !resp.Uncompressed || resp.Header.Get("Content-Encoding") != "" {
			t.Fatalf("body of %d: %q, %v (uncompressed %v, Content-Encoding %q)", size, b, err, resp.Uncompressed, resp.Header.Get("Content-Encoding"))
		}
		if ae, _ := asked.Load(int64(size)); ae != "gzip" {
			t.Fatalf("body of %d: Accept-Encoding %q, want gzip", size, ae)
		}
	}
	// The two inline calls shared a connection; the Transport's is its own.
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(b, zipped.Bytes()) || resp.Uncompressed {
		t.Fatalf("caller's own Accept-Encoding: got %q, want the compressed bytes", b)
	}
}
