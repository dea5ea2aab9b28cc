// Package smtptest runs an in-process SMTP server for tests of code that
// sends mail. [Start] listens on 127.0.0.1 with plain, STARTTLS or implicit
// TLS, under a self-signed certificate that the returned [Server.RootCAs]
// trusts, optionally requires AUTH PLAIN or LOGIN, and records each
// message it accepts with its subject and body decoded.
//
//	srv := smtptest.Start(t, smtptest.Options{TLS: smtptest.STARTTLS, Users: map[string]string{"bot@example.com": "secret"}})
//	// ... send to srv.Host:srv.Port with srv.RootCAs ...
//	msg := srv.Wait(t)
package smtptest
