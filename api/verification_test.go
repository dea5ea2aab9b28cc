package api_test

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"gateway/api"
	"gateway/egress"
	"gateway/mail/smtptest"
	"gateway/store"
)

const (
	smtpAccount = "bot@example.com"
	smtpSecret  = "smtp-secret-token"
)

// MustStartMailServer starts a server whose SMTP settings point at a fresh
// smtptest server (STARTTLS with PLAIN auth).
func MustStartMailServer(tb testing.TB, opts ...func(*api.Config)) (*TestServer, *smtptest.Server) {
	tb.Helper()
	smtp := smtptest.Start(tb, smtptest.Options{TLS: smtptest.STARTTLS, Users: map[string]string{smtpAccount: smtpSecret}})
	ts := MustStartServer(tb, append(opts, func(c *api.Config) { c.MailRootCAs = smtp.RootCAs })...)
	ts.MustSetOptions(tb,
		"SMTPServer", smtp.Host,
		"SMTPPort", strconv.Itoa(smtp.Port),
		"SMTPAccount", smtpAccount,
		"SMTPToken", smtpSecret,
		"SystemName", "Test Gateway",
	)
	return ts, smtp
}

var verificationCode = regexp.MustCompile(`<strong>([0-9A-Za-z]{6})</strong>`)

func TestRegister_EmailVerification(t *testing.T) {
	t.Parallel()
	ts, smtp := MustStartMailServer(t)
	ts.MustSetOptions(t, "EmailVerificationEnabled", "true")
	const email = "newbie@example.com"

	ApiScenario{Name: "NoCode", Method: "POST", URL: "/api/user/register",
		Body:       `{"username":"newbie","password":"password1","password2":"password1","email":"` + email + `"}`,
		WantStatus: 400, WantContains: []string{"管理员开启了邮箱验证"}}.Test(t, ts)

	ApiScenario{Name: "Send", URL: "/api/verification?email=" + url.QueryEscape(email),
		WantStatus: 200, WantContains: []string{msg("验证码发送成功，请检查你的邮箱！")}}.Test(t, ts)
	m := smtp.Wait(t)
	if len(m.To) != 1 || m.To[0] != email || m.Auth != "PLAIN" || m.User != smtpAccount || !m.TLS {
		t.Fatalf("mail envelope: to=%v auth=%q user=%q tls=%v", m.To, m.Auth, m.User, m.TLS)
	}
	if !strings.Contains(m.Subject, "Test Gateway") || !strings.Contains(m.Header.Get("From"), smtpAccount) {
		t.Errorf("subject %q from %q", m.Subject, m.Header.Get("From"))
	}
	found := verificationCode.FindStringSubmatch(m.Body)
	if found == nil {
		t.Fatalf("no code in the mail: %s", m.Body)
	}
	code := found[1]
	register := func(code string) string {
		return `{"username":"newbie","password":"password1","password2":"password1","email":"` + email + `","verification_code":"` + code + `"}`
	}

	// The cooldown tells its wait, which the console shows as the server
	// wrote it; a rate limit's refusal has none.
	if r := (ApiScenario{URL: "/api/verification?email=" + email, WantStatus: 429}).Test(t, ts); r.Header.Get("Retry-After") == "" {
		t.Errorf("cooldown without Retry-After: %v", r.Header)
	}
	runScenarios(t, ts, []ApiScenario{
		// A second code within 30 s is refused.
		{Name: "Cooldown", URL: "/api/verification?email=" + email,
			WantStatus: 429, WantContains: []string{"秒后再试"}},
		{Name: "EmailInUse", URL: "/api/verification?email=" + aliceEmail,
			WantStatus: 409, WantContains: []string{msg("邮箱地址已被占用")}},
		// Refusals that do not depend on the code leave it unspent.
		{Name: "ShortPasswordKeepsCode", Method: "POST", URL: "/api/user/register",
			Body:       strings.ReplaceAll(register(code), "password1", "short"),
			WantStatus: 400, WantContains: []string{msg("密码长度不得小于 8 位！")}},
		{Name: "TakenUsernameKeepsCode", Method: "POST", URL: "/api/user/register",
			Body:       strings.Replace(register(code), `"newbie"`, `"Alice"`, 1),
			WantStatus: 409, WantContains: []string{msg("用户名已存在")}},
		{Name: "WrongCode", Method: "POST", URL: "/api/user/register", Body: register("zzzzzz"),
			WantStatus: 400, WantContains: []string{msg("验证码错误或已过期")}},
		{Name: "CodeForAnotherAddress", Method: "POST", URL: "/api/user/register",
			Body:       strings.Replace(register(code), email, "other@example.com", 1),
			WantStatus: 400, WantContains: []string{msg("验证码错误或已过期")}},
		{Name: "OK", Method: "POST", URL: "/api/user/register", Body: register(code),
			WantStatus: 200, WantContains: []string{msg("注册成功！")}},
		// The address is now taken, code or not (single use is checked in
		// the store tests and by TestPasswordReset).
		{Name: "AddressTaken", Method: "POST", URL: "/api/user/register",
			Body:       strings.Replace(register(code), `"newbie"`, `"newbie2"`, 1),
			WantStatus: 409, WantContains: []string{msg("邮箱地址已被占用")}},
	})
	u, err := ts.Store.UserByUsername("newbie")
	if err != nil || u.Email != email {
		t.Fatalf("registered user = %+v, %v", u, err)
	}
	if n := len(smtp.Messages()); n != 1 {
		t.Fatalf("%d mails sent, want 1", n)
	}
}

