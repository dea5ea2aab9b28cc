package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"
	bolt "go.etcd.io/bbolt"
)

// LogFilter selects log entries. Zero fields do not filter.
type LogFilter struct {
	Type      int
	UserID    uint64
	Username  string // resolved to a user id
	TokenID   uint64
	TokenName string
	ModelName string
	ChannelID uint64
	Start     int64 // created_at >= Start (unix seconds)
	End       int64 // created_at <= End; 0 = no end
	Keyword   string
}

// LogPage is one page of a log query.
type LogPage struct {
	Items    []*Log `json:"items"`
	Total    int    `json:"total"`
	Page     int    `json:"page"`
	PageSize int    `json:"page_size"`
}

// maxPatternModels bounds the models a model_name pattern is resolved to
// through the model index; a pattern matching more is checked row by row.
const maxPatternModels = 64

// logPlan is how a filter is read: an index and its prefixes (one walk
// each, merged newest first; no index is the primary bucket), the counters
// holding their row counts, the other indexes each row is looked up in,
// and whether those decide a match, so that rows can be counted from keys
// without decoding them (and from the counters, when the index alone does).
type logPlan struct {
	idx      *bolt.Bucket
	prefixes [][]byte
	counters [][]byte
	covered  bool
	// byMeta: what the index leaves to check is the type, or the user of a
	// token-name entry, which an index entry that carries them decides
	// without decoding the row.
	byMeta bool
	// metaUser: the user is among what byMeta checks.
	metaUser bool
	// checks are the other indexes the filter names (user, token, channel,
	// exact model): an indexed entry matches them when each holds its key,
	// which is told without decoding the entry.
	checks []indexCheck
	// decided: the index and the checks decide a match (covered: the index
	// alone does, so its counters count the matches).
	decided bool
}

// indexCheck is an index entry to look up for each candidate entry: the
// index bucket and the prefix its log keys follow.
type indexCheck struct {
	b      *bolt.Bucket
	prefix []byte
	key    []byte // scratch: prefix and a log key
}

// holds reports whether the index has an entry for log key pk.
func (c *indexCheck) holds(pk []byte) bool {
	c.key = append(append(c.key[:0], c.prefix...), pk...)
	return c.b.Get(c.key) != nil
}

