package mail

import (
	"errors"
	"net"
	"net/smtp"
	"strings"
)

// LoginAuth returns an smtp.Auth for the LOGIN mechanism, which Microsoft
// 365 and Outlook.com accept where they refuse PLAIN. Like smtp.PlainAuth
// it sends the credentials only over TLS or to localhost, and only to host.
func LoginAuth(username, password, host string) smtp.Auth {
	return &loginAuth{username: username, password: password, host: host}
}

type loginAuth struct {
	username, password, host string
	step                     int
}

// Start implements smtp.Auth.
func (a *loginAuth) Start(server *smtp.ServerInfo) (string, []byte, error) {
	if !server.TLS && !isLocalhost(server.Name) {
		return "", nil, errors.New("mail: refusing to send credentials over an unencrypted connection")
	}
	if server.Name != a.host {
		return "", nil, errors.New("mail: wrong host name")
	}
	a.step = 0
	return "LOGIN", nil, nil
}

// Next implements smtp.Auth. It answers the "Username:" and "Password:"
// challenges, falling back to their order for servers that word them
// differently.
func (a *loginAuth) Next(fromServer []byte, more bool) ([]byte, error) {
	if !more {
		return nil, nil
	}
	a.step++
	prompt := strings.ToLower(string(fromServer))
	switch {
	case strings.Contains(prompt, "user"):
		return []byte(a.username), nil
	case strings.Contains(prompt, "pass"):
		return []byte(a.password), nil
	case a.step == 1:
		return []byte(a.username), nil
	case a.step == 2:
		return []byte(a.password), nil
	}
	return nil, errors.New("mail: unexpected LOGIN challenge")
}

// useLoginAuth reports whether account belongs to Microsoft, whose servers
// need the LOGIN mechanism.
func useLoginAuth(account string) bool {
	a := strings.ToLower(account)
	return strings.HasSuffix(a, "outlook.com") ||
		strings.HasSuffix(a, "hotmail.com") ||
		strings.Contains(a, "onmicrosoft")
}

func isLocalhost(name string) bool {
	if name == "localhost" {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}
