package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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

// openPayerWithHold is openPayer with a token of 500 and a call holding 100.
func openPayerWithHold(t *testing.T) (*Store, *User, *Token, *Reservation) {
	t.Helper()
	s, u := openPayer(t)
	tok, err := s.CreateToken(&Token{UserID: u.ID, Name: "t", RemainQuota: 500})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Reserve(u.ID, tok.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	return s, u, tok, r
}

// A charge the closed ledger refuses leaves memory as it leaves the file:
// the call counts as refunded, not as charged in memory only.
func TestSettleRefusedLeavesMemoryAsTheFile(t *testing.T) {
	s, u, tok, r := openPayerWithHold(t)
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
	stored := fileUser(t, s, u.ID)
	if stored.UsedQuota != 10 || stored.Quota != 990 || stored.RequestCount != 1 {
		t.Fatalf("stored user after the batch: %+v", stored)
	}
}

// failCommits makes the next n write transactions report a failure: when
// landed, after the transaction became visible (bbolt's last sync failed
// after it wrote the meta page, and ran no commit handlers), otherwise
// before anything was written. The background indexer is stopped first, so
// that only the test's own transactions meet the failures. It returns what
// WritesStopped receives.
func failCommits(s *Store, n int, landed bool) <-chan error {
	s.stopIndexer()
	stopped := make(chan error, 1)
	s.hooks.WritesStopped = func(err error) { stopped <- err }
	s.setCommitTx(func(fn func(*bolt.Tx) error) error {
		if n == 0 {
			return s.db.Update(fn)
		}
		n--
		if landed {
			// The commit lands without its handlers, as bbolt drops them
			// when writing the meta page fails: here the auth cache's
			// reset is not even registered.
			cache, _ := authCaches.LoadAndDelete(s.db)
			defer authCaches.Store(s.db, cache)
			if err := s.db.Update(fn); err != nil {
				return err
			}
			return errors.New("fdatasync: input/output error")
		}
		tx, err := s.db.Begin(true)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			tx.Rollback()
			return err
		}
		tx.Rollback()
		return errors.New("write: no space left on device")
	})
	return stopped
}

