package api

import (
	"context"
	"time"

	"gateway/mail"
	"gateway/store"
)

// sendMail sends an HTML mail with the SMTP settings in force.
func (s *Server) sendMail(ctx context.Context, to, subject, body string) error {
	set := s.store.Settings()
	cfg := mail.Config{
		Server: set.Get("SMTPServer"), Port: int(set.Int("SMTPPort")), Account: set.Get("SMTPAccount"),
		Token: set.Get("SMTPToken"), From: set.Get("SMTPFrom"), SSL: set.Bool("SMTPSSLEnabled"),
		SystemName: set.Get("SystemName"), RootCAs: s.cfg.MailRootCAs, Timeout: 20 * time.Second,
	}
	if err := mail.Send(ctx, cfg, []string{to}, subject, body); err != nil {
		return &store.Error{Code: store.EUPSTREAM, Message: "邮件发送失败，请检查邮箱地址或联系管理员", Err: err}
	}
	return nil
}
