package store_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"gateway/store"
)

// MustOpenStore opens a store on a fresh file in tb.TempDir and closes it
// when the test ends.
func MustOpenStore(tb testing.TB) *store.Store {
	tb.Helper()
	return MustOpenStoreAt(tb, filepath.Join(tb.TempDir(), "gateway.db"))
}

// MustOpenStoreAt opens the store at path and closes it when the test ends.
func MustOpenStoreAt(tb testing.TB, path string) *store.Store {
	tb.Helper()
	s, err := store.Open(path, store.Options{NoSync: true, Timeout: time.Second})
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	return s
}

// MustReopen closes s and opens its file again, so a test sees only what
// reached the file.
func MustReopen(tb testing.TB, s *store.Store) *store.Store {
	tb.Helper()
	if err := s.Close(); err != nil {
		tb.Fatalf("close store: %v", err)
	}
	return MustOpenStoreAt(tb, s.Path())
}

// MustCreateUser creates an account through CreateUser (bcrypt at the
// default cost: about a second under -race; prefer MustPutUser when the
// creation path itself is not under test).
func MustCreateUser(tb testing.TB, s *store.Store, in store.NewUser) *store.User {
	tb.Helper()
	u, err := s.CreateUser(in)
	if err != nil {
		tb.Fatalf("CreateUser(%q): %v", in.Username, err)
	}
	return u
}

// MustPutUser writes an account with password store.FastPassword quickly.
func MustPutUser(tb testing.TB, s *store.Store, u store.User) *store.User {
	tb.Helper()
	return store.MustPutUser(tb, s, u)
}

// MustUser reads a user back.
func MustUser(tb testing.TB, s *store.Store, id uint64) *store.User {
	tb.Helper()
	u, err := s.User(id)
	if err != nil {
		tb.Fatalf("User(%d): %v", id, err)
	}
	return u
}

// wantCode fails unless err carries code (and, when msg is not empty, a
// message containing msg).
func wantCode(tb testing.TB, err error, code, msg string) {
	tb.Helper()
	if got := store.ErrorCode(err); got != code {
		tb.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
	if msg != "" && !strings.Contains(store.ErrorMessage(err), msg) {
		tb.Fatalf("error message = %q, want it to contain %q", store.ErrorMessage(err), msg)
	}
}

// clock is a controllable time source for Store.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock(s *store.Store) *clock {
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	s.Now = c.Now
	return c
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// backupBytes returns the whole file as Backup writes it.
func backupBytes(tb testing.TB, s *store.Store) []byte {
	tb.Helper()
	var buf bytes.Buffer
	var size int64 = -1
	if err := s.Backup(context.Background(), &buf, func(n int64) { size = n }); err != nil {
		tb.Fatalf("Backup: %v", err)
	}
	if size != int64(buf.Len()) {
		tb.Fatalf("Backup reported size %d, wrote %d bytes", size, buf.Len())
	}
	return buf.Bytes()
}

func TestOpen(t *testing.T) {
	t.Parallel()
	t.Run("CreatesDirectoryAndReopens", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "nested", "dir", "gateway.db")
		s := MustOpenStoreAt(t, path)
		if s.Path() != path {
			t.Fatalf("Path() = %q, want %q", s.Path(), path)
		}
		if err := s.Ping(); err != nil {
			t.Fatalf("Ping: %v", err)
		}
		u := MustPutUser(t, s, store.User{Username: "alice"})
		s = MustReopen(t, s)
		if got := MustUser(t, s, u.ID); got.Username != "alice" {
			t.Fatalf("after reopen username = %q", got.Username)
		}
	})
	t.Run("LockedFile", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		_, err := store.Open(s.Path(), store.Options{NoSync: true, Timeout: 50 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "locked") {
			t.Fatalf("second Open = %v, want a locked-file error", err)
		}
	})
}