// planLogs picks the most selective index for f: of the user, token,
// channel and exact model it names, the one with the fewest entries (the
// others are checked through their indexes); else a model pattern through
// the models it matches, then type, else none.
func planLogs(tx *bolt.Tx, f LogFilter) logPlan {
	rest := f
	rest.Start, rest.End, rest.Username = 0, 0, ""
	var p logPlan
	wild := strings.ContainsAny(f.ModelName, "%_")
	type named struct {
		bucket, prefix, counter []byte
		clear                   func(*LogFilter)
	}
	var names []named
	if f.UserID != 0 {
		names = append(names, named{bucketIdxLogsByUser, itob(f.UserID), append([]byte("u"), itob(f.UserID)...), func(r *LogFilter) { r.UserID = 0 }})
	}
	if f.TokenID != 0 {
		names = append(names, named{bucketIdxLogsByToken, itob(f.TokenID), append([]byte("t"), itob(f.TokenID)...), func(r *LogFilter) { r.TokenID = 0 }})
	}
	if f.ChannelID != 0 {
		names = append(names, named{bucketIdxLogsByChannel, itob(f.ChannelID), append([]byte("c"), itob(f.ChannelID)...), func(r *LogFilter) { r.ChannelID = 0 }})
	}
	if f.ModelName != "" && !wild {
		names = append(names, named{bucketIdxLogsByModel, append([]byte(f.ModelName), 0), append([]byte("m"), f.ModelName...), func(r *LogFilter) { r.ModelName = "" }})
	}
	counts := tx.Bucket(bucketLogCounts)
	size := func(keys [][]byte) (n uint64) {
		for _, k := range keys {
			if v := counts.Get(k); v != nil {
				n += btoi(v)
			}
		}
		return n
	}
	switch {
	case len(names) > 0:
		best := 0
		if len(names) > 1 {
			least := size([][]byte{names[0].counter})
			for i := 1; i < len(names); i++ {
				if n := size([][]byte{names[i].counter}); n < least {
					best, least = i, n
				}
			}
		}
		n := names[best]
		p = logPlan{idx: tx.Bucket(n.bucket), prefixes: [][]byte{n.prefix}, counters: [][]byte{n.counter}}
		n.clear(&rest)
		for i, o := range names {
			if i != best {
				p.checks = append(p.checks, indexCheck{b: tx.Bucket(o.bucket), prefix: o.prefix})
				o.clear(&rest)
			}
		}
	default:
		// The model index holds no row without a model: a pattern that
		// matches the empty name must be checked row by row.
		if f.ModelName != "" && !likeMatch("", f.ModelName) {
			b := tx.Bucket(bucketIdxLogsByModel)
			if models, ok := patternModels(b, f.ModelName); ok {
				p = logPlan{idx: b}
				for _, m := range models {
					p.prefixes = append(p.prefixes, append([]byte(m), 0))
					p.counters = append(p.counters, append([]byte("m"), m...))
				}
				rest.ModelName = ""
				break
			}
		}
		if f.Type != 0 {
			p = logPlan{idx: tx.Bucket(bucketIdxLogsByType), prefixes: [][]byte{{byte(f.Type)}}, counters: [][]byte{{'y', byte(f.Type)}}}
			rest.Type = 0
		} else {
			p = logPlan{counters: [][]byte{[]byte("all")}}
		}
	}
	// A token name is read through its index when that holds fewer rows
	// than the index picked above (a token id names one token: that stays).
	if f.TokenName != "" && f.TokenID == 0 && nameIndexable(f.TokenName) && tokenNameIndexReady(tx) {
		counter := []byte(nameCounter(f.TokenName))
		if size([][]byte{counter}) < size(p.counters) {
			p = logPlan{idx: tx.Bucket(bucketIdxLogsByTokenName), prefixes: [][]byte{modelIndexKey(f.TokenName, nil)}, counters: [][]byte{counter}}
			rest = f
			rest.Start, rest.End, rest.Username, rest.TokenName = 0, 0, "", ""
			if rest == (LogFilter{Type: rest.Type, UserID: rest.UserID}) && rest.UserID != 0 {
				p.byMeta, p.metaUser = true, true
			}
		}
	}
	p.decided = rest == LogFilter{}
	p.covered = p.decided && len(p.checks) == 0
	p.byMeta = p.byMeta || rest.Type != 0 && rest == LogFilter{Type: rest.Type}
	return p
}

// tokenNameIndexReady reports whether the token-name index holds every
// entry: not while entries written before it are still being added.
func tokenNameIndexReady(tx *bolt.Tx) bool {
	return tx.Bucket(bucketMeta).Get(metaNameBackfillNext) == nil
}

// patternModels lists the models in the model index that pattern matches,
// visiting each model once (a seek past its entries); ok is false when
// more than maxPatternModels match.
func patternModels(b *bolt.Bucket, pattern string) (models []string, ok bool) {
	c := b.Cursor()
	for k, _ := c.First(); k != nil; {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			k, _ = c.Next()
			continue
		}
		model := string(k[:i])
		if likeMatch(model, pattern) {
			if len(models) == maxPatternModels {
				return nil, false
			}
			models = append(models, model)
		}
		k, _ = c.Seek(append([]byte(model), 1))
	}
	return models, true
}

// logRow is one matching entry; Log decodes it on first use. meta is the
// index value that carries its type and quota, when it does.
type logRow struct {
	primary *bolt.Bucket
	pk      []byte
	v       []byte
	meta    []byte
	log     *Log
}

// quota is the entry's quota, from its index entry when that carries it.
func (r *logRow) quota() (int64, error) {
	if _, q, ok := indexMeta(r.meta); ok {
		return q, nil
	}
	l, err := r.Log()
	if err != nil {
		return 0, err
	}
	return l.Quota, nil
}

func (r *logRow) Log() (*Log, error) {
	if r.log == nil {
		if r.v == nil {
			if r.v = r.primary.Get(r.pk); r.v == nil {
				return nil, Errorf(ENOTFOUND, "日志不存在")
			}
		}
		var l Log
		if err := json.Unmarshal(r.v, &l); err != nil {
			return nil, err
		}
		r.log = &l
	}
	return r.log, nil
}

// keyWalk walks a bucket's keys that start with prefix, newest log key
// first, from the last one at or below prefix+hi (oldest first, from the
// first one at or above prefix+lo, when asc). pk is the log key (the key
// without prefix), nil once the walk is over.
type keyWalk struct {
	c      *bolt.Cursor
	prefix []byte
	asc    bool
	pk, v  []byte
}