// A commit that reports a failure after its transaction became visible is
// in the file, and a restart finds it: the charge counts as made, once,
// and the call is not told its billing failed. One that failed before
// anything was written leaves memory as the file.
func TestChargeCommitFailingAfterItLanded(t *testing.T) {
	for _, landed := range []bool{true, false} {
		s, u, tok, r := openPayerWithHold(t)
		stopped := failCommits(s, 1, landed)
		err := s.Settle(r, 0, 80, &Log{UserID: u.ID, Username: "payer", Type: LogTypeConsume, TokenID: tok.ID, TokenName: "t", ModelName: "m", Quota: 80})
		if landed != (err == nil) {
			t.Fatalf("landed %v: settle answered %v", landed, err)
		}
		var stored *User
		var storedTok *Token
		if err := s.db.View(func(tx *bolt.Tx) (err error) {
			if stored, err = getUser(tx, u.ID); err != nil {
				return err
			}
			storedTok, err = getToken(tx, tok.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		page, err := s.Logs(LogFilter{Type: LogTypeConsume}, 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if landed {
			want = 80
		}
		s.ledger.mu.Lock()
		ub, tb := *s.ledger.users[u.ID], *s.ledger.tokens[tok.ID]
		s.ledger.mu.Unlock()
		if stored.UsedQuota != want || int64(page.Total) != want/80 || ub.used != want || ub.quota != stored.Quota || tb.remain != storedTok.RemainQuota || tb.used != storedTok.UsedQuota {
			t.Fatalf("landed %v: file user %+v token %+v, %d logs; live user %+v token %+v", landed, stored, storedTok, page.Total, ub, tb)
		}
		// After a failure that landed, writes stop and the program is told
		// to stop; a failure that wrote nothing lets the next write through.
		_, err = s.CreateToken(&Token{UserID: u.ID, Name: "after", RemainQuota: 1})
		if landed {
			if ErrorCode(err) != EUNAVAILABLE {
				t.Fatalf("a write after a failure that landed: %v", err)
			}
			select {
			case <-stopped:
			case <-time.After(5 * time.Second):
				t.Fatal("WritesStopped was not called")
			}
		} else if err != nil {
			t.Fatalf("a write after a failure that wrote nothing: %v", err)
		}
	}
}

// A credit whose commit failed after it landed is in memory too.
func TestCreditCommitFailingAfterItLanded(t *testing.T) {
	s, u := openPayer(t)
	s.ledger.mu.Lock()
	_, err := s.ledger.loadUser(u.ID) // the live balance is in memory
	s.ledger.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	set := int64(5000)
	failCommits(s, 1, true)
	if _, err := s.UpdateUserAsAdmin("boss", u.ID, UserUpdate{}, &set); err != nil {
		t.Fatalf("a set that landed: %v", err)
	}
	if got, _ := s.User(u.ID); got.Quota != 5000 {
		t.Fatalf("live quota %d after a set that landed", got.Quota)
	}
	// Writes stopped: the health check says so.
	if err := s.Ping(); !errors.Is(err, errWritesStopped) {
		t.Fatalf("Ping after writes stopped = %v", err)
	}
}

// A deletion whose commit failed after it landed reaches the auth cache,
// whose reset bbolt did not run: the token no longer authenticates.
func TestDeletionFailingAfterItLandedLeavesTheAuthCache(t *testing.T) {
	s, u := openPayer(t)
	tok, err := s.CreateToken(&Token{UserID: u.ID, Name: "t", UnlimitedQuota: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TokenByKey(tok.Key); err != nil { // cached
		t.Fatal(err)
	}
	failCommits(s, 1, true)
	if err := s.DeleteToken(u.ID, tok.ID); err != nil {
		t.Fatalf("a deletion that landed: %v", err)
	}
	if got, err := s.TokenByKey(tok.Key); err == nil {
		t.Fatalf("a deleted token still authenticates: %+v", got)
	}
}

// A credit holds the ledger only while it reads the live balances, not
// across its commit: calls reserve (and authenticate) during its fsync.
func TestCreditCommitDoesNotHoldTheLedger(t *testing.T) {
	s, u := openPayer(t)
	other, err := s.CreateUser(NewUser{Username: "other", Password: "password1", Quota: 1000})
	if err != nil {
		t.Fatal(err)
	}
	inCommit, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.setCommitTx(func(fn func(*bolt.Tx) error) error {
		return s.db.Update(func(tx *bolt.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			once.Do(func() { close(inCommit); <-release }) // a slow commit
			return nil
		})
	})
	set := int64(5000)
	done := make(chan error, 1)
	go func() { _, err := s.UpdateUserAsAdmin("boss", u.ID, UserUpdate{}, &set); done <- err }()
	<-inCommit
	reserved := make(chan error, 1)
	go func() {
		r, err := s.Reserve(other.ID, 0, 10)
		if err == nil {
			s.Refund(r)
		}
		reserved <- err
	}()
	select {
	case err := <-reserved:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("a reservation waited for another user's credit to commit")
	}
	if _, err := s.User(other.ID); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, _ := s.User(u.ID); got.Quota != 5000 {
		t.Fatalf("quota after the set: %d", got.Quota)
	}
}

// A balance first loaded from the file between a credit's commit and the
// credit reaching memory holds the credit once: the load read it, and the
// credit is not added on top (a redemption counted twice in memory, found
// under mixed traffic).
func TestCreditReadByAFirstLoadCountsOnce(t *testing.T) {
	s, u := openPayer(t)
	tok, err := s.CreateToken(&Token{UserID: u.ID, Name: "t", RemainQuota: 500})
	if err != nil {
		t.Fatal(err)
	}
	reds, err := s.CreateRedemptions(u.ID, "code", 700, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Neither balance is in memory yet; each credit's commit is followed,
	// before it returns, by a call that loads the balance credited: the
	// user's in the redemption, the token's in the token edit.
	var loadToken atomic.Uint64
	s.setCommitTx(func(fn func(*bolt.Tx) error) error {
		if err := s.db.Update(fn); err != nil {
			return err
		}
		r, err := s.Reserve(u.ID, loadToken.Load(), 1)
		if err != nil {
			t.Errorf("reserve: %v", err)
			return nil
		}
		s.Refund(r)
		return nil
	})
	if _, err := s.Redeem(u.ID, reds[0].Key); err != nil {
		t.Fatal(err)
	}
	remain := int64(800)
	loadToken.Store(tok.ID)
	if _, err := s.UpdateToken(u.ID, tok.ID, TokenUpdate{RemainQuota: &remain}); err != nil {
		t.Fatal(err)
	}
	s.setCommitTx(s.db.Update)
	if got, err := s.User(u.ID); err != nil || got.Quota != 1700 {
		t.Fatalf("live quota %d (%v), want 1700", got.Quota, err)
	}
	if got, err := s.Token(u.ID, tok.ID); err != nil || got.RemainQuota != 800 {
		t.Fatalf("live token remain %d (%v), want 800", got.RemainQuota, err)
	}
	var file User
	var fileTok Token
	if err := s.db.View(func(tx *bolt.Tx) error {
		fu, err := getUser(tx, u.ID)
		if err != nil {
			return err
		}
		ft, err := getToken(tx, tok.ID)
		if err != nil {
			return err
		}
		file, fileTok = *fu, *ft
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if file.Quota != 1700 || fileTok.RemainQuota != 800 {
		t.Fatalf("file quota %d, token remain %d; want 1700, 800", file.Quota, fileTok.RemainQuota)
	}
}

// setCommitTx replaces the function that runs write transactions, under
// the lock every write transaction holds while it reads it.
func (s *Store) setCommitTx(commit func(fn func(*bolt.Tx) error) error) {
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	s.commitTx = commit
}

// Balance reads are numbered on from one process to the next: a console
// that holds a number from before a restart takes the new process's reads.
func TestBalanceSeqGrowsAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seq.db")
	read := func(reads int) uint64 {
		s, err := Open(path, Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		u, err := s.UserByUsername("payer")
		if err != nil {
			if u, err = s.CreateUser(NewUser{Username: "payer", Password: "password1", Quota: 1000}); err != nil {
				t.Fatal(err)
			}
		}
		var seq uint64
		for range reads {
			v, err := s.User(u.ID)
			if err != nil {
				t.Fatal(err)
			}
			seq = v.BalanceSeq
		}
		return seq
	}
	// Many reads in the first process, a few in the next.
	first := read(1000)
	if second := read(10); second <= first {
		t.Fatalf("after a restart reads are numbered %d, below the %d read before it", second, first)
	}
}

// A balance set while a settled charge waits for its commit is that
// balance: when the charge then cannot be written (the call answers
// billing_failed and is charged nothing), the set value stays, in memory
// and in the file, without the charge coming back on top of it.
func TestSetThenChargeFails(t *testing.T) {
	set, remain := int64(5000), int64(300)
	s, u, tok := settleThenSet(t, set, remain)
	failCommits(s, 1, false) // the charge's commit writes nothing
	time.Sleep(600 * time.Millisecond)
	fu, ft := storedUserToken(t, s, u.ID, tok.ID)
	lu, _ := s.User(u.ID)
	lt, _ := s.Token(0, tok.ID)
	if lu.Quota != set || fu.Quota != set || lu.UsedQuota != 0 || fu.UsedQuota != 0 {
		t.Errorf("user quota live %d file %d (used %d/%d), want the set %d", lu.Quota, fu.Quota, lu.UsedQuota, fu.UsedQuota, set)
	}
	if lt.RemainQuota != remain || ft.RemainQuota != remain {
		t.Errorf("token remain live %d file %d, want the set %d", lt.RemainQuota, ft.RemainQuota, remain)
	}
}

// settleThenSet settles a charge of 80 whose commit waits (commits every
// 300 ms), then has an administrator set the user's quota to set and the
// token's remaining quota to remain meanwhile.
func settleThenSet(t *testing.T, set, remain int64) (*Store, *User, *Token) {
	t.Helper()
	s, u, tok, r := openPayerWithHold(t)
	s.SetSyncInterval(300 * time.Millisecond)
	if err := s.Settle(r, 0, 80, &Log{UserID: u.ID, Username: "payer", Type: LogTypeConsume, TokenID: tok.ID, ModelName: "m", Quota: 80}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateUserAsAdmin("boss", u.ID, UserUpdate{}, &set); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateToken(u.ID, tok.ID, TokenUpdate{RemainQuota: &remain}); err != nil {
		t.Fatal(err)
	}
	return s, u, tok
}

// storedUserToken reads a user and a token as the file holds them.
func storedUserToken(t *testing.T, s *Store, userID, tokenID uint64) (fu *User, ft *Token) {
	t.Helper()
	if err := s.db.View(func(tx *bolt.Tx) (err error) {
		if fu, err = getUser(tx, userID); err != nil {
			return err
		}
		ft, err = getToken(tx, tokenID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return fu, ft
}

// When the file cannot give up a failed charge a set took as made either,
// the file keeps it and memory gets it back: live and stored balances
// agree, at the set value plus the charge that was not written.
func TestSetThenChargeAndItsRevertFail(t *testing.T) {
	set, remain := int64(5000), int64(300)
	s, u, tok := settleThenSet(t, set, remain)
	failCommits(s, 2, false) // the charge's commit and the revert's write nothing
	time.Sleep(600 * time.Millisecond)
	fu, ft := storedUserToken(t, s, u.ID, tok.ID)
	lu, _ := s.User(u.ID)
	lt, _ := s.Token(0, tok.ID)
	if lu.Quota != set+80 || fu.Quota != set+80 || lu.UsedQuota != 0 || fu.UsedQuota != 0 {
		t.Errorf("user quota live %d file %d (used %d/%d), want %d", lu.Quota, fu.Quota, lu.UsedQuota, fu.UsedQuota, set+80)
	}
	if lt.RemainQuota != remain+80 || ft.RemainQuota != remain+80 || lt.UsedQuota != 0 || ft.UsedQuota != 0 {
		t.Errorf("token remain live %d file %d (used %d/%d), want %d", lt.RemainQuota, ft.RemainQuota, lt.UsedQuota, ft.UsedQuota, remain+80)
	}
	if b, err := s.LiveBalance(u.ID); err != nil || b.Quota != set+80 {
		t.Errorf("spendable user quota %d (%v), want %d", b.Quota, err, set+80)
	}
}

// A token's remaining quota set to 0 while a settled charge waits for its
// commit ends exhausted whether that commit is made or fails: the set with
// no charge in flight, and the commit that empties it, store it so (a token
// that cannot serve a call is never enabled, docs/decisions.md).
func TestSetRemainToZeroThenChargeFailsIsExhausted(t *testing.T) {
	for _, fail := range []bool{false, true} {
		s, u, tok, r := openPayerWithHold(t)
		s.SetSyncInterval(300 * time.Millisecond)
		if err := s.Settle(r, 0, 80, &Log{UserID: u.ID, Username: "payer", Type: LogTypeConsume, TokenID: tok.ID, ModelName: "m", Quota: 80}); err != nil {
			t.Fatal(err)
		}
		zero := int64(0)
		if _, err := s.UpdateToken(u.ID, tok.ID, TokenUpdate{RemainQuota: &zero}); err != nil {
			t.Fatal(err)
		}
		if fail {
			failCommits(s, 1, false) // the charge's commit writes nothing
		}
		time.Sleep(600 * time.Millisecond)
		var ft *Token
		if err := s.db.View(func(tx *bolt.Tx) (err error) { ft, err = getToken(tx, tok.ID); return }); err != nil {
			t.Fatal(err)
		}
		lt, _ := s.Token(0, tok.ID)
		if ft.RemainQuota != 0 || lt.RemainQuota != 0 {
			t.Errorf("commit failed %v: remain live %d file %d, want 0", fail, lt.RemainQuota, ft.RemainQuota)
		}
		if ft.Status != TokenStatusExhausted {
			t.Errorf("commit failed %v: token status %d with nothing left, want exhausted (%d)", fail, ft.Status, TokenStatusExhausted)
		}
	}
}

// limitFileSize makes every write at or past size fail in this process, as
// a full disk does (RLIMIT_FSIZE: the write fails with EFBIG, and Go's
// runtime ignores SIGXFSZ), until the returned function lifts the limit.
func limitFileSize(t *testing.T, size uint64) (lift func()) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: size, Max: old.Max}); err != nil {
		t.Skip(err)
	}
	var once sync.Once
	lift = func() {
		once.Do(func() {
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Cleanup(lift)
	return lift
}

// A batch that the file itself cannot take (a full disk) fails once its
// first charge alone fails too: every failed commit costs bbolt a walk of
// the whole file to rebuild its free-page list, and trying each charge of a
// large batch in turn held every write up for as many walks as the batch
// had calls. Memory still ends as the file, and writes go on once the file
// takes them again.
func TestAFileThatCannotBeWrittenFailsABatchWithoutTryingEveryCharge(t *testing.T) {
	s, u := openPayer(t)
	s.stopIndexer()
	if _, err := s.LiveBalance(u.ID); err != nil {
		t.Fatal(err)
	}
	var commits atomic.Int64
	s.setCommitTx(func(fn func(*bolt.Tx) error) error {
		commits.Add(1)
		return s.db.Update(fn)
	})
	newCharge := func() *charge {
		return &charge{userID: u.ID, quota: 10, writeLog: true, done: make(chan error, 1),
			log: &Log{UserID: u.ID, Username: "payer", Type: LogTypeConsume, ModelName: "m", Quota: 10, CreatedAt: 1}}
	}
	const n = 50
	var batch []*charge
	s.ledger.mu.Lock()
	for range n {
		c := newCharge()
		batch = append(batch, c)
		b := s.ledger.users[u.ID]
		b.quota -= c.quota
		b.used += c.quota
		b.count++
	}
	s.ledger.mu.Unlock()
	lift := limitFileSize(t, 8<<10) // past the two meta pages: every other page fails
	s.ledger.commit(batch)
	lift()
	for i, c := range batch {
		if err := <-c.done; err == nil {
			t.Fatalf("charge %d of a file that takes no writes was written", i)
		}
	}
	if got := commits.Load(); got > 2 {
		t.Fatalf("a batch of %d charges the file cannot take tried %d commits (the batch, then each charge)", n, got)
	}
	b, err := s.LiveBalance(u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b.Quota != 1000 || b.UsedQuota != 0 || b.RequestCount != 0 {
		t.Fatalf("live balance after charges that were not written: %+v", b)
	}

	// The file takes writes again: so does the ledger.
	c := newCharge()
	s.ledger.mu.Lock()
	lb := s.ledger.users[u.ID]
	lb.quota, lb.used, lb.count = lb.quota-c.quota, lb.used+c.quota, lb.count+1
	s.ledger.mu.Unlock()
	s.ledger.commit([]*charge{c})
	if err := <-c.done; err != nil {
		t.Fatalf("a charge once the file takes writes again: %v", err)
	}
	stored := fileUser(t, s, u.ID)
	if stored.Quota != 990 || stored.UsedQuota != 10 || stored.RequestCount != 1 {
		t.Fatalf("stored user after the file took writes again: %+v", stored)
	}
}

// The health check tells a file that refuses writes (a full disk: no charge
// can be written) from one that takes them, as it tells a store whose
// writes stopped; it answers again once a write went through.
func TestPingTellsAFileThatRefusesWrites(t *testing.T) {
	s, _ := openPayer(t)
	s.stopIndexer()
	notice := func(v string) error { return s.UpdateOptions([]Option{{Key: "Notice", Value: v}}) }
	lift := limitFileSize(t, 8<<10) // past the two meta pages: every other page fails
	if err := notice(strings.Repeat("x", 5000)); err == nil {
		t.Fatal("a write the file cannot take succeeded")
	}
	if err := s.Ping(); ErrorCode(err) != EUNAVAILABLE {
		t.Fatalf("Ping after a write the file refused = %v", err)
	}
	lift()
	if err := notice("room again"); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(); err != nil {
		t.Fatalf("Ping once the file took a write again = %v", err)
	}
}

// While the file refuses writes, calls are told their charges cannot be
// written, but one every chargeProbeEvery goes ahead to find out whether
// the file takes writes again; a write that goes through ends the refusal.
func TestChargesWritableWhileTheFileRefusesWrites(t *testing.T) {
	s, _ := openPayer(t)
	s.stopIndexer()
	defer func(d time.Duration) { chargeProbeEvery = d }(chargeProbeEvery)
	chargeProbeEvery = 100 * time.Millisecond
	if err := s.ChargesWritable(); err != nil {
		t.Fatalf("a file that takes writes: %v", err)
	}
	notice := func(v string) error { return s.UpdateOptions([]Option{{Key: "Notice", Value: v}}) }
	lift := limitFileSize(t, 8<<10) // past the two meta pages: every other page fails
	if err := notice(strings.Repeat("x", 5000)); err == nil {
		t.Fatal("a write the file cannot take succeeded")
	}
	if err := s.ChargesWritable(); ErrorCode(err) != EUNAVAILABLE {
		t.Fatalf("right after a write the file refused: %v", err)
	}
	time.Sleep(150 * time.Millisecond)
	if err := s.ChargesWritable(); err != nil {
		t.Fatalf("the probe after %v: %v", chargeProbeEvery, err)
	}
	if err := s.ChargesWritable(); ErrorCode(err) != EUNAVAILABLE {
		t.Fatalf("a second call beside the probe: %v", err)
	}
	lift()
	if err := notice("room again"); err != nil {
		t.Fatal(err)
	}
	if err := s.ChargesWritable(); err != nil {
		t.Fatalf("once a write went through: %v", err)
	}
}

// fileUser reads user id's record as the file holds it, not the ledger's
// live balances.
func fileUser(t *testing.T, s *Store, id uint64) *User {
	t.Helper()
	var u *User
	if err := s.db.View(func(tx *bolt.Tx) (err error) {
		u, err = getUser(tx, id)
		return
	}); err != nil {
		t.Fatal(err)
	}
	return u
}

// The charges of one transaction add up: several calls of one user, token
// and channel move each balance, the channel's used quota and the
// dashboard's hourly row by their sum, each with its own log.
func TestChargesOfOneCommitAddUp(t *testing.T) {
	s, u := openPayer(t)
	other, err := s.CreateUser(NewUser{Username: "other", Password: "password1", Quota: 1000})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.CreateToken(&Token{UserID: u.ID, Name: "t", RemainQuota: 500, ExpiredTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	unlimited, err := s.CreateToken(&Token{UserID: u.ID, Name: "u", RemainQuota: 100, UnlimitedQuota: true, ExpiredTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	ch := &Channel{Name: "c", Type: 1, Key: "sk-1", Models: "m"}
	if err := s.CreateChannels([]*Channel{ch}); err != nil {
		t.Fatal(err)
	}
	const hour = 1_700_000_000 - 1_700_000_000%3600
	mk := func(userID, tokenID uint64, name string, quota int64) *charge {
		return &charge{userID: userID, tokenID: tokenID, channelID: ch.ID, quota: quota, fromRemain: tokenID != 0,
			writeLog: true, dashboard: true, done: make(chan error, 1),
			log: &Log{UserID: userID, Username: name, TokenID: tokenID, ChannelID: ch.ID, Type: LogTypeConsume, ModelName: "m",
				Quota: quota, PromptTokens: 2, CompletionTokens: 1, CreatedAt: hour + 10}}
	}
	free := mk(u.ID, unlimited.ID, "payer", 4)
	free.fromRemain = false
	batch := []*charge{mk(u.ID, tok.ID, "payer", 30), mk(other.ID, 0, "other", 5), mk(u.ID, tok.ID, "payer", 20), mk(u.ID, tok.ID, "payer", 7), free}
	s.ledger.commit(batch)
	for _, c := range batch {
		if err := <-c.done; err != nil {
			t.Fatal(err)
		}
	}
	if got := fileUser(t, s, u.ID); got.Quota != 939 || got.UsedQuota != 61 || got.RequestCount != 4 {
		t.Errorf("user in the file: quota %d, used %d, count %d; want 939, 61, 4", got.Quota, got.UsedQuota, got.RequestCount)
	}
	if got := fileUser(t, s, other.ID); got.Quota != 995 || got.UsedQuota != 5 || got.RequestCount != 1 {
		t.Errorf("other user in the file: quota %d, used %d, count %d; want 995, 5, 1", got.Quota, got.UsedQuota, got.RequestCount)
	}
	var storedTok, storedFree *Token
	var storedCh *Channel
	if err := s.db.View(func(tx *bolt.Tx) (err error) {
		if storedTok, err = getToken(tx, tok.ID); err != nil {
			return err
		}
		if storedFree, err = getToken(tx, unlimited.ID); err != nil {
			return err
		}
		storedCh, err = getChannel(tx, ch.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if storedTok.RemainQuota != 443 || storedTok.UsedQuota != 57 {
		t.Errorf("token in the file: remain %d, used %d; want 443, 57", storedTok.RemainQuota, storedTok.UsedQuota)
	}
	if storedFree.RemainQuota != 100 || storedFree.UsedQuota != 4 {
		t.Errorf("unlimited token in the file: remain %d, used %d; want 100, 4", storedFree.RemainQuota, storedFree.UsedQuota)
	}
	if storedCh.UsedQuota != 66 {
		t.Errorf("channel used quota in the file: %d, want 66", storedCh.UsedQuota)
	}
	rows, err := s.QuotaData(hour, hour, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Count != 4 || rows[0].Quota != 61 || rows[0].TokenUsed != 12 {
		t.Errorf("the user's hourly rows: %+v, want one of 4 calls, 61 quota, 12 tokens", rows)
	}
	var quotas []int64
	for _, l := range UserLogs(t, s, u.ID) {
		if l.Type == LogTypeConsume {
			quotas = append(quotas, l.Quota)
		}
	}
	if fmt.Sprint(quotas) != "[30 20 7 4]" {
		t.Errorf("the user's logs' quotas: %v, want [30 20 7 4]", quotas)
	}
}
