// Package mail sends HTML e-mail over SMTP: verification codes, password
// reset links and quota reminders.
//
// [Send] connects with implicit TLS on port 465 (or when [Config.SSL] is
// set) and otherwise upgrades a plain connection with STARTTLS when the
// server offers it. Certificates are always verified against
// [Config.RootCAs], or the system pool when it is nil. Credentials are sent
// with PLAIN, or with LOGIN for Microsoft accounts (outlook.com,
// hotmail.com and *.onmicrosoft.com), and never over an unencrypted
// connection to a remote host.
//
// Every header value is checked for CR and LF, so a subject or recipient
// taken from user input cannot add headers. The subject and a non-ASCII
// sender name are RFC 2047 encoded and the body is sent base64 encoded, so
// any UTF-8 text survives 7-bit servers.
//
// The package smtptest provides an in-process SMTP server for tests.
package mail
