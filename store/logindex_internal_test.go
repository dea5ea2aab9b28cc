package store

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Indexing a log entry makes each index key and value in one allocation
// and gathers the entries to write without growing a slice: the indexer
// runs for every charged call.
func TestIndexLogAllocations(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "index.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	keys := make([][]byte, 300)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(itob(1_800_000_000), uint64(i+1))
	}
	r := logRef{user: 7, token: 9, channel: 3, typ: LogTypeConsume, quota: 1234, hasQuota: true,
		model: "gpt-4o-mini", tokenName: "bench", hasName: true}
	err = s.db.Update(func(tx *bolt.Tx) error {
		counts := logCounter{}
		// Warm the buckets' nodes, so that what is counted is the
		// indexer's own work and bbolt's per key.
		for _, k := range keys[:50] {
			if err := indexLog(tx, k, r, 1, counts); err != nil {
				return err
			}
		}
		next := keys[50:]
		allocs := testing.AllocsPerRun(200, func() {
			if err := indexLog(tx, next[0], r, 1, counts); err != nil {
				t.Fatal(err)
			}
			next = next[1:]
		})
		// bbolt's own work (cursors, nodes) and the row counters take
		// about 25 of them.
		if allocs > 30 {
			t.Errorf("%v allocations to index an entry, want at most 30", allocs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
