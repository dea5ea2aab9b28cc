package store

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// openPayer opens a store with a user holding 1 000 quota.
func openPayer(t *testing.T) (*Store, *User) {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "ledger.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	u, err := s.CreateUser(NewUser{Username: "payer", Password: "password1", Quota: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return s, u
}

// A charge the closed ledger refuses leaves memory as it leaves the file:
// the call counts as refunded, not as charged in memory only.
func TestSettleRefusedLeavesMemoryAsTheFile(t *testing.T) {
	s, u := openPayer(t)
	tok, err := s.CreateToken(&Token{UserID: u.ID, Name: "t", RemainQuota: 500})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Reserve(u.ID, tok.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	s.ledger.close()
	if err := s.Settle(r, 0, 80, &Log{UserID: u.ID, Type: LogTypeConsume, TokenID: tok.ID, ModelName: "m", Quota: 80}); ErrorCode(err) != EUNAVAILABLE {
		t.Fatalf("settle on a closed ledger: %v", err)
	}
	s.ledger.mu.Lock()
	ub, tb := *s.ledger.users[u.ID], *s.ledger.tokens[tok.ID]
	s.ledger.mu.Unlock()
	if ub.quota != 1000 || ub.used != 0 || ub.count != 0 || tb.remain != 500 || tb.used != 0 {
		t.Fatalf("live balances after a refused charge: user %+v, token %+v", ub, tb)
	}
}

// A charge that cannot be written does not take the others of its batch
// with it: the batch is retried one charge at a time.
func TestCommitIsolatesAFailingCharge(t *testing.T) {
	s, u := openPayer(t)
	good := &charge{userID: u.ID, quota: 10, writeLog: true, done: make(chan error, 1),
		log: &Log{UserID: u.ID, Username: "payer", Type: LogTypeConsume, ModelName: "m", Quota: 10, CreatedAt: 1}}
	bad := &charge{userID: 9999, quota: 5, done: make(chan error, 1)} // no such user in the file
	s.ledger.commit([]*charge{good, bad})
	if err := <-good.done; err != nil {
		t.Fatalf("the good charge failed with its batch: %v", err)
	}
	if err := <-bad.done; err == nil {
		t.Fatal("the charge of a missing user was written")
	}
	var stored *User
	if err := s.db.View(func(tx *bolt.Tx) (err error) {
		stored, err = getUser(tx, u.ID)
		return
	}); err != nil {
		t.Fatal(err)
	}
	if stored.UsedQuota != 10 || stored.Quota != 990 || stored.RequestCount != 1 {
		t.Fatalf("stored user after the batch: %+v", stored)
	}
}
