package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bruteLogs answers a filter by reading every entry, newest first.
func bruteLogs(all []*Log, f LogFilter) []*Log {
	var out []*Log
	for _, l := range all {
		if f.Start > 0 && l.CreatedAt < f.Start || f.End != 0 && l.CreatedAt > f.End {
			continue
		}
		if logMatches(l, f) {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b *Log) int {
		if a.CreatedAt != b.CreatedAt {
			return int(b.CreatedAt - a.CreatedAt)
		}
		return int(int64(b.ID) - int64(a.ID))
	})
	return out
}

var indexFilters = []LogFilter{
	{}, {UserID: 2}, {TokenID: 5}, {ChannelID: 3}, {ModelName: "m-1"}, {ModelName: "m-%"}, {Type: LogTypeConsume},
	{Type: LogTypeTopup}, {UserID: 3, ModelName: "m-2"}, {TokenID: 4, Type: LogTypeConsume}, {ChannelID: 1, TokenName: "t1"},
	{UserID: 1, Start: 1_700_000_100, End: 1_700_000_300}, {ModelName: "m-0", End: 1_700_000_250}, {Keyword: "4"},
	// Patterns read through the models they match.
	{ModelName: "m-_"}, {ModelName: "%2"}, {ModelName: "x%"}, {ModelName: "m-%", Type: LogTypeTopup},
	{ModelName: "%", Start: 1_700_000_100}, {ModelName: "%1", UserID: 2},
	// Token names through their index, alone or with another filter.
	{TokenName: "t2"}, {TokenName: "t3", UserID: 2}, {TokenName: "t4", Type: LogTypeConsume},
	{TokenName: "t1", ModelName: "m-%"}, {TokenName: "t5", Start: 1_700_000_150}, {TokenName: "nobody"},
	// Several indexed fields: the smallest index is read, the others are
	// looked up.
	{UserID: 2, ChannelID: 1}, {ModelName: "m-1", ChannelID: 2}, {TokenID: 3, ModelName: "m-0", Type: LogTypeTopup},
	{UserID: 1, TokenID: 2, ChannelID: 3, ModelName: "m-2"}, {UserID: 3, ChannelID: 2, Start: 1_700_000_120, End: 1_700_000_310},
	{UserID: 4, ModelName: "m-%", ChannelID: 1}, {ChannelID: 3, ModelName: "m-1", TokenName: "t2"}, {UserID: 2, ModelName: "nomodel"},
	{TokenID: 6, ChannelID: 2, Keyword: "2"}, {UserID: 1, ChannelID: 3, ModelName: "m-0", End: 1_700_000_200},
	// Keywords: the start of the content (or the type, for a number).
	{Keyword: "模型"}, {Keyword: "模型倍率 0"}, {Keyword: "Hello"}, {Keyword: "hello"}, {Keyword: `quote "`},
	{Keyword: "quote"}, {Keyword: "<tag"}, {Keyword: "通过兑换码充值 $1", UserID: 2}, {Keyword: "nothing"},
	{Keyword: "模型", ModelName: "m-1", ChannelID: 2}, {Keyword: "+1"}, {Keyword: "a\u2028b"},
	// LIKE wildcards in a keyword.
	{Keyword: "%"}, {Keyword: "模型倍率 _"}, {Keyword: "模型倍率%补全"}, {Keyword: "%World"}, {Keyword: "_ello"},
	{Keyword: `quote "%more`}, {Keyword: "通过%", UserID: 2},
	// An end before 0 is met by no entry; a start before 0 by every one.
	{End: -1}, {End: -1, UserID: 2}, {Start: -5},
}

// logContents are the contents the query tests' entries carry: a keyword
// matches the start of one, JSON writes some of them escaped.
var logContents = []string{"", "模型倍率 0.075，补全倍率 4", "模型倍率 1", "通过兑换码充值 $1", `quote " and <tag> & more`,
	"Hello world", "hello World", "a\u2028b c", "<tag> first"}

