package store

import (
	"encoding/binary"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
	bolt "go.etcd.io/bbolt"
)

// Log types.
const (
	LogTypeUnknown = 0
	LogTypeTopup   = 1
	LogTypeConsume = 2
	LogTypeManage  = 3
	LogTypeSystem  = 4
)

// Log is one entry of the usage and audit log.
type Log struct {
	ID               uint64 `json:"id"`
	UserID           uint64 `json:"user_id"`
	CreatedAt        int64  `json:"created_at"`
	Type             int    `json:"type"`
	Content          string `json:"content"`
	Username         string `json:"username"`
	TokenName        string `json:"token_name"`
	TokenID          uint64 `json:"token_id"`
	ModelName        string `json:"model_name"`
	Quota            int64  `json:"quota"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	UseTime          int64  `json:"use_time"`
	IsStream         bool   `json:"is_stream"`
	ChannelID        uint64 `json:"channel"`
	Group            string `json:"group,omitempty"`
	Other            string `json:"other"`
}

// logKey orders entries by time: created_at seconds then id, both big-endian.
func logKey(createdAt int64, id uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, uint64(createdAt))
	binary.BigEndian.PutUint64(k[8:], id)
	return k
}

// appendLog assigns an id and writes the entry with a reference to it in
// the unindexed bucket; the indexer (logindex.go) moves the reference into
// the indexes and row counters later, and queries read both meanwhile.
func appendLog(tx *bolt.Tx, l *Log) error {
	b := tx.Bucket(bucketLogs)
	b.FillPercent = appendFill
	id, err := b.NextSequence()
	if err != nil {
		return err
	}
	l.ID = id
	key := logKey(l.CreatedAt, id)
	data, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if err := b.Put(key, data); err != nil {
		return err
	}
	return tx.Bucket(bucketLogUnindexed).Put(key, refOf(l).encode())
}

// appendFill is how full a page of the log and its type index is left when
// it splits. Their keys start with the time (after the type), so new entries
// land after the last one and a page once split is not written again;
// bbolt's default of half-full pages would double the log's share of the
// file. The other indexes interleave many users, tokens, models or channels
// and keep the default.
const appendFill = 0.9

// logRef is what the indexes and row counters need of an entry, and its
// quota, which the index entries carry so that sums and type checks need
// not decode the entry (hasQuota is false for references written before),
// and its token name (hasName is false for references written before).
type logRef struct {
	user, token, channel uint64
	typ                  int
	quota                int64
	hasQuota             bool
	model                string
	tokenName            string
	hasName              bool
}

func refOf(l *Log) logRef {
	return logRef{user: l.UserID, token: l.TokenID, channel: l.ChannelID, typ: l.Type, quota: l.Quota, hasQuota: true,
		model: l.ModelName, tokenName: l.TokenName, hasName: true}
}

// refMark starts a reference that carries the quota, refNameMark one that
// also carries the token name. An older reference starts with a user id,
// whose first byte is 0 for any id below 2^56.
const (
	refMark     = 0xFF
	refNameMark = 0xFE
)

// encode lays the reference out as mark(1) user(8) token(8) channel(8)
// type(1) quota(8) uvarint(len(model)) model token-name.
func (r logRef) encode() []byte {
	v := make([]byte, 34, 34+binary.MaxVarintLen64+len(r.model)+len(r.tokenName))
	v[0] = refNameMark
	binary.BigEndian.PutUint64(v[1:], r.user)
	binary.BigEndian.PutUint64(v[9:], r.token)
	binary.BigEndian.PutUint64(v[17:], r.channel)
	v[25] = byte(r.typ)
	binary.BigEndian.PutUint64(v[26:], uint64(r.quota))
	v = binary.AppendUvarint(v, uint64(len(r.model)))
	return append(append(v, r.model...), r.tokenName...)
}

// decodeRef reads a reference in any of its layouts (the older ones lack
// the token name, the oldest also the mark and the quota).
func decodeRef(v []byte) (logRef, bool) {
	if len(v) >= 34 && (v[0] == refMark || v[0] == refNameMark) {
		r := logRef{user: binary.BigEndian.Uint64(v[1:]), token: binary.BigEndian.Uint64(v[9:]),
			channel: binary.BigEndian.Uint64(v[17:]), typ: int(v[25]), quota: int64(binary.BigEndian.Uint64(v[26:])),
			hasQuota: true}
		if v[0] == refMark {
			r.model = string(v[34:])
			return r, true
		}
		n, w := binary.Uvarint(v[34:])
		rest := v[34:]
		if w <= 0 || n > uint64(len(rest)-w) {
			return logRef{}, false
		}
		rest = rest[w:]
		r.model, r.tokenName, r.hasName = string(rest[:n]), string(rest[n:]), true
		return r, true
	}
	if len(v) < 25 {
		return logRef{}, false
	}
	return logRef{user: binary.BigEndian.Uint64(v), token: binary.BigEndian.Uint64(v[8:]),
		channel: binary.BigEndian.Uint64(v[16:]), typ: int(v[24]), model: string(v[25:])}, true
}

// indexValue is the value of the entry's index keys: its type and quota
// (a varint), or nothing when the reference does not carry them.
func (r logRef) indexValue() []byte {
	if !r.hasQuota {
		return nil
	}
	// Made with room for the user nameIndexValue adds: one allocation.
	v := make([]byte, 1, 1+2*binary.MaxVarintLen64)
	v[0] = byte(r.typ)
	return binary.AppendVarint(v, r.quota)
}

// nameIndexValue is the value of the entry's token-name index key: its
// type, quota and user (the index mixes every user's tokens of one name),
// or nothing when the reference does not carry them.
func (r logRef) nameIndexValue() []byte {
	v := r.indexValue()
	if v == nil {
		return nil
	}
	return binary.AppendUvarint(v, r.user)
}

// indexUser reads the user of a token-name index value; ok is false for
// another index's value.
func indexUser(v []byte) (user uint64, ok bool) {
	if len(v) < 2 {
		return 0, false
	}
	_, n := binary.Varint(v[1:])
	if n <= 0 || 1+n >= len(v) {
		return 0, false
	}
	user, m := binary.Uvarint(v[1+n:])
	return user, m > 0
}

// indexMeta reads an index value: the entry's type and quota; ok is false
// for an entry indexed without them.
func indexMeta(v []byte) (typ int, quota int64, ok bool) {
	if len(v) < 2 {
		return 0, 0, false
	}
	q, n := binary.Varint(v[1:])
	if n <= 0 {
		return 0, 0, false
	}
	return int(v[0]), q, true
}

// matches reports whether the fields the reference carries agree with f;
// the keyword, and the token name of a reference without it, need the
// entry itself (decides tells whether the reference decided alone).
func (r logRef) matches(f LogFilter) bool {
	return (f.Type == 0 || r.typ == f.Type) && (f.UserID == 0 || r.user == f.UserID) &&
		(f.TokenID == 0 || r.token == f.TokenID) && (f.ChannelID == 0 || r.channel == f.ChannelID) &&
		(f.ModelName == "" || likeMatch(r.model, f.ModelName)) &&
		(f.TokenName == "" || !r.hasName || r.tokenName == f.TokenName)
}

// decides reports whether matches alone settles f for this reference:
// false for a token name the reference does not carry, which only the
// entry itself can tell.
func (r logRef) decides(f LogFilter) bool { return f.TokenName == "" || r.hasName }

// indexLog writes (d = 1) or removes (d = -1) the index entries of the entry
// at key and records its row-counter change in c.
func indexLog(tx *bolt.Tx, key []byte, r logRef, d int64, c logCounter) error {
	type entry struct {
		bucket, key []byte
		appendOnly  bool
	}
	var buf [5]entry
	es := buf[:0]
	if r.user != 0 {
		es = append(es, entry{bucketIdxLogsByUser, idIndexKey(r.user, key), false})
	}
	if r.token != 0 {
		es = append(es, entry{bucketIdxLogsByToken, idIndexKey(r.token, key), false})
	}
	if r.channel != 0 {
		es = append(es, entry{bucketIdxLogsByChannel, idIndexKey(r.channel, key), false})
	}
	if modelIndexable(r.model) {
		es = append(es, entry{bucketIdxLogsByModel, modelIndexKey(r.model, key), false})
	}
	if r.typ != 0 {
		k := make([]byte, 1+len(key))
		k[0] = byte(r.typ)
		copy(k[1:], key)
		es = append(es, entry{bucketIdxLogsByType, k, true})
	}
	value := r.indexValue()
	if err := indexTokenName(tx, key, r, r.nameIndexValue(), d, c); err != nil {
		return err
	}
	for _, e := range es {
		b := tx.Bucket(e.bucket)
		var err error
		if d > 0 {
			if e.appendOnly {
				b.FillPercent = appendFill
			}
			err = b.Put(e.key, value)
		} else {
			err = b.Delete(e.key)
		}
		if err != nil {
			return err
		}
	}
	c.add(r, d)
	return nil
}

// logCounter gathers row-counter changes so that a transaction touching many
// entries updates each counter once.
type logCounter map[string]int64

func (c logCounter) add(r logRef, d int64) {
	c["all"] += d
	if r.user != 0 {
		c["u"+string(itob(r.user))] += d
	}
	if r.token != 0 {
		c["t"+string(itob(r.token))] += d
	}
	if r.channel != 0 {
		c["c"+string(itob(r.channel))] += d
	}
	if modelIndexable(r.model) {
		c["m"+r.model] += d
	}
	if r.typ != 0 {
		c[string([]byte{'y', byte(r.typ)})] += d
	}
}

func (c logCounter) flush(tx *bolt.Tx) error {
	b := tx.Bucket(bucketLogCounts)
	for k, d := range c {
		if d == 0 {
			continue
		}
		var n int64
		if v := b.Get([]byte(k)); v != nil {
			n = int64(btoi(v))
		}
		n += d
		if n < 0 {
			n = 0
		}
		if err := b.Put([]byte(k), itob(uint64(n))); err != nil {
			return err
		}
	}
	return nil
}

// indexTokenName writes (d = 1) or removes (d = -1) the entry's key in the
// token-name index and counts it, each only if the key is missing (or
// present): the indexer and the backfill of older entries may both reach
// an entry, and a clear may remove one neither reached.
func indexTokenName(tx *bolt.Tx, key []byte, r logRef, value []byte, d int64, c logCounter) error {
	if !r.hasName || !nameIndexable(r.tokenName) {
		return nil
	}
	b := tx.Bucket(bucketIdxLogsByTokenName)
	k := modelIndexKey(r.tokenName, key)
	present := b.Get(k) != nil
	switch {
	case d > 0 && !present:
		if err := b.Put(k, value); err != nil {
			return err
		}
	case d < 0 && present:
		if err := b.Delete(k); err != nil {
			return err
		}
	default:
		return nil
	}
	c[nameCounter(r.tokenName)] += d
	return nil
}

// nameIndexable tells the token names the index holds: not empty, and
// without the 0 byte that ends a name in its keys.
func nameIndexable(name string) bool { return name != "" && strings.IndexByte(name, 0) < 0 }

func nameCounter(name string) string { return "n" + name }

// modelIndexable tells the model names the model index and its counter
// hold: not empty, and short enough for a bbolt key (name, 0, log key).
// Model names are bounded far below that now, but a channel test of an
// earlier build logged any name it was given, and an entry whose index key
// could not be written failed every later pass of the indexer.
func modelIndexable(model string) bool {
	return model != "" && len(model)+1+16 <= bolt.MaxKeySize
}

// idIndexKey is the key of an entry in an index by id: the id, then the
// entry's key, made in one allocation (bbolt holds a key it is given until
// the transaction ends, so each is a slice of its own).
func idIndexKey(id uint64, key []byte) []byte {
	k := make([]byte, 8+len(key))
	binary.BigEndian.PutUint64(k, id)
	copy(k[8:], key)
	return k
}

func modelIndexKey(model string, key []byte) []byte {
	k := make([]byte, 0, len(model)+1+len(key))
	k = append(k, model...)
	k = append(k, 0)
	return append(k, key...)
}

// AppendLog writes one log entry in its own transaction.
func (s *Store) AppendLog(l *Log) error {
	if l.CreatedAt == 0 {
		l.CreatedAt = s.nowUnix()
	}
	return Internal(s.update(func(tx *bolt.Tx) error { return appendLog(tx, l) }))
}

// formatQuota renders quota for log text: dollars with 6 decimals when
// currency display is on, otherwise points.
func formatQuota(set *Settings, q int64) string {
	if set.Bool("DisplayInCurrencyEnabled") {
		return "$" + strconv.FormatFloat(float64(q)/set.QuotaPerUnit(), 'f', 6, 64)
	}
	return strconv.FormatInt(q, 10) + " 点额度"
}

// FormatQuota renders quota as log text does.
func (s *Store) FormatQuota(q int64) string { return formatQuota(s.Settings(), q) }

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
