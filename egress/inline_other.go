//go:build !linux

package egress

import "net"

// Elsewhere every request goes through http.Transport.
const inlineSupported = false

func connOpen(net.Conn) bool { return false }

func answerWaiting(net.Conn) bool { return false }
