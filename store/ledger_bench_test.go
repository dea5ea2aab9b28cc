package store

import (
	"path/filepath"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkSettle measures reserve + settle with a consume log per call, the
// relay's hot path through the ledger, on a durable (fsync) store.
func BenchmarkSettle(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	u, err := s.CreateUser(NewUser{Username: "bench", Password: "password1"})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.UpdateOptions(nil); err != nil {
		b.Fatal(err)
	}
	s.ledger.credit(nil)
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
	var n atomic.Int64
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, err := s.Reserve(u.ID, tok.ID, 100)
			if err != nil {
				b.Error(err)
				return
			}
			l := &Log{UserID: u.ID, Username: "bench", Type: LogTypeConsume, TokenID: tok.ID, TokenName: "t", ModelName: "gpt-4o-mini",
				Quota: 90, PromptTokens: 10, CompletionTokens: 20, ChannelID: 0, Other: `{"model_ratio":0.075,"admin_info":{"use_channel":[1]}}`}
			if err := s.Settle(r, 0, 90, l); err != nil {
				b.Error(err)
				return
			}
			n.Add(1)
		}
	})
}
