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
	h.add(slow)
	h.add(other)

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

// BenchmarkPublishAmongMany publishes one user's message and one
// administrators' message with 10 000 other consoles connected: the cost
// follows the connections addressed, not all of them.
func BenchmarkPublishAmongMany(b *testing.B) {
	h := NewHub()
	h.MaxTotal = 0
	for i := range 10000 {
		h.add(&subscriber{id: Identity{UserID: uint64(100 + i), Role: 1}, msgs: make(chan []byte, 1),
			kick: func(websocket.StatusCode, string) {}})
	}
	mine := &subscriber{id: Identity{UserID: 1, Role: 1}, msgs: make(chan []byte, 2), kick: func(websocket.StatusCode, string) {}}
	admin := &subscriber{id: Identity{UserID: 2, Role: 100}, msgs: make(chan []byte, 2), kick: func(websocket.StatusCode, string) {}}
	h.add(mine)
	h.add(admin)
	data := map[string]int64{"quota": 1}
	b.ReportAllocs()
	for b.Loop() {
		h.Publish(Audience{UserID: 1}, "user.self", data)
		h.Publish(Audience{MinRole: 10}, "log.tail", []map[string]int64{data})
		<-mine.msgs
		<-admin.msgs
	}
	if h.Count() != 10002 {
		b.Fatalf("Count = %d", h.Count())
	}
}
