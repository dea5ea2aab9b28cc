package store

import (
	"bytes"
	"errors"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Log entries reach their indexes (by user, token, channel, model and type)
// and row counters in the background. The transaction that writes an entry
// (a batch of charges, a top-up, an admin change) adds only the entry and a
// short reference to it in log_unindexed; the indexer moves references into
// the indexes in batches, each in its own transaction. A charge's commit so
// touches a few pages instead of one per index, and each index page is
// written once for many entries.
//
// Queries read the indexes and the waiting references together (logquery.go),
// so an entry is found the moment its transaction commits. References are in
// the file, so those left by a crash are indexed after the next start.

const (
	// indexKick is the number of new entries that wakes the indexer before
	// its next tick.
	indexKick = 512
	// indexInterval is how long an entry waits for the indexer at most
	// under light traffic.
	indexInterval = 200 * time.Millisecond
	// indexChunk bounds the entries indexed in one transaction.
	indexChunk = 4096
)

type logIndexer struct {
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	pending atomic.Int64 // entries committed since the last pass began
}

// startIndexer starts the background indexer; stopIndexer ends it after a
// last pass.
func (s *Store) startIndexer() {
	ix := &s.indexer
	ix.kick = make(chan struct{}, 1)
	ix.stop = make(chan struct{})
	ix.done = make(chan struct{})
	go func() {
		defer close(ix.done)
		t := time.NewTicker(indexInterval)
		defer t.Stop()
		for {
			select {
			case <-ix.stop:
				_ = s.indexLogs()
				return
			case <-ix.kick:
			case <-t.C:
			}
			// A failed pass leaves the references in place for the next one.
			_ = s.indexLogs()
		}
	}()
}

func (s *Store) stopIndexer() {
	if s.indexer.stop == nil {
		return
	}
	close(s.indexer.stop)
	<-s.indexer.done
	s.indexer.stop = nil
}

// noteUnindexed tells the indexer that n entries were committed.
func (s *Store) noteUnindexed(n int) {
	if n > 0 && s.indexer.pending.Add(int64(n)) >= indexKick {
		select {
		case s.indexer.kick <- struct{}{}:
		default:
		}
	}
}

var errNothingToIndex = errors.New("nothing to index")

// indexLogs indexes every waiting entry, in transactions of at most
// indexChunk entries.
func (s *Store) indexLogs() error {
	s.indexer.pending.Store(0)
	for {
		n := 0
		err := s.db.Update(func(tx *bolt.Tx) error {
			waiting := tx.Bucket(bucketLogUnindexed)
			counts := logCounter{}
			c := waiting.Cursor()
			var last []byte
			k, v := c.First()
			for ; k != nil && n < indexChunk; k, v = c.Next() {
				// A reference and its entry are written and cleared together.
				if r, ok := decodeRef(v); ok {
					if err := indexLog(tx, k, r, 1, counts); err != nil {
						return err
					}
				}
				last = append(last[:0], k...)
				n++
			}
			if n == 0 {
				// Roll back: an empty commit would still sync the file.
				return errNothingToIndex
			}
			if err := counts.flush(tx); err != nil {
				return err
			}
			if k == nil {
				// All of them: drop the bucket's pages at once.
				if err := tx.DeleteBucket(bucketLogUnindexed); err != nil {
					return err
				}
				_, err := tx.CreateBucket(bucketLogUnindexed)
				return err
			}
			for k, _ := c.First(); k != nil && bytes.Compare(k, last) <= 0; k, _ = c.First() {
				if err := c.Delete(); err != nil {
					return err
				}
			}
			return nil
		})
		if errors.Is(err, errNothingToIndex) {
			return nil
		}
		if err != nil {
			return err
		}
		if n < indexChunk {
			return nil
		}
	}
}
