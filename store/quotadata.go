package store

import (
	"bytes"
	"encoding/binary"

	json "github.com/goccy/go-json"
	bolt "go.etcd.io/bbolt"
)

// QuotaDatum is one hour of one user's use of one model, for the dashboard.
type QuotaDatum struct {
	UserID    uint64 `json:"user_id"`
	Username  string `json:"username"`
	ModelName string `json:"model_name"`
	CreatedAt int64  `json:"created_at"` // the hour, unix seconds
	TokenUsed int64  `json:"token_used"`
	Count     int64  `json:"count"`
	Quota     int64  `json:"quota"`
}

// quotaDataKey is hour(8) + user id(8) + model: a time range is a key range.
func quotaDataKey(hour int64, userID uint64, model string) []byte {
	k := make([]byte, 16, 16+len(model))
	binary.BigEndian.PutUint64(k, uint64(hour))
	binary.BigEndian.PutUint64(k[8:], userID)
	return append(k, model...)
}

var (
	keyCount     = []byte("count")
	keyTokenUsed = []byte("token_used")
)

// addQuotaData folds charges into their hourly rows inside the charge
// transaction, so the dashboard is exactly as durable as the charges. A
// row's counters are edited in place (see patchInts).
func addQuotaData(tx *bolt.Tx, rows map[string]*QuotaDatum) error {
	b := tx.Bucket(bucketQuotaData)
	for k, add := range rows {
		if raw := b.Get([]byte(k)); raw != nil {
			if data, ok := patchInts(raw, []intEdit{{key: keyCount, add: add.Count}, {key: keyQuota, add: add.Quota}, {key: keyTokenUsed, add: add.TokenUsed}}); ok {
				if err := b.Put([]byte(k), data); err != nil {
					return err
				}
				continue
			}
		}
		var cur QuotaDatum
		if _, err := getJSON(b, []byte(k), &cur); err != nil {
			return err
		}
		if cur.Count == 0 {
			cur = QuotaDatum{UserID: add.UserID, Username: add.Username, ModelName: add.ModelName, CreatedAt: add.CreatedAt}
		}
		cur.Count += add.Count
		cur.Quota += add.Quota
		cur.TokenUsed += add.TokenUsed
		if err := putJSON(b, []byte(k), &cur); err != nil {
			return err
		}
	}
	return nil
}

// QuotaData returns the hourly rows in [start, end] (unix seconds; end 0 =
// no end), of userID only when it is not 0. A start before 1970 starts
// there; an end before it holds nothing.
func (s *Store) QuotaData(start, end int64, userID uint64) ([]QuotaDatum, error) {
	out := []QuotaDatum{}
	if end < 0 {
		return out, nil
	}
	start = max(start, 0)
	from := make([]byte, 8)
	binary.BigEndian.PutUint64(from, uint64(start-start%3600))
	user := itob(userID)
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketQuotaData).Cursor()
		k, v := c.Seek(from)
		for k != nil {
			hour := int64(binary.BigEndian.Uint64(k[:8]))
			if end > 0 && hour > end {
				break
			}
			if userID != 0 && !bytes.Equal(k[8:16], user) {
				// One account's rows of an hour lie together: go to
				// them, or on to the account's rows of the next hour
				// (rows are kept by whole hours), instead of reading
				// every other account's rows.
				next := hour
				if bytes.Compare(k[8:16], user) > 0 {
					next = hour + 3600
				}
				k, v = c.Seek(append(itob(uint64(next)), user...))
				continue
			}
			var d QuotaDatum
			if err := json.Unmarshal(v, &d); err != nil {
				return err
			}
			out = append(out, d)
			k, v = c.Next()
		}
		return nil
	})
	return out, Internal(err)
}