// checkLogQueries compares every query path with a brute-force answer.
func checkLogQueries(t *testing.T, s *Store, all []*Log, state string) {
	t.Helper()
	for _, f := range indexFilters {
		want := bruteLogs(all, f)
		for _, size := range []int{7, 1000} {
			// The first pages, and the last ones (read from the oldest end).
			last := (len(want) + size - 1) / size
			for _, page := range []int{1, 2, 3, last - 2, last - 1, last, last + 1} {
				if page < 1 {
					continue
				}
				p, err := s.Logs(f, page, size)
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != len(want) {
					t.Fatalf("%s: filter %+v: total %d, want %d", state, f, p.Total, len(want))
				}
				lo := min((page-1)*size, len(want))
				hi := min(lo+size, len(want))
				got := make([]uint64, len(p.Items))
				for i, l := range p.Items {
					got[i] = l.ID
				}
				exp := []uint64{}
				for _, l := range want[lo:hi] {
					exp = append(exp, l.ID)
				}
				if !slices.Equal(got, exp) {
					t.Fatalf("%s: filter %+v page %d/%d: ids %v, want %v", state, f, page, size, got, exp)
				}
			}
		}
		sum, err := s.LogQuotaSum(f)
		if err != nil {
			t.Fatal(err)
		}
		g := f
		g.Type = LogTypeConsume
		var wantSum int64
		for _, l := range bruteLogs(all, g) {
			wantSum += l.Quota
		}
		if sum != wantSum {
			t.Fatalf("%s: filter %+v: quota sum %d, want %d", state, f, sum, wantSum)
		}
	}
}

// A query finds every entry whether the indexer has reached it or not:
// pages, totals from the row counters and sums agree with a full scan before
// indexing, halfway, after, and after a clear that removes indexed and
// waiting entries alike.
func TestLogQueriesSeeIndexedAndWaitingEntries(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "logs.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.stopIndexer() // the test runs the passes itself
	rng := rand.New(rand.NewPCG(1, 2))
	var all []*Log
	add := func(n int) {
		for range n {
			typ := LogTypeConsume
			if rng.IntN(5) == 0 {
				typ = LogTypeTopup
			}
			tok := uint64(rng.IntN(6) + 1)
			l := &Log{UserID: uint64(rng.IntN(4) + 1), TokenID: tok, TokenName: fmt.Sprintf("t%d", tok), ChannelID: uint64(rng.IntN(3) + 1),
				Content:   logContents[rng.IntN(len(logContents))],
				ModelName: fmt.Sprintf("m-%d", rng.IntN(3)), Type: typ, Quota: int64(rng.IntN(1000)),
				// Times are not in id order: a call settled late keeps its own time.
				CreatedAt: 1_700_000_000 + int64(rng.IntN(400))}
			if err := s.AppendLog(l); err != nil {
				t.Fatal(err)
			}
			all = append(all, l)
		}
	}
	add(300)
	if n := UnindexedLogs(s); n != 300 {
		t.Fatalf("waiting entries = %d, want 300", n)
	}
	checkLogQueries(t, s, all, "none indexed")
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	add(200)
	checkLogQueries(t, s, all, "some indexed")

	// Clear everything before a time that cuts through both kinds.
	cut := int64(1_700_000_200)
	n, err := s.DeleteLogsBefore(context.Background(), cut)
	if err != nil {
		t.Fatal(err)
	}
	kept := all[:0:0]
	for _, l := range all {
		if l.CreatedAt >= cut {
			kept = append(kept, l)
		}
	}
	if n != len(all)-len(kept) {
		t.Fatalf("deleted %d, want %d", n, len(all)-len(kept))
	}
	all = kept
	checkLogQueries(t, s, all, "after clear")
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	if n := UnindexedLogs(s); n != 0 {
		t.Fatalf("waiting entries after a pass = %d", n)
	}
	checkLogQueries(t, s, all, "all indexed")
}

