package smtptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Values for Options.TLS.
const (
	// None serves plain SMTP without STARTTLS.
	None = "none"
	// STARTTLS serves plain SMTP and offers the STARTTLS upgrade.
	STARTTLS = "starttls"
	// Implicit serves SMTP inside TLS from the first byte (as on port 465).
	Implicit = "implicit"
)

// WaitTimeout is how long Server.Wait waits for a message.
const WaitTimeout = 5 * time.Second

// Options configures a Server.
type Options struct {
	// TLS is None (the default when empty), STARTTLS or Implicit.
	TLS string
	// Users maps user names to passwords. When it is not empty the server
	// offers AUTH PLAIN LOGIN (over TLS, or always with None) and refuses
	// MAIL until a client has authenticated.
	Users map[string]string
	// SMTPUTF8 offers the SMTPUTF8 extension (RFC 6531): addresses and
	// headers in UTF-8.
	SMTPUTF8 bool
	// SilentQuit leaves QUIT unanswered: the server holds the connection
	// until the client closes it, as a stalled server does.
	SilentQuit bool
}

// Message is one message the server accepted.
type Message struct {
	// Auth is the mechanism the client authenticated with ("PLAIN" or
	// "LOGIN"), or "" without authentication.
	Auth string
	// User is the authenticated user name.
	User string
	// TLS reports whether the message arrived over TLS.
	TLS bool
	// From is the envelope sender (MAIL FROM).
	From string
	// To lists the envelope recipients (RCPT TO).
	To []string
	// Header holds the parsed message header; nil if it did not parse.
	Header mail.Header
	// Subject is the Subject header with RFC 2047 words decoded.
	Subject string
	// Body is the body with its base64 or quoted-printable transfer
	// encoding removed.
	Body string
	// Raw is the message as received, with CRLF line endings.
	Raw []byte
}

// Server is a running test SMTP server. Start registers its shutdown with
// tb.Cleanup.
type Server struct {
	// Addr is the listening address, "127.0.0.1:port".
	Addr string
	// Host is the address's host, "127.0.0.1".
	Host string
	// Port is the listening port.
	Port int
	// RootCAs trusts the server's self-signed certificate, which is valid
	// for 127.0.0.1, ::1 and localhost.
	RootCAs *x509.CertPool

	opts    Options
	tlsConf *tls.Config
	ln      net.Listener
	msgs    chan Message
	wg      sync.WaitGroup

	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	received []Message
	closed   bool
}

// Start starts a server on 127.0.0.1 with a random port. It fails tb for
// an unknown Options.TLS value.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	switch opts.TLS {
	case "":
		opts.TLS = None
	case None, STARTTLS, Implicit:
	default:
		tb.Fatalf("smtptest: unknown TLS mode %q", opts.TLS)
	}
	cert, pool, err := selfSigned()
	if err != nil {
		tb.Fatalf("smtptest: certificate: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("smtptest: listen: %v", err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	s := &Server{
		Addr:    ln.Addr().String(),
		Host:    addr.IP.String(),
		Port:    addr.Port,
		RootCAs: pool,
		opts:    opts,
		tlsConf: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ln:      ln,
		msgs:    make(chan Message, 64),
		conns:   make(map[net.Conn]struct{}),
	}
	s.wg.Add(1)
	go s.acceptLoop()
	tb.Cleanup(s.close)
	return s
}

// Wait returns the next accepted message, failing tb if none arrives
// within WaitTimeout.
func (s *Server) Wait(tb testing.TB) Message {
	tb.Helper()
	select {
	case m := <-s.msgs:
		return m
	case <-time.After(WaitTimeout):
		tb.Fatalf("smtptest: no message within %v", WaitTimeout)
		return Message{}
	}
}

// Messages returns every message accepted so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.received...)
}

func (s *Server) close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.Close()
			return
		}
		s.conns[conn] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, conn)
				s.mu.Unlock()
				conn.Close()
			}()
			s.serve(conn)
		}()
	}
}

func (s *Server) record(m Message) {
	s.mu.Lock()
	s.received = append(s.received, m)
	s.mu.Unlock()
	select {
	case s.msgs <- m:
	default: // nobody is waiting for this many; Messages still has it
	}
}

// session is the state of one SMTP conversation.
type session struct {
	conn       net.Conn
	tp         *textproto.Conn
	tls        bool
	auth, user string
	from       string
	to         []string
	inMail     bool
}

