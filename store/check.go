package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// CheckFile opens the data file at path read-only and checks that every
// index and row counter agrees with a scan of the records it is derived
// from (see checkTx). The file must not be open in another process's
// writer (a gateway that was killed, or stopped, is fine). It returns an
// error listing what disagrees, at most a few dozen lines of it.
//
// The binary never calls it: the tests of the gateway, the relay and the
// store do, after crashes and compactions. It reads the store's buckets
// directly, so it lives here rather than in a _test.go file, which other
// packages' tests could not see.
func CheckFile(path string) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	var problems []string
	if err := db.View(func(tx *bolt.Tx) error {
		problems = checkTx(tx)
		return nil
	}); err != nil {
		return err
	}
	if len(problems) == 0 {
		return nil
	}
	const most = 40
	n := len(problems)
	if n > most {
		problems = append(problems[:most], fmt.Sprintf("... and %d more", n-most))
	}
	msg := fmt.Sprintf("%s: %d problems:", path, n)
	for _, p := range problems {
		msg += "\n  " + p
	}
	return errors.New(msg)
}

// checkTx checks, in one read transaction:
//
//   - every log entry decodes and is either waiting in log_unindexed (with
//     a reference that agrees with it, and in no index) or in each of its
//     indexes (with the index value its reference gives); every index entry
//     and every waiting reference names an entry that is there; every row
//     counter equals the number of indexed entries it counts;
//   - the token, redemption, user and session indexes hold exactly the
//     records they index;
//   - the abilities are exactly those of the channels.
func checkTx(tx *bolt.Tx) []string {
	var out []string
	bad := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if tx.Bucket(bucketLogs) == nil {
		return []string{"no logs bucket"}
	}
	// The checks below hold for this build's layout. A file of an older
	// schema lacks some of its buckets and counters until the gateway
	// migrates it at its next start.
	var version uint64
	if v := tx.Bucket(bucketMeta).Get(metaSchemaVersion); len(v) == 8 {
		version = btoi(v)
	}
	if version != SchemaVersion() {
		return []string{fmt.Sprintf("schema version %d, this build checks version %d: start the gateway of this build on the file once (it migrates an older file), then check it", version, SchemaVersion())}
	}

	// Logs.
	meta := tx.Bucket(bucketMeta)
	bfNext, bfEnd := meta.Get(metaNameBackfillNext), meta.Get(metaNameBackfillEnd)
	waiting := tx.Bucket(bucketLogUnindexed)
	want := map[string]map[string][]byte{} // bucket -> index key -> value
	for _, b := range [][]byte{bucketIdxLogsByUser, bucketIdxLogsByToken, bucketIdxLogsByChannel, bucketIdxLogsByModel, bucketIdxLogsByType, bucketIdxLogsByTokenName} {
		want[string(b)] = map[string][]byte{}
	}
	optional := map[string]bool{} // name index keys the backfill may not have reached
	counts := logCounter{}
	entries := 0
	_ = tx.Bucket(bucketLogs).ForEach(func(k, v []byte) error {
		entries++
		if len(k) != 16 {
			bad("log key %x is not 16 bytes", k)
			return nil
		}
		var l Log
		if err := jsonUnmarshal(v, &l); err != nil {
			bad("log %x does not decode: %v", k, err)
			return nil
		}
		if l.ID != binary.BigEndian.Uint64(k[8:]) || l.CreatedAt != int64(binary.BigEndian.Uint64(k[:8])) {
			bad("log %x holds id %d created at %d", k, l.ID, l.CreatedAt)
		}
		r := refOf(&l)
		if w := waiting.Get(k); w != nil {
			wr, ok := decodeRef(w)
			switch {
			case !ok:
				bad("waiting reference %x does not decode", k)
			case wr.user != r.user || wr.token != r.token || wr.channel != r.channel || wr.typ != r.typ || wr.model != r.model ||
				wr.hasQuota && wr.quota != r.quota || wr.hasName && wr.tokenName != r.tokenName:
				bad("waiting reference %x disagrees with its entry: %+v against %+v", k, wr, r)
			}
			return nil
		}
		key := string(k)
		if r.user != 0 {
			want[string(bucketIdxLogsByUser)][string(itob(r.user))+key] = r.indexValue()
		}
		if r.token != 0 {
			want[string(bucketIdxLogsByToken)][string(itob(r.token))+key] = r.indexValue()
		}
		if r.channel != 0 {
			want[string(bucketIdxLogsByChannel)][string(itob(r.channel))+key] = r.indexValue()
		}
		if modelIndexable(r.model) {
			want[string(bucketIdxLogsByModel)][string(modelIndexKey(r.model, k))] = r.indexValue()
		}
		if r.typ != 0 {
			want[string(bucketIdxLogsByType)][string([]byte{byte(r.typ)})+key] = r.indexValue()
		}
		counts.add(r, 1)
		if nameIndexable(r.tokenName) {
			nk := string(modelIndexKey(r.tokenName, k))
			want[string(bucketIdxLogsByTokenName)][nk] = r.nameIndexValue()
			if bfNext != nil && bytes.Compare(k, bfNext) >= 0 && bytes.Compare(k, bfEnd) <= 0 {
				optional[nk] = true
			}
		}
		return nil
	})
	_ = waiting.ForEach(func(k, _ []byte) error {
		if tx.Bucket(bucketLogs).Get(k) == nil {
			bad("waiting reference %x names no entry", k)
		}
		return nil
	})
	for name, keys := range want {
		b := tx.Bucket([]byte(name))
		seen := 0
		_ = b.ForEach(func(k, v []byte) error {
			wv, ok := keys[string(k)]
			if !ok {
				bad("%s: entry %x names no indexed entry with that field", name, k)
				return nil
			}
			seen++
			// Older builds wrote no value; what one is there must agree.
			if v != nil && len(v) > 0 && !bytes.Equal(v, wv) {
				bad("%s: entry %x has value %x, want %x", name, k, v, wv)
			}
			if name == string(bucketIdxLogsByTokenName) {
				counts[nameCounter(string(k[:len(k)-17]))]++
			}
			return nil
		})
		if seen != len(keys) {
			missing := 0
			for k := range keys {
				if b.Get([]byte(k)) == nil && !optional[k] {
					missing++
					if missing <= 5 {
						bad("%s: no entry %x", name, k)
					}
				}
			}
			if missing > 5 {
				bad("%s: %d entries missing in all", name, missing)
			}
		}
	}
	got := map[string]int64{}
	_ = tx.Bucket(bucketLogCounts).ForEach(func(k, v []byte) error {
		if len(v) != 8 {
			bad("row counter %q has a value of %d bytes", k, len(v))
			return nil
		}
		got[string(k)] = int64(btoi(v))
		return nil
	})
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := counts[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got[k] != counts[k] {
			bad("row counter %q = %d, a scan counts %d", k, got[k], counts[k])
		}
	}

	// Tokens: the key index holds the live tokens' key hashes, the owner
	// index their ids.
	byKey, byUser := map[string]uint64{}, map[string]bool{}
	_ = tx.Bucket(bucketTokens).ForEach(func(k, v []byte) error {
		var t Token
		if err := jsonUnmarshal(v, &t); err != nil {
			bad("token %x does not decode: %v", k, err)
			return nil
		}
		if t.ID != btoi(k) {
			bad("token %x holds id %d", k, t.ID)
		}
		if t.DeletedAt == 0 {
			byKey[string(hashSecret(t.Key))] = t.ID
			byUser[string(itob(t.UserID))+string(itob(t.ID))] = true
		}
		return nil
	})
	checkIndex(tx, bucketIdxTokenByKey, byKey, bad)
	checkSet(tx, bucketIdxTokenByUser, byUser, bad)

	// Redemptions: the key index holds the live codes.
	codes := map[string]uint64{}
	_ = tx.Bucket(bucketRedemptions).ForEach(func(k, v []byte) error {
		var r Redemption
		if err := jsonUnmarshal(v, &r); err != nil {
			bad("redemption %x does not decode: %v", k, err)
			return nil
		}
		if r.DeletedAt == 0 {
			codes[r.Key] = r.ID
		}
		return nil
	})
	checkIndex(tx, bucketIdxRedemptionKey, codes, bad)

	// Users: every unique index holds every user's value (deleted users
	// keep theirs).
	userIdx := make([]map[string]uint64, len(userIndexes))
	for i := range userIdx {
		userIdx[i] = map[string]uint64{}
	}
	_ = tx.Bucket(bucketUsers).ForEach(func(k, v []byte) error {
		var u User
		if err := jsonUnmarshal(v, &u); err != nil {
			bad("user %x does not decode: %v", k, err)
			return nil
		}
		for i, ix := range userIndexes {
			if val := ix.value(&u); val != "" {
				userIdx[i][val] = u.ID
			}
		}
		return nil
	})
	for i, ix := range userIndexes {
		checkIndex(tx, ix.bucket, userIdx[i], bad)
	}

	// Sessions of a user are indexed by that user.
	sessions := map[string]bool{}
	_ = tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
		var s Session
		if err := jsonUnmarshal(v, &s); err != nil {
			bad("session %x does not decode: %v", k, err)
			return nil
		}
		if s.UserID != 0 {
			sessions[string(itob(s.UserID))+string(k)] = true
		}
		return nil
	})
	checkSet(tx, bucketIdxSessionsByUser, sessions, bad)

	// Abilities are the channels' groups × models.
	abilities := map[string]Ability{}
	_ = tx.Bucket(bucketChannels).ForEach(func(k, v []byte) error {
		var c Channel
		if err := jsonUnmarshal(v, &c); err != nil {
			bad("channel %x does not decode: %v", k, err)
			return nil
		}
		for _, g := range c.GroupList() {
			for _, m := range c.ModelList() {
				abilities[string(abilityKey(g, m, c.ID))] = Ability{Group: g, Model: m, ChannelID: c.ID,
					Enabled: c.Status == ChannelStatusEnabled, Priority: c.Priority, Weight: c.Weight}
			}
		}
		return nil
	})
	_ = tx.Bucket(bucketAbilities).ForEach(func(k, v []byte) error {
		a, ok := abilities[string(k)]
		if !ok {
			bad("ability %q belongs to no channel", k)
			return nil
		}
		delete(abilities, string(k))
		var got Ability
		if err := jsonUnmarshal(v, &got); err != nil || got != a {
			bad("ability %q is %s, its channel makes it %+v", k, v, a)
		}
		return nil
	})
	for k := range abilities {
		bad("no ability %q", k)
	}
	return out
}

