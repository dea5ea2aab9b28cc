package store

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"

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

// logIndex picks the most selective index for f: user, token, channel,
// then model, else none (the primary bucket). counterKey names the counter
// that holds the index's row count.
func logIndex(tx *bolt.Tx, f LogFilter) (idx *bolt.Bucket, prefix []byte, counterKey []byte) {
	switch {
	case f.UserID != 0:
		return tx.Bucket(bucketIdxLogsByUser), itob(f.UserID), append([]byte("u"), itob(f.UserID)...)
	case f.TokenID != 0:
		return tx.Bucket(bucketIdxLogsByToken), itob(f.TokenID), append([]byte("t"), itob(f.TokenID)...)
	case f.ChannelID != 0:
		return tx.Bucket(bucketIdxLogsByChannel), itob(f.ChannelID), append([]byte("c"), itob(f.ChannelID)...)
	case f.ModelName != "" && !strings.ContainsAny(f.ModelName, "%_"):
		return tx.Bucket(bucketIdxLogsByModel), append([]byte(f.ModelName), 0), append([]byte("m"), f.ModelName...)
	case f.Type != 0:
		return tx.Bucket(bucketIdxLogsByType), []byte{byte(f.Type)}, []byte{'y', byte(f.Type)}
	}
	return nil, nil, []byte("all")
}

// covered reports whether the chosen index alone decides a match, so rows
// can be counted from keys without decoding them.
func covered(f LogFilter) bool {
	rest := f
	switch {
	case f.UserID != 0:
		rest.UserID = 0
	case f.TokenID != 0:
		rest.TokenID = 0
	case f.ChannelID != 0:
		rest.ChannelID = 0
	case f.ModelName != "" && !strings.ContainsAny(f.ModelName, "%_"):
		rest.ModelName = ""
	case f.Type != 0:
		rest.Type = 0
	}
	rest.Start, rest.End, rest.Username = 0, 0, ""
	return rest == LogFilter{}
}

