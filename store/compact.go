package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// compactTxSize bounds what one transaction of Compact writes before it is
// committed, so that a large file is copied in modest memory.
const compactTxSize = 16 << 20

// compactLockWait is how long Compact waits for the data file's lock: a
// running gateway holds it for as long as it runs.
var compactLockWait = 5 * time.Second

// Compact writes to dst a copy of the data file at src without its free
// pages: bbolt reuses the pages that cleared logs leave free, but the file
// never shrinks, and GET /api/backup copies it page for page. It is run
// while the gateway is stopped (a gateway running on src holds its lock,
// and Compact refuses the file after a short wait), reads src only, and
// refuses a dst that exists or is src. dst is created readable by this
// account only, as the data file is, and synced; it is then opened and
// must hold the buckets and schema version of src, each top-level bucket
// with as many keys and the same sequence. On an error dst is removed.
// It returns the sizes of src and dst.
func Compact(src, dst string) (before, after int64, err error) {
	info, err := os.Stat(src)
	if err != nil {
		return 0, 0, fmt.Errorf("data file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return 0, 0, fmt.Errorf("data file %s is not a regular file", src)
	}
	before = info.Size()
	absSrc, err := filepath.Abs(src)
	if err != nil {
		return 0, 0, err
	}
	absDst, err := filepath.Abs(dst)
	if err != nil {
		return 0, 0, err
	}
	if absSrc == absDst {
		return 0, 0, fmt.Errorf("%s is the data file itself: name a new file, and swap the two while the gateway is stopped", dst)
	}
	if _, err := os.Lstat(dst); err == nil {
		return 0, 0, fmt.Errorf("%s exists: name a new file (the copy never overwrites one)", dst)
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, 0, err
	}
	if err := checkLength(src); err != nil {
		return 0, 0, err
	}
	sdb, err := openBolt(src, &bolt.Options{ReadOnly: true, Timeout: compactLockWait})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return 0, 0, fmt.Errorf("open %s: the file is locked by another process: stop the gateway first", src)
		}
		return 0, 0, fmt.Errorf("open %s: %w", src, err)
	}
	defer sdb.Close()
	var want fileSummary
	if err := sdb.View(func(tx *bolt.Tx) error {
		if err := checkBuckets(tx); err != nil {
			if errors.As(err, new(newerSchemaError)) {
				return err
			}
			return damaged(err)
		}
		want = summarize(tx)
		return nil
	}); err != nil {
		return 0, 0, fmt.Errorf("open %s: %w", src, err)
	}
	// Created here, not by bbolt: O_EXCL refuses a file that appeared since
	// the check above (or a link), and nothing else is overwritten.
	f, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, 0, err
	}
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(dst)
		}
	}()
	if err := compactInto(sdb, dst); err != nil {
		return 0, 0, fmt.Errorf("compact into %s: %w", dst, err)
	}
	// The new name survives a crash too: a copy whose directory entry is
	// not on disk may be gone after one, while the operator has been told
	// it was written and removed the old file.
	if err := syncDir(filepath.Dir(absDst)); err != nil {
		return 0, 0, fmt.Errorf("sync the directory of %s: %w", dst, err)
	}
	if err := verifyCompacted(dst, want); err != nil {
		return 0, 0, fmt.Errorf("the copy %s does not match %s: %w", dst, src, err)
	}
	info, err = os.Stat(dst)
	if err != nil {
		return 0, 0, err
	}
	return before, info.Size(), nil
}

// syncDir syncs the directory dir, making the names of the files created
// in it durable.
var syncDir = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// compactInto copies src into the empty file at path and syncs it. The
// commits in between are not synced: a copy cut short is removed, or
// refused by Compact's check.
func compactInto(src *bolt.DB, path string) error {
	ddb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: compactLockWait, NoSync: true, FreelistType: bolt.FreelistMapType,
		NoFreelistSync: true})
	if err != nil {
		return err
	}
	if err := bolt.Compact(ddb, src, compactTxSize); err != nil {
		ddb.Close()
		return err
	}
	// The list of free pages is written once, as the store's Close writes
	// it: the first start on the copy reads it instead of walking the file.
	ddb.NoFreelistSync = false
	if err := ddb.Update(func(*bolt.Tx) error { return nil }); err != nil {
		ddb.Close()
		return err
	}
	if err := ddb.Sync(); err != nil {
		ddb.Close()
		return err
	}
	return ddb.Close()
}

// fileSummary is, per top-level bucket, its number of keys (those of
// nested buckets included) and its sequence, with the schema version.
type fileSummary struct {
	version uint64
	buckets map[string][2]uint64
}

func summarize(tx *bolt.Tx) fileSummary {
	s := fileSummary{buckets: map[string][2]uint64{}}
	if meta := tx.Bucket(bucketMeta); meta != nil && len(meta.Get(metaSchemaVersion)) == 8 {
		s.version = btoi(meta.Get(metaSchemaVersion))
	}
	tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		s.buckets[string(name)] = [2]uint64{uint64(b.Stats().KeyN), b.Sequence()}
		return nil
	})
	return s
}

// verifyCompacted opens the copy as the gateway would find it (its pages
// walked, its buckets those of a data file) and compares it with want.
func verifyCompacted(path string, want fileSummary) error {
	if err := checkLength(path); err != nil {
		return err
	}
	db, err := openBolt(path, &bolt.Options{ReadOnly: true, Timeout: compactLockWait})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		if err := checkBuckets(tx); err != nil {
			return err
		}
		got := summarize(tx)
		if got.version != want.version {
			return fmt.Errorf("schema version %d, want %d", got.version, want.version)
		}
		if len(got.buckets) != len(want.buckets) {
			return fmt.Errorf("%d top-level buckets, want %d", len(got.buckets), len(want.buckets))
		}
		for name, w := range want.buckets {
			g, ok := got.buckets[name]
			if !ok {
				return fmt.Errorf("no bucket %q", name)
			}
			if g != w {
				return fmt.Errorf("bucket %q has %d keys and sequence %d, want %d and %d", name, g[0], g[1], w[0], w[1])
			}
		}
		return nil
	})
}
