package api_test

import (
	"runtime"
	"testing"
	"time"

	"gateway/api"
	"gateway/store"
)

// A channel that keeps failing and passing its test is disabled again and
// again; while the mail server stalls, the mails to root wait for one of
// the two senders. What waits must be bounded, not one goroutine per
// disable for as long as the stall lasts.
func TestChannelMail_SlowMailHoldsNoGoroutinePerMail(t *testing.T) {
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "SMTPServer", "smtp.example.com")
	email := "root@example.com"
	if _, err := ts.Store.UpdateUser(ts.UserID(t, "root"), store.UserUpdate{Email: &email}); err != nil {
		t.Fatal(err)
	}
	rec := &mailRecorder{hold: make(chan struct{})}
	m := api.NewChannelMailer(ts.Store, rec.send)
	ch := &store.Channel{ID: 7, Name: "flapping"}
	before := runtime.NumGoroutine()
	const disables = 400
	for range disables {
		m.ChannelDisabled(ch)
	}
	time.Sleep(200 * time.Millisecond)
	if got := runtime.NumGoroutine() - before; got > 2+10 {
		t.Errorf("%d goroutines more while %d channel mails wait for a stalled mail server, want at most the 2 senders", got, disables)
	}
	close(rec.hold)
	m.Wait()
	if got := len(rec.take()); got == 0 || got > disables {
		t.Fatalf("%d mails sent once the server answered", got)
	}
}