// checkIndex checks that bucket maps exactly the keys of want to their ids.
func checkIndex(tx *bolt.Tx, bucket []byte, want map[string]uint64, bad func(string, ...any)) {
	seen := 0
	_ = tx.Bucket(bucket).ForEach(func(k, v []byte) error {
		id, ok := want[string(k)]
		switch {
		case !ok:
			bad("%s: entry %x indexes no record", bucket, k)
		case len(v) != 8 || btoi(v) != id:
			bad("%s: entry %x names %x, the record is %d", bucket, k, v, id)
		default:
			seen++
		}
		return nil
	})
	if seen != len(want) {
		for k, id := range want {
			if tx.Bucket(bucket).Get([]byte(k)) == nil {
				bad("%s: no entry %x for record %d", bucket, k, id)
			}
		}
	}
}

// checkSet checks that bucket holds exactly the keys of want.
func checkSet(tx *bolt.Tx, bucket []byte, want map[string]bool, bad func(string, ...any)) {
	seen := 0
	_ = tx.Bucket(bucket).ForEach(func(k, _ []byte) error {
		if !want[string(k)] {
			bad("%s: entry %x indexes no record", bucket, k)
		} else {
			seen++
		}
		return nil
	})
	if seen != len(want) {
		for k := range want {
			if tx.Bucket(bucket).Get([]byte(k)) == nil {
				bad("%s: no entry %x", bucket, k)
			}
		}
	}
}
