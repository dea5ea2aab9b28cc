package ws_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"gateway/ws"
)

// One account cannot pile up connections: beyond MaxPerUser its oldest is
// closed; beyond MaxTotal new ones are refused. Other accounts keep theirs.
func TestConnectionLimits(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	hub.MaxPerUser, hub.MaxTotal = 2, 4
	srv := MustStartHub(t, hub)
	first := dial(t, srv, 1, 1, "a")
	dial(t, srv, 1, 1, "a")
	other := dial(t, srv, 2, 1, "b")
	dial(t, srv, 1, 1, "a") // the third of user 1 closes its first
	if code := readClose(t, first, 15*time.Second); code != ws.CloseReplaced {
		t.Fatalf("oldest connection closed with %v", code)
	}
	waitCount(t, hub, 3)
	dial(t, srv, 3, 1, "c")
	waitCount(t, hub, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/?uid=5&role=1", nil); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		if c != nil {
			c.CloseNow()
		}
		t.Fatalf("a connection beyond MaxTotal: err %v, resp %v", err, resp)
	}
	hub.Publish(ws.Audience{UserID: 2}, "still", nil)
	if m := read(t, other); m.Topic != "still" {
		t.Fatalf("user 2 got %q", m.Topic)
	}
}

// A connection lives only while its Valid says so: it is asked once the
// connection is registered and at every ping.
func TestValidChecked(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	hub.PingInterval = 20 * time.Millisecond
	var valid atomic.Bool
	valid.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hub.Serve(w, r, ws.Identity{UserID: 7, Role: 10, Valid: valid.Load}, func() []ws.Message { return []ws.Message{{Topic: "hello"}} })
	}))
	t.Cleanup(srv.Close)
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := read(t, c); m.Topic != "hello" {
		t.Fatalf("first message %q", m.Topic)
	}
	valid.Store(false) // e.g. the session expired or the role changed
	if code := readClose(t, c, 15*time.Second); code != ws.CloseUnauthorized {
		t.Fatalf("closed with %v, want %v", code, ws.CloseUnauthorized)
	}
	waitCount(t, hub, 0)
	// Already invalid when registered: closed before any message.
	c, _, err = websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code := readClose(t, c, 15*time.Second); code != ws.CloseUnauthorized {
		t.Fatalf("closed with %v, want %v", code, ws.CloseUnauthorized)
	}
}

// Origins adds allowed origins at each upgrade (the configured public
// address), so a change applies to the next connection.
func TestOriginsFunc(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	var public atomic.Value
	public.Store("")
	hub.Origins = func() []string {
		if p := public.Load().(string); p != "" {
			return []string{p}
		}
		return nil
	}
	srv := MustStartHub(t, hub)
	try := func() *http.Response {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		h := http.Header{"Origin": []string{"https://gw.example.com"}}
		c, resp, _ := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/?uid=1&role=1", &websocket.DialOptions{HTTPHeader: h})
		if c != nil {
			c.CloseNow()
		}
		return resp
	}
	if resp := try(); resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("an unconfigured origin: %v", resp)
	}
	public.Store("gw.example.com")
	if resp := try(); resp == nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("the configured origin: %v", resp)
	}
}