func newKeyWalk(b *bolt.Bucket, prefix, hi []byte, strict bool) *keyWalk {
	w := &keyWalk{c: b.Cursor(), prefix: prefix}
	seek := append(append([]byte(nil), prefix...), hi...)
	k, v := w.c.Seek(seek)
	if k == nil {
		k, v = w.c.Last()
	} else if c := bytes.Compare(k, seek); c > 0 || strict && c == 0 {
		k, v = w.c.Prev()
	}
	w.set(k, v)
	return w
}

func newAscKeyWalk(b *bolt.Bucket, prefix, lo []byte, strict bool) *keyWalk {
	w := &keyWalk{c: b.Cursor(), prefix: prefix, asc: true}
	seek := append(append([]byte(nil), prefix...), lo...)
	k, v := w.c.Seek(seek)
	if k != nil && strict && bytes.Equal(k, seek) {
		k, v = w.c.Next()
	}
	w.set(k, v)
	return w
}

func (w *keyWalk) set(k, v []byte) {
	if k == nil || !bytes.HasPrefix(k, w.prefix) {
		w.pk, w.v = nil, nil
		return
	}
	w.pk, w.v = k[len(w.prefix):], v
}

func (w *keyWalk) next() {
	if w.asc {
		w.set(w.c.Next())
	} else {
		w.set(w.c.Prev())
	}
}

// mergedWalk walks several keyWalks as one, newest log key first (oldest
// first when asc).
type mergedWalk struct {
	walks []*keyWalk
	asc   bool
	cur   int
	pk, v []byte
}

func newMergedWalk(asc bool, walks ...*keyWalk) *mergedWalk {
	m := &mergedWalk{walks: walks, asc: asc}
	m.pick()
	return m
}

// ahead reports whether log key a comes before b in the walk's order.
func ahead(a, b []byte, asc bool) bool {
	if asc {
		return bytes.Compare(a, b) < 0
	}
	return bytes.Compare(a, b) > 0
}

func (m *mergedWalk) pick() {
	m.cur, m.pk, m.v = -1, nil, nil
	for i, w := range m.walks {
		if w.pk != nil && (m.pk == nil || ahead(w.pk, m.pk, m.asc)) {
			m.cur, m.pk, m.v = i, w.pk, w.v
		}
	}
}

func (m *mergedWalk) next() {
	if m.cur >= 0 {
		m.walks[m.cur].next()
		m.pick()
	}
}

// scanSlice bounds one read transaction of a log scan: a long scan is cut
// into transactions of about this length, so that it never holds up a
// commit that must remap the file (charges among them) for longer.
const scanSlice = 50 * time.Millisecond

// scanLogs walks the entries matching f newest first, using the most
// selective index available together with the entries still waiting for
// the indexer. When the index covers the filter, indexed rows are not
// decoded unless fn asks. fn returns false to stop; it must not keep the
// row, which lives only as long as its read transaction. first, when set,
// runs in the first transaction. The walk runs in read transactions of
// about scanSlice each, each going on below the last entry the one before
// reached: entries written meanwhile are newer, so they are not seen, and
// one the indexer moved meanwhile is seen once.
// The scan ends with ctx's error once ctx is done (the client went away).
func (s *Store) scanLogs(ctx context.Context, f LogFilter, first func(tx *bolt.Tx), fn func(r *logRow) bool) error {
	return s.scanLogsDir(ctx, f, false, first, fn)
}

// scanLogsDir is scanLogs, oldest first when asc (each transaction going
// on above the last entry the one before reached).
func (s *Store) scanLogsDir(ctx context.Context, f LogFilter, asc bool, first func(tx *bolt.Tx), fn func(r *logRow) bool) error {
	var below []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		more := false
		err := s.db.View(func(tx *bolt.Tx) (err error) {
			if first != nil {
				first(tx)
				first = nil
			}
			slice := s.scanSlice
			if slice == 0 {
				slice = scanSlice
			}
			below, more, err = s.scanSome(tx, f, asc, below, time.Now().Add(slice), fn)
			return err
		})
		if err != nil || !more {
			return err
		}
	}
}