func (s *Server) serve(conn net.Conn) {
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	ss := &session{conn: conn}
	if s.opts.TLS == Implicit {
		tc := tls.Server(conn, s.tlsConf)
		if err := tc.Handshake(); err != nil {
			return
		}
		ss.conn, ss.tls = tc, true
	}
	ss.tp = textproto.NewConn(ss.conn)
	reply := func(format string, args ...any) bool { return ss.tp.PrintfLine(format, args...) == nil }
	if !reply("220 smtptest ESMTP ready") {
		return
	}
	for {
		line, err := ss.tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		ok := true
		switch strings.ToUpper(verb) {
		case "EHLO":
			lines := []string{"smtptest", "8BITMIME", "SIZE 10485760"}
			if s.opts.TLS == STARTTLS && !ss.tls {
				lines = append(lines, "STARTTLS")
			}
			if s.opts.SMTPUTF8 {
				lines = append(lines, "SMTPUTF8")
			}
			if s.authOffered(ss) {
				lines = append(lines, "AUTH PLAIN LOGIN")
			}
			for i, l := range lines {
				sep := "-"
				if i == len(lines)-1 {
					sep = " "
				}
				if !reply("250%s%s", sep, l) {
					return
				}
			}
		case "HELO":
			ok = reply("250 smtptest")
		case "STARTTLS":
			if s.opts.TLS != STARTTLS || ss.tls {
				ok = reply("502 5.5.1 STARTTLS not available")
				break
			}
			if !reply("220 2.0.0 Ready to start TLS") {
				return
			}
			tc := tls.Server(ss.conn, s.tlsConf)
			if err := tc.Handshake(); err != nil {
				return
			}
			// RFC 3207: forget everything learnt before the upgrade.
			*ss = session{conn: tc, tp: textproto.NewConn(tc), tls: true}
		case "AUTH":
			ok = s.authenticate(ss, arg)
		case "MAIL":
			switch {
			case len(s.opts.Users) > 0 && ss.auth == "":
				ok = reply("530 5.7.0 Authentication required")
			default:
				addr, valid := pathArg(arg, "FROM:")
				if !valid {
					ok = reply("501 5.5.4 Syntax: MAIL FROM:<address>")
					break
				}
				ss.from, ss.to, ss.inMail = addr, nil, true
				ok = reply("250 2.1.0 OK")
			}
		case "RCPT":
			addr, valid := pathArg(arg, "TO:")
			switch {
			case !ss.inMail:
				ok = reply("503 5.5.1 MAIL first")
			case !valid || addr == "":
				ok = reply("501 5.5.4 Syntax: RCPT TO:<address>")
			default:
				ss.to = append(ss.to, addr)
				ok = reply("250 2.1.5 OK")
			}
		case "DATA":
			if len(ss.to) == 0 {
				ok = reply("503 5.5.1 RCPT first")
				break
			}
			if !reply("354 End data with <CR><LF>.<CR><LF>") {
				return
			}
			raw, err := readData(ss.tp)
			if err != nil {
				return
			}
			m := parseMessage(raw)
			m.Auth, m.User, m.TLS, m.From, m.To = ss.auth, ss.user, ss.tls, ss.from, ss.to
			s.record(m)
			ss.from, ss.to, ss.inMail = "", nil, false
			ok = reply("250 2.0.0 OK queued")
		case "RSET":
			ss.from, ss.to, ss.inMail = "", nil, false
			ok = reply("250 2.0.0 OK")
		case "NOOP":
			ok = reply("250 2.0.0 OK")
		case "QUIT":
			if s.opts.SilentQuit {
				for {
					if _, err := ss.tp.ReadLine(); err != nil {
						return
					}
				}
			}
			reply("221 2.0.0 Bye")
			return
		default:
			ok = reply("502 5.5.2 Command not recognized")
		}
		if !ok {
			return
		}
	}
}

// authOffered reports whether AUTH is available in this session: users are
// configured, and the connection is encrypted unless the mode is None.
func (s *Server) authOffered(ss *session) bool {
	return len(s.opts.Users) > 0 && (ss.tls || s.opts.TLS == None)
}

