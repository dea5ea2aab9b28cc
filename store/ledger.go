package store

import "sync"

// balanceDelta is a change to a user's live balance.
type balanceDelta struct {
	user  uint64
	quota int64
	used  int64
	count int64
}

// liveBalance is the in-memory authority for one user's balance while the
// process owns the file: committed value minus open reservations.
type liveBalance struct {
	quota, used, count int64
}

// ledger holds live balances. Entries are loaded lazily on first use and
// never evicted, so a balance missing from memory has no pending change.
type ledger struct {
	mu    sync.Mutex
	users map[uint64]*liveBalance
}

// credit applies committed deltas to the live balances that are loaded.
func (l *ledger) credit(ds []balanceDelta) {
	if len(ds) == 0 {
		return
	}
	l.mu.Lock()
	for _, d := range ds {
		if b := l.users[d.user]; b != nil {
			b.quota += d.quota
			b.used += d.used
			b.count += d.count
		}
	}
	l.mu.Unlock()
}

// overlay replaces the committed balance fields of u with the live ones.
func (l *ledger) overlay(u *User) {
	if u == nil {
		return
	}
	l.mu.Lock()
	if b := l.users[u.ID]; b != nil {
		u.Quota, u.UsedQuota, u.RequestCount = b.quota, b.used, b.count
	}
	l.mu.Unlock()
}