// logRow is one matching entry; Log decodes it on first use.
type logRow struct {
	primary *bolt.Bucket
	pk      []byte
	v       []byte
	log     *Log
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
// first, from the last one at or below prefix+hi. pk is the log key (the
// key without prefix), nil once the walk is over.
type keyWalk struct {
	c      *bolt.Cursor
	prefix []byte
	pk, v  []byte
}

func newKeyWalk(b *bolt.Bucket, prefix, hi []byte) *keyWalk {
	w := &keyWalk{c: b.Cursor(), prefix: prefix}
	seek := append(append([]byte(nil), prefix...), hi...)
	k, v := w.c.Seek(seek)
	if k == nil {
		k, v = w.c.Last()
	} else if bytes.Compare(k, seek) > 0 {
		k, v = w.c.Prev()
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

func (w *keyWalk) next() { w.set(w.c.Prev()) }

// scanLogs walks the entries matching f newest first, using the most
// selective index available together with the entries still waiting for
// the indexer. When the index covers the filter, indexed rows are not
// decoded unless fn asks. fn returns false to stop.
func (s *Store) scanLogs(tx *bolt.Tx, f LogFilter, fn func(r *logRow) bool) error {
	idx, prefix, _ := logIndex(tx, f)
	lazy := covered(f)
	end := uint64(math.MaxInt64)
	if f.End > 0 {
		end = uint64(f.End)
	}
	hi := make([]byte, 16)
	binary.BigEndian.PutUint64(hi, end)
	binary.BigEndian.PutUint64(hi[8:], math.MaxUint64)
	primary := tx.Bucket(bucketLogs)
	var main, waiting *keyWalk
	if idx != nil {
		main = newKeyWalk(idx, prefix, hi)
		waiting = newKeyWalk(tx.Bucket(bucketLogUnindexed), nil, hi)
	} else {
		// The primary bucket holds every entry, indexed or not.
		main = newKeyWalk(primary, nil, hi)
		waiting = &keyWalk{}
	}
	for main.pk != nil || waiting.pk != nil {
		var row *logRow
		if waiting.pk == nil || (main.pk != nil && bytes.Compare(main.pk, waiting.pk) > 0) {
			row = &logRow{primary: primary, pk: main.pk}
			if idx == nil {
				row.v = main.v
			}
			main.next()
		} else {
			r, ok := decodeRef(waiting.v)
			row = &logRow{primary: primary, pk: waiting.pk}
			waiting.next()
			if !ok || !r.matches(f) {
				continue
			}
			if row.v = primary.Get(row.pk); row.v == nil {
				continue
			}
		}
		ts := int64(binary.BigEndian.Uint64(row.pk[:8]))
		if f.Start > 0 && ts < f.Start {
			// Both walks go back in time: nothing older can match.
			break
		}
		if f.End > 0 && ts > f.End {
			continue
		}
		if !lazy {
			l, err := row.Log()
			if err != nil {
				return err
			}
			if !logMatches(l, f) {
				continue
			}
		}
		if !fn(row) {
			break
		}
	}
	return nil
}

// countLogs returns the number of entries matching f from the row counters
// and the entries waiting for the indexer, when the filter is one index with
// no time bound that excludes anything; ok is false when the rows must be
// counted.
func countLogs(tx *bolt.Tx, f LogFilter, now int64) (n int, ok bool) {
	if !covered(f) || f.Start > 0 || (f.End > 0 && f.End < now) {
		return 0, false
	}
	_, _, ck := logIndex(tx, f)
	if v := tx.Bucket(bucketLogCounts).Get(ck); v != nil {
		n = int(btoi(v))
	}
	c := tx.Bucket(bucketLogUnindexed).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if r, ok := decodeRef(v); ok && r.matches(f) {
			n++
		}
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
		if t, err := strconv.Atoi(f.Keyword); !(err == nil && t == l.Type) && !strings.HasPrefix(l.Content, f.Keyword) {
			return false
		}
	}
	return true
}

// likeMatch implements SQL LIKE with % and _ wildcards; without them it is
// an exact match.
func likeMatch(s, pattern string) bool {
	if !strings.ContainsAny(pattern, "%_") {
		return s == pattern
	}
	var match func(s, p string) bool
	match = func(s, p string) bool {
		for len(p) > 0 {
			switch p[0] {
			case '%':
				for i := 0; i <= len(s); i++ {
					if match(s[i:], p[1:]) {
						return true
					}
				}
				return false
			case '_':
				if len(s) == 0 {
					return false
				}
				s, p = s[1:], p[1:]
			default:
				if len(s) == 0 || s[0] != p[0] {
					return false
				}
				s, p = s[1:], p[1:]
			}
		}
		return len(s) == 0
	}
	return match(s, pattern)
}

func (s *Store) resolveLogFilter(f *LogFilter) bool {
	if f.Username != "" {
		u, err := s.UserByUsername(f.Username)
		if err != nil {
			return false
		}
		if f.UserID != 0 && f.UserID != u.ID {
			return false
		}
		f.UserID = u.ID
	}
	return true
}

// Logs returns page (1-based) of the entries matching f, newest first, with
// the total count. Rows outside the page are counted from keys or counters
// without being decoded where the filter allows.
func (s *Store) Logs(f LogFilter, page, pageSize int) (*LogPage, error) {
	if page < 1 {
		page = 1
	}
	if pageSize <= 0 {
		pageSize = 10
	}
	out := &LogPage{Items: []*Log{}, Page: page, PageSize: pageSize}
	if !s.resolveLogFilter(&f) {
		return out, nil
	}
	skip := (page - 1) * pageSize
	err := s.db.View(func(tx *bolt.Tx) error {
		total, counted := countLogs(tx, f, s.nowUnix())
		seen := 0
		err := s.scanLogs(tx, f, func(r *logRow) bool {
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
		return err
	})
	return out, Internal(err)
}

// SearchLogs returns up to limit entries matching f, newest first.
func (s *Store) SearchLogs(f LogFilter, limit int) ([]*Log, error) {
	out := []*Log{}
	if !s.resolveLogFilter(&f) {
		return out, nil
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		return s.scanLogs(tx, f, func(r *logRow) bool {
			if l, err := r.Log(); err == nil {
				out = append(out, l)
			}
			return limit <= 0 || len(out) < limit
		})
	})
	return out, Internal(err)
}

// LogQuotaSum returns the sum of consume quota of entries matching f.
func (s *Store) LogQuotaSum(f LogFilter) (int64, error) {
	f.Type = LogTypeConsume
	var sum int64
	if !s.resolveLogFilter(&f) {
		return 0, nil
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		return s.scanLogs(tx, f, func(r *logRow) bool {
			if l, err := r.Log(); err == nil {
				sum += l.Quota
			}
			return true
		})
	})
	return sum, Internal(err)
}

// logDeleteChunk bounds one transaction of a log clear, so the relay's
// charges are never held up for long.
const logDeleteChunk = 5000

// DeleteLogsBefore removes entries created before ts (unix seconds) in
// bounded transactions and returns how many it removed.
func (s *Store) DeleteLogsBefore(ts int64) (int, error) {
	if ts <= 0 {
		return 0, Errorf(EINVALID, "请选择日志记录时间")
	}
	limit := make([]byte, 8)
	binary.BigEndian.PutUint64(limit, uint64(ts))
	total := 0
	for {
		n := 0
		err := s.db.Update(func(tx *bolt.Tx) error {
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
			waiting := tx.Bucket(bucketLogUnindexed)
			counts := logCounter{}
			for i, k := range keys {
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
			return counts.flush(tx)
		})
		if err != nil {
			return total, Internal(err)
		}
		total += n
		if n < logDeleteChunk {
			return total, nil
		}
	}
}
