package api

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"time"

	"gateway/mail"
	"gateway/store"
)

// sendMail sends an HTML mail with the SMTP settings in force.
func (s *Server) sendMail(ctx context.Context, to, subject, body string) error {
	return NewMailFunc(s.store, s.cfg.MailRootCAs, s.cfg.MailDial)(ctx, to, subject, body)
}

// NewMailFunc returns a MailFunc that sends with the SMTP settings in force
// when it is called. rootCAs, when set, replaces the system roots (tests);
// dial, when set, opens the connection (the guarded egress dialer).
func NewMailFunc(st *store.Store, rootCAs *x509.CertPool, dial func(ctx context.Context, network, addr string) (net.Conn, error)) MailFunc {
	return func(ctx context.Context, to, subject, body string) error {
		set := st.Settings()
		cfg := mail.Config{
			Server: set.Get("SMTPServer"), Port: int(set.Int("SMTPPort")), Account: set.Get("SMTPAccount"),
			Token: set.Get("SMTPToken"), From: set.Get("SMTPFrom"), SSL: set.Bool("SMTPSSLEnabled"),
			SystemName: set.Get("SystemName"), RootCAs: rootCAs, Timeout: 20 * time.Second, Dial: dial,
		}
		if err := mail.Send(ctx, cfg, []string{to}, subject, body); err != nil {
			if errors.Is(err, mail.ErrNotConfigured) {
				// Nothing the user can fix: say so, rather than blame the address.
				return &store.Error{Code: store.EUNAVAILABLE, Message: "管理员未配置 SMTP 邮件服务，无法发送邮件", Err: err}
			}
			return &store.Error{Code: store.EUPSTREAM, Message: "邮件发送失败，请检查邮箱地址或联系管理员", Err: err}
		}
		return nil
	}
}
