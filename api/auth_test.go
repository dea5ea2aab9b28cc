package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"gateway/api"
	"gateway/store"
	"gateway/ws"
)

func TestEnvelope(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)

	ok := ApiScenario{URL: "/api/status", WantStatus: 200}.Test(t, ts)
	refused := ApiScenario{URL: "/api/user/self", WantStatus: 401}.Test(t, ts)
	for _, r := range []*Response{ok, refused} {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(r.Body, &raw); err != nil {
			t.Fatalf("not JSON: %s", r.Body)
		}
		if len(raw) != 3 || raw["success"] == nil || raw["message"] == nil || raw["data"] == nil {
			t.Fatalf("envelope keys = %v, want exactly success, message, data", keys(raw))
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type = %q", ct)
		}
		if id := r.Header.Get(api.RequestIDHeader); len(id) != len("20060102150405")+8 {
			t.Errorf("request id = %q", id)
		}
	}
	if ok.Header.Get(api.RequestIDHeader) == refused.Header.Get(api.RequestIDHeader) {
		t.Error("two requests share a request id")
	}
	if e := ok.Envelope(t); !e.Success || e.Message != "" {
		t.Errorf("success envelope = %+v", e)
	}
	if e := refused.Envelope(t); e.Success || e.Message != msgNoCredentials || string(e.Data) != "null" {
		t.Errorf("failure envelope = %+v", e)
	}
}