// A client that sends a message is not a console: it is closed with a
// policy violation and stops counting at once, not after the library's
// 15 s wait for its own reader.
func TestDataMessageCloses(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	srv := MustStartHub(t, hub)
	c := dial(t, srv, 1, 1, "a")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"subscribe":"everything"}`)); err != nil {
		t.Fatal(err)
	}
	if code := readClose(t, c, 15*time.Second); code != websocket.StatusPolicyViolation {
		t.Fatalf("closed with %v, want %v", code, websocket.StatusPolicyViolation)
	}
	deadline := time.Now().Add(5 * time.Second)
	for hub.Count() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the closed connection still counts 5 s later")
		}
		time.Sleep(time.Millisecond)
	}
}

// A socket moved to a new login session is checked against that session
// from then on; one opened with another role than the new session's is
// closed instead of moved.
func TestMoveSessionReplacesValid(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	hub.PingInterval = 20 * time.Millisecond
	var oldAlive, newAlive atomic.Bool
	oldAlive.Store(true)
	newAlive.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		role, _ := strconv.Atoi(r.URL.Query().Get("role"))
		hub.Serve(w, r, ws.Identity{UserID: 7, Role: role, Session: "old", Valid: oldAlive.Load},
			func() []ws.Message { return []ws.Message{{Topic: "hello"}} })
	}))
	t.Cleanup(srv.Close)
	open := func(role int) *websocket.Conn {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/?role="+strconv.Itoa(role), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		if m := read(t, c); m.Topic != "hello" {
			t.Fatalf("first message %q", m.Topic)
		}
		return c
	}
	user := open(1)
	admin := open(10) // opened before a demotion to role 1
	waitCount(t, hub, 2)

	hub.MoveSession("old", ws.Identity{UserID: 7, Role: 1, Session: "new", Valid: newAlive.Load})
	if code := readClose(t, admin, 15*time.Second); code != ws.CloseUnauthorized {
		t.Fatalf("the socket of the old role closed with %v, want %v", code, ws.CloseUnauthorized)
	}
	oldAlive.Store(false) // the old session was deleted by the new login
	time.Sleep(10 * hub.PingInterval)
	hub.Publish(ws.Audience{UserID: 7}, "still-here", nil)
	if m := read(t, user); m.Topic != "still-here" {
		t.Fatalf("moved socket got %q", m.Topic)
	}
	newAlive.Store(false)
	if code := readClose(t, user, 15*time.Second); code != ws.CloseUnauthorized {
		t.Fatalf("moved socket closed with %v, want %v", code, ws.CloseUnauthorized)
	}
}

// A check that fails at a ping is asked again after ValidGrace before the
// connection is closed: a login in the same browser ends the old session a
// moment before the connection is handed the new one.
func TestValidGrace(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	hub.PingInterval, hub.ValidGrace = 10*time.Millisecond, 500*time.Millisecond
	var valid atomic.Bool
	valid.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hub.Serve(w, r, ws.Identity{UserID: 7, Role: 1, Valid: valid.Load}, func() []ws.Message { return []ws.Message{{Topic: "hello"}} })
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	if m := read(t, c); m.Topic != "hello" {
		t.Fatalf("first message %q", m.Topic)
	}
	valid.Store(false)
	time.Sleep(50 * time.Millisecond) // several pings find it invalid
	valid.Store(true)                 // and then valid again, within the grace
	time.Sleep(hub.ValidGrace + 100*time.Millisecond)
	hub.Publish(ws.Audience{UserID: 7}, "still-here", nil)
	if m := read(t, c); m.Topic != "still-here" {
		t.Fatalf("got %q", m.Topic)
	}
	valid.Store(false)
	if code := readClose(t, c, 15*time.Second); code != ws.CloseUnauthorized {
		t.Fatalf("closed with %v, want %v", code, ws.CloseUnauthorized)
	}
}

// A connection upgraded after CloseAll (its upgrade was under way when the
// server began shutting down) closes with 1001 as the others did, instead
// of staying open, and counted, until the process ends under it.
func TestCloseAllClosesLaterConnections(t *testing.T) {
	t.Parallel()
	hub := ws.NewHub()
	srv := MustStartHub(t, hub)
	before := dial(t, srv, 1, 1, "a")
	hub.CloseAll()
	if code := readClose(t, before, 15*time.Second); code != websocket.StatusGoingAway {
		t.Fatalf("a connection open at CloseAll closed with %v", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	late, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/?uid=2&role=1&session=b", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { late.CloseNow() })
	if code := readClose(t, late, 3*time.Second); code != websocket.StatusGoingAway {
		t.Fatalf("a connection upgraded after CloseAll ended with %v, want %v (the hub holds %d)", code, websocket.StatusGoingAway, hub.Count())
	}
	waitCount(t, hub, 0)
}
