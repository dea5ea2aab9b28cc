package ws_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"gateway/ws"
)

type connKey struct{}

// MustStartHub serves hub on a test server. The connection's identity comes
// from the query (uid, role, session), and every connection is greeted with
// a "hello" message, so a dial that has read it is known to be subscribed.
// With slow=1 the server socket gets a small send buffer, so a client that
// stops reading blocks the server's writes after a few messages.
func MustStartHub(tb testing.TB, hub *ws.Hub) *httptest.Server {
	tb.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if tc, ok := r.Context().Value(connKey{}).(*net.TCPConn); ok && q.Get("slow") == "1" {
			tc.SetWriteBuffer(4096)
		}
		uid, _ := strconv.ParseUint(q.Get("uid"), 10, 64)
		role, _ := strconv.Atoi(q.Get("role"))
		hub.Serve(w, r, ws.Identity{UserID: uid, Role: role, Session: q.Get("session")}, func() []ws.Message {
			return []ws.Message{{Topic: "hello", Data: uid}}
		})
	}))
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv
}

// smallBufferClient dials with a small receive buffer.
var smallBufferClient = &http.Client{Transport: &http.Transport{
	DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetReadBuffer(4096)
		}
		return c, err
	},
}}

// dial connects as (uid, role, session) and reads the hello.
func dial(tb testing.TB, srv *httptest.Server, uid uint64, role int, session string) *websocket.Conn {
	return dialOpts(tb, srv, uid, role, session, false)
}

// dialSlow is dial with small socket buffers on both ends.
func dialSlow(tb testing.TB, srv *httptest.Server, uid uint64, role int, session string) *websocket.Conn {
	return dialOpts(tb, srv, uid, role, session, true)
}

func dialOpts(tb testing.TB, srv *httptest.Server, uid uint64, role int, session string, slow bool) *websocket.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/?uid=" + strconv.FormatUint(uid, 10) +
		"&role=" + strconv.Itoa(role) + "&session=" + session
	opts := &websocket.DialOptions{}
	if slow {
		u += "&slow=1"
		opts.HTTPClient = smallBufferClient
	}
	c, _, err := websocket.Dial(ctx, u, opts)
	if err != nil {
		tb.Fatalf("dial: %v", err)
	}
	c.SetReadLimit(1 << 20)
	tb.Cleanup(func() { c.CloseNow() })
	if m := read(tb, c); m.Topic != "hello" {
		tb.Fatalf("first message = %+v, want hello", m)
	}
	return c
}

type message struct {
	Topic string          `json:"topic"`
	Data  json.RawMessage `json:"data"`
}

func read(tb testing.TB, c *websocket.Conn) message {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, data, err := c.Read(ctx)
	if err != nil {
		tb.Fatalf("read: %v", err)
	}
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		tb.Fatalf("message %s: %v", data, err)
	}
	return m
}

