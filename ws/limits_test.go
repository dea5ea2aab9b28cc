package ws_test

import (
	"context"
	"net/http"
	"net/http/httptest"
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
	if code := readClose(t, first, 15*time.Second); code != websocket.StatusPolicyViolation {
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
		hub.Serve(w, r, ws.Identity{UserID: 7, Role: 10, Valid: valid.Load}, ws.Message{Topic: "hello"})
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
