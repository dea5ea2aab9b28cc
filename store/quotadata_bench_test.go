package store

import (
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// fillQuotaData writes hours of dashboard rows: each hour, users accounts
// using models models each.
func fillQuotaData(tb testing.TB, s *Store, start int64, hours, users, models int) {
	tb.Helper()
	const chunk = 500 // hours a transaction
	for h0 := 0; h0 < hours; h0 += chunk {
		err := s.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketQuotaData)
			b.FillPercent = 1 // keys arrive in order
			for h := h0; h < h0+chunk && h < hours; h++ {
				hour := start + int64(h)*3600
				for u := 1; u <= users; u++ {
					for m := 0; m < models; m++ {
						model := fmt.Sprintf("model-%02d", m)
						d := QuotaDatum{UserID: uint64(u), Username: fmt.Sprintf("u%d", u), ModelName: model, CreatedAt: hour,
							Count: 1, Quota: 100, TokenUsed: 10}
						if err := putJSON(b, quotaDataKey(hour, uint64(u), model), d); err != nil {
							return err
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// qdUsers is the number of accounts with rows in every hour.
const qdUsers = 100

// BenchmarkQuotaData reads dashboard rows from a year of hours with 100
// accounts using 2 models each every hour (1.75 million rows).
func BenchmarkQuotaData(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "quota.db"), Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const start, hours = int64(1_700_000_000 / 3600 * 3600), 365 * 24
	fillQuotaData(b, s, start, hours, qdUsers, 2)
	end := start + hours*3600
	for _, c := range []struct {
		name       string
		start, end int64
		user       uint64
		want       int
	}{
		{"user/30days", end - 30*86400, end, 7, 30 * 24 * 2},
		{"user/year", start, end, 7, hours * 2},
		{"all/day", end - 86400, end, 0, 24 * qdUsers * 2},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rows, err := s.QuotaData(c.start, c.end, c.user)
				if err != nil || len(rows) != c.want {
					b.Fatalf("%d rows, %v; want %d", len(rows), err, c.want)
				}
			}
		})
	}
}
