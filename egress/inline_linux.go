package egress

import (
	"errors"
	"net"
	"syscall"
)

const inlineSupported = true

// peek looks at c's socket without blocking and without consuming: n is
// 1 when a byte waits to be read, 0 with a nil error when the peer has
// closed, and the error is EAGAIN when nothing waits on an open
// connection.
func peek(c net.Conn) (n int, err error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, errors.New("egress: not a socket")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var buf [1]byte
	if cerr := raw.Read(func(fd uintptr) bool {
		n, _, err = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	}); cerr != nil {
		return 0, cerr
	}
	return n, err
}

// connOpen reports whether a pooled connection is still usable: nothing
// waits to be read on it (that would be an answer to no request) and the
// server has not closed it.
func connOpen(c net.Conn) bool {
	_, err := peek(c)
	return err == syscall.EAGAIN
}

// answerWaiting reports whether bytes wait to be read on c (a server's
// answer), without blocking.
func answerWaiting(c net.Conn) bool {
	n, err := peek(c)
	return err == nil && n > 0
}
