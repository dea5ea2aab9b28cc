package store

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

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

// BenchmarkSettleDuringLogClear: what a lone caller waits for its charge
// while an administrator clears 200 000 log entries on a durable store;
// reported as p50/p99/max milliseconds of the charges made during the clear.
func BenchmarkSettleDuringLogClear(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		s, u, tok := benchLedger(b)
		fillLogs(b, s, 400_000)
		b.StartTimer()
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := s.DeleteLogsBefore(context.Background(), 1_700_000_000+200_000); err != nil {
				b.Error(err)
			}
		}()
		var waits []time.Duration
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
				start := time.Now()
				if err := settleOne(s, u, tok); err != nil {
					b.Fatal(err)
				}
				waits = append(waits, time.Since(start))
			}
		}
		slices.Sort(waits)
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		b.ReportMetric(ms(waits[len(waits)/2]), "p50-ms")
		b.ReportMetric(ms(waits[len(waits)*99/100]), "p99-ms")
		b.ReportMetric(ms(waits[len(waits)-1]), "max-ms")
		b.ReportMetric(float64(len(waits)), "charges")
	}
}
