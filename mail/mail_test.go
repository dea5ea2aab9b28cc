package mail_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	netmail "net/mail"
	"net/smtp"
	"net/textproto"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/mail"
	"gateway/mail/smtptest"
)

// MustConfig returns a Config that points at srv and trusts its certificate.
func MustConfig(tb testing.TB, srv *smtptest.Server, account, token string) mail.Config {
	tb.Helper()
	return mail.Config{
		Server:     srv.Host,
		Port:       srv.Port,
		Account:    account,
		Token:      token,
		SystemName: "Gateway",
		RootCAs:    srv.RootCAs,
		Timeout:    3 * time.Second,
	}
}

func TestSend_NotConfigured(t *testing.T) {
	t.Parallel()
	err := mail.Send(context.Background(), mail.Config{}, []string{"a@example.com"}, "s", "b")
	if !errors.Is(err, mail.ErrNotConfigured) || err.Error() != "SMTP 服务器未配置" {
		t.Fatalf("err = %v, want ErrNotConfigured", err)
	}
}

func TestSend_STARTTLSPlain(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{
		TLS:   smtptest.STARTTLS,
		Users: map[string]string{"bot@example.com": "secret"},
	})
	cfg := MustConfig(t, srv, "bot@example.com", "secret")
	body := "<p>Your code is <b>123456</b>.</p>\n" + strings.Repeat("<p>padding line</p>", 20)
	if err := mail.Send(context.Background(), cfg, []string{"user@example.org"}, "Verification code", body); err != nil {
		t.Fatal(err)
	}
	m := srv.Wait(t)

	if !m.TLS || m.Auth != "PLAIN" || m.User != "bot@example.com" {
		t.Errorf("TLS %v, Auth %q, User %q; want STARTTLS + PLAIN as bot@example.com", m.TLS, m.Auth, m.User)
	}
	if m.From != "bot@example.com" || !reflect.DeepEqual(m.To, []string{"user@example.org"}) {
		t.Errorf("envelope %q -> %q", m.From, m.To)
	}
	if m.Subject != "Verification code" || m.Body != body {
		t.Errorf("subject %q, body %q", m.Subject, m.Body)
	}
	wantHeaders := map[string]string{
		"From":                      `"Gateway" <bot@example.com>`,
		"To":                        "user@example.org",
		"Subject":                   "=?UTF-8?B?VmVyaWZpY2F0aW9uIGNvZGU=?=",
		"Mime-Version":              "1.0",
		"Content-Type":              "text/html; charset=UTF-8",
		"Content-Transfer-Encoding": "base64",
	}
	for k, want := range wantHeaders {
		if got := m.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if !regexp.MustCompile(`^<[0-9a-f]{32}@example\.com>$`).MatchString(m.Header.Get("Message-Id")) {
		t.Errorf("Message-ID = %q", m.Header.Get("Message-Id"))
	}
	if d, err := m.Header.Date(); err != nil || time.Since(d) > time.Minute {
		t.Errorf("Date = %q (%v)", m.Header.Get("Date"), err)
	}
	for _, line := range strings.Split(string(m.Raw), "\r\n") {
		if len(line) > 76 {
			t.Errorf("line longer than 76: %q", line)
		}
	}

	// A second message gets a new Message-ID.
	if err := mail.Send(context.Background(), cfg, []string{"user@example.org"}, "again", "x"); err != nil {
		t.Fatal(err)
	}
	if m2 := srv.Wait(t); m2.Header.Get("Message-Id") == m.Header.Get("Message-Id") {
		t.Error("Message-ID repeated")
	}
}

func TestSend_ImplicitTLSLogin(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name     string
		account  string
		wantAuth string
	}{
		{"Outlook", "bot@outlook.com", "LOGIN"},
		{"Hotmail", "bot@hotmail.com", "LOGIN"},
		{"Microsoft365", "bot@contoso.onmicrosoft.com", "LOGIN"},
		{"Other", "bot@example.com", "PLAIN"},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			srv := smtptest.Start(t, smtptest.Options{
				TLS:   smtptest.Implicit,
				Users: map[string]string{s.account: "app-token"},
			})
			cfg := MustConfig(t, srv, s.account, "app-token")
			cfg.SSL = true
			cfg.From = "noreply@gateway.example"
			if err := mail.Send(context.Background(), cfg, []string{"user@example.org"}, "hi", "<p>hi</p>"); err != nil {
				t.Fatal(err)
			}
			m := srv.Wait(t)
			if !m.TLS || m.Auth != s.wantAuth || m.User != s.account {
				t.Errorf("TLS %v, Auth %q, User %q", m.TLS, m.Auth, m.User)
			}
			if m.From != "noreply@gateway.example" || m.Header.Get("From") != `"Gateway" <noreply@gateway.example>` {
				t.Errorf("from %q / %q", m.From, m.Header.Get("From"))
			}
			if !strings.HasSuffix(m.Header.Get("Message-Id"), "@gateway.example>") {
				t.Errorf("Message-ID = %q", m.Header.Get("Message-Id"))
			}
		})
	}
}

