package store

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The log query engine against a plain scan that shares none of its code:
// entries of every type for several users, tokens (renamed ones, and names
// that several tokens share), models and channels, spread over time with
// ties, some indexed and some still waiting for the indexer, interleaved
// with clears at random times; every query the API offers (each filter
// alone and combined, pages up to and past the last, totals, sums, the two
// searches and the token lookup) is compared with the scan.

func oracleMatch(l *Log, f LogFilter, userByName map[string]uint64) bool {
	if f.Type != 0 && l.Type != f.Type {
		return false
	}
	if f.Username != "" {
		id, ok := userByName[strings.ToLower(f.Username)]
		if !ok || l.UserID != id {
			return false
		}
	}
	if f.UserID != 0 && l.UserID != f.UserID {
		return false
	}
	if f.TokenID != 0 && l.TokenID != f.TokenID {
		return false
	}
	if f.TokenName != "" && l.TokenName != f.TokenName {
		return false
	}
	if f.ChannelID != 0 && l.ChannelID != f.ChannelID {
		return false
	}
	if f.ModelName != "" && !likeOracle(l.ModelName, f.ModelName) {
		return false
	}
	if f.Start != 0 && l.CreatedAt < f.Start {
		return false
	}
	if f.End != 0 && l.CreatedAt > f.End {
		return false
	}
	if f.Keyword != "" {
		t, err := strconv.Atoi(f.Keyword)
		if !(err == nil && t == l.Type) && !likeOracle(l.Content, f.Keyword+"%") {
			return false
		}
	}
	return true
}

// oracleScan answers f by reading every entry, newest first (created_at,
// then id).
func oracleScan(all map[uint64]*Log, f LogFilter, userByName map[string]uint64) []*Log {
	var out []*Log
	for _, l := range all {
		if oracleMatch(l, f, userByName) {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b *Log) int {
		if a.CreatedAt != b.CreatedAt {
			if a.CreatedAt > b.CreatedAt {
				return -1
			}
			return 1
		}
		if a.ID > b.ID {
			return -1
		}
		return 1
	})
	return out
}

func logIDs(ls []*Log) []uint64 {
	out := []uint64{}
	for _, l := range ls {
		out = append(out, l.ID)
	}
	return out
}

type logWorld struct {
	rng        *rand.Rand
	all        map[uint64]*Log
	userByName map[string]uint64
	users      []*User
	tokens     []struct {
		id   uint64
		name string
	}
	models   []string
	contents []string
	base     int64
	span     int64
}

func newLogWorld(t *testing.T, s *Store, seed uint64) *logWorld {
	w := &logWorld{rng: rand.New(rand.NewPCG(seed, 30)), all: map[uint64]*Log{}, userByName: map[string]uint64{},
		base: 1_700_000_000, span: 3000}
	for _, name := range []string{"alice", "Bob", "carol", "dave", "eve"} {
		u := MustPutUser(t, s, User{Username: name})
		w.users = append(w.users, u)
		w.userByName[strings.ToLower(name)] = u.ID
	}
	// Token ids and the names their logs carry: 5 and 6 share a name, 0 is
	// the playground's and the channel test's.
	w.tokens = []struct {
		id   uint64
		name string
	}{{1, "default"}, {2, "key-2"}, {3, "old-3"}, {4, "t4"}, {5, "shared"}, {6, "shared"}, {0, "playground-default"}, {0, "模型测试"}, {7, "with space"}}
	w.models = []string{"gpt-4o", "gpt-4o-mini", "claude_3", "o3", "gpt-4%", "text-embedding-3-small"}
	w.contents = []string{"", "模型倍率 0.075，补全倍率 4，分组倍率 1", "模型倍率 1，补全倍率 1，分组倍率 1（可能是上游超时）",
		"通过兑换码充值 $1.000000", "管理员将用户额度从 1 点额度修改为 2 点额度", "新用户注册赠送 $0.200000", "模型测试",
		"邀请用户赠送 5 点额度", `quote " and <tag> & more`, "2 leading digit", "100% sure", "under_score"}
	return w
}

