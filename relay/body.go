package relay

import (
	"errors"
	"io"
	"net/http"
)

// readRequestBody reads a request body of at most limit bytes: a longer
// one is refused with 413, never cut at the limit and read as another
// request.
func readRequestBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *Error) {
	tooLarge := func() *Error {
		return &Error{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large", Message: "请求体过大", Local: true}
	}
	if r.ContentLength > limit {
		// Declared too long: refused before a byte is read, so a client
		// waiting for 100 Continue is not asked to upload it.
		return nil, tooLarge()
	}
	body, err := readAll(http.MaxBytesReader(w, r.Body, limit), r.ContentLength)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge()
		}
		return nil, badRequest("无法读取请求体")
	}
	return body, nil
}

// maxSizedRead bounds the buffer readAll makes from a declared length
// before any of it has arrived: a larger body grows as it comes.
const maxSizedRead = 64 << 10

// readAll reads r to its end, as io.ReadAll does, into a buffer made for
// the size r declares (a Content-Length; below zero when unknown), so that
// a body of known length takes one allocation instead of a 512-byte buffer
// grown in steps.
func readAll(r io.Reader, size int64) ([]byte, error) {
	n := int64(512)
	if size >= 0 && size < maxSizedRead {
		// One byte more, so the read that finds the end needs no growth.
		n = size + 1
	}
	b := make([]byte, 0, n)
	for {
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}