func TestSend_UntrustedCertificate(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{smtptest.STARTTLS, smtptest.Implicit} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			srv := smtptest.Start(t, smtptest.Options{TLS: mode, Users: map[string]string{"bot@example.com": "secret"}})
			cfg := MustConfig(t, srv, "bot@example.com", "secret")
			cfg.SSL = mode == smtptest.Implicit
			cfg.RootCAs = nil // system pool: does not know the test CA
			err := mail.Send(context.Background(), cfg, []string{"user@example.org"}, "s", "b")
			var verr *tls.CertificateVerificationError
			if !errors.As(err, &verr) {
				t.Fatalf("err = %v, want a certificate verification error", err)
			}
			if n := len(srv.Messages()); n != 0 {
				t.Fatalf("%d messages delivered", n)
			}
		})
	}
}

func TestSend_WrongPassword(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{TLS: smtptest.STARTTLS, Users: map[string]string{"bot@example.com": "secret"}})
	cfg := MustConfig(t, srv, "bot@example.com", "wrong")
	err := mail.Send(context.Background(), cfg, []string{"user@example.org"}, "s", "b")
	var perr *textproto.Error
	if !errors.As(err, &perr) || perr.Code != 535 {
		t.Fatalf("err = %v, want 535", err)
	}
	if !strings.HasPrefix(err.Error(), "mail: auth: ") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("message = %q", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("%d messages delivered", n)
	}
}

func TestSend_MultipleRecipients(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	cfg := MustConfig(t, srv, "", "")
	cfg.From = "noreply@example.com"
	to := []string{"a@example.com; b@example.com;", " c@example.com , D <d@example.com>"}
	if err := mail.Send(context.Background(), cfg, to, "s", "b"); err != nil {
		t.Fatal(err)
	}
	m := srv.Wait(t)
	want := []string{"a@example.com", "b@example.com", "c@example.com", "d@example.com"}
	if !reflect.DeepEqual(m.To, want) {
		t.Fatalf("RCPT = %q, want %q", m.To, want)
	}
	got, err := m.Header.AddressList("To")
	if err != nil || len(got) != len(want) {
		t.Fatalf("To header = %q (%v)", m.Header.Get("To"), err)
	}
	for i, a := range got {
		if a.Address != want[i] {
			t.Errorf("To[%d] = %q, want %q", i, a.Address, want[i])
		}
	}
	if m.TLS || m.Auth != "" {
		t.Errorf("TLS %v, Auth %q; want plain, no auth", m.TLS, m.Auth)
	}
}

func TestSend_NonASCII(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{TLS: smtptest.STARTTLS})
	cfg := MustConfig(t, srv, "", "")
	cfg.From = "noreply@example.com"
	cfg.SystemName = "模型网关 Gateway"
	subject := "【模型网关】您的验证码是 123456，请在 10 分钟内完成验证 — Überprüfung ✓"
	body := "<p>您好，验证码：<b>123456</b></p>"
	if err := mail.Send(context.Background(), cfg, []string{"用户 <user@example.org>"}, subject, body); err != nil {
		t.Fatal(err)
	}
	m := srv.Wait(t)
	if m.Subject != subject {
		t.Errorf("subject = %q, want %q", m.Subject, subject)
	}
	if m.Body != body {
		t.Errorf("body = %q, want %q", m.Body, body)
	}
	from, err := netmail.ParseAddress(m.Header.Get("From"))
	if err != nil || from.Name != cfg.SystemName || from.Address != cfg.From {
		t.Errorf("From = %q -> %v (%v)", m.Header.Get("From"), from, err)
	}
	for _, line := range strings.Split(string(m.Raw), "\r\n") {
		for _, r := range line {
			if r > 127 {
				t.Fatalf("raw message has non-ASCII line %q", line)
			}
		}
	}
}

