package store

import (
	"encoding/binary"
	"strconv"

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

// appendLog assigns an id and writes the entry with its index entries and
// row counters.
func appendLog(tx *bolt.Tx, l *Log) error {
	c := logCounter{}
	if err := appendLogCounted(tx, l, c); err != nil {
		return err
	}
	return c.flush(tx)
}

// logCounter gathers row-counter changes so that a transaction writing many
// logs updates each counter once.
type logCounter map[string]int64

func (c logCounter) add(l *Log, d int64) {
	c["all"] += d
	if l.UserID != 0 {
		c["u"+string(itob(l.UserID))] += d
	}
	if l.TokenID != 0 {
		c["t"+string(itob(l.TokenID))] += d
	}
	if l.ChannelID != 0 {
		c["c"+string(itob(l.ChannelID))] += d
	}
	if l.ModelName != "" {
		c["m"+l.ModelName] += d
	}
	if l.Type != 0 {
		c[string([]byte{'y', byte(l.Type)})] += d
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

// appendLogCounted writes the entry and its index entries and records its
// counter changes in c; the caller flushes c before the commit.
func appendLogCounted(tx *bolt.Tx, l *Log, c logCounter) error {
	b := tx.Bucket(bucketLogs)
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
	if l.UserID != 0 {
		if err := tx.Bucket(bucketIdxLogsByUser).Put(append(itob(l.UserID), key...), nil); err != nil {
			return err
		}
	}
	if l.TokenID != 0 {
		if err := tx.Bucket(bucketIdxLogsByToken).Put(append(itob(l.TokenID), key...), nil); err != nil {
			return err
		}
	}
	if l.ChannelID != 0 {
		if err := tx.Bucket(bucketIdxLogsByChannel).Put(append(itob(l.ChannelID), key...), nil); err != nil {
			return err
		}
	}
	if l.ModelName != "" {
		if err := tx.Bucket(bucketIdxLogsByModel).Put(modelIndexKey(l.ModelName, key), nil); err != nil {
			return err
		}
	}
	if l.Type != 0 {
		if err := tx.Bucket(bucketIdxLogsByType).Put(append([]byte{byte(l.Type)}, key...), nil); err != nil {
			return err
		}
	}
	c.add(l, 1)
	return nil
}

// countLog moves the row counters of every index l appears in by d; they let
// a page of logs report its total without counting rows.
func countLog(tx *bolt.Tx, l *Log, d int64) error {
	b := tx.Bucket(bucketLogCounts)
	keys := [][]byte{[]byte("all")}
	if l.UserID != 0 {
		keys = append(keys, append([]byte("u"), itob(l.UserID)...))
	}
	if l.TokenID != 0 {
		keys = append(keys, append([]byte("t"), itob(l.TokenID)...))
	}
	if l.ChannelID != 0 {
		keys = append(keys, append([]byte("c"), itob(l.ChannelID)...))
	}
	if l.ModelName != "" {
		keys = append(keys, append([]byte("m"), l.ModelName...))
	}
	if l.Type != 0 {
		keys = append(keys, []byte{'y', byte(l.Type)})
	}
	for _, k := range keys {
		var n int64
		if v := b.Get(k); v != nil {
			n = int64(btoi(v))
		}
		n += d
		if n < 0 {
			n = 0
		}
		if err := b.Put(k, itob(uint64(n))); err != nil {
			return err
		}
	}
	return nil
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
	return Internal(s.db.Update(func(tx *bolt.Tx) error { return appendLog(tx, l) }))
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