// authenticate runs AUTH PLAIN or AUTH LOGIN. It returns false when the
// connection is broken.
func (s *Server) authenticate(ss *session, arg string) bool {
	reply := func(format string, args ...any) bool { return ss.tp.PrintfLine(format, args...) == nil }
	if !s.authOffered(ss) {
		return reply("503 5.5.1 AUTH not available")
	}
	if ss.auth != "" {
		return reply("503 5.5.1 Already authenticated")
	}
	mech, initial, _ := strings.Cut(arg, " ")
	mech = strings.ToUpper(mech)
	// challenge sends a 334 prompt and returns the decoded answer.
	challenge := func(prompt string) (string, bool, bool) {
		if !reply("334 %s", base64.StdEncoding.EncodeToString([]byte(prompt))) {
			return "", false, false
		}
		line, err := ss.tp.ReadLine()
		if err != nil {
			return "", false, false
		}
		b, err := base64.StdEncoding.DecodeString(line)
		return string(b), err == nil && line != "*", true
	}
	var user, pass string
	switch mech {
	case "PLAIN":
		var resp string
		if initial != "" {
			b, err := base64.StdEncoding.DecodeString(initial)
			if err != nil {
				return reply("501 5.5.2 Invalid base64")
			}
			resp = string(b)
		} else {
			r, valid, alive := challenge("")
			if !alive {
				return false
			}
			if !valid {
				return reply("501 5.5.2 Invalid response")
			}
			resp = r
		}
		parts := strings.Split(resp, "\x00")
		if len(parts) != 3 {
			return reply("501 5.5.2 Invalid PLAIN response")
		}
		user, pass = parts[1], parts[2]
	case "LOGIN":
		if initial != "" {
			b, err := base64.StdEncoding.DecodeString(initial)
			if err != nil {
				return reply("501 5.5.2 Invalid base64")
			}
			user = string(b)
		} else {
			r, valid, alive := challenge("Username:")
			if !alive {
				return false
			}
			if !valid {
				return reply("501 5.5.2 Invalid response")
			}
			user = r
		}
		r, valid, alive := challenge("Password:")
		if !alive {
			return false
		}
		if !valid {
			return reply("501 5.5.2 Invalid response")
		}
		pass = r
	default:
		return reply("504 5.5.4 Unrecognized authentication type")
	}
	if want, found := s.opts.Users[user]; !found || want != pass {
		return reply("535 5.7.8 Authentication credentials invalid")
	}
	ss.auth, ss.user = mech, user
	return reply("235 2.7.0 Authentication successful")
}

// pathArg parses "FROM:<addr> PARAMS" or "TO:<addr>".
func pathArg(arg, prefix string) (string, bool) {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return "", false
	}
	rest := strings.TrimSpace(arg[len(prefix):])
	if !strings.HasPrefix(rest, "<") {
		return "", false
	}
	end := strings.IndexByte(rest, '>')
	if end < 0 {
		return "", false
	}
	return rest[1:end], true
}

// readData reads DATA lines up to the lone ".", undoing dot-stuffing and
// keeping CRLF line endings.
func readData(tp *textproto.Conn) ([]byte, error) {
	var b bytes.Buffer
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return nil, err
		}
		if line == "." {
			return b.Bytes(), nil
		}
		b.WriteString(strings.TrimPrefix(line, "."))
		b.WriteString("\r\n")
	}
}

// parseMessage parses headers and decodes the subject and body. A message
// that does not parse is kept raw.
func parseMessage(raw []byte) Message {
	m := Message{Raw: raw}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return m
	}
	m.Header = msg.Header
	dec := new(mime.WordDecoder)
	if subj, err := dec.DecodeHeader(msg.Header.Get("Subject")); err == nil {
		m.Subject = subj
	} else {
		m.Subject = msg.Header.Get("Subject")
	}
	body, _ := io.ReadAll(msg.Body)
	switch strings.ToLower(msg.Header.Get("Content-Transfer-Encoding")) {
	case "base64":
		clean := strings.Map(func(r rune) rune {
			if r == '\r' || r == '\n' || r == ' ' || r == '\t' {
				return -1
			}
			return r
		}, string(body))
		if b, err := base64.StdEncoding.DecodeString(clean); err == nil {
			body = b
		}
	case "quoted-printable":
		if b, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(body))); err == nil {
			body = b
		}
	}
	m.Body = string(body)
	return m
}

// selfSigned makes an ECDSA P-256 certificate for 127.0.0.1, ::1 and
// localhost, valid for a day, and a pool that trusts it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "smtptest", Organization: []string{"smtptest " + strconv.FormatInt(serial.Int64(), 36)}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}
