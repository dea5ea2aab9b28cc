package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Store is the bbolt-backed implementation of every store interface. It is the
// only type in the program that opens the data file.
type Store struct {
	db   *bolt.DB
	path string

	// Now returns the current time; tests replace it to control expiry.
	Now func() time.Time

	settingsMu sync.Mutex // serialises option writes with the settings swap
	settings   settingsPtr

	hooks   hooks
	ledger  ledger
	indexer logIndexer
	// scanSlice, when set, replaces the length of a log scan's read
	// transactions (tests cut scans into many).
	scanSlice time.Duration
	// backfillRows, when set, bounds the entries one transaction of the
	// token-name backfill adds (tests cut it short with it).
	backfillRows atomic.Int64
	routing      atomic.Pointer[routing]
	routingMu    sync.Mutex // orders rebuilds: the last stored read the file last
	auth         *authCache
	// updateMu orders write transactions with the check that follows a
	// failed commit (see update).
	updateMu sync.Mutex
	// commitTx runs a write transaction: db.Update, which tests replace to
	// stage a commit that fails after it became visible.
	commitTx func(fn func(*bolt.Tx) error) error
	// writesStopped is set by a commit that failed after it became visible.
	writesStopped atomic.Bool
	// writeFailing is set by a transaction that failed in the file itself
	// (see fileError) and cleared by the next one that commits.
	writeFailing atomic.Bool
	// chargeProbe is when ChargesWritable last let a call through while
	// writeFailing was set (Unix nanoseconds).
	chargeProbe atomic.Int64
	// endedSessions holds the sessions (by hash) a logout ended while the
	// file refused to delete them; endedAny tells Session to look.
	endedSessions sync.Map
	endedAny      atomic.Bool
}

// errWritesStopped answers every write after the file reported a failure.
var errWritesStopped = Errorf(EUNAVAILABLE, "数据文件写入出错，服务需要重启")

// update runs fn in one write transaction, as db.Update does, and tells
// the caller whether the change is in the file. bbolt writes a
// transaction's meta page, the page that makes it visible, and then syncs
// it; when that last sync fails, Commit reports the error although the
// next transaction builds on the change, and a restart finds it. Callers
// that took the error for "nothing written" would charge a call twice or
// answer "billing failed" for a call the file charged: such a commit
// counts as made. Transactions are ordered by updateMu, so that the check
// reads the file before any other transaction commits.
//
// After such a commit bbolt's own state is no longer safe to build on (its
// rollback freed the pages the transaction replaced while older readers may
// still read them, and the kernel may have dropped the unsynced page), so
// the store stops: later writes are refused, and WritesStopped tells the
// program to exit; a restart opens the file and rebuilds that state.
func (s *Store) update(fn func(*bolt.Tx) error) error { return s.updateThen(fn, nil) }

// updateThen is update that, once the change is made, runs then before the
// next write transaction may begin.
func (s *Store) updateThen(fn func(*bolt.Tx) error, then func()) (err error) {
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	return s.updateLocked(fn, then)
}

// updateLocked is updateThen for a caller that holds updateMu.
func (s *Store) updateLocked(fn func(*bolt.Tx) error, then func()) (err error) {
	if s.writesStopped.Load() {
		return errWritesStopped
	}
	defer func() {
		if err == nil && then != nil {
			then()
		}
	}()
	var id int
	fnDone := false
	err = s.commitTx(func(tx *bolt.Tx) error {
		id = tx.ID()
		if err := fn(tx); err != nil {
			return err
		}
		fnDone = true
		return nil
	})
	if err == nil {
		s.writeFailing.Store(false)
		return nil
	}
	if !fnDone {
		return err
	}
	var visible int
	if s.db.View(func(tx *bolt.Tx) error { visible = tx.ID(); return nil }) == nil && visible == id {
		slog.Error("the data file reported a write failure after the change became visible: it counts as made, and writes stop until a restart", "txid", id, "err", err)
		// bbolt ran no commit handlers: cached tokens and users may be stale.
		if s.auth != nil {
			s.auth.reset()
		}
		if !s.writesStopped.Swap(true) && s.hooks.WritesStopped != nil {
			go s.hooks.WritesStopped(err)
		}
		return nil
	}
	s.writeFailing.Store(true)
	s.chargeProbe.Store(time.Now().UnixNano())
	return &Error{Code: EUNAVAILABLE, Message: errWriteFailing.Message, Err: &fileError{err}}
}

// fileError is a write transaction that failed in the file itself: its
// changes were made, but bbolt could not write them (a full disk, a file
// size limit, an I/O error), and nothing of them is in the file. bbolt's
// rollback of such a commit walks every page of the file to rebuild its
// list of free pages (NoFreelistSync), under the write lock. The change's
// caller answers 503 数据文件写入失败 (the cause goes to the log), not
// "Internal error.": the operator has a disk to see to.
type fileError struct{ err error }

