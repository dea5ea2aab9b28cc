package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// fillLogs writes n consume logs spread over 50 users, 10 channels and 20
// models, one second apart, in large transactions.
func fillLogs(tb testing.TB, s *Store, n int) {
	tb.Helper()
	const chunk = 50000
	for done := 0; done < n; done += chunk {
		err := s.db.Update(func(tx *bolt.Tx) error {
			for i := done; i < done+chunk && i < n; i++ {
				l := &Log{UserID: uint64(i%50 + 1), Username: fmt.Sprintf("u%d", i%50+1), Type: LogTypeConsume,
					TokenID: uint64(i%200 + 1), TokenName: fmt.Sprintf("tok-%d", i%200+1), ModelName: fmt.Sprintf("model-%d", i%20),
					ChannelID: uint64(i%10 + 1), Quota: 100, CreatedAt: int64(1_700_000_000 + i), Other: `{"admin_info":{"use_channel":[1]}}`}
				if i%1000 == 0 {
					l.Content = "通过兑换码充值 $1"
				}
				if err := appendLog(tx, l); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	if err := s.indexLogs(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkLogsPage reads console log pages from 500 000 rows.
func BenchmarkLogsPage(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "logs.db"), Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const rows = 500000
	fillLogs(b, s, rows)
	cases := []struct {
		name string
		f    LogFilter
		page int
	}{
		{"all/first", LogFilter{}, 1},
		{"all/page1000", LogFilter{}, 1000},
		{"all/last", LogFilter{}, rows / 10},
		{"user/last", LogFilter{UserID: 7}, rows / 50 / 10},
		{"user/first", LogFilter{UserID: 7}, 1},
		{"user/page100", LogFilter{UserID: 7}, 100},
		{"model+user/first", LogFilter{UserID: 8, ModelName: "model-7"}, 1},
		{"model+user/page100", LogFilter{UserID: 8, ModelName: "model-7"}, 100},
		{"channel+model/first", LogFilter{ChannelID: 3, ModelName: "model-2"}, 1},
		{"channel+user/first", LogFilter{ChannelID: 9, UserID: 9}, 1},
		{"keyword/first", LogFilter{Keyword: "通过兑换码"}, 1},
		{"keyword/page20", LogFilter{Keyword: "通过兑换码"}, 20},
		{"type+user/first", LogFilter{UserID: 8, Type: LogTypeConsume}, 1},
		{"channel+range/first", LogFilter{ChannelID: 3, Start: 1_700_000_000 + rows - 86400, End: 1_700_000_000 + rows}, 1},
		{"type/first", LogFilter{Type: LogTypeConsume}, 1},
		{"model-pattern/first", LogFilter{ModelName: "model-1_"}, 1},
		{"token-name/first", LogFilter{TokenName: "tok-7"}, 1},
		{"token-name+user/first", LogFilter{TokenName: "tok-7", UserID: 7}, 1},
	}
	run := func(prefix string) {
		for _, c := range cases {
			b.Run(prefix+c.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					p, err := s.Logs(c.f, c.page, 10)
					if err != nil || len(p.Items) == 0 {
						b.Fatalf("page: %v, %d items", err, len(p.Items))
					}
				}
			})
		}
	}
	run("")
	// The same with a busy indexer's worth of entries not indexed yet.
	s.stopIndexer()
	err = s.db.Update(func(tx *bolt.Tx) error {
		for i := 0; i < 2*indexKick; i++ {
			l := &Log{UserID: uint64(i%50 + 1), Type: LogTypeConsume, TokenID: uint64(i%200 + 1), ModelName: fmt.Sprintf("model-%d", i%20),
				ChannelID: uint64(i%10 + 1), Quota: 100, CreatedAt: int64(1_700_000_000 + rows + i)}
			if err := appendLog(tx, l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	run("waiting/")
}

// BenchmarkLogQuotaSum sums the consume quota of 500 000 rows (the log
// page's summary badge), for everyone and for one user.
func BenchmarkLogQuotaSum(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "logs.db"), Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	fillLogs(b, s, 500000)
	for _, c := range []struct {
		name string
		f    LogFilter
	}{{"all", LogFilter{}}, {"user", LogFilter{UserID: 7}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if sum, err := s.LogQuotaSum(c.f); err != nil || sum == 0 {
					b.Fatalf("sum %d, %v", sum, err)
				}
			}
		})
	}
}

func TestLogCountersMatchScan(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "logs.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fillLogs(t, s, 3000)
	for _, f := range []LogFilter{{}, {UserID: 3}, {TokenID: 9}, {ChannelID: 2}, {ModelName: "model-4"}} {
		p, err := s.Logs(f, 2, 7)
		if err != nil {
			t.Fatal(err)
		}
		// The same filter with a type condition is counted by scanning.
		g := f
		g.Keyword = "2" // matches type 2: forces the decoding path
		q, err := s.Logs(g, 2, 7)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != q.Total || len(p.Items) != 7 || len(q.Items) != 7 || p.Items[0].ID != q.Items[0].ID {
			t.Fatalf("filter %+v: counted %d (%d items) vs scanned %d (%d items)", f, p.Total, len(p.Items), q.Total, len(q.Items))
		}
	}
	n, err := s.DeleteLogsBefore(context.Background(), 1_700_000_000+1000)
	if err != nil || n != 1000 {
		t.Fatalf("deleted %d, %v", n, err)
	}
	p, _ := s.Logs(LogFilter{UserID: 3}, 1, 10)
	q, _ := s.Logs(LogFilter{UserID: 3, Type: LogTypeConsume}, 1, 10)
	if p.Total != q.Total || p.Total != 40 {
		t.Fatalf("after delete: counted %d, scanned %d, want 40", p.Total, q.Total)
	}
}