// A request id is the time to the second and 8 random characters of
// [0-9A-Za-z], made in one allocation: every call through the gateway
// gets one.
func TestNewRequestID(t *testing.T) {
	before := time.Now().Truncate(time.Second)
	id := api.NewRequestID()
	at, err := time.ParseInLocation("20060102150405", id[:min(len(id), 14)], time.Local)
	if len(id) != 22 || err != nil || at.Before(before) || at.After(time.Now()) {
		t.Errorf("request id %q: want the time now and 8 characters (%v)", id, err)
	}
	for _, c := range id[14:] {
		if !strings.ContainsRune("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", c) {
			t.Errorf("request id %q: %q is not a letter or digit", id, c)
		}
	}
	if raceOn {
		return
	}
	if allocs := testing.AllocsPerRun(100, func() { api.NewRequestID() }); allocs > 1 {
		t.Errorf("%v allocations a request id, want 1", allocs)
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	runScenarios(t, ts, []ApiScenario{
		{Name: "MalformedJSON", Method: "POST", URL: "/api/user/login", Body: `{"username": "root",`,
			WantStatus: 400, WantContains: []string{`"success":false`, msg("无效的参数：请求体不是合法的 JSON")}},
		{Name: "WrongJSONType", Method: "POST", URL: "/api/user/login", Body: `{"username": 5}`,
			WantStatus: 400, WantContains: []string{msg("无效的参数：字段 username 应为字符串")}},
		{Name: "BodyNotAnObject", Method: "POST", URL: "/api/user/login", Body: `[1]`,
			WantStatus: 400, WantContains: []string{msg("无效的参数：请求体应为对象")}},
		{Name: "EmptyBody", Method: "POST", URL: "/api/user/login",
			WantStatus: 400, WantContains: []string{msg("请求体为空")}},
		{Name: "Oversize", Method: "POST", URL: "/api/user/login",
			Body:       `{"username":"` + strings.Repeat("a", 1<<20) + `","password":"x"}`,
			WantStatus: 400, WantContains: []string{msg("请求体过大")}},
		{Name: "UnknownAPIPath", URL: "/api/nope",
			WantStatus: 404, WantContains: []string{`"message":"Invalid URL (GET /api/nope)"`, `"type":"invalid_request_error"`}},
		{Name: "UnknownV1Path", Method: "POST", URL: "/v1/nope",
			WantStatus: 404, WantContains: []string{"Invalid URL (POST /v1/nope)"}},
		// Not redirected elsewhere: the path a client built is its bug to see.
		{Name: "BareV1", Method: "POST", URL: "/v1",
			WantStatus: 404, WantContains: []string{"Invalid URL (POST /v1)"}},
		{Name: "EmptySegmentV1", Method: "POST", URL: "/v1//chat/completions",
			WantStatus: 404, WantContains: []string{"Invalid URL (POST /v1//chat/completions)"}},
		{Name: "EmptySegmentAPI", URL: "/api//status",
			WantStatus: 404, WantContains: []string{"Invalid URL (GET /api//status)"}},
		{Name: "DotSegmentAPI", URL: "/api/user/../status",
			WantStatus: 404, WantContains: []string{"Invalid URL (GET /api/user/../status)"}},
		// A prefix, not a path segment: a Gemini client's /v1beta gets
		// no console page it would read as success.
		{Name: "V1Prefix", URL: "/v1beta/models",
			WantStatus: 404, WantContains: []string{"Invalid URL (GET /v1beta/models)"}},
		{Name: "V1PrefixPost", Method: "POST", URL: "/v1beta/models/gemini-pro:generateContent", Body: `{}`,
			WantStatus: 404, WantContains: []string{"Invalid URL (POST /v1beta/models/gemini-pro:generateContent)"}},
		{Name: "APIPrefix", URL: "/apifoo",
			WantStatus: 404, WantContains: []string{"Invalid URL (GET /apifoo)"}},
		{Name: "AssetsPrefix", URL: "/assetsx/a.js",
			WantStatus: 404, WantContains: []string{"Invalid URL (GET /assetsx/a.js)"}},
		{Name: "WrongMethod", Method: "DELETE", URL: "/api/status",
			WantStatus: 404, WantContains: []string{"Invalid URL (DELETE /api/status)"}},
		// HEAD is no GET: a HEAD of a GET that acts must not act.
		{Name: "HeadOfAGet", Method: "HEAD", URL: "/api/status", WantStatus: 404},
		// The OpenAI billing reads outside /v1 are relay routes too: a wrong
		// method or path there gets OpenAI's error object, as under /v1,
		// not a plain-text 405 or the console's page.
		{Name: "WrongMethodBilling", Method: "POST", URL: "/dashboard/billing/subscription", Body: `{}`,
			WantStatus: 404, WantContains: []string{`"message":"Invalid URL (POST /dashboard/billing/subscription)"`, `"type":"invalid_request_error"`}},
		{Name: "UnknownBillingPath", URL: "/dashboard/billing/credit_grants",
			WantStatus: 404, WantContains: []string{"Invalid URL (GET /dashboard/billing/credit_grants)"}},
	})
}

func TestRegister(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	inviter := ts.UserID(t, "inviter")
	inviterCode := mustUser(t, ts, inviter).AffCode
	setOpt := func(kv ...string) func(testing.TB, *TestServer) {
		return func(tb testing.TB, ts *TestServer) { ts.MustSetOptions(tb, kv...) }
	}
	runScenarios(t, ts, []ApiScenario{
		{Name: "RegisterDisabled", Method: "POST", URL: "/api/user/register",
			Before:     setOpt("RegisterEnabled", "false"),
			Body:       `{"username":"newbie","password":"password1","password2":"password1"}`,
			WantStatus: 403, WantContains: []string{msg("管理员关闭了新用户注册")}},
		{Name: "PasswordRegisterDisabled", Method: "POST", URL: "/api/user/register",
			Before:     setOpt("RegisterEnabled", "true", "PasswordRegisterEnabled", "false"),
			Body:       `{"username":"newbie","password":"password1","password2":"password1"}`,
			WantStatus: 403, WantContains: []string{"管理员关闭了通过密码进行注册"}},
		{Name: "MissingFields", Method: "POST", URL: "/api/user/register",
			Before:     setOpt("PasswordRegisterEnabled", "true"),
			Body:       `{"username":"","password":""}`,
			WantStatus: 400, WantContains: []string{msg("请输入用户名和密码！")}},
		{Name: "ShortPassword", Method: "POST", URL: "/api/user/register",
			Body:       `{"username":"newbie","password":"1234567","password2":"1234567"}`,
			WantStatus: 400, WantContains: []string{msg("密码长度不得小于 8 位！")}},
		{Name: "LongPassword", Method: "POST", URL: "/api/user/register",
			Body:       `{"username":"newbie","password":"123456789012345678901","password2":"123456789012345678901"}`,
			WantStatus: 400, WantContains: []string{msg("密码长度不得超过 20 位！")}},
		{Name: "PasswordBeyondBcrypt", Method: "POST", URL: "/api/user/register",
			Body:       `{"username":"newbie","password":"` + strings.Repeat("😀", 20) + `","password2":"` + strings.Repeat("😀", 20) + `"}`,
			WantStatus: 400, WantContains: []string{msg("密码过长：最多 72 字节（一个汉字或表情占 3 到 4 字节）")}},
		{Name: "PasswordMismatch", Method: "POST", URL: "/api/user/register",
			Body:       `{"username":"newbie","password":"password1","password2":"password2"}`,
			WantStatus: 400, WantContains: []string{msg("两次输入的密码不一致")}},
		{Name: "DuplicateUsername", Method: "POST", URL: "/api/user/register",
			Body:       `{"username":"ALICE","password":"password1","password2":"password1"}`,
			WantStatus: 409, WantContains: []string{msg("用户名已存在")}},
		{Name: "OKWithInviteCode", Method: "POST", URL: "/api/user/register",
			Before: setOpt("QuotaForNewUser", "100", "QuotaForInvitee", "200", "QuotaForInviter", "300"),
			// The e-mail is ignored while verification is off.
			Body:       `{"username":"newbie","password":"password1","password2":"password1","email":"newbie@example.com","aff_code":"` + inviterCode + `"}`,
			WantStatus: 200, WantContains: []string{`"success":true`, msg("注册成功！")}},
	})

	u, err := ts.Store.UserByUsername("newbie")
	if err != nil {
		t.Fatalf("registered user: %v", err)
	}
	if u.Role != store.RoleCommon || u.DisplayName != "newbie" || u.Quota != 300 || u.InviterID != inviter || u.Email != "" {
		t.Fatalf("registered user = %+v", u)
	}
	if inv := mustUser(t, ts, inviter); inv.AffCount != 2 || inv.AffQuota != fixtureInviterReward+300 {
		t.Fatalf("inviter aff_count=%d aff_quota=%d after a second invitee", inv.AffCount, inv.AffQuota)
	}
	// Without --default-token an account starts with no API token.
	if toks, err := ts.Store.Tokens(u.ID, store.TokenFilter{}); err != nil || len(toks) != 0 {
		t.Fatalf("tokens of a new account: %+v, %v", toks, err)
	}
}

// With --default-token (GENERATE_DEFAULT_TOKEN) registration also creates an
// unlimited, never-expiring token with remain 500 000 (S §3.2) that works.
func TestRegister_DefaultToken(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t, func(c *api.Config) { c.DefaultToken = true })
	ApiScenario{Method: "POST", URL: "/api/user/register", Body: `{"username":"tokened","password":"password1"}`,
		WantStatus: 200, WantContains: []string{msg("注册成功！")}}.Test(t, ts)
	u, err := ts.Store.UserByUsername("tokened")
	if err != nil {
		t.Fatal(err)
	}
	toks, err := ts.Store.Tokens(u.ID, store.TokenFilter{})
	if err != nil || len(toks) != 1 {
		t.Fatalf("tokens %+v, %v", toks, err)
	}
	tok := toks[0]
	if !tok.UnlimitedQuota || tok.ExpiredTime != -1 || tok.RemainQuota != 500000 || tok.Status != store.TokenStatusEnabled || tok.Name == "" {
		t.Fatalf("default token %+v", tok)
	}
	if got, err := ts.Store.TokenByKey("sk-" + tok.Key); err != nil || got.ID != tok.ID || got.UserID != u.ID {
		t.Fatalf("the key does not find its token: %+v, %v", got, err)
	}
}

