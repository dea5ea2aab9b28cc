package store

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// The ledger benchmarks measure reserve + settle with a consume log per call,
// the relay's hot path through the ledger, on a durable (fsync) store.

// benchLedger opens a durable store with a funded user and an unlimited token.
func benchLedger(b *testing.B) (*Store, *User, *Token) {
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	u, err := s.CreateUser(NewUser{Username: "bench", Password: "password1"})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.UpdateOptions(nil); err != nil {
		b.Fatal(err)
	}
	if err := s.updateBalances(func(tx *bolt.Tx) ([]balanceDelta, error) {
		cur, _ := getUser(tx, u.ID)
		cur.Quota = 1 << 60
		return nil, putUser(tx, cur, cur)
	}); err != nil {
		b.Fatal(err)
	}
	tok, err := s.CreateToken(&Token{UserID: u.ID, Name: "t", UnlimitedQuota: true})
	if err != nil {
		b.Fatal(err)
	}
	return s, u, tok
}

// settleOne reserves and settles one call with its consume log.
func settleOne(s *Store, u *User, tok *Token) error {
	r, err := s.Reserve(u.ID, tok.ID, 100)
	if err != nil {
		return err
	}
	l := &Log{UserID: u.ID, Username: "bench", Type: LogTypeConsume, TokenID: tok.ID, TokenName: "t", ModelName: "gpt-4o-mini",
		Quota: 90, PromptTokens: 10, CompletionTokens: 20, ChannelID: 0, Other: `{"model_ratio":0.075,"admin_info":{"use_channel":[1]}}`}
	return s.Settle(r, 0, 90, l)
}

// BenchmarkSettle: 64 callers at once, durable; ns/op is the amortised cost
// of a charge.
func BenchmarkSettle(b *testing.B) {
	s, u, tok := benchLedger(b)
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := settleOne(s, u, tok); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSettleLone: one caller at a time, durable; ns/op is what a lone
// call waits for its charge (the commit and its fsyncs).
func BenchmarkSettleLone(b *testing.B) {
	s, u, tok := benchLedger(b)
	b.ResetTimer()
	for b.Loop() {
		if err := settleOne(s, u, tok); err != nil {
			b.Fatal(err)
		}
	}
}