func TestSend_HeaderInjection(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	scenarios := []struct {
		name   string
		modify func(cfg *mail.Config, to *[]string, subject *string)
	}{
		{"Subject", func(_ *mail.Config, _ *[]string, s *string) { *s = "hi\r\nBcc: victim@example.com" }},
		{"SubjectLF", func(_ *mail.Config, _ *[]string, s *string) { *s = "hi\nBcc: victim@example.com" }},
		{"Recipient", func(_ *mail.Config, to *[]string, _ *string) {
			*to = []string{"a@example.com\r\nBcc: victim@example.com"}
		}},
		{"SystemName", func(c *mail.Config, _ *[]string, _ *string) { c.SystemName = "Gateway\rBcc: victim@example.com" }},
		{"From", func(c *mail.Config, _ *[]string, _ *string) { c.From = "noreply@example.com\nBcc: victim@example.com" }},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			cfg := MustConfig(t, srv, "", "")
			cfg.From = "noreply@example.com"
			to, subject := []string{"a@example.com"}, "hi"
			s.modify(&cfg, &to, &subject)
			if err := mail.Send(context.Background(), cfg, to, subject, "b"); !errors.Is(err, mail.ErrHeaderInjection) {
				t.Fatalf("err = %v, want ErrHeaderInjection", err)
			}
		})
	}
	if n := len(srv.Messages()); n != 0 {
		t.Fatalf("%d messages delivered", n)
	}
}

func TestSend_InvalidInput(t *testing.T) {
	t.Parallel()
	cfg := mail.Config{Server: "127.0.0.1", Port: 1, From: "noreply@example.com"}
	ctx := context.Background()
	if err := mail.Send(ctx, cfg, []string{" ; "}, "s", "b"); !errors.Is(err, mail.ErrNoRecipients) {
		t.Errorf("empty recipients: err = %v", err)
	}
	if err := mail.Send(ctx, cfg, []string{"not an address"}, "s", "b"); err == nil || !strings.Contains(err.Error(), "invalid recipient") {
		t.Errorf("bad recipient: err = %v", err)
	}
	cfg.From = ""
	if err := mail.Send(ctx, cfg, []string{"a@example.com"}, "s", "b"); err == nil || !strings.Contains(err.Error(), "invalid sender") {
		t.Errorf("no sender: err = %v", err)
	}
}

func TestSend_Timeout(t *testing.T) {
	t.Parallel()
	// A server that accepts and never greets.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	cfg := mail.Config{Server: "127.0.0.1", Port: port, From: "noreply@example.com"}

	t.Run("ConfigTimeout", func(t *testing.T) {
		c := cfg
		c.Timeout = 200 * time.Millisecond
		start := time.Now()
		err := mail.Send(context.Background(), c, []string{"a@example.com"}, "s", "b")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("took %v", d)
		}
	})
	t.Run("ContextCancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		err := mail.Send(ctx, cfg, []string{"a@example.com"}, "s", "b")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want Canceled", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("took %v", d)
		}
	})
}

func TestSplitRecipients(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a@x.com", []string{"a@x.com"}},
		{"a@x.com;b@y.com", []string{"a@x.com", "b@y.com"}},
		{" a@x.com ; ; b@y.com; ", []string{"a@x.com", "b@y.com"}},
	}
	for _, s := range scenarios {
		if got := mail.SplitRecipients(s.in); !reflect.DeepEqual(got, s.want) {
			t.Errorf("SplitRecipients(%q) = %q, want %q", s.in, got, s.want)
		}
	}
}

func TestLoginAuth(t *testing.T) {
	t.Parallel()
	t.Run("RefusesPlaintextRemote", func(t *testing.T) {
		a := mail.LoginAuth("u", "p", "smtp.example.com")
		if _, _, err := a.Start(&smtp.ServerInfo{Name: "smtp.example.com", TLS: false}); err == nil {
			t.Fatal("credentials would be sent unencrypted")
		}
	})
	t.Run("RefusesOtherHost", func(t *testing.T) {
		a := mail.LoginAuth("u", "p", "smtp.example.com")
		if _, _, err := a.Start(&smtp.ServerInfo{Name: "evil.example.com", TLS: true}); err == nil {
			t.Fatal("credentials would go to another host")
		}
	})
	t.Run("Exchange", func(t *testing.T) {
		a := mail.LoginAuth("u", "p", "smtp.example.com")
		mech, resp, err := a.Start(&smtp.ServerInfo{Name: "smtp.example.com", TLS: true})
		if err != nil || mech != "LOGIN" || resp != nil {
			t.Fatalf("Start = %q, %q, %v", mech, resp, err)
		}
		for _, step := range []struct{ challenge, want string }{{"Username:", "u"}, {"Password:", "p"}} {
			got, err := a.Next([]byte(step.challenge), true)
			if err != nil || string(got) != step.want {
				t.Fatalf("Next(%q) = %q, %v", step.challenge, got, err)
			}
		}
	})
}

