package egress

import (
	"errors"
	"fmt"
	"io"
)

// ErrResponseTooLarge is wrapped by the error returned when a response body
// is longer than the allowed limit.
var ErrResponseTooLarge = errors.New("egress: response body too large")

func tooLarge(limit int64) error {
	return fmt.Errorf("%w (limit %d bytes)", ErrResponseTooLarge, limit)
}

// LimitedBody wraps rc so that reading more than limit bytes fails with an
// error wrapping ErrResponseTooLarge. The first limit bytes are returned
// normally. A limit <= 0 returns rc unchanged.
func LimitedBody(rc io.ReadCloser, limit int64) io.ReadCloser {
	if limit <= 0 || rc == nil {
		return rc
	}
	return &limitedBody{rc: rc, left: limit, limit: limit}
}

type limitedBody struct {
	rc    io.ReadCloser
	left  int64 // bytes still allowed; -1 once the limit was crossed
	limit int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, tooLarge(l.limit)
	}
	// Ask for one byte more than allowed, to tell "exactly limit" from
	// "more than limit" without an extra read.
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.rc.Read(p)
	if int64(n) > l.left {
		n = int(l.left)
		l.left = -1
		return n, tooLarge(l.limit)
	}
	l.left -= int64(n)
	return n, err
}

func (l *limitedBody) Close() error { return l.rc.Close() }