// entry makes one random entry of a random kind.
func (w *logWorld) entry() *Log {
	r := w.rng
	u := w.users[r.IntN(len(w.users))]
	l := &Log{UserID: u.ID, Username: u.Username, CreatedAt: w.base + int64(r.IntN(int(w.span)))}
	switch r.IntN(10) {
	case 0:
		l.Type = LogTypeTopup
		l.Content = w.contents[3]
		l.Quota = int64(r.IntN(5000))
	case 1:
		l.Type = LogTypeManage
		l.Content = w.contents[4]
	case 2:
		l.Type = LogTypeSystem
		l.Content = w.contents[5+2*r.IntN(2)]
		l.Quota = int64(r.IntN(300))
	default:
		l.Type = LogTypeConsume
		tk := w.tokens[r.IntN(len(w.tokens))]
		l.TokenID, l.TokenName = tk.id, tk.name
		if tk.id == 3 && r.IntN(2) == 0 {
			l.TokenName = "new-3" // renamed: earlier logs keep the old name
		}
		l.ModelName = w.models[r.IntN(len(w.models))]
		l.ChannelID = uint64(r.IntN(4)) // 0: none
		l.Quota = int64(r.IntN(10000))
		l.PromptTokens, l.CompletionTokens = int64(r.IntN(100)), int64(r.IntN(100))
		l.Content = w.contents[r.IntN(len(w.contents))]
		l.Other = fmt.Sprintf(`{"admin_info":{"use_channel":[%d]},"model_ratio":1}`, l.ChannelID)
	}
	return l
}

