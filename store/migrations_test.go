package store

import (
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
