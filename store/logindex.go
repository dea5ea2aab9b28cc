package store

import (
	"bytes"
	"errors"
	"log/slog"
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

// indexTxBudget bounds the time one indexer transaction holds the writer
// (charges wait behind it), as the log clear and the backfill are bounded:
// a pass is cut at a 64-entry boundary once it has taken that long.
const indexTxBudget = 20 * time.Millisecond

type logIndexer struct {
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	pending atomic.Int64 // entries committed since the last pass began
	// budget is indexTxBudget, or what a test sets before the indexer
	// runs.
	budget time.Duration
}

// startIndexer starts the background indexer; stopIndexer ends it after a
// last pass.
func (s *Store) startIndexer() {
	ix := &s.indexer
	ix.budget = indexTxBudget
	ix.kick = make(chan struct{}, 1)
	ix.stop = make(chan struct{})
	ix.done = make(chan struct{})
	go func() {
		defer close(ix.done)
		t := time.NewTicker(indexInterval)
		defer t.Stop()
		var backfilled, failedAt time.Time
		var wait time.Duration // after a failed pass, before the next
		for {
			select {
			case <-ix.stop:
				_ = s.indexLogs()
				return
			case <-ix.kick:
			case <-t.C:
			}
			if wait > 0 && time.Since(failedAt) < wait {
				continue
			}
			// A failed pass leaves the references in place for the next one.
			err := s.indexLogs()
			// At most one backfill budget an interval, however often a busy
			// gateway kicks the indexer.
			if err == nil && time.Since(backfilled) >= indexInterval {
				backfilled = time.Now()
				_, err = s.backfillTokenNames(ix.stop)
			}
			switch {
			case err != nil:
				// A file that takes no writes (a full disk) fails every
				// pass, and each failed commit reads the whole file while
				// charges wait: the next pass waits longer, up to a minute.
				if wait == 0 {
					slog.Error("the log indexer cannot write to the data file: new entries stay searchable, and it tries again", "err", err)
				}
				wait = min(max(2*wait, indexRetry), time.Minute)
				failedAt = time.Now()
			case wait > 0:
				slog.Info("the log indexer writes to the data file again")
				wait = 0
			}
		}
	}()
}

// indexRetry is how long the indexer waits after its first failed pass;
// each failure after it doubles the wait.
const indexRetry = time.Second

const (
	// backfillBudget bounds the backfill's work per indexer tick, and
	// backfillSlice one transaction of it: a charge waits for one slice at
	// most, and the pause between slices lets it in.
	backfillBudget = 100 * time.Millisecond
	backfillSlice  = 20 * time.Millisecond
	backfillPause  = 5 * time.Millisecond
)

// backfillTokenNames adds the entries written before the token-name index
// existed to it, oldest first, for about backfillBudget or until stop; it
// reports whether entries remain. Progress is kept in the file, so a
// restart goes on where the last transaction ended.
func (s *Store) backfillTokenNames(stop <-chan struct{}) (more bool, err error) {
	deadline := time.Now().Add(backfillBudget)
	for {
		done, err := s.backfillTokenNameSlice()
		if err != nil || done {
			return false, err
		}
		if time.Now().After(deadline) {
			return true, nil
		}
		select {
		case <-stop:
			return true, nil
		case <-time.After(backfillPause):
		}
	}
}

// backfillTokenNameSlice runs one transaction of the backfill; done tells
// that nothing is left.
func (s *Store) backfillTokenNameSlice() (done bool, err error) {
	err = s.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		next, end := meta.Get(metaNameBackfillNext), meta.Get(metaNameBackfillEnd)
		if next == nil {
			done = true
			return errNothingToIndex // roll back: nothing was written
		}
		counts := logCounter{}
		start := time.Now()
		waiting := tx.Bucket(bucketLogUnindexed)
		c := tx.Bucket(bucketLogs).Cursor()
		k, v := c.Seek(next)
		for n := 0; k != nil && bytes.Compare(k, end) <= 0; k, v = c.Next() {
			if n++; n&63 == 0 && time.Since(start) > backfillSlice || s.backfillRows.Load() > 0 && int64(n) > s.backfillRows.Load() {
				break
			}
			if waiting.Get(k) != nil {
				// Not indexed yet: the indexer adds it to every index, this
				// one included (queries read an entry either from the
				// indexes or from its waiting reference, never both).
				continue
			}
			var l Log
			if err := jsonUnmarshal(v, &l); err != nil {
				// An entry that does not decode is left out, as queries
				// that read it would.
				continue
			}
			r := refOf(&l)
			if err := indexTokenName(tx, k, r, r.nameIndexValue(), 1, counts); err != nil {
				return err
			}
		}
		if err := counts.flush(tx); err != nil {
			return err
		}
		if k == nil || bytes.Compare(k, end) > 0 {
			done = true
			if err := meta.Delete(metaNameBackfillNext); err != nil {
				return err
			}
			return meta.Delete(metaNameBackfillEnd)
		}
		return meta.Put(metaNameBackfillNext, append([]byte(nil), k...))
	})
	if errors.Is(err, errNothingToIndex) {
		err = nil
	}
	return done, err
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
// indexChunk entries and about indexTxBudget each.
func (s *Store) indexLogs() error {
	s.indexer.pending.Store(0)
	for {
		n := 0
		more := false
		err := s.update(func(tx *bolt.Tx) error {
			waiting := tx.Bucket(bucketLogUnindexed)
			counts := logCounter{}
			c := waiting.Cursor()
			var last []byte
			start := time.Now()
			k, v := c.First()
			for ; k != nil && n < indexChunk; k, v = c.Next() {
				if n > 0 && n%64 == 0 && time.Since(start) > s.indexer.budget {
					break
				}
				// A reference and its entry are written and cleared together.
				if r, ok := decodeRef(v); ok {
					if !r.hasName {
						// A reference from before the token-name index: the
						// entry has the name (the backfill leaves waiting
						// entries to this pass).
						var l Log
						if data := tx.Bucket(bucketLogs).Get(k); data != nil && jsonUnmarshal(data, &l) == nil {
							r.tokenName, r.hasName = l.TokenName, true
						}
					}
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
			more = k != nil
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
		if !more {
			return nil
		}
	}
}
