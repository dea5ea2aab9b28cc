package api

import "time"

// TurnstileHeldBytes is how many bytes of Turnstile tokens the server keeps
// to refuse their reuse.
func TurnstileHeldBytes(s *Server) int {
	s.turnstile.mu.Lock()
	defer s.turnstile.mu.Unlock()
	n := 0
	for t := range s.turnstile.used {
		n += len(t)
	}
	return n
}

// TestLimiter is a per-IP rate limiter reading the time from now.
type TestLimiter struct{ l *limiter }

func NewTestLimiter(cfg RateLimit, now func() time.Time) *TestLimiter {
	l := newLimiterClock(cfg, now)
	l.stop()
	return &TestLimiter{l}
}

func (t *TestLimiter) Allow(ip string) bool { return t.l.allow(ip) }

// Prune runs one sweep and returns how many addresses the limiter remembers.
func (t *TestLimiter) Prune() int {
	t.l.prune()
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	return len(t.l.ips)
}

// SetReminderClock makes q read the time from now.
func SetReminderClock(q *QuotaReminder, now func() time.Time) { q.now = now }