func TestBackup(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	alice := MustPutUser(t, s, store.User{Username: "alice", Email: "alice@example.com"})
	bob := MustPutUser(t, s, store.User{Username: "bob"})
	if err := s.UpdateOption("Notice", "hello"); err != nil {
		t.Fatal(err)
	}

	data := backupBytes(t, s)
	path := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}

	// The copy is a valid bbolt file with the users in it.
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("bolt.Open(backup): %v", err)
	}
	var ids []uint64
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("users"))
		if b == nil {
			return errors.New("backup has no users bucket")
		}
		return b.ForEach(func(k, v []byte) error {
			ids = append(ids, binary.BigEndian.Uint64(k))
			if !bytes.Contains(v, []byte(`"username":"alice"`)) && !bytes.Contains(v, []byte(`"username":"bob"`)) {
				t.Errorf("unexpected user record %s", v)
			}
			return nil
		})
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 || ids[0] != alice.ID || ids[1] != bob.ID {
		t.Fatalf("backup user ids = %v, want [%d %d]", ids, alice.ID, bob.ID)
	}

	// And the store opens it as a data file with indexes and options intact.
	restored := MustOpenStoreAt(t, path)
	u, err := restored.UserByLogin("ALICE@example.com")
	if err != nil || u.ID != alice.ID {
		t.Fatalf("restored UserByLogin = %v, %v", u, err)
	}
	if got := restored.Settings().Get("Notice"); got != "hello" {
		t.Fatalf("restored Notice = %q", got)
	}
}