// scanSome is one transaction of scanLogs: it walks the entries below the
// log key from (from the newest when nil; above it, from the oldest, when
// asc) until fn stops it, the entries run out, or deadline passes; more
// tells that the walk stopped at the deadline, last where.
func (s *Store) scanSome(tx *bolt.Tx, f LogFilter, asc bool, from []byte, deadline time.Time, fn func(r *logRow) bool) (last []byte, more bool, err error) {
	plan := planLogs(tx, f)
	idx, lazy := plan.idx, plan.decided
	needle := contentNeedle(f.Keyword)
	// The walk starts at the newest key the time range allows, or the
	// oldest when asc, unless from is already past it.
	bound := make([]byte, 16)
	if asc {
		binary.BigEndian.PutUint64(bound, uint64(max(f.Start, 0)))
	} else {
		end := uint64(math.MaxInt64)
		if f.End > 0 {
			end = uint64(f.End)
		}
		binary.BigEndian.PutUint64(bound, end)
		binary.BigEndian.PutUint64(bound[8:], math.MaxUint64)
	}
	strict := false
	if from != nil && ahead(bound, from, asc) {
		bound, strict = from, true
	}
	walk := func(b *bolt.Bucket, prefix []byte) *keyWalk {
		if asc {
			return newAscKeyWalk(b, prefix, bound, strict)
		}
		return newKeyWalk(b, prefix, bound, strict)
	}
	primary := tx.Bucket(bucketLogs)
	var main *mergedWalk
	var waiting *keyWalk
	if idx != nil {
		var walks []*keyWalk
		for _, prefix := range plan.prefixes {
			walks = append(walks, walk(idx, prefix))
		}
		main = newMergedWalk(asc, walks...)
		waiting = walk(tx.Bucket(bucketLogUnindexed), nil)
	} else {
		// The primary bucket holds every entry, indexed or not.
		main = newMergedWalk(asc, walk(primary, nil))
		waiting = &keyWalk{}
	}
	for n := 0; main.pk != nil || waiting.pk != nil; n++ {
		if n&255 == 255 && time.Now().After(deadline) {
			// Both walks are past last: the next transaction goes on there.
			return last, true, nil
		}
		var row *logRow
		if waiting.pk == nil || (main.pk != nil && ahead(main.pk, waiting.pk, asc)) {
			row = &logRow{primary: primary, pk: main.pk}
			if idx == nil {
				row.v = main.v
			} else {
				row.meta = main.v
			}
			main.next()
			// An indexed entry is in every index it belongs to (the
			// indexer writes them together).
			if !plan.holds(row.pk) {
				last = append(last[:0], row.pk...)
				if ts := int64(binary.BigEndian.Uint64(row.pk[:8])); asc && f.End > 0 && ts > f.End || !asc && f.Start > 0 && ts < f.Start {
					break
				}
				continue
			}
		} else {
			r, ok := decodeRef(waiting.v)
			row = &logRow{primary: primary, pk: waiting.pk}
			waiting.next()
			last = append(last[:0], row.pk...)
			if !ok || !r.matches(f) {
				continue
			}
			if row.v = primary.Get(row.pk); row.v == nil {
				continue
			}
			if !r.decides(f) {
				// An older reference without the token name: the entry says
				// (the checks below may read only the index value).
				l, err := row.Log()
				if err != nil {
					return last, false, err
				}
				if !logMatches(l, f) {
					continue
				}
			}
			// The reference has matched every field it carries.
			row.meta = r.indexValue()
		}
		last = append(last[:0], row.pk...)
		ts := int64(binary.BigEndian.Uint64(row.pk[:8]))
		if asc && f.End > 0 && ts > f.End || !asc && f.Start > 0 && ts < f.Start {
			// Both walks go on in time order: nothing further can match.
			break
		}
		if f.Start > 0 && ts < f.Start || f.End > 0 && ts > f.End {
			continue
		}
		if !lazy && plan.byMeta {
			typ, _, ok := indexMeta(row.meta)
			user, uok := indexUser(row.meta)
			if ok && (!plan.metaUser || uok) {
				if f.Type != 0 && typ != f.Type || plan.metaUser && user != f.UserID {
					continue
				}
				if !fn(row) {
					break
				}
				continue
			}
		}
		if !lazy {
			if needle != nil && row.log == nil {
				// A row whose bytes do not hold the keyword where its
				// content begins is no match: it need not be decoded.
				if row.v == nil {
					row.v = primary.Get(row.pk)
				}
				if row.v != nil && !contentBegins(row.v, needle) {
					continue
				}
			}
			l, err := row.Log()
			if err != nil {
				return last, false, err
			}
			if !logMatches(l, f) {
				continue
			}
		}
		if !fn(row) {
			break
		}
	}
	return last, false, nil
}