// The indexer runs by itself: entries committed by charges are indexed
// within its interval, and a copy of the file taken with entries waiting
// indexes them after it is opened.
func TestLogIndexerCatchesUp(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(filepath.Join(dir, "a.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.stopIndexer()
	for i := range 50 {
		if err := s.AppendLog(&Log{UserID: 9, Type: LogTypeConsume, ModelName: "m", CreatedAt: int64(1_700_000_000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	copyPath := filepath.Join(dir, "copy.db")
	f, err := os.Create(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Backup(context.Background(), f, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Open(copyPath, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for UnindexedLogs(c) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d entries still waiting after 5 s", UnindexedLogs(c))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := len(UserLogs(t, c, 9)); got != 50 {
		t.Fatalf("indexed %d entries of user 9, want 50", got)
	}
	p, err := c.Logs(LogFilter{UserID: 9}, 1, 10)
	if err != nil || p.Total != 50 {
		t.Fatalf("total %d, %v", p.Total, err)
	}
}

// Log entries arrive in time order, so their pages (and the type index's)
// are left nearly full when they split: the log takes about what its rows
// need, not twice that.
func TestLogPagesStayFull(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "fill.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 4000; i += 4 {
		err := s.db.Update(func(tx *bolt.Tx) error {
			for j := range 4 {
				l := &Log{UserID: uint64((i+j)%50 + 1), TokenID: uint64((i+j)%200 + 1), ChannelID: 3, Type: LogTypeConsume,
					ModelName: fmt.Sprintf("model-%d", (i+j)%20), CreatedAt: int64(1_700_000_000 + i), Content: "模型倍率 0.075，补全倍率 4，分组倍率 1",
					Other: `{"model_ratio":0.075,"group_ratio":1,"completion_ratio":4,"model_price":-1,"frt":-1000,"request_id":"20261122080725WduJwIF7"}`}
				if err := appendLog(tx, l); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if i%400 == 0 {
			if err := s.indexLogs(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	_ = s.db.View(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketLogs, bucketIdxLogsByType} {
			st := tx.Bucket(b).Stats()
			if fill := float64(st.LeafInuse) / float64(st.LeafAlloc); fill < 0.75 {
				t.Errorf("%s: leaf pages %.0f %% full", b, fill*100)
			}
		}
		return nil
	})
}

// A pass indexes waiting entries in bounded transactions and loses none at
// the boundary between two of them.
func TestLogIndexerChunks(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "chunks.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.stopIndexer()
	total := 0
	for _, n := range []int{indexChunk - 1, indexChunk, indexChunk + 1, 2*indexChunk + 3} {
		total += n
		err := s.db.Update(func(tx *bolt.Tx) error {
			for i := range n {
				if err := appendLog(tx, &Log{UserID: uint64(n), Type: LogTypeConsume, CreatedAt: int64(1_700_000_000 + i)}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.indexLogs(); err != nil {
			t.Fatal(err)
		}
		if w := UnindexedLogs(s); w != 0 {
			t.Fatalf("%d entries: %d still waiting", n, w)
		}
		if got := len(UserLogs(t, s, uint64(n))); got != n {
			t.Fatalf("%d entries: %d indexed", n, got)
		}
	}
	p, err := s.Logs(LogFilter{Type: LogTypeConsume}, 1, 1)
	if err != nil || p.Total != total {
		t.Fatalf("type total %d, want %d (%v)", p.Total, total, err)
	}
}

// Passes cut by time (here after every 64 entries) index every waiting
// entry once, across as many transactions as it takes.
func TestLogIndexerTimeBoundedPasses(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "budget.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.stopIndexer()
	s.indexer.budget = 0
	const n = 1000
	err = s.db.Update(func(tx *bolt.Tx) error {
		for i := range n {
			if err := appendLog(tx, &Log{UserID: 7, Type: LogTypeConsume, Quota: 2, CreatedAt: int64(1_700_000_000 + i)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	commits := 0
	real := s.commitTx
	s.setCommitTx(func(fn func(*bolt.Tx) error) error { commits++; return real(fn) })
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	if w := UnindexedLogs(s); w != 0 {
		t.Fatalf("%d still waiting", w)
	}
	if got := len(UserLogs(t, s, 7)); got != n {
		t.Fatalf("%d indexed, want %d", got, n)
	}
	if sum, err := s.LogQuotaSum(LogFilter{UserID: 7}); err != nil || sum != 2*n {
		t.Fatalf("quota sum %d, want %d (%v)", sum, 2*n, err)
	}
	// 1000 entries in passes of 64: 16 transactions (and at most one more
	// that finds nothing and rolls back).
	if commits < 16 || commits > 17 {
		t.Fatalf("%d transactions, want 16", commits)
	}
}

// Entries indexed by an older build carry neither type nor quota in their
// index entries, and their waiting references are of the older layout:
// every query still agrees with a full scan over a file that mixes them
// with entries of the present layout.
func TestLogQueriesOverOlderIndexEntries(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "logs.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.stopIndexer()
	rng := rand.New(rand.NewPCG(3, 4))
	var all []*Log
	add := func(n int) {
		for range n {
			typ := []int{LogTypeConsume, LogTypeConsume, LogTypeTopup, LogTypeManage}[rng.IntN(4)]
			tok := uint64(rng.IntN(6) + 1)
			l := &Log{UserID: uint64(rng.IntN(4) + 1), TokenID: tok, TokenName: fmt.Sprintf("t%d", tok), ChannelID: uint64(rng.IntN(3) + 1),
				ModelName: fmt.Sprintf("m-%d", rng.IntN(3)), Type: typ, Quota: int64(rng.IntN(1000)), CreatedAt: 1_700_000_000 + int64(rng.IntN(400))}
			if err := s.AppendLog(l); err != nil {
				t.Fatal(err)
			}
			all = append(all, l)
		}
	}
	add(300)
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	add(200)
	// Every other index entry loses its value, and every waiting reference
	// takes the older layout, as an older build wrote them.
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := blankIndexValues(tx, 2); err != nil {
			return err
		}
		err := rewriteWaitingRefs(tx, func(r logRef) []byte {
			if !r.hasQuota {
				t.Fatalf("a present reference does not decode")
			}
			return oldLayoutRef(r)
		})
		if err != nil {
			return err
		}
		// As the migration to the token-name index leaves such a file: the
		// entries present are to be added to it.
		return scheduleNameBackfill(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLogQueries(t, s, all, "older entries waiting")
	if err := s.indexLogs(); err != nil { // older references indexed without meta
		t.Fatal(err)
	}
	add(100)
	checkLogQueries(t, s, all, "older entries indexed")
	for done := false; !done; {
		if done, err = s.backfillTokenNameSlice(); err != nil {
			t.Fatal(err)
		}
	}
	checkLogQueries(t, s, all, "older entries indexed by token name")
}

// A file written before the token-name index gets it in the background:
// until every older entry is in, queries by token name read as before;
// the backfill goes on across a restart, meets entries written meanwhile
// and a clear, and ends with index entries and row counters that agree
// with a full scan.
func TestTokenNameBackfill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s.stopIndexer()
	rng := rand.New(rand.NewPCG(5, 6))
	var all []*Log
	add := func(s *Store, n int) {
		for range n {
			tok := uint64(rng.IntN(6) + 1)
			l := &Log{UserID: uint64(rng.IntN(4) + 1), TokenID: tok, TokenName: fmt.Sprintf("t%d", tok), ChannelID: uint64(rng.IntN(3) + 1),
				ModelName: fmt.Sprintf("m-%d", rng.IntN(3)), Type: LogTypeConsume, Quota: int64(rng.IntN(1000)), CreatedAt: 1_700_000_000 + int64(rng.IntN(400))}
			if err := s.AppendLog(l); err != nil {
				t.Fatal(err)
			}
			all = append(all, l)
		}
	}
	add(s, 300)
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	add(s, 100)
	// Make the file one of schema version 4: no token-name index, waiting
	// references without the name.
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketIdxLogsByTokenName); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketIdxLogsByTokenName); err != nil {
			return err
		}
		counts := tx.Bucket(bucketLogCounts)
		for i := 1; i <= 6; i++ {
			if err := counts.Delete([]byte(nameCounter(fmt.Sprintf("t%d", i)))); err != nil {
				return err
			}
		}
		if err := rewriteWaitingRefs(tx, quotaRef); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(metaSchemaVersion, itob(4))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	reopen := func() *Store {
		s, err := Open(path, Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		s.stopIndexer()
		s.backfillRows.Store(150)
		return s
	}
	s = reopen()
	ready := func(s *Store) (ok bool) {
		_ = s.db.View(func(tx *bolt.Tx) error { ok = tokenNameIndexReady(tx); return nil })
		return ok
	}
	if ready(s) {
		t.Fatal("the index counts as complete before the backfill")
	}
	checkLogQueries(t, s, all, "before the backfill")
	if done, err := s.backfillTokenNameSlice(); err != nil || done {
		t.Fatalf("first slice: done %v, %v", done, err)
	}
	add(s, 50) // written meanwhile, indexed by name as they come
	checkLogQueries(t, s, all, "backfill under way")
	s.Close()
	s = reopen()
	defer s.Close()
	if err := s.indexLogs(); err != nil { // the older references, without names
		t.Fatal(err)
	}
	if ready(s) {
		t.Fatal("the index counts as complete after a restart mid-way")
	}
	// A clear removes entries on both sides of the backfill's position.
	cut := int64(1_700_000_050)
	if _, err := s.DeleteLogsBefore(context.Background(), cut); err != nil {
		t.Fatal(err)
	}
	kept := all[:0:0]
	for _, l := range all {
		if l.CreatedAt >= cut {
			kept = append(kept, l)
		}
	}
	all = kept
	slices := 0
	for done := false; !done; slices++ {
		if done, err = s.backfillTokenNameSlice(); err != nil {
			t.Fatal(err)
		}
	}
	if !ready(s) || slices < 2 {
		t.Fatalf("ready %v after %d slices", ready(s), slices)
	}
	add(s, 50)
	checkLogQueries(t, s, all, "after the backfill")
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	checkLogQueries(t, s, all, "after the backfill, all indexed")
	// Every name's index entries and counter match the entries.
	err = s.db.View(func(tx *bolt.Tx) error {
		for i := 1; i <= 6; i++ {
			name := fmt.Sprintf("t%d", i)
			want := len(bruteLogs(all, LogFilter{TokenName: name}))
			n := 0
			c := tx.Bucket(bucketIdxLogsByTokenName).Cursor()
			prefix := modelIndexKey(name, nil)
			for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
				n++
			}
			counter := int(btoi(tx.Bucket(bucketLogCounts).Get([]byte(nameCounter(name)))))
			if n != want || counter != want {
				t.Errorf("%s: %d index entries, counter %d, want %d", name, n, counter, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The running indexer finishes a pending token-name backfill by itself.
func TestTokenNameBackfillInBackground(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		if err := s.AppendLog(&Log{UserID: 1, TokenName: fmt.Sprintf("t%d", i%3), Type: LogTypeConsume, CreatedAt: int64(1_700_000_000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	s.stopIndexer()
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	// Undo the index as a file from before it had none, with the backfill
	// the upgrade schedules.
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketIdxLogsByTokenName); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketIdxLogsByTokenName); err != nil {
			return err
		}
		for i := range 3 {
			if err := tx.Bucket(bucketLogCounts).Delete([]byte(nameCounter(fmt.Sprintf("t%d", i)))); err != nil {
				return err
			}
		}
		return scheduleNameBackfill(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.backfillRows.Store(500) // several slices
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ready := false
		_ = s.db.View(func(tx *bolt.Tx) error { ready = tokenNameIndexReady(tx); return nil })
		if ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the backfill did not finish")
		}
	}
	for i := range 3 {
		p, err := s.Logs(LogFilter{TokenName: fmt.Sprintf("t%d", i)}, 1, 10)
		if err != nil || p.Total != 1000 {
			t.Fatalf("t%d: %d rows, %v; want 1000", i, p.Total, err)
		}
	}
}

// A token-name query whose type is read from the index value still checks
// the name of a waiting row whose reference, written by an older build,
// lacks it (the backfill leaves waiting rows to the indexer, so the index
// may count as complete while such references wait).
func TestTokenNameWithTypeOverOlderWaitingReferences(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "logs.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.stopIndexer()
	for i := range 5 { // indexed rows: the type index outgrows the name index
		if err := s.AppendLog(&Log{UserID: 1, TokenName: "c", Type: LogTypeConsume, Quota: 1, CreatedAt: int64(1_700_000_000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	for _, l := range []*Log{
		{UserID: 1, TokenName: "a", Type: LogTypeConsume, Quota: 10, CreatedAt: 1_700_000_100},
		{UserID: 1, TokenName: "b", Type: LogTypeConsume, Quota: 1000, CreatedAt: 1_700_000_101},
	} {
		if err := s.AppendLog(l); err != nil {
			t.Fatal(err)
		}
	}
	// References as an older build wrote them (quota, no name), and the
	// backfill the upgrade schedules.
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := rewriteWaitingRefs(tx, quotaRef); err != nil {
			return err
		}
		return scheduleNameBackfill(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	for done := false; !done; {
		if done, err = s.backfillTokenNameSlice(); err != nil {
			t.Fatal(err)
		}
	}
	if sum, err := s.LogQuotaSum(LogFilter{TokenName: "a"}); err != nil || sum != 10 {
		t.Errorf("quota sum of token name a = %d, %v; want 10", sum, err)
	}
	p, err := s.Logs(LogFilter{TokenName: "a", Type: LogTypeConsume}, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 1 || p.Items[0].TokenName != "a" || p.Total != 1 {
		t.Errorf("token name a, consume: %d rows (total %d)", len(p.Items), p.Total)
	}
}

// Rows dated after a page's End (the clock was set back) are not counted
// in its total, and a page read from the oldest end is not shifted by them.
func TestLogPagesWithRowsAfterTheirEnd(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "logs.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.stopIndexer()
	const base = 1_700_000_000
	var all []*Log
	for i := range 20 {
		l := &Log{UserID: 1, Type: LogTypeConsume, CreatedAt: int64(base + i)}
		if err := s.AppendLog(l); err != nil {
			t.Fatal(err)
		}
		all = append(all, l)
	}
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	s.Now = func() time.Time { return time.Unix(base+10, 0) } // the clock set back
	f := LogFilter{UserID: 1, End: base + 12}
	want := bruteLogs(all, f)
	for page := 1; page <= 2; page++ {
		p, err := s.Logs(f, page, 10)
		if err != nil {
			t.Fatal(err)
		}
		got, exp := []uint64{}, []uint64{}
		for _, l := range p.Items {
			got = append(got, l.ID)
		}
		for _, l := range want[(page-1)*10 : min(page*10, len(want))] {
			exp = append(exp, l.ID)
		}
		if !slices.Equal(got, exp) || p.Total != len(want) {
			t.Errorf("page %d: ids %v, want %v (total %d, want %d)", page, got, exp, p.Total, len(want))
		}
	}
}

// rewriteWaitingRefs replaces every waiting reference with layout(ref), as
// an older build would have written it.
func rewriteWaitingRefs(tx *bolt.Tx, layout func(r logRef) []byte) error {
	w := tx.Bucket(bucketLogUnindexed)
	refs := map[string][]byte{}
	if err := w.ForEach(func(k, v []byte) error {
		r, _ := decodeRef(v)
		refs[string(k)] = layout(r)
		return nil
	}); err != nil {
		return err
	}
	for k, v := range refs {
		if err := w.Put([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}

// quotaRef is a reference in the layout of schema version 4: the quota but
// no token name.
func quotaRef(r logRef) []byte {
	e := r.encode()
	e[0] = refMark
	return append(e[:34:34], r.model...)
}

// scheduleNameBackfill leaves the file as migration 5 leaves one with rows.
func scheduleNameBackfill(tx *bolt.Tx) error {
	last, _ := tx.Bucket(bucketLogs).Cursor().Last()
	if err := tx.Bucket(bucketMeta).Put(metaNameBackfillNext, make([]byte, 16)); err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(metaNameBackfillEnd, append([]byte(nil), last...))
}

// Content stored with invalid UTF-8 reads back with U+FFFD in their place;
// a keyword holding U+FFFD finds it, as the decoded entry says.
func TestLogKeywordOverInvalidUTF8(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "logs.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 4 {
		content := "ad\xffmin 将用户额度从 1 修改为 2"
		if i%2 == 1 {
			content = "admin"
		}
		if err := s.AppendLog(&Log{UserID: 1, Type: LogTypeManage, Content: content, CreatedAt: int64(1_700_000_000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(state string) {
		for _, kw := range []string{"ad\uFFFDmin", "ad\uFFFD", "\uFFFD"} {
			want := 2
			if kw == "\uFFFD" {
				want = 0
			}
			got, err := s.SearchLogs(LogFilter{Keyword: kw}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != want {
				t.Fatalf("%s: keyword %q: %d entries, want %d", state, kw, len(got), want)
			}
		}
	}
	check("waiting")
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	check("indexed")
}

// blankIndexValues empties the value of every nth entry of the log indexes,
// as builds from before index entries carried type and quota wrote them.
func blankIndexValues(tx *bolt.Tx, nth int) error {
	for _, name := range [][]byte{bucketIdxLogsByUser, bucketIdxLogsByToken, bucketIdxLogsByChannel, bucketIdxLogsByModel, bucketIdxLogsByType} {
		b := tx.Bucket(name)
		var keys [][]byte
		i := 0
		if err := b.ForEach(func(k, v []byte) error {
			if i++; i%nth == 0 {
				keys = append(keys, append([]byte(nil), k...))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			if err := b.Put(k, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// oldLayoutRef encodes r as the oldest builds wrote a waiting reference:
// user, token, channel, type and model, without quota or token name.
func oldLayoutRef(r logRef) []byte {
	old := make([]byte, 25, 25+len(r.model))
	binary.BigEndian.PutUint64(old, r.user)
	binary.BigEndian.PutUint64(old[8:], r.token)
	binary.BigEndian.PutUint64(old[16:], r.channel)
	old[24] = byte(r.typ)
	return append(old, r.model...)
}

// A file from a build before channel tests bounded ?model= can hold a
// waiting entry whose model name is longer than a bbolt key may be (the
// test's log). The indexer of this build must get past it: every later
// entry, of any call, reaches the indexes and the counters, and the file
// still checks.
func TestLogIndexerPassesAnOlderOverlongModel(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "a.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.stopIndexer()
	long := string(bytes.Repeat([]byte("m"), 40000))
	if err := s.AppendLog(&Log{UserID: 1, ChannelID: 3, Type: LogTypeSystem, ModelName: long, CreatedAt: 1_700_000_000}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := s.AppendLog(&Log{UserID: 9, TokenName: "t", Type: LogTypeConsume, ModelName: "m", Quota: 10, CreatedAt: int64(1_700_000_001 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.indexLogs(); err != nil {
		t.Fatalf("indexer pass: %v", err)
	}
	if n := UnindexedLogs(s); n != 0 {
		t.Fatalf("%d entries still waiting after a pass", n)
	}
	if got := len(UserLogs(t, s, 9)); got != 5 {
		t.Fatalf("indexed %d entries of user 9, want 5", got)
	}
	if p, err := s.Logs(LogFilter{UserID: 1}, 1, 10); err != nil || p.Total != 1 {
		t.Fatalf("user 1: total %d, %v", p.Total, err)
	}
	checkStore(t, s, "after the pass")
}

// lockedBuffer is a bytes.Buffer safe for a logger and a test to share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A file that takes no writes (a full disk) fails every pass of the
// indexer, and each failed commit reads the whole file while charges wait:
// the indexer says so once and waits longer after each failure instead of
// trying five times a second, and indexes the waiting entries once the file
// takes writes again.
func TestIndexerWaitsWhileTheFileTakesNoWrites(t *testing.T) {
	var out lockedBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&out, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	s, err := Open(filepath.Join(t.TempDir(), "logs.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.stopIndexer()
	if err := s.db.Update(func(tx *bolt.Tx) error {
		for i := range 10 {
			if err := appendLog(tx, &Log{UserID: 7, Type: LogTypeConsume, Quota: 2, CreatedAt: int64(1_700_000_000 + i)}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var failed atomic.Int64
	real := s.commitTx
	s.setCommitTx(func(fn func(*bolt.Tx) error) error {
		err := real(fn)
		if err != nil && !errors.Is(err, errNothingToIndex) {
			failed.Add(1)
		}
		return err
	})
	lift := limitFileSize(t, 8<<10) // past the two meta pages: every other page fails
	s.startIndexer()
	time.Sleep(2 * time.Second)
	if n := failed.Load(); n == 0 || n > 3 {
		t.Fatalf("%d failed passes in 2 s of a file that takes no writes", n)
	}
	lift()
	for deadline := time.Now().Add(10 * time.Second); UnindexedLogs(s) != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d entries still waiting 10 s after the file took writes again", UnindexedLogs(s))
		}
	}
	if got := len(UserLogs(t, s, 7)); got != 10 {
		t.Fatalf("%d entries indexed, want 10", got)
	}
	if n := strings.Count(out.String(), "the log indexer cannot write"); n != 1 {
		t.Fatalf("the failure logged %d times:\n%s", n, out.String())
	}
}
