package store

import (
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Calls reserving, settling and refunding while administrators set and add
// quota and the owner sets the token's remaining quota, all at once: no
// reservation is ever counted as held below zero, none is left held after
// the calls end, and the balances in memory equal the file's, with the used
// quota equal to the consume logs.
func TestHoldsUnderConcurrentSets(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "holds.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUser(NewUser{Username: "payer", Password: "password1", Quota: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.CreateToken(&Token{UserID: u.ID, Name: "t", RemainQuota: 1_000_000, ExpiredTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	admin := make(chan struct{}) // closed when the administrators' goroutine ends
	var negative sync.Once
	watch := func() {
		s.ledger.mu.Lock()
		defer s.ledger.mu.Unlock()
		if b := s.ledger.users[u.ID]; b != nil && b.held < 0 {
			negative.Do(func() { t.Errorf("user hold %d", b.held) })
		}
		if lt := s.ledger.tokens[tok.ID]; lt != nil && lt.held < 0 {
			negative.Do(func() { t.Errorf("token hold %d", lt.held) })
		}
	}
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), 7))
			// At least 300 rounds and 75 charges each: how many reservations
			// find the balance spent depends on how often the administrators'
			// goroutine runs in between.
			for round, settled := 0, 0; round < 300 || settled < 75; round++ {
				tokenID := uint64(0)
				if rnd.IntN(2) == 0 {
					tokenID = tok.ID
				}
				r, err := s.Reserve(u.ID, tokenID, int64(rnd.IntN(5_000)))
				if err != nil {
					select {
					case <-admin: // failed: no more quota will come
						return
					default:
					}
					runtime.Gosched() // no quota at this moment: let a set or an addition in
					continue
				}
				watch()
				if rnd.IntN(4) == 0 {
					s.Refund(r)
					continue
				}
				cost := int64(rnd.IntN(6_000)) // sometimes beyond the reservation
				if err := s.Settle(r, 0, cost, &Log{UserID: u.ID, Username: "payer", TokenID: tokenID, Type: LogTypeConsume, ModelName: "m", Quota: cost}); err != nil {
					t.Error(err)
					return
				}
				settled++
			}
		}()
	}
	go func() {
		defer close(admin)
		rnd := rand.New(rand.NewPCG(99, 7))
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Sets and additions keep the balance able to pay, so that the
			// calls go on.
			v := int64(1_000_000 + rnd.IntN(2_000_000))
			var err error
			switch rnd.IntN(3) {
			case 0:
				_, err = s.EditUserAsAdmin("boss", u.ID, UserUpdate{}, QuotaChange{Set: &v})
			case 1:
				add := v - 1_100_000
				_, err = s.EditUserAsAdmin("boss", u.ID, UserUpdate{}, QuotaChange{Add: &add})
			default:
				_, err = s.UpdateToken(u.ID, tok.ID, TokenUpdate{RemainQuota: &v})
			}
			if err != nil && ErrorCode(err) != EINVALID { // a sum past the bound is refused
				t.Error(err)
				return
			}
			watch()
		}
	}()
	wg.Wait()
	close(stop)
	<-admin

	s.ledger.mu.Lock()
	b, lt := *s.ledger.users[u.ID], *s.ledger.tokens[tok.ID]
	s.ledger.mu.Unlock()
	if b.held != 0 || lt.held != 0 {
		t.Fatalf("held after every call ended: user %d, token %d", b.held, lt.held)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fu, err := s.User(u.ID)
	if err != nil {
		t.Fatal(err)
	}
	ft, err := s.Token(0, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fu.RequestCount < 16*75 {
		t.Fatalf("only %d calls were charged", fu.RequestCount)
	}
	if fu.Quota != b.quota || fu.UsedQuota != b.used || fu.RequestCount != b.count {
		t.Fatalf("file user %d/%d/%d, memory %d/%d/%d", fu.Quota, fu.UsedQuota, fu.RequestCount, b.quota, b.used, b.count)
	}
	if ft.RemainQuota != lt.remain || ft.UsedQuota != lt.used {
		t.Fatalf("file token %d/%d, memory %d/%d", ft.RemainQuota, ft.UsedQuota, lt.remain, lt.used)
	}
	var logged, tokenLogged int64
	page, err := s.Logs(LogFilter{UserID: u.ID, Type: LogTypeConsume}, 1, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range page.Items {
		logged += l.Quota
		if l.TokenID == tok.ID {
			tokenLogged += l.Quota
		}
	}
	if logged != fu.UsedQuota || int64(len(page.Items)) != fu.RequestCount || tokenLogged != ft.UsedQuota {
		t.Fatalf("logs %d quota in %d rows (token %d); user used %d in %d calls, token used %d",
			logged, len(page.Items), tokenLogged, fu.UsedQuota, fu.RequestCount, ft.UsedQuota)
	}
}
