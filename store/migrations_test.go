package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A file of an older schema is brought to this build's version at open; a
// file of a newer one is refused rather than misread.
func TestSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLog(&Log{UserID: 5, Type: LogTypeConsume, CreatedAt: 1_700_000_000}); err != nil {
		t.Fatal(err)
	}
	setVersion := func(v uint64) {
		t.Helper()
		if err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaSchemaVersion, itob(v)) }); err != nil {
			t.Fatal(err)
		}
	}
	version := func() (v uint64) {
		_ = s.db.View(func(tx *bolt.Tx) error { v = btoi(tx.Bucket(bucketMeta).Get(metaSchemaVersion)); return nil })
		return v
	}
	if v := version(); v != SchemaVersion() || v < 3 {
		t.Fatalf("new file at version %d, build at %d", v, SchemaVersion())
	}
	setVersion(2)
	s.Close()
	if s, err = Open(path, Options{NoSync: true}); err != nil {
		t.Fatalf("open a version 2 file: %v", err)
	}
	if v := version(); v != SchemaVersion() {
		t.Fatalf("migrated to %d, want %d", v, SchemaVersion())
	}
	if p, err := s.Logs(LogFilter{UserID: 5}, 1, 10); err != nil || p.Total != 1 {
		t.Fatalf("after migration: total %d, %v", p.Total, err)
	}
	setVersion(SchemaVersion() + 1)
	s.Close()
	if _, err := Open(path, Options{NoSync: true}); err == nil || !strings.Contains(err.Error(), "newer than this build") {
		t.Fatalf("open a newer file: %v", err)
	}
}

// A ratio map saved before ratio values were bounded at 1 000 000 (a build
// before the bound accepted any non-negative value) keeps every price after
// the upgrade: one value above today's bound must not reset the whole map
// to the defaults, which would bill every model at a price the
// administrator never set.
func TestOlderRatioMapAboveBoundKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	old := `{"gpt-3.5-turbo":7,"gpt-4":20,"reserved-model":2000000}`
	if err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOptions).Put([]byte("ModelRatio"), []byte(old))
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(path, Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	set := s.Settings()
	if got := set.Get("ModelRatio"); got != old {
		t.Fatalf("ModelRatio after reopening: %.120s, want %s", got, old)
	}
	if r := set.ModelRatio["gpt-3.5-turbo"]; r != 7 {
		t.Fatalf("gpt-3.5-turbo ratio %v, want the stored 7", r)
	}
	if r := set.ModelRatio["reserved-model"]; r != 2000000 {
		t.Fatalf("reserved-model ratio %v, want the stored 2000000", r)
	}
	// A save is still held to the bound.
	if err := s.UpdateOption("ModelRatio", old); err == nil {
		t.Fatal("a ratio above 1000000 was saved")
	}
}

// A newer build may add top-level buckets with its schema version. This
// build refuses such a file as newer, as it does one without new buckets,
// not as a damaged file, whose message sends the operator to restore a
// backup and lose what was written since.
func TestNewerFileWithItsOwnBucketsIsRefusedAsNewer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucket([]byte("added_by_a_newer_build")); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(metaSchemaVersion, itob(SchemaVersion()+1))
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(path, Options{NoSync: true})
	if err == nil || !strings.Contains(err.Error(), "newer than this build") || strings.Contains(err.Error(), "damaged") {
		t.Fatalf("open a newer build's file with a bucket of its own: %v, want it refused as newer", err)
	}
}

// A file of an older schema may lack the buckets added since its version,
// which Open creates; a bucket its version already had is missing only from
// a torn copy (of a file an older build wrote, taken while it ran), which
// is refused as damaged as a torn file of this version is, instead of being
// started with that bucket created empty: a file without its accounts
// started with a new root / 123456, one without channels served none.
func TestOlderFileMissingABucketOfItsVersionIsRefused(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	s, err := Open(good, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureRootWith(""); err != nil {
		t.Fatal(err)
	}
	s.Close()
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		version uint64
		drop    []string
		opens   bool
	}{
		{"version 4 without users", 4, []string{"users"}, false},
		{"version 4 without channels", 4, []string{"channels"}, false},
		{"version 2 without log_counts", 2, []string{"log_counts"}, false},
		{"version 1 without tokens", 1, []string{"tokens"}, false},
		// The layouts older builds wrote.
		{"version 4", 4, []string{"idx_log_by_token_name"}, true},
		{"version 2", 2, []string{"idx_log_by_token_name", "log_unindexed"}, true},
		{"version 1", 1, []string{"idx_log_by_token_name", "log_unindexed", "abilities", "idx_log_by_channel",
			"idx_log_by_model", "idx_log_by_type", "log_counts", "redemptions", "idx_redemption_by_key",
			"top_ups", "idx_top_up_by_trade_no", "quota_data"}, true},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(func(tx *bolt.Tx) error {
			for _, b := range c.drop {
				if err := tx.DeleteBucket([]byte(b)); err != nil {
					return err
				}
			}
			return tx.Bucket(bucketMeta).Put(metaSchemaVersion, itob(c.version))
		}); err != nil {
			t.Fatal(err)
		}
		db.Close()
		s, err := Open(path, Options{NoSync: true})
		if !c.opens {
			if err == nil {
				s.Close()
				t.Errorf("%s: the file opened", c.name)
			} else if !strings.Contains(err.Error(), "damaged") {
				t.Errorf("%s: want a refusal saying the file is damaged, got %v", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if created, err := s.EnsureRootWith(""); err != nil || created {
			t.Errorf("%s: root created again: %v, %v", c.name, created, err)
		}
		s.Close()
	}
}

// A newer build may also drop or rename a bucket this build has. Its file
// is refused as newer too, not as damaged, whose message sends the
// operator to restore a backup and lose what was written since.
func TestNewerFileWithoutABucketOfOursIsRefusedAsNewer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketLogUnindexed); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(metaSchemaVersion, itob(SchemaVersion()+1))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(path, Options{NoSync: true})
	if err == nil || !strings.Contains(err.Error(), "newer than this build") || strings.Contains(err.Error(), "damaged") {
		t.Fatalf("open a newer build's file without a bucket of this build: %v, want it refused as newer", err)
	}
}