func TestVerification_EmailPolicy(t *testing.T) {
	t.Parallel()
	ts, smtp := MustStartMailServer(t)
	ts.MustSetOptions(t,
		"EmailDomainWhitelist", "example.com, mail.example.org",
		"EmailDomainRestrictionEnabled", "true",
		"EmailAliasRestrictionEnabled", "true")
	runScenarios(t, ts, []ApiScenario{
		{Name: "Invalid", URL: "/api/verification?email=not-an-email",
			WantStatus: 400, WantContains: []string{msg("无效的邮箱地址")}},
		{Name: "Missing", URL: "/api/verification", WantStatus: 400},
		{Name: "DomainNotListed", URL: "/api/verification?email=someone@gmail.com",
			WantStatus: 400, WantContains: []string{"白名单"}},
		{Name: "SubdomainNotListed", URL: "/api/verification?email=someone@sub.example.com",
			WantStatus: 400, WantContains: []string{"白名单"}},
		{Name: "PlusAlias", URL: "/api/verification?email=" + url.QueryEscape("some+one@example.com"),
			WantStatus: 400, WantContains: []string{"别名限制"}},
		{Name: "DotAlias", URL: "/api/verification?email=some.one@example.com",
			WantStatus: 400, WantContains: []string{"别名限制"}},
		// A comment is dropped on the way to the mailbox: farmer@example.com
		// would verify any number of farmer@example.com(n) accounts.
		{Name: "Comment", URL: "/api/verification?email=" + url.QueryEscape("farmer@example.com(1)"),
			WantStatus: 400, WantContains: []string{msg("无效的邮箱地址")}},
		{Name: "Allowed", URL: "/api/verification?email=someone@MAIL.example.org",
			WantStatus: 200},
	})
	if m := smtp.Wait(t); m.To[0] != "someone@MAIL.example.org" {
		t.Fatalf("mail to %v", m.To)
	}
	// Without the restrictions the same addresses pass.
	ts.MustSetOptions(t, "EmailDomainRestrictionEnabled", "false", "EmailAliasRestrictionEnabled", "false")
	ApiScenario{URL: "/api/verification?email=" + url.QueryEscape("some+one@gmail.com"), WantStatus: 200}.Test(t, ts)
	smtp.Wait(t)
}

var resetLink = regexp.MustCompile(`https://gw\.example\.com/user/reset\?email=([^&"]+)&(?:amp;)?token=([0-9a-f]{32})`)

func TestPasswordReset(t *testing.T) {
	t.Parallel()
	ts, smtp := MustStartMailServer(t)
	ts.MustSetOptions(t, "ServerAddress", "https://gw.example.com/")
	session, aliceID := ts.MustSession(t, "alice")

	runScenarios(t, ts, []ApiScenario{
		{Name: "Unregistered", URL: "/api/reset_password?email=nobody@example.com",
			WantStatus: 404, WantContains: []string{msg("该邮箱地址未注册")}},
		{Name: "Send", URL: "/api/reset_password?email=" + aliceEmail,
			WantStatus: 200, WantContains: []string{`"success":true`}},
	})
	m := smtp.Wait(t)
	if m.To[0] != aliceEmail {
		t.Fatalf("reset mail to %v", m.To)
	}
	found := resetLink.FindStringSubmatch(m.Body)
	if found == nil {
		t.Fatalf("no reset link in the mail: %s", m.Body)
	}
	if e, _ := url.QueryUnescape(found[1]); e != aliceEmail {
		t.Fatalf("link e-mail = %q", found[1])
	}
	token := found[2]
	reset := func(token string) string { return `{"email":"` + aliceEmail + `","token":"` + token + `"}` }

	ApiScenario{Name: "Cooldown", URL: "/api/reset_password?email=" + aliceEmail, WantStatus: 429}.Test(t, ts)
	ApiScenario{Name: "WrongToken", Method: "POST", URL: "/api/user/reset", Body: reset(strings.Repeat("0", 32)),
		WantStatus: 400, WantContains: []string{msg("重置链接非法或已过期")}}.Test(t, ts)
	r := ApiScenario{Name: "Reset", Method: "POST", URL: "/api/user/reset", Body: reset(token), WantStatus: 200}.Test(t, ts)
	var password string
	r.Envelope(t).DataInto(t, &password)
	if len(password) < 8 || len(password) > 20 {
		t.Fatalf("new password %q breaks the password rules", password)
	}
	runScenarios(t, ts, []ApiScenario{
		{Name: "TokenUsedUp", Method: "POST", URL: "/api/user/reset", Body: reset(token),
			WantStatus: 400, WantContains: []string{msg("重置链接非法或已过期")}},
		{Name: "OldSessionEnded", URL: "/api/user/self", Cookie: session, UserID: aliceID, WantStatus: 401},
		{Name: "LoginWithNewPassword", Method: "POST", URL: "/api/user/login",
			Body: `{"username":"alice","password":"` + password + `"}`, WantStatus: 200},
	})
}

