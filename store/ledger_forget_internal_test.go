package store

import (
	"path/filepath"
	"sync"
	"testing"
)

// Tokens that come and go (one per customer, made and deleted through the
// API) leave nothing in memory: a deleted token's live balance is dropped at
// once, or, when a call still holds some of it, once the last such call
// settles or is refunded. The user keeps every charge.
func TestDeletedTokensLeaveMemory(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "forget.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, err := s.CreateUser(NewUser{Username: "churn", Password: "password1", Quota: 10_000_000})
	if err != nil {
		t.Fatal(err)
	}
	live := func() int {
		s.ledger.mu.Lock()
		defer s.ledger.mu.Unlock()
		return len(s.ledger.tokens)
	}
	const n = 50
	var open []*Reservation
	for i := range n {
		tok, err := s.CreateToken(&Token{UserID: u.ID, Name: "t", RemainQuota: 100_000, ExpiredTime: -1})
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Reserve(u.ID, tok.ID, 1_000)
		if err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			// Deleted while its call is still running.
			open = append(open, r)
		} else if err := s.Settle(r, 0, 700, &Log{UserID: u.ID, TokenID: tok.ID, Type: LogTypeConsume, ModelName: "m", Quota: 700}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteToken(u.ID, tok.ID); err != nil {
			t.Fatal(err)
		}
	}
	if got := live(); got != len(open) {
		t.Fatalf("%d deleted tokens in memory, want the %d still held by a call", got, len(open))
	}
	for i, r := range open {
		if i%2 == 0 {
			s.Refund(r)
		} else if err := s.Settle(r, 0, 700, &Log{UserID: u.ID, TokenID: r.TokenID, Type: LogTypeConsume, ModelName: "m", Quota: 700}); err != nil {
			t.Fatal(err)
		}
	}
	if got := live(); got != 0 {
		t.Fatalf("%d deleted tokens still in memory after their calls ended", got)
	}
	settled := n - len(open)/2
	got, err := s.User(u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(10_000_000 - 700*settled); got.Quota != want || got.UsedQuota != int64(700*settled) {
		t.Fatalf("quota %d used %d, want %d and %d", got.Quota, got.UsedQuota, want, 700*settled)
	}
}

// A call's first use of a token reads it from the file without the ledger's
// lock: a delete committed meanwhile must not find the token missing from
// memory, and the read then put it there for good, holding quota of a token
// already deleted. Such a call is refused as for any deleted token.
func TestTokenDeletedWhileACallLoadsItLeavesMemory(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "forget-load.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, err := s.CreateUser(NewUser{Username: "churn", Password: "password1", Quota: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	for range 3000 {
		tok, err := s.CreateToken(&Token{UserID: u.ID, Name: "t", RemainQuota: 100_000, ExpiredTime: -1})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var r *Reservation
		wg.Go(func() { r, _ = s.Reserve(u.ID, tok.ID, 10) })
		wg.Go(func() {
			if err := s.DeleteToken(u.ID, tok.ID); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		s.Refund(r)
	}
	s.ledger.mu.Lock()
	n := len(s.ledger.tokens)
	s.ledger.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d deleted tokens in memory after their calls ended", n)
	}
}
