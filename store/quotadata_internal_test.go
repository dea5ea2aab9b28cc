package store

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// One account's dashboard rows are the rows of every account filtered to
// it, whatever the accounts before and after it in each hour, hours it has
// no rows in, and the bounds of the range.
func TestQuotaDataOneUserMatchesAll(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "quota.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(7, 9))
	const base = int64(1_700_000_000 / 3600 * 3600)
	rows := map[string]*QuotaDatum{}
	for h := range 200 {
		hour := base + int64(h)*3600
		if h%17 == 5 {
			continue // an hour nobody used
		}
		for range rng.IntN(12) {
			u := uint64(1 + rng.IntN(8))
			m := fmt.Sprintf("m%d", rng.IntN(3))
			rows[string(quotaDataKey(hour, u, m))] = &QuotaDatum{UserID: u, Username: fmt.Sprintf("u%d", u), ModelName: m, CreatedAt: hour, Count: 1, Quota: int64(h)}
		}
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return addQuotaData(tx, rows) }); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ start, end int64 }{
		{0, 0}, {base, base + 199*3600}, {base + 1800, base + 50*3600}, {base + 50*3600, base + 50*3600},
		{base + 10*3600 + 1, base + 120*3600 - 1}, {base + 300*3600, 0},
	} {
		all, err := s.QuotaData(r.start, r.end, 0)
		if err != nil {
			t.Fatal(err)
		}
		for u := uint64(1); u <= 9; u++ {
			want := slices.DeleteFunc(slices.Clone(all), func(d QuotaDatum) bool { return d.UserID != u })
			got, err := s.QuotaData(r.start, r.end, u)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("range %d-%d, user %d: %d rows, want %d\ngot  %v\nwant %v", r.start, r.end, u, len(got), len(want), got, want)
			}
		}
	}
}
