package ws

import (
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestPublishDropsFullQueue checks the drop itself without a network: a
// subscriber whose queue is full is removed and kicked with a policy
// violation, and Publish does not wait for it.
func TestPublishDropsFullQueue(t *testing.T) {
	t.Parallel()
	h := NewHub()
	kicked := make(chan websocket.StatusCode, 2)
	slow := &subscriber{id: Identity{UserID: 1, Role: 1}, msgs: make(chan []byte, 1),
		kick: func(code websocket.StatusCode, _ string) { kicked <- code }}
	other := &subscriber{id: Identity{UserID: 2, Role: 1}, msgs: make(chan []byte, 8),
		kick: func(code websocket.StatusCode, _ string) { t.Errorf("other kicked with %d", code) }}
	h.subs[slow] = struct{}{}
	h.subs[other] = struct{}{}

	done := make(chan struct{})
	go func() {
		defer close(done)
		h.Publish(Audience{}, "one", nil) // fills slow's queue
		h.Publish(Audience{}, "two", nil) // finds it full
		h.Publish(Audience{}, "three", nil)
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Publish blocked on a full queue")
	}
	select {
	case code := <-kicked:
		if code != websocket.StatusPolicyViolation {
			t.Fatalf("kicked with %d, want %d", code, websocket.StatusPolicyViolation)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("slow subscriber was not kicked")
	}
	if h.Count() != 1 {
		t.Fatalf("Count = %d, want 1", h.Count())
	}
	if len(slow.msgs) != 1 || len(other.msgs) != 3 {
		t.Fatalf("queued: slow %d, other %d; want 1, 3", len(slow.msgs), len(other.msgs))
	}
	select {
	case code := <-kicked:
		t.Fatalf("kicked twice (%d)", code)
	default:
	}
}
