package egress

import (
	"net"
	"syscall"
)

const inlineSupported = true

// connOpen reports whether a pooled connection is still usable: nothing
// waits to be read on it and the server has not closed it. It peeks at the
// socket without blocking.
func connOpen(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// EAGAIN: nothing to read, the connection is idle and open. Data
		// would be an answer to no request, a zero-length read the
		// server's close.
		open = rerr == syscall.EAGAIN
		return true
	})
	return err == nil && open
}

// answerWaiting reports whether bytes wait to be read on c (a server's
// answer), without blocking.
func answerWaiting(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	waiting := false
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		waiting = rerr == nil && n > 0
		return true
	})
	return err == nil && waiting
}