func TestBindEmail(t *testing.T) {
	t.Parallel()
	ts, smtp := MustStartMailServer(t)
	const email = "alice.new@example.com"
	ApiScenario{URL: "/api/verification?email=" + email, WantStatus: 200}.Test(t, ts)
	code := verificationCode.FindStringSubmatch(smtp.Wait(t).Body)[1]
	runScenarios(t, ts, []ApiScenario{
		{Name: "NoEmail", URL: "/api/oauth/email/bind?code=" + code, As: "user",
			WantStatus: 400, WantContains: []string{msg("请输入邮箱！")}},
		{Name: "NoCode", URL: "/api/oauth/email/bind?email=" + email, As: "user",
			WantStatus: 400, WantContains: []string{msg("请输入邮箱验证码！")}},
		{Name: "Guest", URL: "/api/oauth/email/bind?email=" + email + "&code=" + code, WantStatus: 401},
	})
	// Another account took the address after the code was sent: the binding
	// is refused, and the code stays for another try once it is free.
	other, taken, freed := ts.UserID(t, "admin"), email, "admin.moved@example.com"
	if _, err := ts.Store.UpdateUser(other, store.UserUpdate{Email: &taken}); err != nil {
		t.Fatal(err)
	}
	ApiScenario{Name: "TakenMeanwhile", URL: "/api/oauth/email/bind?email=" + email + "&code=" + code, As: "user",
		WantStatus: 409, WantContains: []string{msg("邮箱地址已被占用")}}.Test(t, ts)
	if _, err := ts.Store.UpdateUser(other, store.UserUpdate{Email: &freed}); err != nil {
		t.Fatal(err)
	}
	runScenarios(t, ts, []ApiScenario{
		{Name: "OK", URL: "/api/oauth/email/bind?email=" + email + "&code=" + code, As: "user",
			WantStatus: 200, WantContains: []string{msg("邮箱账户绑定成功！")}},
		{Name: "CodeSpent", URL: "/api/oauth/email/bind?email=" + email + "&code=" + code, As: "user",
			WantStatus: 400, WantContains: []string{msg("验证码错误或已过期")}},
	})
	if u := mustUser(t, ts, ts.UserID(t, "alice")); u.Email != email {
		t.Fatalf("email = %q", u.Email)
	}
	if ts.Store.EmailTaken(aliceEmail) {
		t.Fatal("the old address is still taken")
	}
}

// The SMTP server is reached through the guarded dialer: a loopback server
// is refused unless EgressAllowedHosts names it.
func TestMail_GuardedDial(t *testing.T) {
	t.Parallel()
	var allowed atomic.Value
	allowed.Store([]string{})
	guard := egress.New(egress.Config{AllowedHosts: func() []string { return allowed.Load().([]string) }})
	ts, smtp := MustStartMailServer(t, func(c *api.Config) { c.MailDial = guard.DialContext })
	ApiScenario{Name: "Refused", URL: "/api/verification?email=" + url.QueryEscape("one@example.com"),
		WantStatus: 502, WantContains: []string{"邮件发送失败，请检查邮箱地址或联系管理员"}}.Test(t, ts)
	if n := len(smtp.Messages()); n != 0 {
		t.Fatalf("%d mails reached a loopback server the guard refuses", n)
	}
	allowed.Store([]string{smtp.Host})
	ApiScenario{Name: "Allowed", URL: "/api/verification?email=" + url.QueryEscape("two@example.com"),
		WantStatus: 200}.Test(t, ts)
	if m := smtp.Wait(t); len(m.To) != 1 || m.To[0] != "two@example.com" {
		t.Fatalf("mail to %v", m.To)
	}
}

// Without an SMTP server the mail routes say so (503), instead of asking
// the user to check an address nobody could have mailed.
func TestMail_NotConfigured(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ApiScenario{Name: "Verification", URL: "/api/verification?email=" + url.QueryEscape("one@example.com"),
		WantStatus: 503, WantContains: []string{"管理员未配置 SMTP 邮件服务，无法发送邮件"}}.Test(t, ts)
}