// A long SystemName (the sender's display name) is folded: RFC 5322 §2.1.1
// allows no line over 998 octets, and servers refuse or cut longer ones.
// The name still reads back whole.
func TestSend_LongSystemNameFolded(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	for _, name := range []string{
		strings.Repeat("模型网关", 30),
		strings.Repeat("Gateway", 150),
		"Gateway " + strings.Repeat("模型", 60) + ` "quoted" (x) <y>`,
	} {
		cfg := MustConfig(t, srv, "", "")
		cfg.From = "noreply@example.com"
		cfg.SystemName = name
		if err := mail.Send(context.Background(), cfg, []string{"a@example.com"}, "hi", "<p>hi</p>"); err != nil {
			t.Fatal(err)
		}
		m := srv.Wait(t)
		head, _, _ := strings.Cut(string(m.Raw), "\r\n\r\n")
		for _, line := range strings.Split(head, "\r\n") {
			if len(line) > 998 {
				t.Errorf("header line of %d characters: %.100q…", len(line), line)
			}
		}
		from, err := netmail.ParseAddress(m.Header.Get("From"))
		if err != nil || from.Name != name || from.Address != cfg.From {
			t.Errorf("From = %q -> %v (%v)", m.Header.Get("From"), from, err)
		}
	}
}

// RFC 2047 §2: a header line that holds an encoded word has at most 76
// characters, the field name included ("Subject: " and "From: " count).
func TestSend_EncodedWordLinesWithin76(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	cfg := MustConfig(t, srv, "", "")
	cfg.From = "noreply@example.com"
	cfg.SystemName = "模型网关 Gateway"
	subject := cfg.SystemName + "渠道「上游 OpenAI 主账号（华东）」（#12）已被自动禁用"
	if err := mail.Send(context.Background(), cfg, []string{"a@example.com"}, subject, "<p>hi</p>"); err != nil {
		t.Fatal(err)
	}
	m := srv.Wait(t)
	head, _, _ := strings.Cut(string(m.Raw), "\r\n\r\n")
	for _, line := range strings.Split(head, "\r\n") {
		if strings.Contains(line, "=?") && len(line) > 76 {
			t.Errorf("line of %d characters with encoded words: %q", len(line), line)
		}
	}
	if m.Subject != subject {
		t.Errorf("subject = %q, want %q", m.Subject, subject)
	}
	if from, err := netmail.ParseAddress(m.Header.Get("From")); err != nil || from.Name != cfg.SystemName || from.Address != cfg.From {
		t.Errorf("From = %q -> %v (%v)", m.Header.Get("From"), from, err)
	}
}

// An address with non-ASCII characters (a user may register 用户@example.com)
// goes only to a server that offers SMTPUTF8 (RFC 6531 §3.4): to any other,
// the envelope and the To header would carry 8-bit text that RFC 5321 and
// RFC 5322 forbid, and the mail is refused instead of sent garbled.
func TestSend_NonASCIIAddressNeedsSMTPUTF8(t *testing.T) {
	t.Parallel()
	const to = "用户@example.com"
	plain := smtptest.Start(t, smtptest.Options{})
	cfg := MustConfig(t, plain, "", "")
	cfg.From = "noreply@example.com"
	if err := mail.Send(context.Background(), cfg, []string{to}, "hi", "<p>hi</p>"); err == nil {
		t.Error("a non-ASCII address was sent to a server without SMTPUTF8")
	}
	for _, m := range plain.Messages() {
		t.Errorf("message accepted: envelope to %q:\n%s", m.To, m.Raw)
	}

	utf8srv := smtptest.Start(t, smtptest.Options{SMTPUTF8: true})
	cfg = MustConfig(t, utf8srv, "", "")
	cfg.From = "noreply@example.com"
	if err := mail.Send(context.Background(), cfg, []string{to}, "hi", "<p>hi</p>"); err != nil {
		t.Fatal(err)
	}
	if m := utf8srv.Wait(t); len(m.To) != 1 || m.To[0] != to {
		t.Errorf("envelope to %q", m.To)
	}
}

// A server that takes the message and then never answers QUIT does not hold
// the sender until the whole mail deadline: the message is sent.
func TestSend_SilentQuit(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{SilentQuit: true})
	cfg := mail.Config{Server: srv.Host, Port: srv.Port, From: "noreply@example.com", Timeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- mail.Send(context.Background(), cfg, []string{"a@example.com"}, "s", "b") }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("send: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the sender still waits for the answer to QUIT after 20 s of a 1 min deadline")
	}
	if m := srv.Wait(t); m.Subject != "s" {
		t.Fatalf("subject %q", m.Subject)
	}
}