// add writes n entries in transactions of random sizes.
func (w *logWorld) add(t *testing.T, s *Store, n int) {
	t.Helper()
	for n > 0 {
		k := min(n, 1+w.rng.IntN(40))
		n -= k
		err := s.db.Update(func(tx *bolt.Tx) error {
			for range k {
				l := w.entry()
				if err := appendLog(tx, l); err != nil {
					return err
				}
				w.all[l.ID] = l
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// clear removes the entries before ts from the store and the model.
func (w *logWorld) clear(t *testing.T, s *Store, ts int64) {
	t.Helper()
	n, err := s.DeleteLogsBefore(context.Background(), ts)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for id, l := range w.all {
		if l.CreatedAt < ts {
			delete(w.all, id)
			want++
		}
	}
	if n != want {
		t.Fatalf("clear before %d removed %d, want %d", ts, n, want)
	}
}

// someTime is a time of an entry (an edge of the range), or one near the
// span.
func (w *logWorld) someTime() int64 {
	if len(w.all) > 0 && w.rng.IntN(3) > 0 {
		i := w.rng.IntN(len(w.all))
		for _, l := range w.all {
			if i == 0 {
				return l.CreatedAt + int64(w.rng.IntN(3)-1)
			}
			i--
		}
	}
	return w.base - 10 + int64(w.rng.IntN(int(w.span)+20))
}

// filter makes a random combination of the API's filters.
func (w *logWorld) filter() LogFilter {
	r := w.rng
	var f LogFilter
	if r.IntN(3) == 0 {
		f.Type = 1 + r.IntN(4)
	}
	if r.IntN(3) == 0 {
		u := w.users[r.IntN(len(w.users))]
		switch r.IntN(3) {
		case 0:
			f.UserID = u.ID
		case 1:
			f.Username = u.Username
		default:
			f.Username = strings.ToUpper(u.Username)
		}
	}
	if r.IntN(3) == 0 {
		names := []string{"default", "key-2", "old-3", "new-3", "t4", "shared", "playground-default", "模型测试", "with space", "nobody"}
		f.TokenName = names[r.IntN(len(names))]
	}
	if r.IntN(3) == 0 {
		models := append(slices.Clone(w.models), "gpt-4o%", "%mini", "gpt-4_", "claude_%", "%", "_3", "nomodel", "%o%")
		f.ModelName = models[r.IntN(len(models))]
	}
	if r.IntN(4) == 0 {
		f.ChannelID = uint64(1 + r.IntN(4))
	}
	if r.IntN(3) == 0 {
		f.Start = w.someTime()
	}
	if r.IntN(3) == 0 {
		f.End = w.someTime()
	}
	if r.IntN(12) == 0 {
		f.TokenID = uint64(1 + r.IntN(7))
	}
	return f
}

// checkAgainstOracle compares pages, totals, sums and searches with the
// plain scan for the fixed filters and n random ones.
func checkAgainstOracle(t *testing.T, s *Store, w *logWorld, n int, state string) {
	t.Helper()
	filters := []LogFilter{{}, {Type: 1}, {Type: 2}, {Type: 3}, {Type: 4}, {TokenName: "shared"}, {TokenName: "new-3"},
		{ModelName: "%"}, {ModelName: "gpt-4%"}, {ChannelID: 2}, {Username: "BOB"}, {Start: w.base + 1000, End: w.base + 1000},
		{TokenName: "shared", Type: 2}, {TokenName: "shared", UserID: w.users[1].ID}, {TokenName: "shared", UserID: w.users[1].ID, Type: 2},
		{Start: w.base + 2000, End: w.base + 1000}, {Start: -100}, {End: math.MaxInt64}, {Start: math.MaxInt64}, {Type: 9}, {ChannelID: 99},
		{Username: "nobody"}, {TokenID: 5, TokenName: "shared"}, {TokenID: 5, TokenName: "default"}, {ModelName: "gpt-4o", ChannelID: 1, UserID: w.users[0].ID, TokenName: "shared", Type: 2}}
	for range n {
		filters = append(filters, w.filter())
	}
	for _, f := range filters {
		want := oracleScan(w.all, f, w.userByName)
		for _, size := range []int{1, 7, 100} {
			last := (len(want) + size - 1) / size
			for _, page := range []int{1, 2, last - 1, last, last + 1, last + 3} {
				if page < 1 || size == 1 && page != 1 && page != last && page != last+1 {
					continue
				}
				p, err := s.Logs(f, page, size)
				if err != nil {
					t.Fatal(err)
				}
				lo := min((page-1)*size, len(want))
				hi := min(lo+size, len(want))
				if got, exp := logIDs(p.Items), logIDs(want[lo:hi]); p.Total != len(want) || !slices.Equal(got, exp) {
					t.Fatalf("%s: filter %+v page %d size %d: total %d ids %v, want total %d ids %v", state, f, page, size, p.Total, got, len(want), exp)
				}
				if p.Page != page || p.PageSize != size {
					t.Fatalf("%s: page %d size %d answered as %d/%d", state, page, size, p.Page, p.PageSize)
				}
			}
		}
		// The stat's quota: consume entries only, whatever the type asked.
		g := f
		g.Type = LogTypeConsume
		var wantSum int64
		for _, l := range oracleScan(w.all, g, w.userByName) {
			wantSum += l.Quota
		}
		if sum, err := s.LogQuotaSum(f); err != nil || sum != wantSum {
			t.Fatalf("%s: filter %+v: quota sum %d (%v), want %d", state, f, sum, err, wantSum)
		}
	}
	// The admin search: type or content start, the 100 newest.
	for _, kw := range []string{"1", "2", "3", "4", "模型", "模型倍率 _", "通过%", "%分组倍率 1", "quote", `quote "`, "<tag", "100%", "100\\%",
		"under_", "2 leading", "新用户", "nothing", "%", "_"} {
		want := oracleScan(w.all, LogFilter{Keyword: kw}, w.userByName)
		want = want[:min(len(want), 100)]
		got, err := s.SearchLogs(LogFilter{Keyword: kw}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(logIDs(got), logIDs(want)) {
			t.Fatalf("%s: search %q: ids %v, want %v", state, kw, logIDs(got), logIDs(want))
		}
	}
	// The self search (type only) and the token lookup.
	for _, u := range w.users {
		for typ := 1; typ <= 4; typ++ {
			f := LogFilter{UserID: u.ID, Type: typ}
			want := oracleScan(w.all, f, w.userByName)
			got, err := s.SearchLogs(f, 100)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(logIDs(got), logIDs(want[:min(len(want), 100)])) {
				t.Fatalf("%s: self search %+v differs", state, f)
			}
		}
	}
	for tok := uint64(1); tok <= 7; tok++ {
		f := LogFilter{TokenID: tok}
		want := oracleScan(w.all, f, w.userByName)
		got, err := s.SearchLogs(f, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(logIDs(got), logIDs(want[:min(len(want), 1000)])) {
			t.Fatalf("%s: token lookup %d differs", state, tok)
		}
	}
}

func TestLogQueriesAgainstPlainScan(t *testing.T) {
	t.Parallel()
	s := openUnindexed(t)
	w := newLogWorld(t, s, diffSeed(1))
	for round := range diffRounds() {
		w.add(t, s, 250+w.rng.IntN(250))
		switch w.rng.IntN(3) {
		case 0: // everything indexed
			if err := s.indexLogs(); err != nil {
				t.Fatal(err)
			}
		case 1: // indexed, then more waiting
			if err := s.indexLogs(); err != nil {
				t.Fatal(err)
			}
			w.add(t, s, 50+w.rng.IntN(100))
		}
		if w.rng.IntN(2) == 0 {
			w.clear(t, s, w.base+int64(w.rng.IntN(int(w.span)/3)))
		}
		checkAgainstOracle(t, s, w, diffCases(25), fmt.Sprintf("round %d (%d entries, %d waiting)", round, len(w.all), UnindexedLogs(s)))
	}
	// The row counters agree with the entries once all are indexed.
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	checkAgainstOracle(t, s, w, diffCases(25), "all indexed")
	err := s.db.View(func(tx *bolt.Tx) error {
		counts := tx.Bucket(bucketLogCounts)
		want := logCounter{}
		for _, l := range w.all {
			want.add(refOf(l), 1)
			if nameIndexable(l.TokenName) {
				want[nameCounter(l.TokenName)]++
			}
		}
		for k, n := range want {
			if got := int64(btoi(counts.Get([]byte(k)))); got != n {
				t.Errorf("counter %q = %d, want %d", k, got, n)
			}
		}
		return counts.ForEach(func(k, v []byte) error {
			if _, ok := want[string(k)]; !ok && btoi(v) != 0 {
				t.Errorf("counter %q = %d, want 0", k, btoi(v))
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Consecutive pages read while the indexer moves entries between the
// slices of each scan hold every matching row once, in order.
func TestLogPagesWhileIndexerRuns(t *testing.T) {
	t.Parallel()
	s := openUnindexed(t)
	w := newLogWorld(t, s, 2)
	w.add(t, s, 3000)
	s.scanSlice = time.Nanosecond // a transaction every 256 entries
	filters := []LogFilter{{}, {Type: LogTypeConsume}, {UserID: w.users[0].ID}, {TokenName: "shared"}, {ModelName: "gpt-4o%"},
		{ChannelID: 1, UserID: w.users[2].ID}, {Start: w.base + 500, End: w.base + 2500}}
	wants := make([][]uint64, len(filters))
	for i, f := range filters {
		wants[i] = logIDs(oracleScan(w.all, f, w.userByName))
	}
	s.indexer.budget = 0 // passes of 64 entries
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Re-add what the indexer moved: it keeps moving entries while
			// the pages are read.
			_ = s.indexLogs()
			_ = s.db.Update(func(tx *bolt.Tx) error {
				c := tx.Bucket(bucketLogUnindexed).Cursor()
				if k, _ := c.First(); k != nil {
					return nil
				}
				// Everything indexed: take some back out to waiting.
				lc := tx.Bucket(bucketLogs).Cursor()
				counts := logCounter{}
				i := 0
				for k, v := lc.First(); k != nil && i < 1000; k, v = lc.Next() {
					i++
					if i%3 != 0 {
						continue
					}
					var l Log
					if err := jsonUnmarshal(v, &l); err != nil {
						return err
					}
					r := refOf(&l)
					if err := indexLog(tx, append([]byte(nil), k...), r, -1, counts); err != nil {
						return err
					}
					if err := tx.Bucket(bucketLogUnindexed).Put(append([]byte(nil), k...), r.encode()); err != nil {
						return err
					}
				}
				return counts.flush(tx)
			})
		}
	}()
	for round := range 3 {
		for i, f := range filters {
			for _, size := range []int{37, 100} {
				var got []uint64
				total := -1
				for page := 1; ; page++ {
					p, err := s.Logs(f, page, size)
					if err != nil {
						t.Fatal(err)
					}
					if total >= 0 && p.Total != total {
						t.Fatalf("round %d filter %+v: total %d then %d", round, f, total, p.Total)
					}
					total = p.Total
					got = append(got, logIDs(p.Items)...)
					if len(p.Items) < size {
						break
					}
				}
				if total != len(wants[i]) || !slices.Equal(got, wants[i]) {
					t.Fatalf("round %d filter %+v size %d: total %d, %d ids, want %d (equal %v)", round, f, size, total, len(got), len(wants[i]), slices.Equal(got, wants[i]))
				}
			}
		}
	}
	close(stop)
	wg.Wait()
}

// The same comparison over a file upgraded from before the token-name
// index: older waiting references, a backfill that goes on slice by slice
// between the rounds, clears meeting it, and scans cut into many read
// transactions.
func TestLogQueriesAgainstPlainScanDuringBackfill(t *testing.T) {
	t.Parallel()
	s := openUnindexed(t)
	w := newLogWorld(t, s, 3)
	w.add(t, s, 1500)
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	w.add(t, s, 300)
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketIdxLogsByTokenName); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketIdxLogsByTokenName); err != nil {
			return err
		}
		counts := tx.Bucket(bucketLogCounts)
		var names [][]byte
		if err := counts.ForEach(func(k, v []byte) error {
			if len(k) > 0 && k[0] == 'n' {
				names = append(names, append([]byte(nil), k...))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range names {
			if err := counts.Delete(k); err != nil {
				return err
			}
		}
		// Waiting references of both older layouts, and index entries of
		// which every third carries no type and quota.
		i := 0
		if err := rewriteWaitingRefs(tx, func(r logRef) []byte {
			if i++; i%2 == 0 {
				return quotaRef(r)
			}
			return oldLayoutRef(r)
		}); err != nil {
			return err
		}
		if err := blankIndexValues(tx, 3); err != nil {
			return err
		}
		return scheduleNameBackfill(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.backfillRows.Store(200)
	for round := range diffRounds() {
		if round%2 == 1 {
			s.scanSlice = time.Nanosecond
		} else {
			s.scanSlice = 0
		}
		if _, err := s.backfillTokenNameSlice(); err != nil {
			t.Fatal(err)
		}
		switch w.rng.IntN(3) {
		case 0:
			w.add(t, s, 100+w.rng.IntN(200))
		case 1:
			if err := s.indexLogs(); err != nil {
				t.Fatal(err)
			}
			w.add(t, s, 50)
		}
		if w.rng.IntN(3) == 0 {
			w.clear(t, s, w.base+int64(w.rng.IntN(int(w.span)/4)))
		}
		checkAgainstOracle(t, s, w, diffCases(15), fmt.Sprintf("backfill round %d (%d entries, %d waiting)", round, len(w.all), UnindexedLogs(s)))
	}
}

// diffCases is how many random filter combinations a round checks: n, or
// a fifth of it under the race detector, which makes each query many times
// slower (the fixed edge filters are checked either way).
func diffCases(n int) int {
	if raceDetector {
		return max(n/5, 3)
	}
	return n
}

// diffRounds is how many rounds of changes a test checks: 6, or 3 under
// the race detector.
func diffRounds() int {
	if raceDetector {
		return 3
	}
	return 6
}

// diffSeed is the seed of the differential test: def, or LOGDIFF_SEED to
// explore others (go test -run AgainstPlainScan with LOGDIFF_SEED=n).
func diffSeed(def uint64) uint64 {
	if v, err := strconv.ParseUint(os.Getenv("LOGDIFF_SEED"), 10, 64); err == nil {
		return v
	}
	return def
}