func (e *fileError) Error() string { return e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

// Options configures Open.
type Options struct {
	// NoSync skips fsync; only tests may set it.
	NoSync bool
	// Timeout bounds the wait for the file lock held by another process.
	Timeout time.Duration
}

// Open opens (creating if needed) the data file at path, creates every bucket,
// runs pending migrations and loads the live settings.
func Open(path string, opts Options) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create data directory: %w", err)
		}
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	if err := checkLength(path); err != nil {
		return nil, err
	}
	db, err := openBolt(path, &bolt.Options{Timeout: opts.Timeout, NoSync: opts.NoSync, FreelistType: bolt.FreelistMapType,
		// The freelist is rebuilt at open instead of written by every commit, and a
		// large initial mapping spares readers the wait of frequent remaps as the
		// file grows.
		NoFreelistSync: true, InitialMmapSize: 1 << 30})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("open %s: the file is locked by another process", path)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, Now: time.Now}
	s.commitTx = db.Update
	if err := db.View(checkBuckets); err != nil {
		db.Close()
		if errors.As(err, new(newerSchemaError)) {
			return nil, err
		}
		return nil, fmt.Errorf("open %s: %w", path, damaged(err))
	}
	// Only a file whose buckets are a data file's: --data naming another
	// program's file by mistake (bbolt's own, too) leaves it as it was.
	keepPrivate(path)
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("create buckets: %w", err)
	}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.loadSettings(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.rebuildRouting(); err != nil {
		db.Close()
		return nil, err
	}
	// Registered last: a failed open leaves nothing behind, and nothing
	// before this point reads through the cache.
	s.auth = newAuthCache(db)
	s.ledger.init(s)
	s.startIndexer()
	return s, nil
}

// checkBuckets refuses a file whose top-level buckets are not those of a
// data file: a copy taken while the gateway wrote can hold an old page where
// the list of buckets was, and pass the walk of its pages. Creating the
// buckets it lacks would serve it as if they had been empty (channels and
// indexes gone, or every account: a new root / 123456). A file with no
// bucket is new; one of an older schema may lack the buckets added since
// (bucketSince), which Open creates, and no other.
func checkBuckets(tx *bolt.Tx) error {
	known := make(map[string]bool, len(allBuckets))
	for _, b := range allBuckets {
		known[string(b)] = true
	}
	n := 0
	if err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		if !known[string(name)] {
			return fmt.Errorf("a top-level bucket %q no data file has", name)
		}
		n++
		return nil
	}); err != nil || n == 0 {
		if meta := tx.Bucket(bucketMeta); err != nil && meta != nil && len(meta.Get(metaSchemaVersion)) == 8 &&
			btoi(meta.Get(metaSchemaVersion)) > SchemaVersion() {
			// A newer build's file may hold buckets added since: it is
			// refused as newer, not as damaged (which would send the
			// operator to restore a backup and lose what was written).
			return newerSchemaError{btoi(meta.Get(metaSchemaVersion))}
		}
		return err
	}
	meta := tx.Bucket(bucketMeta)
	if meta == nil || len(meta.Get(metaSchemaVersion)) != 8 {
		if bucketsEmpty(tx) {
			// A first start stopped between creating the buckets and
			// writing the schema version: nothing was written yet, and
			// Open goes on as with a new file.
			return nil
		}
		return errors.New("no schema version")
	}
	version := btoi(meta.Get(metaSchemaVersion))
	if version > SchemaVersion() {
		// A newer build may have dropped or renamed a bucket of this one:
		// refused as newer, not as damaged.
		return newerSchemaError{version}
	}
	for _, b := range allBuckets {
		// An older file lacks only the buckets added since its version.
		if tx.Bucket(b) == nil && version >= bucketSince[string(b)] {
			return fmt.Errorf("no bucket %q", b)
		}
	}
	return nil
}

// bucketsEmpty reports whether every top-level bucket of tx is empty.
func bucketsEmpty(tx *bolt.Tx) bool {
	return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
		if k, _ := b.Cursor().First(); k != nil {
			return errors.New("not empty")
		}
		return nil
	}) == nil
}

// keepPrivate takes from a data file already there the permissions that
// let other accounts read or write it, as the file created here never has:
// it holds channel keys, sessions and tokens in the clear, and a restored
// backup (a download saved under the default umask, 0644) would otherwise
// go on serving from a file anyone on the machine can read.
func keepPrivate(path string) {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o077 == 0 {
		return
	}
	if err := os.Chmod(path, info.Mode().Perm()&0o700); err != nil {
		slog.Warn("the data file is open to other accounts and its permissions could not be narrowed: make it readable by this account only",
			"path", path, "mode", info.Mode().Perm().String(), "err", err)
		return
	}
	slog.Warn("the data file was open to other accounts: it is now readable by this account only", "path", path,
		"was", info.Mode().Perm().String(), "now", (info.Mode().Perm() & 0o700).String())
}