// A backup whose reader went away ends its read transaction: the store can
// still be closed (bbolt's close waits for open transactions).
func TestBackupEndsWithItsContext(t *testing.T) {
	t.Parallel()
	s, err := store.Open(filepath.Join(t.TempDir(), "gateway.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wrote := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		first := true
		result <- s.Backup(ctx, writerFunc(func(p []byte) (int, error) {
			if first {
				first = false
				close(wrote)
				<-ctx.Done() // a reader that stalls until it is gone
			}
			return len(p), nil
		}), nil)
	}()
	<-wrote
	cancel()
	select {
	case err := <-result:
		if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
			t.Fatalf("backup ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the backup went on after its context ended")
	}
	mustCloseWithin(t, s, "close waited for a finished backup's transaction")
}

// mustCloseWithin closes s, failing with msg if that takes 10 s (Close
// waits for every read transaction).
func mustCloseWithin(t *testing.T, s *store.Store, msg string) {
	t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal(msg)
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A backup whose reader is slow does not hold the file: the snapshot is
// taken first, so the store can even be closed (which waits for every read
// transaction) while the download stalls, and the download then completes
// whole.
func TestBackupDoesNotHoldTheFileWhileSending(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := store.Open(filepath.Join(dir, "gateway.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	MustPutUser(t, s, store.User{Username: "alice"})
	wrote, release := make(chan struct{}), make(chan struct{})
	var got bytes.Buffer
	var size int64
	result := make(chan error, 1)
	go func() {
		first := true
		result <- s.Backup(context.Background(), writerFunc(func(p []byte) (int, error) {
			if first {
				first = false
				close(wrote)
				<-release // a client that stalls
			}
			return got.Write(p)
		}), func(n int64) { size = n })
	}()
	<-wrote
	mustCloseWithin(t, s, "a stalled download held the file's read transaction")
	close(release)
	if err := <-result; err != nil {
		t.Fatal(err)
	}
	if int64(got.Len()) != size {
		t.Fatalf("sent %d bytes of %d", got.Len(), size)
	}
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(path, got.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := MustOpenStoreAt(t, path).UserByLogin("alice"); err != nil {
		t.Fatalf("the copy: %v", err)
	}
	// Nothing is left beside the data file.
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("data directory holds %d entries", len(entries))
	}
}

// freelistPage reads the free-page list's page from the file's current meta
// page (the one with the higher transaction id); bbolt writes MaxUint64
// there when commits do not write the list.
func freelistPage(tb testing.TB, path string) uint64 {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	// Each meta page: a 16-byte page header, then magic, version, page
	// size, flags (4 bytes each), the root bucket (16), the freelist's page
	// (8), the high-water page (8), the transaction id (8).
	pageSize := int(binary.LittleEndian.Uint32(data[16+8:]))
	var best, txid uint64
	for i := range 2 {
		m := data[i*pageSize+16:]
		if id := binary.LittleEndian.Uint64(m[48:]); i == 0 || id > txid {
			best, txid = binary.LittleEndian.Uint64(m[32:]), id
		}
	}
	return best
}

// A clean close writes the free-page list into the file, so the next open
// reads it instead of walking every page; commits leave it out, and the
// first commit after an open marks the written list stale.
func TestCloseWritesTheFreelist(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gateway.db")
	s, err := store.Open(path, store.Options{NoSync: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	alice := MustPutUser(t, s, store.User{Username: "alice"})
	if got := freelistPage(t, path); got != ^uint64(0) {
		t.Fatalf("while open, after a commit: freelist page %d, want none", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := freelistPage(t, path); got == ^uint64(0) || got < 2 {
		t.Fatalf("after close: freelist page %d, want a page", got)
	}
	s = MustOpenStoreAt(t, path)
	if got := MustUser(t, s, alice.ID); got.Username != "alice" {
		t.Fatalf("after reopen: %+v", got)
	}
	MustPutUser(t, s, store.User{Username: "bob"})
	if got := freelistPage(t, path); got != ^uint64(0) {
		t.Fatalf("after a commit of the reopened store: freelist page %d, want none (the written list is stale)", got)
	}
}

// openAsChild is the child's side of openInChild: when the variable names a
// file, it opens it, prints whether the store opened or refused it (and
// why), and ends the process; else it reports false.
func openAsChild(envVar string) bool {
	path := os.Getenv(envVar)
	if path == "" {
		return false
	}
	s, err := store.Open(path, store.Options{NoSync: true, Timeout: time.Second})
	if err == nil {
		s.Close()
		os.Stdout.WriteString("OPENED\n")
		os.Exit(0)
	}
	os.Stdout.WriteString("REFUSED: " + err.Error() + "\n")
	// The refused open left nothing behind: nothing crashes the process
	// after it (as the gateway closes what it opened before it exits), and
	// a good copy put in its place opens.
	time.Sleep(300 * time.Millisecond)
	good, err := os.ReadFile(os.Getenv("STORE_TEST_GOOD_COPY"))
	if err == nil {
		err = os.WriteFile(path, good, 0o600)
	}
	if err == nil {
		s, err = store.Open(path, store.Options{NoSync: true, Timeout: time.Second})
	}
	if err != nil {
		os.Stdout.WriteString("REOPEN FAILED: " + err.Error() + "\n")
		os.Exit(0)
	}
	s.Close()
	os.Stdout.WriteString("REOPENED\n")
	os.Exit(0)
	return true
}

// openInChild runs test in a child process that opens path (see
// openAsChild) and, once refused, puts the good copy in its place and opens
// it, so that a crash of the open is reported instead of ending the test
// binary; it returns the first part of the child's output.
func openInChild(t *testing.T, test, envVar, path string, good []byte) string {
	t.Helper()
	goodCopy := filepath.Join(t.TempDir(), "good.db")
	if err := os.WriteFile(goodCopy, good, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), envVar+"="+path, "STORE_TEST_GOOD_COPY="+goodCopy)
	out, _ := cmd.CombinedOutput()
	first, _, _ := strings.Cut(string(out), "\n\n")
	return first
}

// twoHundredUsers is a backup of a store holding 200 users: a file of a
// few pages of each kind.
func twoHundredUsers(t *testing.T) []byte {
	t.Helper()
	s := MustOpenStore(t)
	for i := range 200 {
		MustPutUser(t, s, store.User{Username: "user" + strings.Repeat("x", i%10) + string(rune('a'+i%26)) + string(rune('a'+i/26)),
			DisplayName: strings.Repeat("d", 20)})
	}
	return backupBytes(t, s)
}

// A copy cut short (a backup download that stopped, whose Content-Length
// said so) is refused at open with a message: bbolt maps the file as it is,
// and the first read past its end (the free-page list, a bucket) kills the
// process with SIGBUS, which no recover catches. The open runs in a child
// process so that the crash, if any, is reported instead of ending the test
// binary.
func TestOpenRefusesAFileCutShort(t *testing.T) {
	if openAsChild("STORE_TEST_OPEN_CUT") {
		return
	}
	t.Parallel()
	data := twoHundredUsers(t)
	dir := t.TempDir()
	for _, cut := range []int{len(data) / 2, len(data) - 4096} {
		path := filepath.Join(dir, "cut-"+strconv.Itoa(cut)+".db")
		if err := os.WriteFile(path, data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		out := openInChild(t, "TestOpenRefusesAFileCutShort", "STORE_TEST_OPEN_CUT", path, data)
		if !strings.Contains(out, "REFUSED: ") || !strings.Contains(out, "cut short") {
			t.Errorf("open of the first %d of %d bytes: want a refusal naming the cut, got:\n%s", cut, len(data), out)
		}
		if !strings.Contains(out, "REOPENED") {
			t.Errorf("open of a good copy restored after the refusal: got:\n%s", out)
		}
	}
	// The whole copy opens.
	path := filepath.Join(dir, "whole.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	MustOpenStoreAt(t, path)
}

// A copy of the file taken while the gateway wrote (cp of a live file) can
// be torn: its meta page, read before a commit, names pages the rest of the
// copy, read after, no longer has, some past the copy's last page. Restoring
// such a copy is refused at open with a message, not a crash with a stack
// trace: bbolt panics while walking the pages of a file whose free-page list
// was not written. The open runs in a child process, as above.
func TestOpenRefusesATornCopy(t *testing.T) {
	if openAsChild("STORE_TEST_OPEN_TORN") {
		return
	}
	t.Parallel()
	data := twoHundredUsers(t)
	good := slices.Clone(data)
	// The newer meta page: its root bucket's page and the high-water page.
	pageSize := int(binary.LittleEndian.Uint32(data[16+8:]))
	var root, high, txid uint64
	for i := range 2 {
		m := data[i*pageSize+16:]
		if id := binary.LittleEndian.Uint64(m[48:]); i == 0 || id > txid {
			root, high, txid = binary.LittleEndian.Uint64(m[16:]), binary.LittleEndian.Uint64(m[40:]), id
		}
	}
	// Point the first child of the root page (a branch's first child, or a
	// leaf's first bucket kept on its own page) past the last page, as a
	// torn copy does.
	p := data[int(root)*pageSize:]
	flags, count := binary.LittleEndian.Uint16(p[8:]), int(binary.LittleEndian.Uint16(p[10:]))
	var child []byte // where the child's page id is kept
	switch {
	case flags&0x01 != 0: // branch: pos, ksize (4 each), pgid (8)
		child = p[16+8:]
	case flags&0x02 != 0: // leaf: flags, pos, ksize, vsize (4 each); a bucket's value starts with its root page
		for i := range count {
			e := p[16+16*i:]
			if binary.LittleEndian.Uint32(e[0:])&0x01 == 0 {
				continue
			}
			pos, ksize := binary.LittleEndian.Uint32(e[4:]), binary.LittleEndian.Uint32(e[8:])
			v := e[pos+ksize:]
			if binary.LittleEndian.Uint64(v) != 0 {
				child = v
				break
			}
		}
	}
	if child == nil {
		t.Fatalf("root page %d (flags %#x, %d elements): no child to point elsewhere", root, flags, count)
	}
	// A live file is grown ahead of its pages, and its copy with it: the
	// page named exists in the copy (the child's content, written there by
	// a later commit), past the meta page's last one.
	old, moved := binary.LittleEndian.Uint64(child), high+3
	binary.LittleEndian.PutUint64(child, moved)
	data = append(data, make([]byte, 8*pageSize)...)
	page := data[int(moved)*pageSize : int(moved+1)*pageSize]
	copy(page, data[int(old)*pageSize:])
	binary.LittleEndian.PutUint64(page, moved)
	path := filepath.Join(t.TempDir(), "torn.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out := openInChild(t, "TestOpenRefusesATornCopy", "STORE_TEST_OPEN_TORN", path, good)
	if !strings.Contains(out, "REFUSED: ") || !strings.Contains(out, "damaged") || !strings.Contains(out, "/api/backup") {
		t.Errorf("open of a torn copy: want a refusal saying the file is damaged and how to back up, got:\n%s", out)
	}
	// The refused open let go of the file (its lock): the good copy restored in its place opens.
	if !strings.Contains(out, "REOPENED") {
		t.Errorf("open of a good copy restored after the refusal: got:\n%s", out)
	}
}

// A backup put in place with other accounts' permissions (a download saved
// as 0644) is narrowed to the owner's at open: the file holds channel keys
// and sessions in the clear.
func TestOpenNarrowsARestoredFileToItsOwner(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	MustPutUser(t, s, store.User{Username: "alice"})
	path := filepath.Join(t.TempDir(), "restored.db")
	if err := os.WriteFile(path, backupBytes(t, s), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o664); err != nil { // whatever the umask left
		t.Fatal(err)
	}
	MustOpenStoreAt(t, path)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != 0o600 {
		t.Fatalf("restored file's mode after open = %v, want -rw-------", got)
	}
}

// A copy torn where the list of top-level buckets was can hold an old page
// there that passes the walk of the file's pages: buckets gone (channels,
// indexes, every account) or keys of some other bucket in their place. Open
// refuses it instead of creating what is missing, which served it as if
// those had been empty: a file without its accounts started with a new root
// / 123456.
func TestOpenRefusesAFileMissingItsBuckets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	st, err := store.Open(good, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureRootWith(""); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for name, tear := range map[string]func(tx *bolt.Tx) error{
		"no channels": func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("channels")) },
		"no users":    func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("users")) },
		"a stray bucket": func(tx *bolt.Tx) error {
			_, err := tx.CreateBucket([]byte{0, 0, 0, 0, 0, 0, 0, 1})
			return err
		},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(tear); err != nil {
			t.Fatal(err)
		}
		db.Close()
		st, err := store.Open(path, store.Options{NoSync: true})
		if err == nil {
			st.Close()
			t.Errorf("%s: the file opened", name)
			continue
		}
		if !strings.Contains(err.Error(), "damaged") {
			t.Errorf("%s: want a refusal saying the file is damaged, got %v", name, err)
		}
	}
	// The file it was torn from, and a new one, open.
	MustOpenStoreAt(t, good)
	MustOpenStoreAt(t, filepath.Join(dir, "new.db"))
}

// A file that is not a data file (--data naming another program's file by
// mistake) is refused as it was: its permissions are not narrowed first.
func TestOpenLeavesAFileItRefusesAsItWas(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "other.sqlite")
	if err := os.WriteFile(path, append([]byte("SQLite format 3\x00"), make([]byte, 8192)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := store.Open(path, store.Options{NoSync: true}); err == nil {
		st.Close()
		t.Fatal("another program's file opened")
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("mode after the refusal: %v, want -rw-r--r--", info.Mode().Perm())
	}
}

// Another program's bbolt file, which bbolt opens and the bucket check then
// refuses, is left as it was too: its permissions are not narrowed first.
func TestOpenLeavesAnotherBoltFileItRefusesAsItWas(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("widgets"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := store.Open(path, store.Options{NoSync: true}); err == nil {
		st.Close()
		t.Fatal("another program's bbolt file opened")
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("mode after the refusal: %v, want -rw-r--r--", info.Mode().Perm())
	}
}

// A first start stopped after the buckets were created and before the
// schema version was written left every bucket empty: the file opens as a
// new one, instead of being refused as damaged with the advice to restore
// a backup that was never taken.
func TestOpenTakesAFileOfAnInterruptedFirstStart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gateway.db")
	st, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Delete([]byte("schema_version")) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st = MustOpenStoreAt(t, path)
	if created, err := st.EnsureRootWith(""); err != nil || !created {
		t.Fatalf("root on the reopened file: created %v, %v", created, err)
	}
}

// AppendRandom appends n characters of [0-9A-Za-z] after what dst holds,
// for a short n (drawn on the stack) and a long one alike, and RandomString
// returns as many.
func TestAppendRandom(t *testing.T) {
	const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	for _, n := range []int{0, 1, 8, 37, 48, 200} {
		got := store.AppendRandom([]byte("prefix-"), n)
		rest, ok := strings.CutPrefix(string(got), "prefix-")
		if !ok || len(rest) != n || strings.Trim(rest, alnum) != "" {
			t.Errorf("n %d: %q", n, got)
		}
		if s := store.RandomString(n); len(s) != n || strings.Trim(s, alnum) != "" {
			t.Errorf("RandomString(%d) = %q", n, s)
		}
	}
	if store.RandomString(32) == store.RandomString(32) {
		t.Error("two random strings are equal")
	}
}