func mustUser(tb testing.TB, ts *TestServer, id uint64) *store.User {
	tb.Helper()
	u, err := ts.Store.User(id)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

const msgBadLogin = "用户名或密码错误，或用户已被封禁"

func TestLogin(t *testing.T) {
	t.Parallel()

	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		ts := MustStartServer(t)
		var answers []string
		for _, sc := range []ApiScenario{
			{Name: "UnknownUser", Body: `{"username":"nobody","password":"whatever-1"}`},
			{Name: "WrongPassword", Body: `{"username":"alice","password":"wrong-pass-1"}`},
			{Name: "Banned", Body: `{"username":"banned","password":"` + bannedPassword + `"}`},
		} {
			sc.Method, sc.URL = "POST", "/api/user/login"
			sc.WantStatus = 401
			sc.WantContains = []string{msg(msgBadLogin), `"success":false`}
			r := sc.Test(t, ts)
			if r.Cookie("session") != nil {
				t.Errorf("%s: refused login set a session cookie", sc.Name)
			}
			answers = append(answers, string(r.Body))
		}
		// Unknown user, wrong password and ban are indistinguishable.
		if answers[0] != answers[1] || answers[1] != answers[2] {
			t.Fatalf("refusals differ: %q", answers)
		}
		runScenarios(t, ts, []ApiScenario{
			{Name: "MissingPassword", Method: "POST", URL: "/api/user/login", Body: `{"username":"alice"}`,
				WantStatus: 400, WantContains: []string{msg("请输入用户名和密码！")}},
			{Name: "PasswordLoginDisabled", Method: "POST", URL: "/api/user/login",
				Before:     func(tb testing.TB, ts *TestServer) { ts.MustSetOptions(tb, "PasswordLoginEnabled", "false") },
				Body:       `{"username":"alice","password":"` + alicePassword + `"}`,
				WantStatus: 403, WantContains: []string{msg("管理员关闭了密码登录")}},
		})
	})

	t.Run("RootWithDefaultPassword", func(t *testing.T) {
		t.Parallel()
		ts := MustStartServer(t)
		// The browser still has alice's session, with a console socket open.
		// The login replaces that session (never reuses it) and closes the
		// socket: it belonged to a login that is over.
		stale, aliceID := ts.MustSession(t, "alice")
		rootID := ts.UserID(t, "root")
		sock, _, err := dialLive(t, ts, stale, nil)
		if err != nil {
			t.Fatal(err)
		}
		readTopic(t, sock, "user.self")
		r := ApiScenario{Method: "POST", URL: "/api/user/login", Cookie: stale, UserID: aliceID,
			Body:            `{"username":"root","password":"` + rootPassword + `"}`,
			WantStatus:      200,
			WantContains:    []string{`"success":true`, msg("您正在使用默认密码，请立即修改密码！"), `"username":"root"`, `"role":100`},
			WantNotContains: []string{"password_hash", "$2a$"},
		}.Test(t, ts)

		c := r.Cookie("session")
		if c == nil || c.Value == "" {
			t.Fatal("no session cookie")
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure {
			t.Errorf("cookie HttpOnly=%v SameSite=%v Path=%q Secure=%v; want HttpOnly, Lax, /, not Secure over http",
				c.HttpOnly, c.SameSite, c.Path, c.Secure)
		}
		if c.MaxAge != int(store.SessionTTL/time.Second) {
			t.Errorf("cookie MaxAge = %d", c.MaxAge)
		}
		if c.Value == stale {
			t.Fatal("login kept the old session id")
		}
		if _, err := ts.Store.Session(stale); err == nil {
			t.Error("the session the login replaced still works")
		}
		if got := readCloseStatus(t, sock); got != ws.CloseUnauthorized {
			t.Errorf("the replaced session's socket ended with %d, want %d", got, ws.CloseUnauthorized)
		}
		var user struct {
			ID   uint64 `json:"id"`
			Role int    `json:"role"`
		}
		r.Envelope(t).DataInto(t, &user)
		if user.ID != rootID || user.Role != store.RoleRoot {
			t.Fatalf("login data = %+v", user)
		}

		id := strconv.FormatUint(rootID, 10)
		runScenarios(t, ts, []ApiScenario{
			{Name: "WithHeader", URL: "/api/user/self", Cookie: c.Value, UserID: rootID,
				WantStatus: 200, WantContains: []string{`"username":"root"`}},
			{Name: "HeaderMissing", URL: "/api/user/self", Cookie: c.Value, UserID: rootID,
				Headers: map[string]string{"New-Api-User": ""}, WantStatus: 401, WantContains: []string{msg("无权进行此操作，未提供 New-Api-User")}},
			{Name: "HeaderOtherUser", URL: "/api/user/self", Cookie: c.Value, UserID: rootID + 1,
				WantStatus: 401, WantContains: []string{msg("无权进行此操作，与登录用户不匹配，请重新登录")}},
			{Name: "HeaderNotANumber", URL: "/api/user/self", Cookie: c.Value, UserID: rootID,
				Headers: map[string]string{"New-Api-User": id + "x"}, WantStatus: 401, WantContains: []string{msg("无权进行此操作，New-Api-User 格式错误")}},
			{Name: "UnknownCookie", URL: "/api/user/self", Cookie: "forged", UserID: rootID, WantStatus: 401},
		})
	})
}