// contentNeedle is keyword (up to its first wildcard) as an entry's stored
// JSON holds it at the start of its content, for a keyword that JSON writes unchanged: valid UTF-8
// without a quote, backslash, control character, DEL, <, >, &, U+2028,
// U+2029 or U+FFFD (what an invalid byte reads back as). It is nil for a
// keyword that may also name the type (a number) and for one written
// otherwise: those entries are decoded.
func contentNeedle(keyword string) []byte {
	if keyword == "" || !utf8.ValidString(keyword) {
		return nil
	}
	if _, err := strconv.Atoi(keyword); err == nil {
		return nil
	}
	// With wildcards, the content begins with what comes before the first.
	if i := strings.IndexAny(keyword, "%_"); i >= 0 {
		keyword = keyword[:i]
		if keyword == "" {
			return nil
		}
	}
	for _, r := range keyword {
		switch {
		case r < 0x20, r == 0x7f, r == '"', r == '\\', r == '<', r == '>', r == '&', r == '\u2028', r == '\u2029',
			// A stored content's invalid bytes read back as U+FFFD.
			r == utf8.RuneError:
			return nil
		}
	}
	return []byte(keyword)
}

// contentTail is the end of the content member's name and the start of its
// string: searched from its first letter that the members written before
// content (numbers) do not hold, it is found in one step.
var contentTail = []byte(`ontent":"`)

// contentBegins reports whether the entry stored as data may have content
// beginning with needle: whether its content member's string starts with
// it. The first `"content":"` is that member: an entry is written compact,
// and inside a JSON string the quotes would be escaped. An entry where the
// first `ontent":"` is not that member's may match: it is decoded.
func contentBegins(data, needle []byte) bool {
	i := bytes.Index(data, contentTail)
	if i < 2 || data[i-2] != '"' || data[i-1] != 'c' {
		return bytes.Contains(data, []byte(`"content":"`))
	}
	return bytes.HasPrefix(data[i+len(contentTail):], needle)
}

// holds reports whether every checked index has an entry for log key pk.
func (p *logPlan) holds(pk []byte) bool {
	for i := range p.checks {
		if !p.checks[i].holds(pk) {
			return false
		}
	}
	return true
}

// countLogs returns the number of entries matching f from the row counters
// and the entries waiting for the indexer, when the filter is one index with
// no time bound that excludes anything; ok is false when the rows must be
// counted.
func countLogs(tx *bolt.Tx, f LogFilter) (n int, ok bool) {
	plan := planLogs(tx, f)
	if !plan.covered || f.Start > 0 {
		return 0, false
	}
	if f.End > 0 {
		// The counters hold every row: they answer only when no row is
		// dated after End (a clock set back leaves such rows, whatever now).
		if last, _ := tx.Bucket(bucketLogs).Cursor().Last(); last != nil && int64(binary.BigEndian.Uint64(last[:8])) > f.End {
			return 0, false
		}
	}
	for _, ck := range plan.counters {
		if v := tx.Bucket(bucketLogCounts).Get(ck); v != nil {
			n += int(btoi(v))
		}
	}
	c := tx.Bucket(bucketLogUnindexed).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		r, ok := decodeRef(v)
		if !ok || !r.matches(f) {
			continue
		}
		if !r.decides(f) {
			// An older reference without the token name: the entry says.
			var l Log
			if data := tx.Bucket(bucketLogs).Get(k); data == nil || json.Unmarshal(data, &l) != nil || !logMatches(&l, f) {
				continue
			}
		}
		n++
	}
	return n, true
}