// readClose reads until the connection ends and returns its close status.
func readClose(tb testing.TB, c *websocket.Conn, within time.Duration) websocket.StatusCode {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// waitCount polls hub.Count until it equals n.
func waitCount(tb testing.TB, hub *ws.Hub, n int) {
	tb.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for hub.Count() != n {
		if time.Now().After(deadline) {
			tb.Fatalf("hub has %d subscribers, want %d", hub.Count(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPublishAudience(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	srv := MustStartHub(t, hub)
	clients := map[string]*websocket.Conn{
		"user1":  dial(t, srv, 1, 1, "s1"),
		"user1b": dial(t, srv, 1, 1, "s1b"),
		"user2":  dial(t, srv, 2, 1, "s2"),
		"admin3": dial(t, srv, 3, 10, "s3"),
		"root4":  dial(t, srv, 4, 100, "s4"),
	}
	if hub.Count() != 5 {
		t.Fatalf("Count = %d, want 5", hub.Count())
	}

	hub.Publish(ws.Audience{UserID: 1}, "to-user-1", nil)
	hub.Publish(ws.Audience{MinRole: 10}, "to-admins", nil)
	hub.Publish(ws.Audience{MaxRole: 1}, "to-common", nil)
	hub.Publish(ws.Audience{UserID: 3, MinRole: 100}, "to-nobody", nil)
	hub.Publish(ws.Audience{UserID: 99}, "to-absent", nil)
	hub.Publish(ws.Audience{UserID: 4, MinRole: 10}, "to-root-4", map[string]int{"n": 4})
	// Everyone gets the marker; what came before it is what each was sent.
	hub.Publish(ws.Audience{}, "marker", nil)

	want := map[string][]string{
		"user1":  {"to-user-1", "to-common"},
		"user1b": {"to-user-1", "to-common"},
		"user2":  {"to-common"},
		"admin3": {"to-admins"},
		"root4":  {"to-admins", "to-root-4"},
	}
	for name, c := range clients {
		var got []string
		for {
			m := read(t, c)
			if m.Topic == "marker" {
				break
			}
			got = append(got, m.Topic)
			if m.Topic == "to-root-4" && string(m.Data) != `{"n":4}` {
				t.Errorf("data = %s", m.Data)
			}
		}
		if strings.Join(got, ",") != strings.Join(want[name], ",") {
			t.Errorf("%s received %v, want %v", name, got, want[name])
		}
	}

	// An unencodable payload is dropped, not sent half-made.
	hub.Publish(ws.Audience{}, "bad", func() {})
	hub.Publish(ws.Audience{}, "after-bad", nil)
	if m := read(t, clients["user2"]); m.Topic != "after-bad" {
		t.Fatalf("after an unencodable message got %+v", m)
	}
}

// publishWithin publishes to everyone and fails the test, rather than
// hanging it, when Publish does not return within d.
func publishWithin(tb testing.TB, hub *ws.Hub, d time.Duration, topic string, data any) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		hub.Publish(ws.Audience{}, topic, data)
	}()
	select {
	case <-done:
	case <-time.After(d):
		tb.Fatalf("Publish(%q) blocked for %v", topic, d)
	}
}

func TestSlowSubscriberDropped(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	hub.SendBuffer = 1
	hub.WriteTimeout = time.Minute // the drop must come from Publish, not a write timeout
	srv := MustStartHub(t, hub)
	slow := dialSlow(t, srv, 1, 1, "slow") // never reads again
	fast := dial(t, srv, 2, 1, "fast")

	payload := strings.Repeat("x", 64<<10)
	dropped := false
	for i := 0; i < 1000 && !dropped; i++ {
		publishWithin(t, hub, 10*time.Second, "big", payload)
		// The fast reader keeps up: its queue is empty before the next publish.
		if m := read(t, fast); m.Topic != "big" {
			t.Fatalf("fast got %q", m.Topic)
		}
		dropped = hub.Count() == 1
	}
	if !dropped {
		t.Fatalf("the slow subscriber was never dropped (Count = %d)", hub.Count())
	}
	// The fast one is unaffected.
	publishWithin(t, hub, 10*time.Second, "after", nil)
	if m := read(t, fast); m.Topic != "after" {
		t.Fatalf("fast got %q after the drop", m.Topic)
	}
	// The slow client's connection is ended. (Its close frame may never get
	// through the blocked writer; the close code of a drop is checked
	// directly in TestPublishDropsFullQueue.)
	readClose(t, slow, 15*time.Second)
}

func TestDisconnect(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	srv := MustStartHub(t, hub)
	a1 := dial(t, srv, 1, 1, "session-a1")
	a2 := dial(t, srv, 1, 1, "session-a2")
	b := dial(t, srv, 2, 1, "session-b")

	hub.DisconnectSession("")            // no session: nothing happens
	hub.DisconnectSession("no-such-one") // unknown: nothing happens
	hub.DisconnectSession("session-a1")
	if got := readClose(t, a1, 15*time.Second); got != ws.CloseUnauthorized {
		t.Fatalf("a1 closed with %d, want %d", got, ws.CloseUnauthorized)
	}
	waitCount(t, hub, 2)
	hub.Publish(ws.Audience{UserID: 1}, "still-here", nil)
	if m := read(t, a2); m.Topic != "still-here" {
		t.Fatalf("a2 got %q", m.Topic)
	}

	hub.Disconnect(1)
	if got := readClose(t, a2, 15*time.Second); got != ws.CloseUnauthorized {
		t.Fatalf("a2 closed with %d, want %d", got, ws.CloseUnauthorized)
	}
	waitCount(t, hub, 1)
	hub.Publish(ws.Audience{}, "for-b", nil)
	if m := read(t, b); m.Topic != "for-b" {
		t.Fatalf("b got %q", m.Topic)
	}

	// A client that goes away unsubscribes.
	b.Close(websocket.StatusNormalClosure, "")
	waitCount(t, hub, 0)
}

func TestOrigin(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	hub.OriginPatterns = []string{"console.example.com"}
	srv := MustStartHub(t, hub)
	for _, tt := range []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{srv.URL, true},
		{"https://console.example.com", true},
		{"https://evil.example.com", false},
		{"null", false},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		h := http.Header{}
		if tt.origin != "" {
			h.Set("Origin", tt.origin)
		}
		c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/?uid=1&role=1", &websocket.DialOptions{HTTPHeader: h})
		cancel()
		if tt.ok && err != nil {
			t.Errorf("origin %q refused: %v", tt.origin, err)
		}
		if !tt.ok && (err == nil || resp == nil || resp.StatusCode != http.StatusForbidden) {
			t.Errorf("origin %q: err %v, resp %v; want 403", tt.origin, err, resp)
		}
		if c != nil {
			c.CloseNow()
		}
	}
}

func TestMoveSession(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	srv := MustStartHub(t, hub)
	mine := dial(t, srv, 1, 1, "old")
	foreign := dial(t, srv, 2, 1, "old") // another user under the same tag
	bystander := dial(t, srv, 1, 1, "elsewhere")

	hub.MoveSession("", ws.Identity{UserID: 1, Role: 1, Session: "new"}) // nothing to move
	hub.MoveSession("old", ws.Identity{UserID: 1, Role: 1, Session: "new"})
	if got := readClose(t, foreign, 15*time.Second); got != ws.CloseUnauthorized {
		t.Fatalf("foreign socket closed with %d, want %d", got, ws.CloseUnauthorized)
	}
	waitCount(t, hub, 2)
	hub.DisconnectSession("old") // the old tag names nothing any more
	hub.Publish(ws.Audience{UserID: 1}, "still-here", nil)
	if m := read(t, mine); m.Topic != "still-here" {
		t.Fatalf("moved socket got %q", m.Topic)
	}
	hub.DisconnectSession("new")
	if got := readClose(t, mine, 15*time.Second); got != ws.CloseUnauthorized {
		t.Fatalf("moved socket closed with %d, want %d", got, ws.CloseUnauthorized)
	}
	waitCount(t, hub, 1)
	if m := read(t, bystander); m.Topic != "still-here" {
		t.Fatalf("bystander got %q", m.Topic)
	}
}

// latencyProxy forwards TCP connections to addr, handing every chunk on d
// after it was read, in order, both ways: a network with a round trip of 2d
// and room for all that is sent.
func latencyProxy(tb testing.TB, addr string, d time.Duration) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	pipe := func(dst, src net.Conn) {
		type chunk struct {
			at time.Time
			b  []byte
		}
		chunks := make(chan chunk, 1<<14)
		go func() {
			defer close(chunks)
			for {
				buf := make([]byte, 32<<10)
				n, err := src.Read(buf)
				if n > 0 {
					chunks <- chunk{time.Now().Add(d), buf[:n]}
				}
				if err != nil {
					return
				}
			}
		}()
		for c := range chunks {
			time.Sleep(time.Until(c.at))
			if _, err := dst.Write(c.b); err != nil {
				break
			}
		}
		dst.Close()
		src.Close()
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			go pipe(c, up)
			go pipe(up, c)
		}
	}()
	return ln.Addr().String()
}

// A console on a distant network that reads all it is sent keeps its
// socket under a steady stream of messages: the ping that checks the
// connection every PingInterval waits a round trip for its pong, and the
// messages published meanwhile must go out, not pile up in the queue until
// the connection is closed as too slow.
func TestPingDoesNotHoldMessages(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	hub.PingInterval = 100 * time.Millisecond
	srv := MustStartHub(t, hub)
	far := latencyProxy(t, srv.Listener.Addr().String(), 100*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+far+"/?uid=1&role=1&session=far", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	if m := read(t, c); m.Topic != "hello" {
		t.Fatalf("first message = %+v, want hello", m)
	}
	received := make(chan int, 1)
	closed := make(chan websocket.StatusCode, 1)
	go func() {
		n := 0
		for {
			_, data, err := c.Read(context.Background())
			if err != nil {
				closed <- websocket.CloseStatus(err)
				return
			}
			if strings.Contains(string(data), `"end"`) {
				received <- n
				return
			}
			n++
		}
	}()
	// A thousand messages a second for two seconds (a busy gateway's log
	// tail, balances and token usage): 200 of them in a round trip, several
	// pings meanwhile.
	const sent = 2000
	start := time.Now()
	for i := range sent {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Millisecond)))
		publishWithin(t, hub, 10*time.Second, "msg", i)
	}
	publishWithin(t, hub, 10*time.Second, "end", nil)
	select {
	case n := <-received:
		if n != sent {
			t.Fatalf("received %d messages, want %d", n, sent)
		}
	case code := <-closed:
		t.Fatalf("the far console was closed (%v) though it read everything it got", code)
	case <-time.After(15 * time.Second):
		t.Fatal("the far console got neither its messages nor a close")
	}
}