func TestSessionOfBannedUser(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	cookie, id := ts.MustSession(t, "alice")
	// A ban ends live sessions at once (S §15.7), unlike the snapshot.
	status := store.UserStatusDisabled
	if _, err := ts.Store.UpdateUser(id, store.UserUpdate{Status: &status}); err != nil {
		t.Fatal(err)
	}
	ApiScenario{URL: "/api/user/self", Cookie: cookie, UserID: id, WantStatus: 401}.Test(t, ts)
	// An access token of a banned user is refused too.
	enabled := store.UserStatusEnabled
	if _, err := ts.Store.UpdateUser(id, store.UserUpdate{Status: &enabled}); err != nil {
		t.Fatal(err)
	}
	token, err := ts.Store.ResetAccessToken(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Store.UpdateUser(id, store.UserUpdate{Status: &status}); err != nil {
		t.Fatal(err)
	}
	ApiScenario{URL: "/api/user/self", Headers: map[string]string{"Authorization": "Bearer " + token},
		WantStatus: 403, WantContains: []string{msg("用户已被封禁")}}.Test(t, ts)
}

func TestAccessToken(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	r := ApiScenario{URL: "/api/user/token", As: "user", WantStatus: 200}.Test(t, ts)
	var token string
	r.Envelope(t).DataInto(t, &token)
	if len(token) < 32 {
		t.Fatalf("token = %q", token)
	}
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	// The token works without a session or New-Api-User, and is never shown again.
	ApiScenario{URL: "/api/user/self", Headers: bearer(token), WantStatus: 200,
		WantContains: []string{`"username":"alice"`, `"has_access_token":true`}, WantNotContains: []string{token}}.Test(t, ts)

	// A HEAD is not the GET that replaces the token (the mux lets HEAD into
	// GET routes): it is refused and the token stays.
	ApiScenario{Method: "HEAD", URL: "/api/user/token", Headers: bearer(token), WantStatus: 404}.Test(t, ts)
	ApiScenario{URL: "/api/user/self", Headers: bearer(token), WantStatus: 200}.Test(t, ts)

	r = ApiScenario{URL: "/api/user/token", Headers: bearer(token), WantStatus: 200}.Test(t, ts)
	var second string
	r.Envelope(t).DataInto(t, &second)
	if second == token {
		t.Fatal("reset returned the same token")
	}
	runScenarios(t, ts, []ApiScenario{
		{Name: "OldToken", URL: "/api/user/self", Headers: bearer(token), WantStatus: 401},
		{Name: "NewToken", URL: "/api/user/self", Headers: bearer(second), WantStatus: 200},
		{Name: "Garbage", URL: "/api/user/self", Headers: bearer("garbage"), WantStatus: 401},
		// With a live session the Authorization header is not looked at (S §2):
		// a proxy in front that adds HTTP Basic credentials does not log the
		// console out.
		{Name: "SessionWithBadToken", URL: "/api/user/self", As: "user", Headers: bearer("garbage"), WantStatus: 200,
			WantContains: []string{`"username":"alice"`}},
		{Name: "SessionWithBasicAuth", URL: "/api/user/self", As: "user",
			Headers: map[string]string{"Authorization": "Basic YWRtaW46cGFzcw=="}, WantStatus: 200},
		// The session's own rule still holds: New-Api-User must name its user.
		{Name: "SessionWrongHeaderWithToken", URL: "/api/user/self", As: "user",
			Headers: map[string]string{"Authorization": "Bearer " + second, "New-Api-User": "999"}, WantStatus: 401},
		{Name: "UserTokenOnRootRoute", URL: "/api/option/", Headers: bearer(second), WantStatus: 403},
	})

	// A root token reaches root routes.
	rootToken, err := ts.Store.ResetAccessToken(ts.UserID(t, "root"))
	if err != nil {
		t.Fatal(err)
	}
	ApiScenario{URL: "/api/option/", Headers: bearer(rootToken), WantStatus: 200}.Test(t, ts)
}

func TestLogout(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	for _, method := range []string{"GET", "POST"} {
		cookie, id := ts.MustSession(t, "alice")
		other, _ := ts.MustSession(t, "alice")
		r := ApiScenario{Method: method, URL: "/api/user/logout", Cookie: cookie, UserID: id, WantStatus: 200,
			WantContains: []string{`"success":true`}}.Test(t, ts)
		if c := r.Cookie("session"); c == nil || c.MaxAge >= 0 || c.Value != "" {
			t.Errorf("%s logout did not clear the cookie: %+v", method, c)
		}
		ApiScenario{URL: "/api/user/self", Cookie: cookie, UserID: id, WantStatus: 401}.Test(t, ts)
		// Only the session that logged out ends.
		ApiScenario{URL: "/api/user/self", Cookie: other, UserID: id, WantStatus: 200}.Test(t, ts)
	}
	ApiScenario{URL: "/api/user/logout", WantStatus: 200}.Test(t, ts)
}

// A link on another site to GET /api/user/logout, followed over plain http
// (no Sec-Fetch-Site, no Origin on a GET navigation; SameSite=Lax sends the
// cookie), or an image pointing at it in a page of the gateway, must not end
// the visitor's session: neither carries New-Api-User, which every console
// that logs out with GET sends.
func TestLogoutGETNeedsTheConsolesHeader(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	cookie, id := ts.MustSession(t, "alice")
	for _, h := range []map[string]string{
		{"New-Api-User": "", "Sec-Fetch-Mode": "navigate"},                               // plain-http link from elsewhere
		{"New-Api-User": "", "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Dest": "image"}, // <img src=/api/user/logout>
		{"New-Api-User": "999"},
	} {
		r := ApiScenario{Method: "GET", URL: "/api/user/logout", Cookie: cookie, UserID: id, Headers: h}.Do(t, ts)
		if r.StatusCode != 403 {
			t.Errorf("GET logout with %v: status %d, want 403; body %s", h, r.StatusCode, r.Body)
		}
		ApiScenario{URL: "/api/user/self", Cookie: cookie, UserID: id, WantStatus: 200}.Test(t, ts)
	}
	// The console's own call, and one without a session, still work.
	ApiScenario{Method: "GET", URL: "/api/user/logout", Cookie: cookie, UserID: id, WantStatus: 200}.Test(t, ts)
	ApiScenario{URL: "/api/user/self", Cookie: cookie, UserID: id, WantStatus: 401}.Test(t, ts)
}

// A browser on another site may not log a visitor in or out: a form,
// text/plain or untyped body sent by a browser (Origin set), or any change the browser
// itself marks cross-site, gets 403. The console's JSON, whatever Origin a
// proxy in front makes it carry, and scripts (no Origin) pass.
func TestCrossSiteRefused(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	login := `{"username":"root","password":"` + rootPassword + `"}`
	refused := []string{msg("拒绝来自其他站点的请求")}
	runScenarios(t, ts, []ApiScenario{
		{Name: "LoginAsTextFromAnotherSite", Method: "POST", URL: "/api/user/login", Body: login,
			Headers: map[string]string{"Origin": "https://evil.example", "Content-Type": "text/plain;charset=UTF-8"}, WantStatus: 403, WantContains: refused,
			WantNotContains: []string{`"success":true`}},
		{Name: "LoginAsAFormFromAnotherSite", Method: "POST", URL: "/api/user/login", Body: login,
			Headers: map[string]string{"Origin": "null", "Content-Type": "application/x-www-form-urlencoded"}, WantStatus: 403, WantContains: refused},
		// A browser reads the type before any ";", whatever follows.
		{Name: "LoginAsTextWithAParameterTwice", Method: "POST", URL: "/api/user/login", Body: login,
			Headers: map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain;a=1;a=2"}, WantStatus: 403, WantContains: refused},
		// A page's Blob or ArrayBuffer body goes without a type.
		{Name: "LoginWithoutATypeFromAnotherSite", Method: "POST", URL: "/api/user/login", Body: login,
			Headers: map[string]string{"Origin": "http://evil.example", "Content-Type": ""}, WantStatus: 403, WantContains: refused},
		{Name: "LoginMarkedCrossSite", Method: "POST", URL: "/api/user/login", Body: login,
			Headers: map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}, WantStatus: 403, WantContains: refused},
		{Name: "LogoutMarkedCrossSite", Method: "GET", URL: "/api/user/logout", As: "user",
			Headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, WantStatus: 403, WantContains: refused},
		// A link elsewhere to a login with its author's Telegram or WeChat.
		{Name: "TelegramLoginMarkedCrossSite", Method: "GET", URL: "/api/oauth/telegram/login?id=1&auth_date=1&hash=x",
			Headers: map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, WantStatus: 403, WantContains: refused},
		{Name: "WeChatLoginMarkedCrossSite", Method: "GET", URL: "/api/oauth/wechat?code=123456",
			Headers: map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, WantStatus: 403, WantContains: refused},
		{Name: "GitHubCallbackMarkedCrossSite", Method: "GET", URL: "/api/oauth/github?code=1&state=x",
			Headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, WantStatus: 403, WantContains: refused},
		// The playground is billed to the session: another site's page
		// may not start a call.
		{Name: "PlaygroundCallMarkedCrossSite", Method: "POST", URL: "/pg/chat/completions", As: "user",
			Body:    `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`,
			Headers: map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"}, WantStatus: 403, WantContains: refused},
		{Name: "ReadFromAnotherSite", Method: "GET", URL: "/api/status",
			Headers: map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, WantStatus: 200},
		// Plain HTTP behind a proxy that rewrites Host: Origin names the
		// public address, Host the gateway's, and no Sec-Fetch-Site is sent.
		{Name: "ConsoleLoginThroughAHostRewritingProxy", Method: "POST", URL: "/api/user/login", Body: login,
			Headers: map[string]string{"Origin": "http://gateway.test", "Content-Type": "application/json"}, WantStatus: 200, WantContains: []string{`"success":true`}},
		{Name: "ConsoleLogoutWithoutABody", Method: "POST", URL: "/api/user/logout", As: "user",
			Headers: map[string]string{"Origin": "http://gateway.test", "Sec-Fetch-Site": "same-origin"}, WantStatus: 200},
		{Name: "ScriptLoginAsAForm", Method: "POST", URL: "/api/user/login", Body: login,
			Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, WantStatus: 200, WantContains: []string{`"success":true`}},
	})
}

// A client that declares a body over the console API's limit and waits for
// "100 Continue" is refused at once, not asked to upload it first.
func TestBodyOverTheLimit_DeclaredAPI(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "POST /api/user/login HTTP/1.1\r\nHost: x\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", 8<<20)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer without the body: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), msg("请求体过大")) {
		t.Fatalf("status %d (%s), want 400 请求体过大 before the upload", resp.StatusCode, body)
	}
}

