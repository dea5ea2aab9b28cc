package relay

import (
	"testing"
	"time"
)

// A job of N ticks runs at every Nth tick, whether a tick comes a moment
// early or late; 0 never runs it.
func TestPeriodDue(t *testing.T) {
	const tick = time.Minute
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, n := range []int{1, 2, 5} {
		every := time.Duration(n) * tick
		var last time.Time
		runs := 0
		for i := 1; i <= 60; i++ {
			// Ticks wander by up to ±3 ms around the minute.
			now := start.Add(time.Duration(i)*tick + time.Duration((i%7)-3)*time.Millisecond)
			if periodDue(now, last, every, tick) {
				runs++
				last = now
			}
		}
		if runs != 60/n {
			t.Errorf("every %d ticks: %d runs in 60 ticks, want %d", n, runs, 60/n)
		}
	}
	if periodDue(start.Add(time.Hour), time.Time{}, 0, tick) {
		t.Error("an interval of 0 ran")
	}
}
