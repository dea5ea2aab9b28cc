package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// checkStore runs the file checker on an open store.
func checkStore(t *testing.T, s *Store, state string) {
	t.Helper()
	var problems []string
	if err := s.db.View(func(tx *bolt.Tx) error { problems = checkTx(tx); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("%s: %s", state, strings.Join(problems, "\n"))
	}
}

// TestCheckFile: the checker passes a file whose entries wait, are indexed
// or were cleared, and names a counter and an index entry that disagree
// with the entries.
func TestCheckFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s.stopIndexer() // the test moves the entries itself
	u := MustPutUser(t, s, User{Username: "alice"})
	tok, err := s.CreateToken(&Token{UserID: u.ID, Name: "t", UnlimitedQuota: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRedemptions(1, "code", 100, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteToken(u.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		if err := s.AppendLog(&Log{UserID: u.ID, TokenID: tok.ID, TokenName: "t", ChannelID: uint64(i%3 + 1), ModelName: "m",
			Type: LogTypeConsume, Quota: int64(i), CreatedAt: int64(1_700_000_000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	checkStore(t, s, "waiting")
	if err := s.indexLogs(); err != nil {
		t.Fatal(err)
	}
	checkStore(t, s, "indexed")
	for i := range 10 {
		if err := s.AppendLog(&Log{UserID: u.ID, Type: LogTypeTopup, CreatedAt: int64(1_700_000_000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DeleteLogsBefore(context.Background(), 1_700_000_100); err != nil {
		t.Fatal(err)
	}
	checkStore(t, s, "cleared")
	if err := s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketLogCounts).Put([]byte("all"), itob(5)); err != nil {
			return err
		}
		return tx.Bucket(bucketIdxLogsByUser).Put(append(itob(99), logKey(1, 1)...), nil)
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	err = CheckFile(path)
	if err == nil || !strings.Contains(err.Error(), `row counter "all" = 5`) || !strings.Contains(err.Error(), "idx_log_by_user: entry") {
		t.Fatalf("CheckFile on a broken file: %v", err)
	}
}

// TestCheckFileOlderSchema: a file an older build wrote (here version 2:
// no waiting references, no token-name index) is not read with this
// build's layout, which panicked on its missing buckets; the checker says
// which version it is and that the gateway migrates it.
func TestCheckFileOlderSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLog(&Log{UserID: 5, TokenName: "t", Type: LogTypeConsume, CreatedAt: 1_700_000_000}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketLogUnindexed, bucketIdxLogsByTokenName} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(metaSchemaVersion, itob(2))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	err = func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("CheckFile panicked on a version 2 file: %v", p)
			}
		}()
		return CheckFile(path)
	}()
	if err == nil || !strings.Contains(err.Error(), "schema version 2") {
		t.Fatalf("CheckFile on a version 2 file: %v", err)
	}
}