// An unknown relay path answers a browser client with the relay's CORS
// headers, so the page reads the 404's message instead of a blocked
// response; the console API's unknown paths stay without them.
func TestUnknownRelayPathCORS(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	for _, tc := range []struct {
		method, path string
		cors         bool
	}{
		{"POST", "/v1/nope", true},
		{"GET", "/v1", true},
		{"GET", "/v1/chat/completions", true},
		{"POST", "/dashboard/billing/nope", true},
		{"GET", "/api/nope", false},
	} {
		status, got, body := probeCORS(t, ts, tc.method, tc.path)
		if status != http.StatusNotFound || !strings.Contains(body, "Invalid URL") || (got == "*") != tc.cors {
			t.Errorf("%s %s: %d, Access-Control-Allow-Origin %q (%s); want 404 with CORS %v", tc.method, tc.path, status, got, body, tc.cors)
		}
	}
}

// An unclean relay path (a base URL ending in /v1/ with /chat/completions
// appended) is refused as unknown with the relay's CORS headers, and its
// preflight goes through, so a browser client reads the 404's message
// instead of a blocked response.
func TestUncleanRelayPathCORS(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/v1//chat/completions", http.StatusNotFound},
		{"GET", "/v1/./models", http.StatusNotFound},
		{"OPTIONS", "/v1//chat/completions", http.StatusNoContent},
	} {
		status, got, body := probeCORS(t, ts, tc.method, tc.path)
		if status != tc.status || got != "*" || (tc.status == http.StatusNotFound && !strings.Contains(body, "Invalid URL")) {
			t.Errorf("%s %s: %d, Access-Control-Allow-Origin %q (%s); want %d with CORS", tc.method, tc.path, status, got, body, tc.status)
		}
	}
	// The console API's unclean paths stay without them.
	req, _ := http.NewRequest("GET", ts.URL+"/api//status", nil)
	req.Header.Set("Origin", "https://app.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("GET /api//status: %d, Access-Control-Allow-Origin %q; want 404 without CORS", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
}

// probeCORS sends what a page at another origin sends (OPTIONS as its
// preflight for a POST) and returns the status, the allowed origin and the
// body.
func probeCORS(t *testing.T, ts *TestServer, method, path string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader("{}"))
	req.Header.Set("Origin", "https://app.example")
	if method == "OPTIONS" {
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), string(body)
}
