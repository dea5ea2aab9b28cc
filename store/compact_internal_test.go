package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// dumpFile lists every bucket (with its sequence) and key/value pair of a
// bbolt file, nested buckets included, in order.
func dumpFile(t *testing.T, path string) []string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []string
	var walk func(prefix string, b *bolt.Bucket) error
	walk = func(prefix string, b *bolt.Bucket) error {
		out = append(out, fmt.Sprintf("%s seq=%d", prefix, b.Sequence()))
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(prefix+"/"+fmt.Sprintf("%x", k), b.Bucket(k))
			}
			out = append(out, fmt.Sprintf("%s %x=%x", prefix, k, v))
			return nil
		})
	}
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error { return walk(string(name), b) })
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCompact: after most logs are cleared the data file keeps its size;
// Compact writes a copy that is markedly smaller, private, holds every key,
// value and sequence of the file, passes the checker and opens as a data
// file with the same accounts and logs. A file a gateway holds, a copy that
// exists and the data file itself are refused.
func TestCompact(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "gateway.db")
	s, err := Open(src, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	u := MustPutUser(t, s, User{Username: "alice", Quota: 12345})
	if _, err := s.CreateToken(&Token{UserID: u.ID, Name: "t", UnlimitedQuota: true}); err != nil {
		t.Fatal(err)
	}
	fillLogs(t, s, 20000)
	if n, err := s.DeleteLogsBefore(context.Background(), 1_700_000_000+19000); err != nil || n != 19000 {
		t.Fatalf("cleared %d, %v", n, err)
	}
	// Held by a running gateway: refused after a short wait, not forever.
	compactLockWait = 200 * time.Millisecond
	defer func() { compactLockWait = 5 * time.Second }()
	dst := filepath.Join(dir, "compact.db")
	if _, _, err := Compact(src, dst); err == nil || !strings.Contains(err.Error(), "stop the gateway") {
		t.Fatalf("Compact of a held file: %v", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatalf("a refused compaction left %s: %v", dst, err)
	}
	s.Close()

	before, after, err := Compact(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(src); err != nil || info.Size() != before {
		t.Fatalf("before = %d, the data file has %v", before, info)
	}
	info, err := os.Stat(dst)
	if err != nil || info.Size() != after {
		t.Fatalf("after = %d, the copy has %v", after, info)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("the copy has mode %v, want 0600", info.Mode().Perm())
	}
	t.Logf("%d bytes compacted to %d", before, after)
	if after*4 > before {
		t.Fatalf("the copy has %d bytes of the file's %d", after, before)
	}
	a, b := dumpFile(t, src), dumpFile(t, dst)
	if len(a) != len(b) {
		t.Fatalf("the copy has %d entries, the file %d", len(b), len(a))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("entry %d: %s in the copy, %s in the file", i, b[i], a[i])
		}
	}
	f, err := os.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := newestMeta(f)
	f.Close()
	if !ok || m.freelist == noFreelist {
		t.Fatalf("the copy has no list of free pages (meta %+v, valid %v): its first start walks every page", m, ok)
	}
	if err := CheckFile(dst); err != nil {
		t.Fatal(err)
	}
	c, err := Open(dst, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.User(u.ID)
	if err != nil || got.Quota != 12345 {
		t.Fatalf("alice in the copy: %+v, %v", got, err)
	}
	p, err := c.Logs(LogFilter{}, 1, 10)
	if err != nil || p.Total != 1000 {
		t.Fatalf("logs in the copy: %+v, %v", p, err)
	}
	c.Close()

	kept := dumpFile(t, dst)
	if _, _, err := Compact(src, dst); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("Compact onto an existing file: %v", err)
	}
	if strings.Join(dumpFile(t, dst), "\n") != strings.Join(kept, "\n") {
		t.Fatal("a refused compaction changed the existing file")
	}
	if _, _, err := Compact(src, filepath.Join(dir, ".", "gateway.db")); err == nil || !strings.Contains(err.Error(), "data file itself") {
		t.Fatalf("Compact onto the data file: %v", err)
	}
	if _, _, err := Compact(filepath.Join(dir, "missing.db"), filepath.Join(dir, "x.db")); err == nil {
		t.Fatal("Compact of a missing file succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !os.IsNotExist(err) {
		t.Fatalf("Compact created the missing data file: %v", err)
	}
}

// A copy whose directory cannot be synced is not reported as written: its
// name may not survive a crash, and an operator told it was written swaps
// it in and removes the old file. The copy is removed, as on any error.
func TestCompactReportsADirectoryThatWouldNotSync(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "gateway.db")
	s, err := Open(src, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	MustPutUser(t, s, User{Username: "alice", Quota: 12345})
	s.Close()
	old := syncDir
	defer func() { syncDir = old }()
	syncDir = func(string) error { return fmt.Errorf("input/output error") }
	dst := filepath.Join(dir, "compact.db")
	if _, _, err := Compact(src, dst); err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("Compact with a directory that would not sync: %v", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatalf("a failed compaction left %s: %v", dst, err)
	}
}
