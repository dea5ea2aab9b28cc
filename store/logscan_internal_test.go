package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A scan cut into many read transactions (one every 256 entries) finds
// exactly what one transaction finds: the same pages, totals and sums, with
// entries indexed and entries still waiting for the indexer, and with the
// indexer moving entries between the transactions.
func TestLogScanInSlices(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "scan.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.stopIndexer() // the test decides when entries are indexed
	add := func(from, to int) {
		for i := from; i < to; i++ {
			l := &Log{UserID: uint64(1 + i%3), Username: "u", Type: 1 + i%4, ModelName: []string{"gpt-4o", "gpt-4o-mini", "o3"}[i%3],
				ChannelID: uint64(i % 5), TokenName: "t", Quota: int64(i), CreatedAt: int64(1_700_000_000 + i)}
			if err := s.AppendLog(l); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(0, 3000)
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	add(3000, 4000) // waiting for the indexer
	filters := []LogFilter{
		{}, {Type: 2}, {UserID: 2}, {UserID: 2, Type: 3}, {ModelName: "gpt-4o%"}, {ModelName: "o3"},
		{ChannelID: 4, Start: 1_700_000_500, End: 1_700_003_500}, {TokenName: "t", Start: 1_700_003_900},
	}
	type result struct {
		pages []*LogPage
		sum   int64
		found int
	}
	run := func() []result {
		var out []result
		for _, f := range filters {
			var r result
			// 202, 399 and 400 are read from the oldest end.
			for _, p := range []int{1, 7, 40, 200, 202, 399, 400, 1000} {
				page, err := s.Logs(f, p, 10)
				if err != nil {
					t.Fatal(err)
				}
				r.pages = append(r.pages, page)
			}
			if r.sum, err = s.LogQuotaSum(f); err != nil {
				t.Fatal(err)
			}
			found, err := s.SearchLogs(f, 0)
			if err != nil {
				t.Fatal(err)
			}
			r.found = len(found)
			out = append(out, r)
		}
		return out
	}
	whole := run()
	s.scanSlice = time.Nanosecond
	if sliced := run(); !reflect.DeepEqual(sliced, whole) {
		t.Fatal("a scan in slices found other entries than one in a single transaction")
	}
	// The indexer runs between the slices of a scan, newest or oldest first.
	scan := func(asc bool) (seen int) {
		var prev []byte
		err := s.scanLogsDir(context.Background(), LogFilter{UserID: 1}, asc, nil, func(r *logRow) bool {
			if prev != nil && (string(r.pk) <= string(prev)) == asc {
				t.Fatalf("a walk (oldest first: %v) went back", asc)
			}
			prev = append(prev[:0], r.pk...)
			if seen++; seen == 300 {
				if err := s.indexLogs(); err != nil {
					t.Fatal(err)
				}
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		return seen
	}
	if seen, want := scan(false), 1334; seen != want { // i%3 == 0 for i below 4000
		t.Fatalf("user 1's entries seen %d times, want %d", seen, want)
	}
	add(4000, 4050)
	if seen, want := scan(true), 1334+16; seen != want { // and i%3 == 0 for i in 4000..4049
		t.Fatalf("user 1's entries seen oldest first %d times, want %d", seen, want)
	}

	// A query whose client went away ends with the context's error.
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.LogsContext(gone, LogFilter{TokenName: "t"}, 1, 10); !errors.Is(err, context.Canceled) {
		t.Fatalf("a query after its context ended: %v", err)
	}
	if _, err := s.LogQuotaSumContext(gone, LogFilter{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a sum after its context ended: %v", err)
	}

	// A clear whose caller is gone before it begins clears nothing; one
	// that ends while it runs (a shutdown) stops after the transaction it
	// is in: the oldest rows go, the rest stay.
	if n, err := s.DeleteLogsBefore(gone, 1_700_002_500); !errors.Is(err, context.Canceled) || n != 0 {
		t.Fatalf("a clear after its context ended: cleared %d, %v", n, err)
	}
	first, err := s.DeleteLogsBefore(&endsAfter{Context: context.Background(), checks: 1}, 1_700_002_500)
	if !errors.Is(err, context.Canceled) || first <= 0 || first > logDeleteChunk {
		t.Fatalf("a clear whose context ended after its first transaction: cleared %d, %v; want that transaction's rows and the context's error", first, err)
	}
	// A clear over several of its transactions removes exactly what is older.
	add(4050, 4100) // some waiting for the indexer again
	n, err := s.DeleteLogsBefore(context.Background(), 1_700_002_500)
	if err != nil || first+n != 2500 {
		t.Fatalf("cleared %d after %d, %v; want 2500 in all", n, first, err)
	}
	for _, f := range []LogFilter{{}, {UserID: 1}, {Type: 2}} {
		page, err := s.Logs(f, 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for i := 2500; i < 4100; i++ {
			if (f.UserID == 0 || uint64(1+i%3) == f.UserID) && (f.Type == 0 || 1+i%4 == f.Type) {
				want++
			}
		}
		if page.Total != want {
			t.Fatalf("%+v after the clear: total %d, want %d", f, page.Total, want)
		}
	}
}

// A pattern matching more models than are read through the model index is
// checked row by row, with the same answer.
func TestLogPatternOverManyModels(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "models.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range maxPatternModels + 6 {
		for j := range 3 {
			if err := s.AppendLog(&Log{UserID: 1, Type: LogTypeConsume, ModelName: fmt.Sprintf("model-%03d", i), Quota: 1, CreatedAt: int64(1_700_000_000 + 3*i + j)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pattern string
		want    int
	}{{"model-%", 3 * (maxPatternModels + 6)}, {"model-00_", 30}, {"model-06%", 30}, {"%-069", 3}} {
		page, err := s.Logs(LogFilter{ModelName: tc.pattern}, 1, 5)
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != tc.want || len(page.Items) != min(5, tc.want) {
			t.Fatalf("%q: total %d, %d items; want %d", tc.pattern, page.Total, len(page.Items), tc.want)
		}
		for _, l := range page.Items {
			if !likeMatch(l.ModelName, tc.pattern) {
				t.Fatalf("%q listed %q", tc.pattern, l.ModelName)
			}
		}
	}
}

// endsAfter is a context that ends after its error was asked for checks
// times.
type endsAfter struct {
	context.Context
	checks int
}

func (c *endsAfter) Err() error {
	if c.checks == 0 {
		return context.Canceled
	}
	c.checks--
	return nil
}

// A clear stopped by a transaction the file refuses (a full disk) after
// earlier ones went through says how many entries it cleared, in the code
// of the failure.
func TestLogClearStoppedByTheFileSaysHowMuch(t *testing.T) {
	t.Parallel()
	s, err := Open(filepath.Join(t.TempDir(), "clear.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 3 * logDeleteChunk {
		if err := s.AppendLog(&Log{UserID: 1, Username: "u", Type: 2, ModelName: "gpt-4o", CreatedAt: int64(1_700_000_000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	s.stopIndexer()
	real := s.commitTx
	commits := 0
	s.setCommitTx(func(fn func(*bolt.Tx) error) error {
		if commits++; commits > 1 {
			return &Error{Code: EUNAVAILABLE, Message: errWriteFailing.Message, Err: &fileError{errors.New("file too large")}}
		}
		return real(fn)
	})
	// A commit takes at most logDeleteChunk rows, fewer when its time bound
	// ends it first (a loaded machine): the message says how many went.
	n, err := s.DeleteLogsBefore(context.Background(), 1_700_000_000+3*logDeleteChunk)
	if n < 1 || n > logDeleteChunk || ErrorCode(err) != EUNAVAILABLE || ErrorMessage(err) != fmt.Sprintf("日志清理未完成：已清理 %d 条，其余未清理（数据文件写入失败）", n) {
		t.Fatalf("cleared %d, %v (%q); want one commit's rows and how many in the message", n, err, ErrorMessage(err))
	}
	cleared := n
	// An internal failure (not the file's) says how much too.
	commits = 0
	s.setCommitTx(func(fn func(*bolt.Tx) error) error {
		if commits++; commits > 1 {
			return errors.New("a bug")
		}
		return real(fn)
	})
	n, err = s.DeleteLogsBefore(context.Background(), 1_700_000_000+3*logDeleteChunk)
	if n < 1 || n > logDeleteChunk || ErrorCode(err) != EUNAVAILABLE || ErrorMessage(err) != fmt.Sprintf("日志清理未完成：已清理 %d 条，其余未清理（Internal error.）", n) {
		t.Fatalf("cleared %d, %v (%q); want one commit's rows and how many in the message", n, err, ErrorMessage(err))
	}
	cleared += n
	s.setCommitTx(real)
	if n, err := s.DeleteLogsBefore(context.Background(), 1_700_000_000+3*logDeleteChunk); n != 3*logDeleteChunk-cleared || err != nil {
		t.Fatalf("the rest: cleared %d, %v; want %d", n, err, 3*logDeleteChunk-cleared)
	}
}
