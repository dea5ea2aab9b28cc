package mail

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"net/smtp"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultTimeout bounds a whole Send when Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Config holds the SMTP settings an administrator entered.
type Config struct {
	// Server is the SMTP host name, also used to verify its certificate.
	Server string
	// Port is the SMTP port; 0 means 465 when SSL is set, else 587.
	Port int
	// Account is the login name; empty means no authentication.
	Account string
	// Token is the password or app token for Account.
	Token string
	// From is the sender address; empty means Account.
	From string
	// SSL selects implicit TLS (always on for port 465).
	SSL bool
	// SystemName is the sender's display name.
	SystemName string
	// RootCAs verifies the server certificate; nil means the system pool.
	RootCAs *x509.CertPool
	// Timeout bounds the whole exchange; 0 means DefaultTimeout.
	Timeout time.Duration
	// Dial opens the connection to the server; nil means a plain dialer.
	// The gateway passes its guarded dialer, which refuses private and
	// loopback addresses unless they are allowed.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// ErrNotConfigured is returned by Send when no SMTP server is configured.
var ErrNotConfigured = errors.New("SMTP 服务器未配置")

// ErrHeaderInjection is returned by Send when a subject, address or name
// contains CR or LF, which would let it add headers or SMTP commands.
var ErrHeaderInjection = errors.New("mail: header value contains a line break")

// ErrNoRecipients is returned by Send when the recipient list is empty.
var ErrNoRecipients = errors.New("mail: no recipients")

// SplitRecipients splits a ';'-separated recipient string, trimming spaces
// and dropping empty parts.
func SplitRecipients(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ";") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Send sends an HTML message to the recipients in to; each element may hold
// several addresses separated by ';' (or ','). It returns ErrNotConfigured
// without a server, ErrHeaderInjection for a line break in a header value,
// ErrNoRecipients for an empty list, and otherwise the first SMTP, TLS or
// network error, wrapped with the step that failed. ctx and cfg.Timeout
// both bound the whole exchange.
func Send(ctx context.Context, cfg Config, to []string, subject, htmlBody string) error {
	if cfg.Server == "" {
		return ErrNotConfigured
	}
	from := cfg.From
	if from == "" {
		from = cfg.Account
	}
	for _, v := range append([]string{subject, from, cfg.SystemName, cfg.Server, cfg.Account}, to...) {
		if strings.ContainsAny(v, "\r\n") {
			return ErrHeaderInjection
		}
	}
	fromAddr, err := netmail.ParseAddress(from)
	if err != nil {
		return fmt.Errorf("mail: invalid sender address %q: %w", from, err)
	}
	rcpts, err := parseRecipients(to)
	if err != nil {
		return err
	}
	msg, err := buildMessage(cfg.SystemName, fromAddr.Address, rcpts, subject, htmlBody, time.Now())
	if err != nil {
		return err
	}
	return deliver(ctx, cfg, fromAddr.Address, rcpts, msg)
}

// parseRecipients flattens and validates the recipient list into bare
// addresses.
func parseRecipients(to []string) ([]string, error) {
	var out []string
	for _, s := range to {
		for _, part := range SplitRecipients(s) {
			list, err := netmail.ParseAddressList(part)
			if err != nil {
				return nil, fmt.Errorf("mail: invalid recipient %q: %w", part, err)
			}
			for _, a := range list {
				out = append(out, a.Address)
			}
		}
	}
	if len(out) == 0 {
		return nil, ErrNoRecipients
	}
	return out, nil
}

// buildMessage renders the headers and the base64 body.
func buildMessage(name, from string, rcpts []string, subject, htmlBody string, now time.Time) ([]byte, error) {
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	domain := "localhost"
	if i := strings.LastIndexByte(from, '@'); i >= 0 && i < len(from)-1 {
		domain = from[i+1:]
	}
	var b bytes.Buffer
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", fromHeader(name, from))
	header("To", strings.Join(rcpts, ",\r\n "))
	header("Subject", encodeSubject(subject))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", "<"+hex.EncodeToString(id)+"@"+domain+">")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/html; charset=UTF-8")
	header("Content-Transfer-Encoding", "base64")
	b.WriteString("\r\n")
	enc := base64.StdEncoding.EncodeToString([]byte(htmlBody))
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	if enc != "" {
		b.WriteString(enc + "\r\n")
	}
	return b.Bytes(), nil
}

