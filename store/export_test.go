package store

import (
	"testing"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"
)

// This file is compiled only with the store's own tests. It reaches into the
// file for the few things the public API rightly does not offer.

// SetAffQuota sets a user's invite earnings directly, so the transfer can be
// tested without staging a whole invitation.
func SetAffQuota(tb testing.TB, s *Store, id uint64, quota int64) {
	tb.Helper()
	err := s.db.Update(func(tx *bolt.Tx) error {
		u, err := getUser(tx, id)
		if err != nil {
			return err
		}
		old := *u
		u.AffQuota = quota
		return putUser(tx, &old, u)
	})
	if err != nil {
		tb.Fatalf("SetAffQuota: %v", err)
	}
}

// FastPassword is the password of every user MustPutUser writes.
const FastPassword = "fast-password"

// fastHash is FastPassword hashed at bcrypt's minimum cost: CreateUser hashes
// at the default cost, which takes about a second under -race, and most
// tests only need an account to exist.
var fastHash, _ = bcrypt.GenerateFromPassword([]byte(FastPassword), bcrypt.MinCost)

// MustPutUser writes u as a new account (id, password hash, aff code and
// defaults filled in) through the same index code CreateUser uses, without
// CreateUser's rewards and logs. Use CreateUser when those are under test.
func MustPutUser(tb testing.TB, s *Store, u User) *User {
	tb.Helper()
	err := s.db.Update(func(tx *bolt.Tx) error {
		id, err := tx.Bucket(bucketUsers).NextSequence()
		if err != nil {
			return err
		}
		u.ID = id
		u.PasswordHash = string(fastHash)
		if u.DisplayName == "" {
			u.DisplayName = u.Username
		}
		if u.Role == 0 {
			u.Role = RoleCommon
		}
		if u.Status == 0 {
			u.Status = UserStatusEnabled
		}
		if u.Group == "" {
			u.Group = "default"
		}
		if u.AffCode == "" {
			u.AffCode = newAffCode(tx)
		}
		return putUser(tx, nil, &u)
	})
	if err != nil {
		tb.Fatalf("MustPutUser(%q): %v", u.Username, err)
	}
	return &u
}

// UnindexedLogs counts the entries waiting for the indexer.
func UnindexedLogs(s *Store) (n int) {
	_ = s.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketLogUnindexed).Stats().KeyN
		return nil
	})
	return n
}

// UserLogs returns the log entries of a user, oldest first, read through the
// per-user index.
func UserLogs(tb testing.TB, s *Store, userID uint64) []Log {
	tb.Helper()
	if err := s.indexLogs(); err != nil {
		tb.Fatalf("UserLogs: index: %v", err)
	}
	var out []Log
	err := s.db.View(func(tx *bolt.Tx) error {
		prefix := itob(userID)
		c := tx.Bucket(bucketIdxLogsByUser).Cursor()
		for k, _ := c.Seek(prefix); len(k) == 24 && string(k[:8]) == string(prefix); k, _ = c.Next() {
			var l Log
			ok, err := getJSON(tx.Bucket(bucketLogs), k[8:], &l)
			if err != nil {
				return err
			}
			if !ok {
				tb.Errorf("UserLogs: index entry %x has no log", k)
				continue
			}
			out = append(out, l)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("UserLogs: %v", err)
	}
	return out
}

// PutChannelAsStored writes c over its stored record without validation,
// as a file written before a rule was added may hold it.
func PutChannelAsStored(tb testing.TB, s *Store, c *Channel) {
	tb.Helper()
	err := s.db.Update(func(tx *bolt.Tx) error {
		old, err := getChannel(tx, c.ID)
		if err != nil {
			return err
		}
		return putChannel(tx, old, c)
	})
	if err != nil {
		tb.Fatalf("PutChannelAsStored: %v", err)
	}
}

// PutTokenAsStored writes t over its stored record without validation.
func PutTokenAsStored(tb testing.TB, s *Store, t *Token) {
	tb.Helper()
	if err := s.db.Update(func(tx *bolt.Tx) error { return putTokenRecord(tx, t) }); err != nil {
		tb.Fatalf("PutTokenAsStored: %v", err)
	}
}

// PutOptionAsStored writes an option's value without validation.
func PutOptionAsStored(tb testing.TB, s *Store, key, value string) {
	tb.Helper()
	if err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketOptions).Put([]byte(key), []byte(value)) }); err != nil {
		tb.Fatalf("PutOptionAsStored: %v", err)
	}
}

// OptionDefFor returns the definition of key, or nil for an unknown key.
func OptionDefFor(key string) *OptionDef { return optionIndex[key] }
