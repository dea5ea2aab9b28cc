package api

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"sync"
	"time"

	"gateway/store"
)

// MailFunc sends one HTML mail.
type MailFunc func(ctx context.Context, to, subject, body string) error

// QuotaReminder mails a user once when their live balance falls below
// QuotaRemindThreshold, with a link to the wallet, and not again until the
// balance has been seen back at or above the threshold; and once when it
// runs out (zero or less), even after the low warning, and not again until
// it has been seen above zero (S §5.8: "crosses below QuotaRemindThreshold,
// or drops to ≤ 0").
// It learns balances from the ledger's committed charges (Observe, for the
// store's Charged hook) and from every other change of a user (Seen). What it remembers lives in memory: after a restart
// a user who is still low gets at most one more reminder.
type QuotaReminder struct {
	store *store.Store
	send  MailFunc

	now func() time.Time

	mu       sync.Mutex
	reminded map[uint64]int // how far down the user was already reminded (or skipped): remindedLow or remindedOut
	// failed holds when the mail server last refused a user's reminder:
	// a later charge tries it again, once reminderRetryWait has passed.
	failed map[uint64]time.Time
	// queue holds the reminders waiting for the mail server.
	queue *mailQueue[reminder]
	// latest holds the number of each user's newest reminder queued and
	// not yet finished, so that a refused mail undoes only its own record,
	// not one queued after it (the balance recovered and fell again while
	// it was being sent).
	latest map[uint64]uint64
	seq    uint64
}

// reminder is a queued mail: the balance it tells and its number.
type reminder struct {
	bal store.Balance
	seq uint64
}

// The reminders a user got while their balance stays down.
const (
	remindedLow = 1 // below the threshold
	remindedOut = 2 // at zero or less
)

// maxReminderSends bounds the mails being sent at once.
const maxReminderSends = 4

// maxReminderQueue bounds the reminders waiting for a sender. One beyond
// it is not recorded as sent: the user's next charge tries again.
const maxReminderQueue = 1024

// reminderRetryWait is how long a reminder the mail server refused waits
// before a charge of the user tries it again: a server down for a while is
// not asked again on every call of every user running low.
const reminderRetryWait = 10 * time.Minute

// NewQuotaReminder returns a reminder that sends through send.
func NewQuotaReminder(st *store.Store, send MailFunc) *QuotaReminder {
	q := &QuotaReminder{store: st, send: send, now: time.Now, reminded: map[uint64]int{}, failed: map[uint64]time.Time{},
		latest: map[uint64]uint64{}}
	q.queue = &mailQueue[reminder]{maxWaiting: maxReminderQueue, maxSenders: maxReminderSends, send: q.remind}
	return q
}

// quotaReminders holds each server's reminder: Server has no field for it,
// and a second call must not forget who was already reminded.
var quotaReminders sync.Map // *Server -> *QuotaReminder

// QuotaReminder returns the server's reminder, which sends with the SMTP
// settings in force (as the verification mails do). Every call returns the
// same one; wire it as Hooks.Charged → QuotaReminder().Observe.
func (s *Server) QuotaReminder() *QuotaReminder {
	if q, ok := quotaReminders.Load(s); ok {
		return q.(*QuotaReminder)
	}
	q, _ := quotaReminders.LoadOrStore(s, NewQuotaReminder(s.store, s.sendMail))
	return q.(*QuotaReminder)
}

// Observe looks at the balances of a committed charge batch. It never
// blocks on mail: reminders are sent in the background. Nothing is sent
// while SMTP is not configured.
func (q *QuotaReminder) Observe(b store.ChargeBatch) {
	set := q.store.Settings()
	if set.Get("SMTPServer") == "" {
		return
	}
	threshold := set.Int("QuotaRemindThreshold")
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, bal := range b.Balances {
		level := 0
		switch {
		case bal.Quota <= 0:
			level = remindedOut
		case bal.Quota < threshold:
			level = remindedLow
		}
		switch had := q.reminded[bal.UserID]; {
		case level == 0:
			delete(q.reminded, bal.UserID)
			delete(q.failed, bal.UserID)
		case level > had:
			if at, ok := q.failed[bal.UserID]; ok && q.now().Sub(at) < reminderRetryWait {
				continue
			}
			q.seq++
			if q.queue.push(reminder{bal: bal, seq: q.seq}) {
				q.reminded[bal.UserID] = level
				q.latest[bal.UserID] = q.seq
			}
		case level < had:
			// Back above zero, still low: running out is mailed again.
			q.reminded[bal.UserID] = level
		}
	}
}

// Seen looks at a balance changed by anything but a charge (a redemption,
// a payment, an administrator): one back at or above the threshold re-arms
// the reminder, so the next fall below it is mailed again; one back above
// zero re-arms the mail that the quota ran out. It is wired to the store's
// UserChanged hook.
func (q *QuotaReminder) Seen(userID uint64, quota int64) {
	threshold := q.store.Settings().Int("QuotaRemindThreshold")
	if quota <= 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case quota >= threshold:
		delete(q.reminded, userID)
		delete(q.failed, userID)
	case q.reminded[userID] == remindedOut:
		// Above zero again but still low: the next time the balance runs
		// out is mailed, the low warning is not repeated.
		q.reminded[userID] = remindedLow
	}
}

// Wait blocks until every reminder being sent has finished (tests, shutdown).
func (q *QuotaReminder) Wait() { q.queue.wait() }

// remind sends m and records what came of it.
func (q *QuotaReminder) remind(m reminder) {
	bal := m.bal
	err := q.mail(bal)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.latest[bal.UserID] != m.seq {
		// A reminder queued after this one decides what is recorded.
		return
	}
	delete(q.latest, bal.UserID)
	if err == nil {
		delete(q.failed, bal.UserID)
		return
	}
	level := remindedLow
	if bal.Quota <= 0 {
		level = remindedOut
	}
	// Not sent: unless the balance moved on meanwhile, the reminder counts
	// as not given, as one the queue had no room for.
	if q.reminded[bal.UserID] == level {
		if level == remindedLow {
			delete(q.reminded, bal.UserID)
		} else {
			q.reminded[bal.UserID] = remindedLow
		}
		q.failed[bal.UserID] = q.now()
	}
}

// mail sends the reminder of bal; a user without an address, deleted or
// disabled gets none, which is no failure.
func (q *QuotaReminder) mail(bal store.Balance) error {
	u, err := q.store.User(bal.UserID)
	if err != nil || u.Email == "" || u.Deleted() || u.Status != store.UserStatusEnabled {
		return nil
	}
	set := q.store.Settings()
	subject := "您的额度即将用尽"
	if bal.Quota <= 0 {
		subject = "您的额度已用尽"
	}
	link := html.EscapeString(set.ServerAddress() + "/topup")
	body := fmt.Sprintf("<p>您好！</p><p>%s，当前剩余额度为 %s，为了不影响您的使用，请及时充值。</p><p>充值链接：<a href=\"%s\">%s</a></p>",
		subject, html.EscapeString(q.store.FormatQuota(bal.Quota)), link, link)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = q.send(ctx, u.Email, set.Get("SystemName")+" "+subject, body)
	if err != nil {
		slog.Warn("quota reminder not sent: a later charge tries again", "user", u.ID, "err", err)
	}
	return err
}