// fromHeader renders the From value: the display name as net/mail writes
// it when the line stays short, else as folded encoded words (a long
// SystemName would otherwise make one line over the 998 octets RFC 5322
// allows, or over the 76 characters RFC 2047 allows a line holding encoded
// words).
func fromHeader(name, addr string) string {
	v := (&netmail.Address{Name: name, Address: addr}).String()
	line := len("From: " + v)
	if name == "" || line <= 76 || line <= 998 && !strings.Contains(v, "=?") {
		return v
	}
	return encodeSubject(name) + "\r\n " + (&netmail.Address{Address: addr}).String()
}

// encodeSubject returns s as RFC 2047 UTF-8 base64 encoded words, folded so
// that each line stays within the 76-character limit. Words split only at
// rune boundaries, because a decoder must decode each word on its own.
func encodeSubject(s string) string {
	// 39 bytes -> 52 base64 chars + 12 for "=?UTF-8?B??=": the first line,
	// "Subject: " or "From: " included, stays within RFC 2047's 76.
	const maxRaw = 39
	if s == "" {
		return ""
	}
	var words []string
	for len(s) > 0 {
		n := 0
		for n < len(s) {
			_, size := utf8.DecodeRuneInString(s[n:])
			if n+size > maxRaw {
				break
			}
			n += size
		}
		words = append(words, "=?UTF-8?B?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	return strings.Join(words, "\r\n ")
}

// deliver runs the SMTP exchange under one deadline.
func deliver(ctx context.Context, cfg Config, from string, rcpts []string, msg []byte) (err error) {
	port := cfg.Port
	if port == 0 {
		port = 587
		if cfg.SSL {
			port = 465
		}
	}
	implicitTLS := cfg.SSL || port == 465
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()

	step := "connect"
	defer func() {
		if err == nil {
			return
		}
		ctxErr := ctx.Err()
		if ctxErr == nil && errors.Is(err, os.ErrDeadlineExceeded) {
			// The conn deadline is the ctx deadline; it can fire first.
			ctxErr = context.DeadlineExceeded
		}
		if ctxErr != nil {
			err = fmt.Errorf("mail: %s: %w: %w", step, ctxErr, err)
			return
		}
		err = fmt.Errorf("mail: %s: %w", step, err)
	}()

	dial := cfg.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	raw, err := dial(ctx, "tcp", net.JoinHostPort(cfg.Server, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer raw.Close()
	raw.SetDeadline(deadline)
	// Cancelling ctx moves the deadline into the past, which aborts any
	// read or write in progress.
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	tlsConfig := &tls.Config{ServerName: cfg.Server, RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
	conn := raw
	if implicitTLS {
		step = "tls"
		tc := tls.Client(raw, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			return err
		}
		conn = tc
	}
	step = "greeting"
	c, err := smtp.NewClient(conn, cfg.Server)
	if err != nil {
		return err
	}
	defer c.Close()
	if !implicitTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			step = "starttls"
			if err := c.StartTLS(tlsConfig); err != nil {
				return err
			}
		}
	}
	if cfg.Account != "" {
		step = "auth"
		auth := smtp.PlainAuth("", cfg.Account, cfg.Token, cfg.Server)
		if useLoginAuth(cfg.Account) {
			auth = LoginAuth(cfg.Account, cfg.Token, cfg.Server)
		}
		if err := c.Auth(auth); err != nil {
			return err
		}
	}
	step = "mail from"
	if !isASCII(from) || !isASCII(strings.Join(rcpts, "")) {
		// RFC 6531 §3.4: UTF-8 addresses only to a server that takes them
		// (Mail then adds the SMTPUTF8 parameter).
		if ok, _ := c.Extension("SMTPUTF8"); !ok {
			return errors.New("non-ASCII address and the server does not offer SMTPUTF8")
		}
	}
	if err := c.Mail(from); err != nil {
		return err
	}
	step = "rcpt to"
	for _, r := range rcpts {
		if err := c.Rcpt(r); err != nil {
			return fmt.Errorf("%s: %w", r, err)
		}
	}
	step = "data"
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	// The message is accepted; a failed QUIT changes nothing, and a server
	// slow to answer it holds the caller for quitGrace at most.
	if quit := time.Now().Add(quitGrace); quit.Before(deadline) && ctx.Err() == nil {
		raw.SetDeadline(quit)
	}
	_ = c.Quit()
	return nil
}

// quitGrace bounds the wait for the answer to QUIT once a message is
// accepted.
const quitGrace = 2 * time.Second

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
