package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// migrations is append-only: the schema version stored in meta is the number
// of migrations applied. Each runs in its own transaction with the bump.
var migrations = []func(tx *bolt.Tx) error{
	// 1: the initial layout; buckets are created by Open, nothing to move.
	func(tx *bolt.Tx) error { return nil },
	// 2: the type index and row counters for every log index, from the
	// logs present.
	func(tx *bolt.Tx) error {
		counts := logCounter{}
		err := tx.Bucket(bucketLogs).ForEach(func(k, v []byte) error {
			var l Log
			if err := jsonUnmarshal(v, &l); err != nil {
				return err
			}
			if l.Type != 0 {
				if err := tx.Bucket(bucketIdxLogsByType).Put(append([]byte{byte(l.Type)}, k...), nil); err != nil {
					return err
				}
			}
			counts.add(refOf(&l), 1)
			return nil
		})
		if err != nil {
			return err
		}
		return counts.flush(tx)
	},
	// 3: log entries may wait in log_unindexed for the background indexer
	// (Open creates the bucket). Nothing to move; the version keeps older
	// builds, which would not see waiting entries in filtered pages, from
	// opening the file.
	func(tx *bolt.Tx) error { return nil },
	// 4: waiting references carry the entry's quota in a marked layout, and
	// index entries its type and quota. Entries written before keep the
	// older forms, which every query still reads; the version keeps older
	// builds, which would misread a marked reference, from opening the file.
	func(tx *bolt.Tx) error { return nil },
	// 5: entries are indexed by token name, and waiting references carry
	// it in a layout of their own mark. The entries present are added in
	// the background (backfillTokenNames), from the first to the last one
	// now; queries read the index once they all are.
	func(tx *bolt.Tx) error {
		last, _ := tx.Bucket(bucketLogs).Cursor().Last()
		if last == nil {
			return nil
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(metaNameBackfillNext, make([]byte, 16)); err != nil {
			return err
		}
		return meta.Put(metaNameBackfillEnd, append([]byte(nil), last...))
	},
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() uint64 { return uint64(len(migrations)) }

// newerSchemaError refuses a file that a newer build wrote: this build
// would misread what the newer one added.
type newerSchemaError struct{ version uint64 }

func (e newerSchemaError) Error() string {
	return fmt.Sprintf("data file schema version %d is newer than this build (%d): start the newer build, or this one on a backup taken before the upgrade",
		e.version, SchemaVersion())
}

func (s *Store) migrate() error {
	var current uint64
	if err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(metaSchemaVersion); v != nil {
			current = btoi(v)
		}
		return nil
	}); err != nil {
		return err
	}
	if current > SchemaVersion() {
		return newerSchemaError{current}
	}
	for i := current; i < SchemaVersion(); i++ {
		if err := s.update(func(tx *bolt.Tx) error {
			if err := migrations[i](tx); err != nil {
				return err
			}
			return tx.Bucket(bucketMeta).Put(metaSchemaVersion, itob(i+1))
		}); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	return nil
}
