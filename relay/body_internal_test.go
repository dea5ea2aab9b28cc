package relay

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

// A request body of declared length is read into one buffer of its size,
// besides the reader that bounds it: no 413 error is made for a body that
// fits, and no buffer is grown from 512 bytes as it arrives.
func TestReadRequestBody_DeclaredLengthReadInOneBuffer(t *testing.T) {
	body := strings.Repeat("x", 3000)
	src := strings.NewReader(body)
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	r.Body = io.NopCloser(src)
	r.ContentLength = int64(len(body))
	w := httptest.NewRecorder()
	allocs := testing.AllocsPerRun(100, func() {
		src.Reset(body)
		got, e := readRequestBody(w, r, 1<<20)
		if e != nil || string(got) != body {
			t.Fatalf("read %d bytes, error %v", len(got), e)
		}
	})
	if allocs > 2 {
		t.Errorf("%v allocations a body, want at most 2 (the bounding reader and the body)", allocs)
	}
}

// readAll returns what io.ReadAll returns, whatever the declared size says
// and however the reader cuts its data, and with an exact size takes one
// allocation.
func TestReadAll(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 1000)
	for _, n := range []int{0, 1, 511, 512, 513, 4096, len(data)} {
		want := data[:n]
		for _, size := range []int64{-1, 0, int64(n) - 1, int64(n), int64(n) + 1, 1 << 30} {
			for name, r := range map[string]func() io.Reader{
				"whole":    func() io.Reader { return bytes.NewReader(want) },
				"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(want)) },
				"data+EOF": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(want)) },
			} {
				got, err := readAll(r(), size)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%d bytes, size %d, %s: got %d bytes, %v", n, size, name, len(got), err)
				}
			}
		}
	}
	src := bytes.NewReader(data)
	allocs := testing.AllocsPerRun(100, func() {
		src.Reset(data)
		readAll(src, int64(len(data)))
	})
	if allocs != 1 {
		t.Errorf("%v allocations for a body of declared length, want 1", allocs)
	}
	if _, err := readAll(iotest.ErrReader(io.ErrUnexpectedEOF), -1); err != io.ErrUnexpectedEOF {
		t.Errorf("error %v, want %v", err, io.ErrUnexpectedEOF)
	}
}
