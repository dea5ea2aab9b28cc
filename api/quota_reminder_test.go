package api_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
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

// A reminder the mail server refused (a 421 "try again later", a server
// down for a while) is not taken as sent: a later charge while the balance
// is still low tries it again, once the retry wait is over, and it is
// sent once.
func TestQuotaReminder_RefusedMailIsTriedAgain(t *testing.T) {
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "SMTPServer", "smtp.example.com", "QuotaRemindThreshold", "1000",
		"ServerAddress", "https://gw.example.com", "DisplayInCurrencyEnabled", "false")
	alice := ts.UserID(t, "alice")
	var mu sync.Mutex
	refuse, tries, sent := true, 0, 0
	send := func(ctx context.Context, to, subject, body string) error {
		mu.Lock()
		defer mu.Unlock()
		tries++
		if refuse {
			return errors.New("421 try again later")
		}
		sent++
		return nil
	}
	now := time.Unix(1_800_000_000, 0)
	q := api.NewQuotaReminder(ts.Store, send)
	api.SetReminderClock(q, func() time.Time { return now })
	observe := func(quota int64) (int, int) {
		q.Observe(store.ChargeBatch{Balances: []store.Balance{{UserID: alice, Quota: quota}}})
		q.Wait()
		mu.Lock()
		defer mu.Unlock()
		return tries, sent
	}
	if tries, sent := observe(10); tries != 1 || sent != 0 {
		t.Fatalf("first charge below the threshold: %d tries, %d sent", tries, sent)
	}
	// At once again: the server is not asked on every charge.
	if tries, _ := observe(9); tries != 1 {
		t.Fatalf("%d tries right after a refusal, want 1", tries)
	}
	mu.Lock()
	refuse = false
	mu.Unlock()
	now = now.Add(11 * time.Minute)
	if tries, sent := observe(8); tries != 2 || sent != 1 {
		t.Fatalf("a later charge, the server answering again: %d tries, %d sent; want 2 and 1", tries, sent)
	}
	if tries, sent := observe(7); tries != 2 || sent != 1 {
		t.Fatalf("after the reminder went out: %d tries, %d sent; want it sent once", tries, sent)
	}
}

// A reminder refused after the balance recovered and fell again while it
// was being sent does not undo the newer crossing's reminder, which was
// sent: the user is not mailed a third time when the retry wait is over.
func TestQuotaReminder_RefusalAfterANewerCrossing(t *testing.T) {
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "SMTPServer", "smtp.example.com", "QuotaRemindThreshold", "1000",
		"ServerAddress", "https://gw.example.com", "DisplayInCurrencyEnabled", "false")
	alice := ts.UserID(t, "alice")
	hold := make(chan struct{})
	var mu sync.Mutex
	tries := 0
	send := func(ctx context.Context, to, subject, body string) error {
		mu.Lock()
		tries++
		first := tries == 1
		mu.Unlock()
		if first {
			<-hold
			return errors.New("421 try again later")
		}
		return nil
	}
	now := time.Unix(1_800_000_000, 0)
	q := api.NewQuotaReminder(ts.Store, send)
	api.SetReminderClock(q, func() time.Time { return now })
	observe := func(quota int64) {
		q.Observe(store.ChargeBatch{Balances: []store.Balance{{UserID: alice, Quota: quota}}})
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return tries
	}
	observe(10) // the first mail hangs
	for deadline := time.Now().Add(5 * time.Second); count() < 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first reminder was not sent")
		}
	}
	q.Seen(alice, 5000) // topped up
	observe(20)         // and low again: a second reminder, sent
	for deadline := time.Now().Add(5 * time.Second); count() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second crossing's reminder was not sent")
		}
	}
	close(hold) // the first one is refused
	q.Wait()
	now = now.Add(11 * time.Minute)
	observe(15)
	q.Wait()
	if n := count(); n != 2 {
		t.Errorf("%d mails tried, want 2: the second crossing's reminder went out", n)
	}
}