// openBolt opens the file with bbolt, turning the panic bbolt raises on a
// damaged file (its walk of the pages at open finds one past the last, as in
// a copy of the file taken while the gateway wrote) into an error that says
// what to restore instead.
func openBolt(path string, o *bolt.Options) (db *bolt.DB, err error) {
	// The panic is a last resort: the goroutine of bbolt's walk goes on
	// after it, and can crash the process. A torn file is found first.
	if err := checkTorn(path, o.Timeout); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, damaged(fmt.Errorf("%v", r))
		}
	}()
	return bolt.Open(path, 0o600, o)
}

// damaged is the refusal of a damaged file, saying what to restore instead.
func damaged(err error) error {
	return fmt.Errorf("the file is damaged (%v): restore a backup taken with GET /api/backup, or a copy made while the gateway was stopped", err)
}

// checkLength refuses a file shorter than the pages its meta page counts:
// a copy cut short (a backup download that stopped, a disk that filled
// during a copy). bbolt maps such a file as it is, and its first read past
// the end (the free-page list, a bucket's page) kills the process with
// SIGBUS, which no recover catches. A file that is not there, empty, or has
// no valid meta page is left to bolt.Open, which creates or refuses it.
func checkLength(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.Size() == 0 {
		return nil
	}
	// A meta page: a 16-byte page header, then magic, version, page size,
	// flags (4 bytes each), the root bucket (16), the free list's page, the
	// high-water page, the transaction id and the checksum (8 each), the
	// checksum being FNV-1a over what precedes it. bbolt uses the valid one
	// with the higher transaction id.
	meta := func(off int64) (pageSize, pages, txid uint64, ok bool) {
		var b [16 + 64]byte
		if _, err := f.ReadAt(b[:], off); err != nil {
			return 0, 0, 0, false
		}
		m := b[16:]
		h := fnv.New64a()
		h.Write(m[:56])
		if binary.LittleEndian.Uint32(m[0:]) != 0xED0CDAED || binary.LittleEndian.Uint32(m[4:]) != 2 ||
			h.Sum64() != binary.LittleEndian.Uint64(m[56:]) {
			return 0, 0, 0, false
		}
		return uint64(binary.LittleEndian.Uint32(m[8:])), binary.LittleEndian.Uint64(m[40:]), binary.LittleEndian.Uint64(m[48:]), true
	}
	ps0, pages0, tx0, ok0 := meta(0)
	second := int64(os.Getpagesize())
	if ok0 {
		second = int64(ps0)
	}
	ps1, pages1, tx1, ok1 := meta(second)
	var need uint64
	switch {
	case ok0 && (!ok1 || tx0 >= tx1):
		need = ps0 * pages0
	case ok1:
		need = ps1 * pages1
	default:
		return nil
	}
	if uint64(info.Size()) < need {
		return fmt.Errorf("open %s: the file is cut short: %d bytes where its pages take %d (an interrupted copy or download?)", path, info.Size(), need)
	}
	return nil
}

// Close closes the data file.
func (s *Store) Close() error {
	s.ledger.close()
	s.stopIndexer()
	authCaches.Delete(s.db)
	s.writeFreelist()
	return s.db.Close()
}

// writeFreelist writes the list of free pages into the file, once, as the
// store closes. Commits do not write it (NoFreelistSync: after a large log
// clear it is large), so an open that finds none rebuilds it by reading
// every page of the file: seconds for a file of 10 GB in the page cache,
// minutes when it is not. After a clean close the next open reads the list
// instead (milliseconds); its first commit marks the list stale again. A
// store whose writes stopped writes nothing.
func (s *Store) writeFreelist() {
	err := s.update(func(tx *bolt.Tx) error {
		// Read by this transaction's commit; no other commit runs meanwhile.
		s.db.NoFreelistSync = false
		return nil
	})
	if err != nil && !errors.Is(err, errWritesStopped) && !errors.Is(err, berrors.ErrDatabaseNotOpen) {
		slog.Warn("writing the free-page list at close", "err", err)
	}
}

// Path returns the data file path.
func (s *Store) Path() string { return s.path }

