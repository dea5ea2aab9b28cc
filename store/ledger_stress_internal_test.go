package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Charges, refunds, redemptions, administrators' sets and additions and
// token edits on the same accounts at once, with first loads of balances
// falling between a commit and its arrival in memory, and commits failing
// before they write: at the end the live balances are the file's and
// nothing is held. Charges go to the first accounts; credits also reach
// accounts not loaded yet, whose first load the commit hook makes in the
// window. Each run draws differently (the draws' order follows the
// scheduler, so a run is not replayed exactly).
func TestLedgerMatchesFileUnderMixedTraffic(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			ledgerStress(t, seed)
		})
	}
}

func ledgerStress(t *testing.T, seed uint64) {
	s, payer := openPayer(t)
	var users, tokens []uint64
	owner := map[uint64]uint64{}
	tokenOf := map[uint64]uint64{}
	const hot = 24 // the accounts calls are charged to
	for i := range hot + 80 {
		u := MustPutUser(t, s, User{Username: fmt.Sprint("u", i), Quota: 200_000})
		users = append(users, u.ID)
		for j := range 2 {
			tok, err := s.CreateToken(&Token{UserID: u.ID, Name: fmt.Sprint("t", j), RemainQuota: 100_000, UnlimitedQuota: j == 1, ExpiredTime: -1})
			if err != nil {
				t.Fatal(err)
			}
			owner[tok.ID] = u.ID
			tokenOf[u.ID] = tok.ID
			if i < hot {
				tokens = append(tokens, tok.ID)
			}
		}
	}
	ch := &Channel{Type: 1, Name: "c", Key: "k", BaseURL: "http://upstream.test", Models: "m", Group: "default"}
	if err := s.CreateChannels([]*Channel{ch}); err != nil {
		t.Fatal(err)
	}
	codes, err := s.CreateRedemptions(payer.ID, "stress", 1_000, 60)
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 42))
	draw := func(n int) int {
		mu.Lock()
		defer mu.Unlock()
		return rng.IntN(n)
	}
	// A tenth of the commits fail before writing; after the others a call
	// loads the balances a credit is being made to (if none is loaded yet,
	// between the commit and its arrival in memory).
	var crediting sync.Map // user -> token, of the credits in progress
	var credited, windowLoads atomic.Int64
	// The indexer commits too, and would meet the injected failures: only
	// the ledger's and the credits' transactions are to.
	s.stopIndexer()
	s.setCommitTx(func(fn func(*bolt.Tx) error) error {
		if draw(10) == 0 {
			return errors.New("injected: nothing written")
		}
		if err := s.db.Update(fn); err != nil {
			return err
		}
		crediting.Range(func(uid, tok any) bool {
			windowLoads.Add(1)
			if res, err := s.Reserve(uid.(uint64), tok.(uint64), 1); err == nil {
				s.Refund(res)
			}
			return true
		})
		return nil
	})

	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for range 120 {
				tok := tokens[draw(len(tokens))]
				uid := owner[tok]
				if draw(4) == 0 {
					tok = 0 // the playground: the user alone
				}
				res, err := s.Reserve(uid, tok, int64(1+draw(50)))
				if err != nil {
					continue
				}
				if draw(4) == 0 {
					s.Refund(res)
					continue
				}
				_ = s.Settle(res, ch.ID, int64(draw(80)), &Log{UserID: uid, Type: LogTypeConsume, ModelName: "m"})
			}
		})
	}
	for w := range 3 {
		wg.Go(func() {
			for i := range 40 {
				uid := users[draw(len(users))]
				tok := tokenOf[uid]
				crediting.Store(uid, tok)
				var err error
				switch draw(5) {
				case 0:
					if k := w*20 + i/2; i%2 == 0 && k < len(codes) {
						_, err = s.Redeem(uid, codes[k].Key)
					} else {
						err = errors.New("no code this time")
					}
				case 1:
					set := int64(draw(300_000))
					_, err = s.EditUserAsAdmin("root", uid, UserUpdate{}, QuotaChange{Set: &set})
				case 2:
					add := int64(draw(20_000) - 10_000)
					_, err = s.EditUserAsAdmin("root", uid, UserUpdate{}, QuotaChange{Add: &add})
				case 3:
					remain := int64(draw(200_000))
					_, err = s.UpdateToken(uid, tok, TokenUpdate{RemainQuota: &remain})
				case 4:
					unlimited := draw(2) == 0
					_, err = s.UpdateToken(uid, tok, TokenUpdate{UnlimitedQuota: &unlimited})
				}
				if err == nil {
					credited.Add(1)
				}
				crediting.Delete(uid)
			}
		})
	}
	wg.Wait()
	s.setCommitTx(s.db.Update)
	// The run tested something: credits landed, and loads fell in their
	// windows.
	if credited.Load() < 20 || windowLoads.Load() < 20 {
		t.Fatalf("%d credits made and %d loads in their windows: the run exercised too little", credited.Load(), windowLoads.Load())
	}

	l := &s.ledger
	err = s.db.View(func(tx *bolt.Tx) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, id := range users {
			f, err := getUser(tx, id)
			if err != nil {
				return err
			}
			if b := l.users[id]; b != nil {
				if b.held != 0 || b.quota != f.Quota || b.used != f.UsedQuota || b.count != f.RequestCount {
					t.Errorf("user %d: memory %+v, file quota %d used %d count %d", id, *b, f.Quota, f.UsedQuota, f.RequestCount)
				}
			}
		}
		for id := range owner {
			f, err := getToken(tx, id)
			if err != nil {
				return err
			}
			if lt := l.tokens[id]; lt != nil {
				if lt.held != 0 || lt.remain != f.RemainQuota || lt.used != f.UsedQuota || lt.unlimited != f.UnlimitedQuota {
					t.Errorf("token %d: memory %+v, file remain %d used %d unlimited %v", id, *lt, f.RemainQuota, f.UsedQuota, f.UnlimitedQuota)
				}
			}
		}
		c, err := getChannel(tx, ch.ID)
		if err != nil {
			return err
		}
		if used, ok := l.channels[ch.ID]; ok && used != c.UsedQuota {
			t.Errorf("channel: memory %d, file %d", used, c.UsedQuota)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
