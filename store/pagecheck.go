package store

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// checkTorn walks, before bbolt opens the file for writing, the pages of a
// file whose free-page list was not written (after a crash, or a copy taken
// while the gateway ran): bbolt walks them at open to rebuild the list, and
// on a page past the last it panics while a goroutine of its walk goes on
// reading a transaction the panic closed, which crashes the process however
// the panic is recovered. The walk here reads the file, under a shared lock
// (a gateway running on it holds the file: bbolt's open then says so), and
// reports the first page that is not where the file's pages end, or not the
// page it is named as. A file with a written list is not walked at open, by
// bbolt or here.
func checkTorn(path string, timeout time.Duration) error {
	info, err := os.Stat(path)
	if err != nil || info.Size() == 0 {
		return nil // a new file, or one bbolt's open refuses by itself
	}
	ro, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		return err
	}
	defer ro.Close()
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	m, ok := newestMeta(f)
	if !ok || m.freelist != noFreelist {
		return nil
	}
	w := pageWalk{f: f, pageSize: m.pageSize, high: m.pgid, seen: make([]byte, m.pgid/8+1)}
	if err := w.walk(m.root, 0); err != nil {
		return damaged(err)
	}
	return nil
}

const noFreelist = ^uint64(0)

type metaPage struct {
	pageSize, root, freelist, pgid, txid uint64
}

// newestMeta reads the valid meta page with the higher transaction id, the
// one bbolt uses (see checkLength).
func newestMeta(f *os.File) (metaPage, bool) {
	read := func(off int64) (metaPage, bool) {
		var b [16 + 64]byte
		if _, err := f.ReadAt(b[:], off); err != nil {
			return metaPage{}, false
		}
		m := b[16:]
		h := fnv.New64a()
		h.Write(m[:56])
		if binary.LittleEndian.Uint32(m[0:]) != 0xED0CDAED || binary.LittleEndian.Uint32(m[4:]) != 2 ||
			h.Sum64() != binary.LittleEndian.Uint64(m[56:]) {
			return metaPage{}, false
		}
		return metaPage{pageSize: uint64(binary.LittleEndian.Uint32(m[8:])), root: binary.LittleEndian.Uint64(m[16:]),
			freelist: binary.LittleEndian.Uint64(m[32:]), pgid: binary.LittleEndian.Uint64(m[40:]), txid: binary.LittleEndian.Uint64(m[48:])}, true
	}
	m0, ok0 := read(0)
	second := int64(os.Getpagesize())
	if ok0 {
		second = int64(m0.pageSize)
	}
	m1, ok1 := read(second)
	switch {
	case ok0 && (!ok1 || m0.txid >= m1.txid):
		return m0, m0.pageSize >= 1024
	case ok1:
		return m1, m1.pageSize >= 1024
	}
	return metaPage{}, false
}

type pageWalk struct {
	f        *os.File
	pageSize uint64
	high     uint64 // the first page past the last
	seen     []byte // a bit for each page reached
	bufs     [][]byte
}

const (
	branchPage = 0x01
	leafPage   = 0x02
	bucketLeaf = 0x01
)

// walk checks page id and the pages below it; depth picks its buffer.
func (w *pageWalk) walk(id uint64, depth int) error {
	if id < 2 || id >= w.high {
		return fmt.Errorf("page %d: past the last page (%d)", id, w.high-1)
	}
	if w.seen[id/8]&(1<<(id%8)) != 0 {
		return fmt.Errorf("page %d: reached twice", id)
	}
	for len(w.bufs) <= depth {
		w.bufs = append(w.bufs, make([]byte, w.pageSize))
	}
	p := w.bufs[depth][:w.pageSize]
	if _, err := w.f.ReadAt(p, int64(id*w.pageSize)); err != nil {
		return fmt.Errorf("page %d: %v", id, err)
	}
	pid, flags := binary.LittleEndian.Uint64(p[0:]), binary.LittleEndian.Uint16(p[8:])
	count, overflow := uint64(binary.LittleEndian.Uint16(p[10:])), uint64(binary.LittleEndian.Uint32(p[12:]))
	if pid != id {
		return fmt.Errorf("page %d: holds page %d", id, pid)
	}
	if id+overflow >= w.high {
		return fmt.Errorf("page %d: its %d overflow pages run past the last page (%d)", id, overflow, w.high-1)
	}
	for i := id; i <= id+overflow; i++ {
		if w.seen[i/8]&(1<<(i%8)) != 0 {
			return fmt.Errorf("page %d: reached twice", i)
		}
		w.seen[i/8] |= 1 << (i % 8)
	}
	if overflow > 0 {
		p = make([]byte, (overflow+1)*w.pageSize)
		if _, err := w.f.ReadAt(p, int64(id*w.pageSize)); err != nil {
			return fmt.Errorf("page %d: %v", id, err)
		}
	}
	if 16+count*16 > uint64(len(p)) {
		return fmt.Errorf("page %d: %d elements do not fit", id, count)
	}
	switch {
	case flags&branchPage != 0:
		children := make([]uint64, count)
		for i := range count {
			children[i] = binary.LittleEndian.Uint64(p[16+16*i+8:])
		}
		for _, c := range children {
			if err := w.walk(c, depth+1); err != nil {
				return err
			}
		}
	case flags&leafPage != 0:
		var buckets []uint64
		for i := range count {
			e := 16 + 16*i
			if binary.LittleEndian.Uint32(p[e:])&bucketLeaf == 0 {
				continue
			}
			v := e + uint64(binary.LittleEndian.Uint32(p[e+4:])) + uint64(binary.LittleEndian.Uint32(p[e+8:]))
			if v+8 > uint64(len(p)) {
				return fmt.Errorf("page %d: element %d runs past the page", id, i)
			}
			// A bucket kept on its own pages; 0 is one kept inline, in the value.
			if root := binary.LittleEndian.Uint64(p[v:]); root != 0 {
				buckets = append(buckets, root)
			}
		}
		for _, b := range buckets {
			if err := w.walk(b, depth+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("page %d: neither a branch nor a leaf (flags %#x)", id, flags)
	}
	return nil
}