// Backup writes a consistent snapshot of the whole file to w; size is
// reported first so callers can set Content-Length. The snapshot is copied
// from one read transaction into an unlinked temporary file beside the data
// file first, and only then sent: a slow reader never holds the
// transaction, which would stop every commit that must grow the file's
// mapping (and so the charges) until the download ended. The copy stops
// when ctx ends.
func (s *Store) Backup(ctx context.Context, w io.Writer, size func(int64)) error {
	tmp, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".backup-*")
	if err != nil {
		return err
	}
	defer tmp.Close()
	// Unlinked at once: the copy leaves nothing behind, even after a crash.
	if err := os.Remove(tmp.Name()); err != nil {
		return err
	}
	var n int64
	err = s.db.View(func(tx *bolt.Tx) error {
		n = tx.Size()
		_, err := tx.WriteTo(ctxWriter{ctx, tmp})
		return err
	})
	if err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if size != nil {
		size(n)
	}
	if _, err := io.Copy(ctxWriter{ctx, w}, io.LimitReader(tmp, n)); err != nil {
		return err
	}
	// A reader gone while its last bytes were written has not got them.
	return ctx.Err()
}

// ctxWriter fails its writes once ctx has ended.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// chargeProbeEvery is how often ChargesWritable lets one call through while
// the file refuses writes, to find out whether it takes them again.
var chargeProbeEvery = 5 * time.Second

// errChargesRefused answers a call while the file refuses writes.
var errChargesRefused = Errorf(EUNAVAILABLE, "数据文件写入失败，暂时无法计费，请稍后重试")

// ChargesWritable tells whether a new call's charge can be expected to reach
// the file: not once writes stopped (see update), nor while the last write
// the file was given failed in it (a full disk, a file size limit) and none
// went through since. Then one call every chargeProbeEvery goes ahead, and
// its charge (or any other write) tells whether the file takes writes
// again. The relay asks before it calls an upstream: a call whose charge
// cannot be written costs the upstream's price and is answered
// billing_failed.
func (s *Store) ChargesWritable() error {
	if s.writesStopped.Load() {
		return errWritesStopped
	}
	if !s.writeFailing.Load() {
		return nil
	}
	now, last := time.Now().UnixNano(), s.chargeProbe.Load()
	if now-last >= int64(chargeProbeEvery) && s.chargeProbe.CompareAndSwap(last, now) {
		return nil
	}
	return errChargesRefused
}

// errWriteFailing answers Ping while the file refuses writes.
var errWriteFailing = Errorf(EUNAVAILABLE, "数据文件写入失败")

// Ping checks that the store still takes writes (see update), that the last
// write the file was given did not fail in it (a full disk: no charge can be
// written), and that the file answers a read transaction.
func (s *Store) Ping() error {
	if s.writesStopped.Load() {
		return errWritesStopped
	}
	if s.writeFailing.Load() {
		return errWriteFailing
	}
	return s.db.View(func(*bolt.Tx) error { return nil })
}

// DB exposes the bbolt handle to tests of this package only through export_test.go.

// itob encodes an id as an 8-byte big-endian key, so keys sort by id.
func itob(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func btoi(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, data)
}

// getJSON decodes the value at key into v; it reports false when absent. The
// decode copies, so v outlives the transaction.
func getJSON(b *bolt.Bucket, key []byte, v any) (bool, error) {
	data := b.Get(key)
	if data == nil {
		return false, nil
	}
	return true, json.Unmarshal(data, v)
}

// hashSecret returns the SHA-256 of a high-entropy secret (session ids, access
// tokens, API keys); such secrets are stored and looked up only by hash.
func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomString returns n characters from [0-9A-Za-z] drawn from crypto/rand
// without modulo bias.
func RandomString(n int) string {
	return string(AppendRandom(make([]byte, 0, n), n))
}

// AppendRandom appends n characters from [0-9A-Za-z] drawn from crypto/rand
// without modulo bias to dst.
func AppendRandom(dst []byte, n int) []byte {
	var stack [64]byte
	buf := stack[:0]
	if m := n + n/2 + 8; m <= len(stack) {
		buf = stack[:m]
	} else {
		buf = make([]byte, m)
	}
	i := 0
	for i < n {
		if _, err := rand.Read(buf); err != nil {
			panic(err)
		}
		for _, c := range buf {
			if c >= 248 { // 248 = 4*62: reject to keep the distribution uniform
				continue
			}
			dst = append(dst, alnum[int(c)%62])
			i++
			if i == n {
				break
			}
		}
	}
	return dst
}

// RandomHex returns n hexadecimal characters from crypto/rand.
func RandomHex(n int) string {
	const hexdigits = "0123456789abcdef"
	buf := make([]byte, (n+1)/2)
	if _, err := rand.Read(buf); err != nil {
		panic(err)
	}
	out := make([]byte, 0, n+1)
	for _, c := range buf {
		out = append(out, hexdigits[c>>4], hexdigits[c&15])
	}
	return string(out[:n])
}

// setIf writes *v to dst when an update carries v (a nil field is kept).
func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
