package api_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"gateway/api"
	"gateway/store"
)

// While the mail server is slow, users keep running low: the reminders
// wait for a sender, and what waits must not be one goroutine per user
// (a day of a stalled SMTP server on a busy gateway would be one per user
// who ran low that day). At most maxReminderSends mails are being sent, and
// the ones waiting are sent once the server answers again.
func TestQuotaReminder_SlowMailHoldsNoGoroutinePerUser(t *testing.T) {
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "SMTPServer", "smtp.example.com", "QuotaRemindThreshold", "1000",
		"ServerAddress", "https://gw.example.com", "DisplayInCurrencyEnabled", "false")
	// Four accounts with an address take every sender while the server
	// hangs.
	var ids []uint64
	for i := range 4 {
		u, err := ts.Store.CreateUser(store.NewUser{Username: fmt.Sprintf("low%d", i), Password: "password123",
			Email: fmt.Sprintf("low%d@example.com", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
	}
	rec := &mailRecorder{hold: make(chan struct{})}
	q := api.NewQuotaReminder(ts.Store, rec.send)
	before := runtime.NumGoroutine()
	const users = 400
	var b store.ChargeBatch
	for _, id := range ids {
		b.Balances = append(b.Balances, store.Balance{UserID: id, Quota: 10})
	}
	for i := range users {
		b.Balances = append(b.Balances, store.Balance{UserID: 1_000_000 + uint64(i), Quota: 10})
	}
	q.Observe(b)
	time.Sleep(200 * time.Millisecond)
	if got := runtime.NumGoroutine() - before; got > 4+10 {
		t.Errorf("%d goroutines more while %d reminders wait for a stalled mail server, want at most the 4 senders", got, users+len(ids))
	}
	close(rec.hold)
	q.Wait()
	if got := len(rec.take()); got != len(ids) {
		t.Fatalf("%d reminders sent once the server answered, want %d", got, len(ids))
	}
}