func logMatches(l *Log, f LogFilter) bool {
	if f.Type != 0 && l.Type != f.Type {
		return false
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
	if f.ModelName != "" && !likeMatch(l.ModelName, f.ModelName) {
		return false
	}
	if f.Keyword != "" {
		if t, err := strconv.Atoi(f.Keyword); !(err == nil && t == l.Type) && !contentLike(l.Content, f.Keyword) {
			return false
		}
	}
	return true
}

// contentLike reports whether content begins as keyword says: LIKE
// 'keyword%' (S §8), its % and _ wildcards included.
func contentLike(content, keyword string) bool {
	if !strings.ContainsAny(keyword, "%_") {
		return strings.HasPrefix(content, keyword)
	}
	return likeMatch(content, keyword+"%")
}

// LikeMatch reports whether s matches a log filter's model pattern, as the
// log list matches it (see likeMatch).
func LikeMatch(s, pattern string) bool { return likeMatch(s, pattern) }

// likeMatch implements SQL LIKE with % (any run of characters) and _ (one
// character) wildcards; without them it is an exact match. It runs in time
// linear in len(s) × len(pattern) at worst, whatever the pattern: a
// backtracking matcher took seconds on a row for a pattern of many %.
func likeMatch(s, pattern string) bool {
	if !strings.ContainsAny(pattern, "%_") {
		return s == pattern
	}
	str, pat := []rune(s), []rune(pattern)
	// The classic greedy matcher: on a mismatch, go back to the last %
	// only, letting it take one more character.
	si, pi := 0, 0
	star, mark := -1, 0
	for si < len(str) {
		switch {
		case pi < len(pat) && (pat[pi] == '_' || pat[pi] == str[si]) && pat[pi] != '%':
			si++
			pi++
		case pi < len(pat) && pat[pi] == '%':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(pat) && pat[pi] == '%' {
		pi++
	}
	return pi == len(pat)
}

// resolveLogFilter turns f's username into its user id. It answers false
// when no entry can match (an unknown username among them), and an error
// when the user's record cannot be read: that is no proof of an empty list.
func (s *Store) resolveLogFilter(f *LogFilter) (bool, error) {
	// Types are stored as one byte; another number names no type. An end
	// before 0 is a bound nothing meets (0 is none), as in the dashboard.
	if f.Type < 0 || f.Type > 255 || f.End < 0 {
		return false, nil
	}
	if f.Username != "" {
		u, err := s.UserByUsername(f.Username)
		if ErrorCode(err) == ENOTFOUND {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if f.UserID != 0 && f.UserID != u.ID {
			return false, nil
		}
		f.UserID = u.ID
	}
	return true, nil
}

// Logs returns page (1-based) of the entries matching f, newest first, with
// the total count. Rows outside the page are counted from keys or counters
// without being decoded where the filter allows.
func (s *Store) Logs(f LogFilter, page, pageSize int) (*LogPage, error) {
	return s.LogsContext(context.Background(), f, page, pageSize)
}

// LogsContext is Logs ending early, with ctx's error, once ctx is done.
func (s *Store) LogsContext(ctx context.Context, f LogFilter, page, pageSize int) (*LogPage, error) {
	if page < 1 {
		page = 1
	}
	if pageSize <= 0 {
		pageSize = 10
	}
	out := &LogPage{Items: []*Log{}, Page: page, PageSize: pageSize}
	if ok, err := s.resolveLogFilter(&f); !ok {
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	skip := (page - 1) * pageSize
	total, counted, seen := 0, false, 0
	if err := s.db.View(func(tx *bolt.Tx) error { total, counted = countLogs(tx, f); return nil }); err != nil {
		return nil, Internal(err)
	}
	if counted && skip < total && total-skip < skip+pageSize {
		// A page nearer the oldest end is read from there: the last page
		// of millions of rows walks a page, not all of them.
		out.Total = total
		hi := total - skip
		lo := max(0, hi-pageSize)
		// The walk's first transaction counts again: a clear between the
		// two would otherwise shift the page against its total.
		first := func(tx *bolt.Tx) {
			if t, ok := countLogs(tx, f); ok {
				total, out.Total = t, t
				hi = total - skip
				lo = max(0, hi-pageSize)
			}
		}
		err := s.scanLogsDir(ctx, f, true, first, func(r *logRow) bool {
			if seen >= lo {
				if l, err := r.Log(); err == nil {
					out.Items = append(out.Items, l)
				}
			}
			seen++
			return seen < hi
		})
		if hi <= 0 {
			out.Items = out.Items[:0]
		}
		slices.Reverse(out.Items)
		return out, Internal(err)
	}
	err := s.scanLogs(ctx, f, func(tx *bolt.Tx) { total, counted = countLogs(tx, f) }, func(r *logRow) bool {
		// With a counted total, a page past the end needs no walk.
		if counted && skip >= total {
			return false
		}
		if seen >= skip && len(out.Items) < pageSize {
			l, err := r.Log()
			if err == nil {
				out.Items = append(out.Items, l)
			}
		}
		seen++
		// With a counted total, stop once the page is full.
		return !(counted && len(out.Items) >= pageSize)
	})
	if counted {
		out.Total = total
	} else {
		out.Total = seen
	}
	return out, Internal(err)
}

// SearchLogs returns up to limit entries matching f, newest first.
func (s *Store) SearchLogs(f LogFilter, limit int) ([]*Log, error) {
	return s.SearchLogsContext(context.Background(), f, limit)
}

// SearchLogsContext is SearchLogs ending early, with ctx's error, once ctx
// is done.
func (s *Store) SearchLogsContext(ctx context.Context, f LogFilter, limit int) ([]*Log, error) {
	out := []*Log{}
	if ok, err := s.resolveLogFilter(&f); !ok {
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	err := s.scanLogs(ctx, f, nil, func(r *logRow) bool {
		if l, err := r.Log(); err == nil {
			out = append(out, l)
		}
		return limit <= 0 || len(out) < limit
	})
	return out, Internal(err)
}

// LogQuotaSum returns the sum of consume quota of entries matching f.
func (s *Store) LogQuotaSum(f LogFilter) (int64, error) {
	return s.LogQuotaSumContext(context.Background(), f)
}

// LogQuotaSumContext is LogQuotaSum ending early, with ctx's error, once
// ctx is done.
func (s *Store) LogQuotaSumContext(ctx context.Context, f LogFilter) (int64, error) {
	f.Type = LogTypeConsume
	var sum int64
	if ok, err := s.resolveLogFilter(&f); !ok {
		return 0, err
	}
	err := s.scanLogs(ctx, f, nil, func(r *logRow) bool {
		if q, err := r.quota(); err == nil {
			sum += q
		}
		return true
	})
	return sum, Internal(err)
}

// logDeleteChunk and logDeleteSlice bound one transaction of a log clear
// (in entries, and in time spent deleting), so the relay's charges are
// never held up for long: an entry's deletes touch its five index pages.
const (
	logDeleteChunk = 256
	logDeleteSlice = 5 * time.Millisecond
)

// DeleteLogsBefore removes entries created before ts (unix seconds) in
// bounded transactions and returns how many it removed.
func (s *Store) DeleteLogsBefore(ctx context.Context, ts int64) (int, error) {
	if ts <= 0 {
		return 0, Errorf(EINVALID, "请选择日志记录时间")
	}
	limit := make([]byte, 8)
	binary.BigEndian.PutUint64(limit, uint64(ts))
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			// A shutdown (or the caller leaving) stops the clear between
			// its transactions: the oldest rows are gone, the rest stay.
			return total, err
		}
		n, more := 0, false
		err := s.update(func(tx *bolt.Tx) error {
			primary := tx.Bucket(bucketLogs)
			c := primary.Cursor()
			var keys [][]byte
			var logs []Log
			for k, v := c.First(); k != nil && bytes.Compare(k[:8], limit) < 0 && len(keys) < logDeleteChunk; k, v = c.Next() {
				var l Log
				_ = json.Unmarshal(v, &l)
				keys = append(keys, append([]byte(nil), k...))
				logs = append(logs, l)
			}
			collected := len(keys)
			waiting := tx.Bucket(bucketLogUnindexed)
			counts := logCounter{}
			start := time.Now()
			for i, k := range keys {
				if i&31 == 31 && time.Since(start) > logDeleteSlice {
					// The rest goes in the next transaction.
					keys = keys[:i]
					break
				}
				// An entry the indexer has not reached only loses its reference.
				if waiting.Get(k) != nil {
					if err := waiting.Delete(k); err != nil {
						return err
					}
				} else if err := indexLog(tx, k, refOf(&logs[i]), -1, counts); err != nil {
					return err
				}
				if err := primary.Delete(k); err != nil {
					return err
				}
			}
			n = len(keys)
			more = len(keys) < collected || collected == logDeleteChunk
			return counts.flush(tx)
		})
		if err != nil && total > 0 {
			// Stopped by a later transaction (the file refused it): what
			// was cleared stays cleared; the message says how much.
			// An internal failure's message would hide the count: it is
			// told as a clear to be tried again.
			code := ErrorCode(err)
			if code == EINTERNAL {
				code = EUNAVAILABLE
			}
			return total, &Error{Code: code, Message: fmt.Sprintf("日志清理未完成：已清理 %d 条，其余未清理（%s）", total, ErrorMessage(err)), Err: err}
		}
		if err != nil {
			return total, Internal(err)
		}
		total += n
		if !more {
			return total, nil
		}
	}
}
