package store

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// openUnindexed opens a store whose indexer does not run by itself.
func openUnindexed(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "r.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.stopIndexer()
	return s
}

// A model pattern that matches the empty name ("%") finds the rows without
// a model (top-ups, admin changes) as a full scan does, before and after
// the indexer reached them.
func TestLogs_PatternMatchingEmptyModel(t *testing.T) {
	t.Parallel()
	s := openUnindexed(t)
	var all []*Log
	for _, l := range []*Log{
		{UserID: 1, Type: LogTypeTopup, Content: "充值", CreatedAt: 1_700_000_000},
		{UserID: 1, Type: LogTypeConsume, ModelName: "gpt", Quota: 5, CreatedAt: 1_700_000_001},
		{UserID: 1, Type: LogTypeManage, CreatedAt: 1_700_000_002},
	} {
		if err := s.AppendLog(l); err != nil {
			t.Fatal(err)
		}
		all = append(all, l)
	}
	for _, f := range []LogFilter{{ModelName: "%"}, {ModelName: "%%"}, {ModelName: "%", Type: LogTypeConsume}} {
		want := len(bruteLogs(all, f))
		for _, state := range []string{"before indexing", "after indexing"} {
			if state == "after indexing" {
				if err := s.indexLogs(); err != nil {
					t.Fatal(err)
				}
			}
			p, err := s.Logs(f, 1, 10)
			if err != nil || p.Total != want || len(p.Items) != want {
				t.Fatalf("%s, model %q type %d: total %d, %d items, want %d (%v)", state, f.ModelName, f.Type, p.Total, len(p.Items), want, err)
			}
		}
	}
}

// A page read from the oldest end belongs to the state its total was
// counted in. Rows are dated 0..N-1 and a clear removes the oldest while
// the last page is read again and again: a state of T rows holds N-T..N-1,
// so its last page starts at N-T.
func TestLogs_OldestEndPageMatchesItsTotal(t *testing.T) {
	t.Parallel()
	s := openUnindexed(t)
	const N, base = 8000, 1_000_000
	for i := 0; i < N; i += 1000 {
		if err := s.db.Update(func(tx *bolt.Tx) error {
			for j := i; j < i+1000; j++ {
				if err := appendLog(tx, &Log{UserID: 1, Type: LogTypeConsume, CreatedAt: int64(base + j)}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for cut := int64(base + 1); cut < base+N-100; cut += 3 {
			if _, err := s.DeleteLogsBefore(context.Background(), cut); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	bad, tries := 0, 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		for _, f := range []LogFilter{{}, {UserID: 1}} {
			first, err := s.Logs(f, 1, 10)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Logs(f, (first.Total+9)/10, 10)
			if err != nil {
				t.Fatal(err)
			}
			tries++
			if len(p.Items) == 0 {
				continue
			}
			if oldest, want := p.Items[len(p.Items)-1].CreatedAt, int64(base+N-p.Total); oldest != want {
				if bad < 3 {
					t.Logf("filter %+v: total %d, %d items, oldest %d, want %d", f, p.Total, len(p.Items), oldest-base, want-base)
				}
				bad++
			}
		}
	}
	wg.Wait()
	if bad > 0 {
		t.Fatalf("%d of %d last pages were read from another state than their total", bad, tries)
	}
}
