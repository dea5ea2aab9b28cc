package api_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/api"
	"gateway/store"
)

// Credentials the gateway is configured with and the doubles expect.
const (
	ghClientID     = "gh-client"
	ghClientSecret = "gh-secret"
	ldClientID     = "ld-client"
	ldClientSecret = "ld-secret"
	wxServerToken  = "wx-server-token"
	tgBotToken     = "123456:telegram-bot-token"
	oauthServerURL = "https://gateway.example.com"
)

// providerDouble stands in for GitHub or LinuxDO: a token endpoint that
// exchanges known codes and a profile endpoint that answers for the token.
// It checks what each provider requires of the request and records the
// token requests it accepted.
type providerDouble struct {
	*httptest.Server
	mu       sync.Mutex
	profiles map[string]string // code -> profile JSON
	exchange []url.Values      // accepted token requests
	failUser bool              // the profile endpoint answers 500
	redirect string            // the redirect_uri a LinuxDO exchange must carry; "" = from ServerAddress
}

func (d *providerDouble) setProfile(code, profile string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.profiles[code] = profile
}

func (d *providerDouble) exchanges() []url.Values {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]url.Values(nil), d.exchange...)
}

func (d *providerDouble) profileFor(token string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failUser {
		return "", false
	}
	p, ok := d.profiles[strings.TrimPrefix(token, "tok-")]
	return p, ok && strings.HasPrefix(token, "tok-")
}

// tokenFor answers a code exchange that passed the provider's checks.
func (d *providerDouble) tokenFor(w http.ResponseWriter, in url.Values) {
	d.mu.Lock()
	_, known := d.profiles[in.Get("code")]
	if known {
		d.exchange = append(d.exchange, in)
	}
	d.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !known {
		// GitHub answers a bad code with 200 and an error field.
		io.WriteString(w, `{"error":"bad_verification_code","error_description":"The code passed is incorrect or expired."}`)
		return
	}
	io.WriteString(w, `{"access_token":"tok-`+in.Get("code")+`","token_type":"bearer","scope":""}`)
}

func (d *providerDouble) serveProfile(tb testing.TB, w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		tb.Errorf("profile: method %s", r.Method)
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		http.Error(w, `{"message":"Requires authentication"}`, http.StatusUnauthorized)
		return
	}
	p, ok := d.profileFor(token)
	if !ok {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, p)
}

// startGitHubDouble checks a JSON code exchange with the client credentials
// in the body (S §9).
func startGitHubDouble(tb testing.TB) *providerDouble {
	d := &providerDouble{profiles: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/login/oauth/access_token", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "application/json" {
			tb.Errorf("github token: %s, Content-Type %q, Accept %q", r.Method, r.Header.Get("Content-Type"), r.Header.Get("Accept"))
		}
		var body map[string]string
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			tb.Errorf("github token body: %v", err)
		}
		if body["client_id"] != ghClientID || body["client_secret"] != ghClientSecret {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"error":"incorrect_client_credentials"}`)
			return
		}
		d.tokenFor(w, url.Values{"code": {body["code"]}})
	})
	mux.HandleFunc("/user", func(w http.ResponseWriter, r *http.Request) { d.serveProfile(tb, w, r) })
	d.Server = httptest.NewServer(mux)
	tb.Cleanup(d.Close)
	return d
}

// startLinuxDODouble checks a form code exchange with Basic client auth and
// the redirect_uri built from ServerAddress.
func startLinuxDODouble(tb testing.TB) *providerDouble {
	d := &providerDouble{profiles: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/oauth2/token", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			tb.Errorf("linuxdo token: %s, Content-Type %q", r.Method, r.Header.Get("Content-Type"))
		}
		if err := r.ParseForm(); err != nil {
			tb.Errorf("linuxdo token form: %v", err)
		}
		if id, secret, ok := r.BasicAuth(); !ok || id != ldClientID || secret != ldClientSecret {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		if got := r.PostForm.Get("grant_type"); got != "authorization_code" {
			tb.Errorf("linuxdo grant_type = %q", got)
		}
		d.mu.Lock()
		want := d.redirect
		d.mu.Unlock()
		if want == "" {
			want = oauthServerURL + "/oauth/linuxdo"
		}
		if got := r.PostForm.Get("redirect_uri"); got != want {
			tb.Errorf("linuxdo redirect_uri = %q, want %q", got, want)
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		d.mu.Lock()
		_, known := d.profiles[r.PostForm.Get("code")]
		d.mu.Unlock()
		if !known {
			// An OAuth 2 error response, as LinuxDO gives for a bad code.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"invalid_grant","error_description":"The provided authorization grant is invalid"}`)
			return
		}
		d.tokenFor(w, r.PostForm)
	})
	mux.HandleFunc("/api/user", func(w http.ResponseWriter, r *http.Request) { d.serveProfile(tb, w, r) })
	d.Server = httptest.NewServer(mux)
	tb.Cleanup(d.Close)
	return d
}

// startWeChatDouble stands in for the WeChat server: codes map to WeChat ids.
func startWeChatDouble(tb testing.TB, codes map[string]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/api/wechat/user" {
			tb.Errorf("wechat server: %s %s", r.Method, r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != wxServerToken {
			io.WriteString(w, `{"success":false,"message":"无权进行此操作，access token 无效"}`)
			return
		}
		id, ok := codes[r.URL.Query().Get("code")]
		if !ok {
			io.WriteString(w, `{"success":false,"message":"验证码错误或已过期"}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"success": true, "message": "", "data": id})
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// oauthEnv is a gateway with every provider switched on and pointed at
// local doubles.
type oauthEnv struct {
	*TestServer
	github, linuxdo *providerDouble
}

func startOAuthEnv(tb testing.TB) *oauthEnv {
	tb.Helper()
	gh := startGitHubDouble(tb)
	ld := startLinuxDODouble(tb)
	wx := startWeChatDouble(tb, map[string]string{"111111": "wx-open-1", "222222": "wx-open-2"})
	ts := MustStartServer(tb, func(c *api.Config) {
		c.GitHubTokenURL = gh.URL + "/login/oauth/access_token"
		c.GitHubUserURL = gh.URL + "/user"
		c.LinuxDOTokenURL = ld.URL + "/oauth2/token"
		c.LinuxDOUserURL = ld.URL + "/api/user"
	})
	ts.MustSetOptions(tb,
		"ServerAddress", oauthServerURL,
		"GitHubClientId", ghClientID, "GitHubClientSecret", ghClientSecret, "GitHubOAuthEnabled", "true",
		"LinuxDOClientId", ldClientID, "LinuxDOClientSecret", ldClientSecret, "LinuxDOOAuthEnabled", "true",
		"WeChatServerAddress", wx.URL, "WeChatServerToken", wxServerToken, "WeChatAuthEnabled", "true",
		"TelegramBotToken", tgBotToken, "TelegramBotName", "gateway_bot", "TelegramOAuthEnabled", "true",
	)
	return &oauthEnv{TestServer: ts, github: gh, linuxdo: ld}
}

// browser keeps cookies like a browser and sends New-Api-User like the
// console once it knows who is logged in. It never follows redirects.
type browser struct {
	tb     testing.TB
	ts     *TestServer
	client *http.Client
	userID uint64
}

func newBrowser(tb testing.TB, ts *TestServer) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &browser{tb: tb, ts: ts, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// loginAs gives the browser a session of a fixture account.
func (b *browser) loginAs(username string) {
	b.tb.Helper()
	cookie, id := b.ts.MustSession(b.tb, username)
	u, _ := url.Parse(b.ts.URL)
	b.client.Jar.SetCookies(u, []*http.Cookie{{Name: "session", Value: cookie, Path: "/"}})
	b.userID = id
}

// session is the browser's session cookie value, "" when it has none.
func (b *browser) session() string {
	u, _ := url.Parse(b.ts.URL)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == "session" {
			return c.Value
		}
	}
	return ""
}

// get requests path; header says whether New-Api-User is sent.
func (b *browser) get(path string, header bool, edit ...func(*http.Request)) *Response {
	b.tb.Helper()
	req, err := http.NewRequest(http.MethodGet, b.ts.URL+path, nil)
	if err != nil {
		b.tb.Fatal(err)
	}
	if header && b.userID != 0 {
		req.Header.Set("New-Api-User", strconv.FormatUint(b.userID, 10))
	}
	for _, e := range edit {
		e(req)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.tb.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.tb.Fatal(err)
	}
	return &Response{Response: resp, Body: body}
}

// state asks for an OAuth state as the console does.
func (b *browser) state(aff string) string {
	b.tb.Helper()
	path := "/api/oauth/state"
	if aff != "" {
		path += "?aff=" + url.QueryEscape(aff)
	}
	r := b.get(path, true)
	if r.StatusCode != http.StatusOK {
		b.tb.Fatalf("state: %d %s", r.StatusCode, r.Body)
	}
	var s string
	r.Envelope(b.tb).DataInto(b.tb, &s)
	return s
}

// callback is the console's call from /oauth/{provider}.
func (b *browser) callback(provider, code, state string) *Response {
	b.tb.Helper()
	return b.get("/api/oauth/"+provider+"?code="+url.QueryEscape(code)+"&state="+url.QueryEscape(state), true)
}

// wantAnswer checks status and message of an envelope answer.
func wantAnswer(tb testing.TB, r *Response, status int, message string) Envelope {
	tb.Helper()
	if r.StatusCode != status {
		tb.Fatalf("status %d, want %d: %s", r.StatusCode, status, r.Body)
	}
	e := r.Envelope(tb)
	if !strings.Contains(e.Message, message) {
		tb.Fatalf("message %q, want it to contain %q", e.Message, message)
	}
	return e
}

type oauthUser struct {
	ID          uint64 `json:"id"`
	Username    string `json:"username"`
	DisplayName string `json:"display_name"`
	Email       string `json:"email"`
	GitHubID    string `json:"github_id"`
	LinuxDOID   string `json:"linux_do_id"`
	WeChatID    string `json:"wechat_id"`
	TelegramID  string `json:"telegram_id"`
	Quota       int64  `json:"quota"`
	InviterID   uint64 `json:"inviter_id"`
}

func (e *oauthEnv) user(tb testing.TB, id uint64) *store.User {
	tb.Helper()
	u, err := e.Store.User(id)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

func (e *oauthEnv) link(tb testing.TB, username string, upd store.UserUpdate) {
	tb.Helper()
	if _, err := e.Store.UpdateUser(e.UserID(tb, username), upd); err != nil {
		tb.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestOAuthRoutesAreCritical(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	n := 0
	for _, r := range ts.API.Routes() {
		if strings.HasPrefix(r.Path, "/api/oauth/") {
			n++
			if !r.Critical {
				t.Errorf("%s %s is not behind the critical rate limit", r.Method, r.Path)
			}
		}
	}
	if n < 8 {
		t.Errorf("found %d /api/oauth routes, want at least 8", n)
	}
}

func TestOAuthState(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)

	// A guest gets an anonymous session that lives as long as the state.
	b := newBrowser(t, env.TestServer)
	first := b.state("INV1")
	if len(first) != 32 {
		t.Fatalf("state %q: want 32 characters", first)
	}
	anon := b.session()
	if anon == "" {
		t.Fatal("no session cookie for a guest")
	}
	sess, err := env.Store.Session(anon)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	if sess.UserID != 0 || sess.OAuthState != first || sess.OAuthAff != "INV1" {
		t.Errorf("session = %+v", sess)
	}
	if d := sess.OAuthStateExpires - now; d < 590 || d > 610 {
		t.Errorf("state lives %d s, want 600", d)
	}
	if sess.ExpiresAt != sess.OAuthStateExpires {
		t.Errorf("anonymous session expires at %d, want the state's %d", sess.ExpiresAt, sess.OAuthStateExpires)
	}

	// The same browser keeps its session; a new state replaces the old one,
	// and an overlong aff is dropped.
	second := b.state(strings.Repeat("x", 40))
	if second == first || b.session() != anon {
		t.Errorf("second state %q (first %q), session %q (was %q)", second, first, b.session(), anon)
	}
	if sess, _ := env.Store.Session(anon); sess.OAuthState != second || sess.OAuthAff != "" {
		t.Errorf("session after second state = %+v", sess)
	}

	// A logged-in user's own session carries the state and keeps its life.
	alice := newBrowser(t, env.TestServer)
	alice.loginAs("alice")
	cookie := alice.session()
	st := alice.state("")
	if alice.session() != cookie {
		t.Error("a logged-in caller got a new session")
	}
	sess, _ = env.Store.Session(cookie)
	if sess.OAuthState != st || sess.UserID != env.UserID(t, "alice") || sess.ExpiresAt < now+29*24*3600 {
		t.Errorf("alice's session = %+v", sess)
	}
}

func TestOAuthGitHub_RegisterWithInvite(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	env.MustSetOptions(t, "QuotaForNewUser", "1000", "QuotaForInvitee", "300", "QuotaForInviter", "700")
	inviter, err := env.Store.UserByUsername("inviter")
	if err != nil {
		t.Fatal(err)
	}
	env.github.setProfile("code-1", `{"id":4242,"login":"octocat","name":"The Octocat","email":"octo@example.com"}`)

	b := newBrowser(t, env.TestServer)
	state := b.state(inviter.AffCode)
	anon := b.session()
	r := b.callback("github", "code-1", state)
	e := wantAnswer(t, r, 200, "")
	if !e.Success {
		t.Fatalf("answer %s", r.Body)
	}
	var got oauthUser
	e.DataInto(t, &got)
	if got.Username != "github_4242" || got.DisplayName != "The Octocat" || got.Email != "octo@example.com" || got.GitHubID != "4242" {
		t.Errorf("user = %+v", got)
	}

	// A fresh session replaced the anonymous one.
	if b.session() == anon || b.session() == "" {
		t.Errorf("session %q after login (anonymous was %q)", b.session(), anon)
	}
	if _, err := env.Store.Session(anon); err == nil {
		t.Error("the anonymous session survived the login")
	}
	b.userID = got.ID
	self := wantAnswer(t, b.get("/api/user/self", true), 200, "")
	if !strings.Contains(string(self.Data), `"username":"github_4242"`) {
		t.Errorf("self = %s", self.Data)
	}

	// QuotaForNewUser and the invite rewards came from the state's aff.
	u := env.user(t, got.ID)
	if u.Quota != 1300 || u.InviterID != inviter.ID {
		t.Errorf("quota %d inviter %d, want 1300 and %d", u.Quota, u.InviterID, inviter.ID)
	}
	after := env.user(t, inviter.ID)
	if after.AffCount != inviter.AffCount+1 || after.AffQuota != inviter.AffQuota+700 {
		t.Errorf("inviter aff_count %d→%d, aff_quota %d→%d", inviter.AffCount, after.AffCount, inviter.AffQuota, after.AffQuota)
	}
	if ex := env.github.exchanges(); len(ex) != 1 || ex[0].Get("code") != "code-1" {
		t.Errorf("code exchanges = %v", ex)
	}
}

func TestOAuthGitHub_LoginAndNames(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)

	// First sign-in registers; the e-mail is taken, so it is left out.
	env.github.setProfile("c1", `{"id":777,"login":"octo","name":"","email":"`+aliceEmail+`"}`)
	b := newBrowser(t, env.TestServer)
	var first oauthUser
	wantAnswer(t, b.callback("github", "c1", b.state("")), 200, "").DataInto(t, &first)
	if first.Username != "github_777" || first.DisplayName != "GitHub User" || first.Email != "" {
		t.Errorf("registered %+v", first)
	}

	// The account is keyed by the numeric id: a renamed login signs in to it.
	env.github.setProfile("c2", `{"id":777,"login":"renamed","name":"Renamed"}`)
	b2 := newBrowser(t, env.TestServer)
	var again oauthUser
	wantAnswer(t, b2.callback("github", "c2", b2.state("")), 200, "").DataInto(t, &again)
	if again.ID != first.ID || again.Username != "github_777" {
		t.Errorf("second sign-in got %+v, want account %d", again, first.ID)
	}

	// Another id whose natural username is taken gets a generated one
	// within the 20-character limit.
	if _, err := env.Store.CreateUser(store.NewUser{Username: "github_888", Password: "password-888"}); err != nil {
		t.Fatal(err)
	}
	env.github.setProfile("c3", `{"id":888,"login":"eights","name":"A very long display name over twenty"}`)
	b3 := newBrowser(t, env.TestServer)
	var third oauthUser
	wantAnswer(t, b3.callback("github", "c3", b3.state("")), 200, "").DataInto(t, &third)
	if !regexp.MustCompile(`^github_[1-9][0-9]{7}$`).MatchString(third.Username) || third.GitHubID != "888" {
		t.Errorf("third = %+v", third)
	}
	if third.DisplayName != "A very long display" {
		t.Errorf("display name %q, want the first 20 characters", third.DisplayName)
	}

	// Registration closed: linked accounts still sign in, new ones are refused.
	env.MustSetOptions(t, "RegisterEnabled", "false")
	env.github.setProfile("c4", `{"id":999,"login":"newbie"}`)
	b4 := newBrowser(t, env.TestServer)
	wantAnswer(t, b4.callback("github", "c4", b4.state("")), 403, "管理员关闭了新用户注册")
	b5 := newBrowser(t, env.TestServer)
	wantAnswer(t, b5.callback("github", "c2", b5.state("")), 200, "")
}

// S §9 step 7: a new GitHub account's display name is the GitHub name, or
// "GitHub User" when the profile has none (the login is the renameable
// handle, not a name).
func TestOAuthGitHub_DisplayNameWithoutAName(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	for code, profile := range map[string]string{
		"empty": `{"id":3101,"login":"octo-empty","name":""}`,
		"null":  `{"id":3102,"login":"octo-null","name":null}`,
	} {
		env.github.setProfile(code, profile)
		b := newBrowser(t, env.TestServer)
		var got oauthUser
		wantAnswer(t, b.callback("github", code, b.state("")), 200, "").DataInto(t, &got)
		if got.DisplayName != "GitHub User" {
			t.Errorf("%s name: display name %q, want %q", code, got.DisplayName, "GitHub User")
		}
	}
}

func TestOAuthGitHub_State(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	env.github.setProfile("code", `{"id":5001,"login":"s"}`)
	const bad = "授权状态无效或已过期"

	// No session at all.
	wantAnswer(t, newBrowser(t, env.TestServer).callback("github", "code", "whatever"), 403, bad)

	b := newBrowser(t, env.TestServer)
	state := b.state("")
	// Missing and wrong states are refused; a wrong guess leaves the
	// pending state usable.
	wantAnswer(t, b.get("/api/oauth/github?code=code", true), 403, bad)
	wantAnswer(t, b.callback("github", "code", state+"x"), 403, bad)
	// Another browser's state is not this session's.
	other := newBrowser(t, env.TestServer)
	wantAnswer(t, other.callback("github", "code", state), 403, bad)
	if n := len(env.github.exchanges()); n != 0 {
		t.Fatalf("%d code exchanges before a valid state", n)
	}
	wantAnswer(t, b.callback("github", "code", state), 200, "")
	// Replayed: the state was consumed (TestOAuthGitHub_ReplayOnSameSession
	// replays on the session that consumed it).
	wantAnswer(t, b.callback("github", "code", state), 403, bad)

	// Expired.
	c := newBrowser(t, env.TestServer)
	st := c.state("")
	if err := env.Store.UpdateSession(c.session(), func(s *store.Session) error {
		s.OAuthStateExpires = time.Now().Unix() - 1
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, c.callback("github", "code", st), 403, bad)
	if n := len(env.github.exchanges()); n != 1 {
		t.Errorf("%d code exchanges, want 1", n)
	}
}

func TestOAuthGitHub_ReplayOnSameSession(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	env.github.setProfile("code", `{"id":5002,"login":"r"}`)
	b := newBrowser(t, env.TestServer)
	// A logged-in user binds; the session stays, so the replay uses the
	// very session that consumed the state.
	b.loginAs("alice")
	state := b.state("")
	wantAnswer(t, b.callback("github", "code", state), 200, "bind")
	wantAnswer(t, b.callback("github", "code", state), 403, "授权状态无效或已过期")
}

func TestOAuthGitHub_Bind(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	env.github.setProfile("mine", `{"id":6001,"login":"alice-gh"}`)
	env.github.setProfile("taken", `{"id":6002,"login":"admin-gh"}`)
	env.link(t, "admin", store.UserUpdate{GitHubID: ptr("6002")})

	b := newBrowser(t, env.TestServer)
	b.loginAs("alice")
	cookie := b.session()
	e := wantAnswer(t, b.callback("github", "mine", b.state("")), 200, "bind")
	if !e.Success || string(e.Data) != "null" {
		t.Errorf("bind answer %+v", e)
	}
	aliceID := env.UserID(t, "alice")
	if got := env.user(t, aliceID).GitHubID; got != "6001" {
		t.Errorf("alice github_id = %q", got)
	}
	if b.session() != cookie {
		t.Error("binding replaced the session")
	}
	// Binding the id the account already has is fine.
	env.github.setProfile("mine-again", `{"id":6001,"login":"alice-gh"}`)
	wantAnswer(t, b.callback("github", "mine-again", b.state("")), 200, "bind")

	// An id linked to another account is refused and changes nothing.
	wantAnswer(t, b.callback("github", "taken", b.state("")), 409, "该 GitHub 账户已被其他账户绑定")
	if got := env.user(t, aliceID).GitHubID; got != "6001" {
		t.Errorf("alice github_id = %q after the refusal", got)
	}
}

func TestOAuthGitHub_RefusedAccounts(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	env.github.setProfile("banned", `{"id":7001,"login":"b"}`)
	env.github.setProfile("gone", `{"id":7002,"login":"g"}`)
	env.link(t, "banned", store.UserUpdate{GitHubID: ptr("7001")})
	env.link(t, "alice", store.UserUpdate{GitHubID: ptr("7002")})
	if err := env.Store.DeleteUser(env.UserID(t, "alice")); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, env.TestServer)
	state := b.state("")
	anon := b.session()
	wantAnswer(t, b.callback("github", "banned", state), 403, "用户已被封禁")
	if b.session() != anon {
		t.Error("a refused login changed the session")
	}
	wantAnswer(t, b.callback("github", "gone", b.state("")), 403, "用户已注销")
}

func TestOAuthGitHub_ProviderErrors(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	env.github.setProfile("ok", `{"id":8001,"login":"p"}`)
	b := newBrowser(t, env.TestServer)

	wantAnswer(t, b.callback("github", "unknown-code", b.state("")), 400, "GitHub 授权失败：bad_verification_code")
	wantAnswer(t, b.get("/api/oauth/github?error=access_denied&state="+b.state(""), true), 403, "GitHub 授权失败：access_denied")
	// A link from elsewhere to the console's callback page, with an error
	// of its author's words and no state of this browser, is refused as
	// such: its words are not repeated as the provider's, and the login in
	// progress keeps its state.
	pending := b.state("")
	phish := url.QueryEscape("账户存在风险，请联系客服 QQ 10001 解封")
	for _, path := range []string{
		"/api/oauth/github?error=" + phish,
		"/api/oauth/linuxdo?error=" + phish,
		"/api/oauth/github?error=" + phish + "&state=" + strings.Repeat("x", 32),
	} {
		wantAnswer(t, b.get(path, true), 403, "授权状态无效或已过期，请重新发起登录")
	}
	wantAnswer(t, b.get("/api/oauth/github?error=access_denied&state="+pending, true), 403, "GitHub 授权失败：access_denied")
	wantAnswer(t, b.get("/api/oauth/github?state="+b.state(""), true), 400, "缺少授权码")

	env.github.mu.Lock()
	env.github.failUser = true
	env.github.mu.Unlock()
	wantAnswer(t, b.callback("github", "ok", b.state("")), 502, "GitHub 返回错误")

	env.MustSetOptions(t, "GitHubOAuthEnabled", "false")
	wantAnswer(t, b.callback("github", "ok", b.state("")), 403, "管理员未开启通过 GitHub 登录以及注册")
}

func TestOAuthLinuxDO(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	env.linuxdo.setProfile("ld-1", `{"id":31337,"username":"tux","name":"Tux Penguin","trust_level":2}`)
	env.linuxdo.setProfile("ld-2", `{"id":31337,"username":"tux2"}`)
	env.linuxdo.setProfile("ld-bind", `{"id":42424,"username":"al"}`)

	// The redirect_uri comes from ServerAddress even when the Host header
	// says otherwise (the double refuses any other).
	b := newBrowser(t, env.TestServer)
	state := b.state("")
	r := b.get("/api/oauth/linuxdo?code=ld-1&state="+state, true, func(req *http.Request) {
		req.Host = "evil.example"
		// The jar keys cookies by the request's host; send it by hand.
		req.AddCookie(&http.Cookie{Name: "session", Value: b.session()})
	})
	var got oauthUser
	wantAnswer(t, r, 200, "").DataInto(t, &got)
	if got.Username != "linuxdo_31337" || got.DisplayName != "Tux Penguin" || got.LinuxDOID != "31337" {
		t.Errorf("registered %+v", got)
	}
	b2 := newBrowser(t, env.TestServer)
	var again oauthUser
	wantAnswer(t, b2.callback("linuxdo", "ld-2", b2.state("")), 200, "").DataInto(t, &again)
	if again.ID != got.ID {
		t.Errorf("second sign-in got account %d, want %d", again.ID, got.ID)
	}

	wantAnswer(t, b2.callback("linuxdo", "ld-unknown", b2.state("")), 400, "LinuxDO 授权失败：invalid_grant")

	// ?error= is answered to the browser whose state comes with it.
	wantAnswer(t, b2.get("/api/oauth/linuxdo?error=access_denied&state="+b2.state(""), true), 403, "LinuxDO 授权失败：access_denied")

	alice := newBrowser(t, env.TestServer)
	alice.loginAs("alice")
	wantAnswer(t, alice.callback("linuxdo", "ld-bind", alice.state("")), 200, "bind")
	if id := env.user(t, env.UserID(t, "alice")).LinuxDOID; id != "42424" {
		t.Errorf("alice linux_do_id = %q", id)
	}
	wantAnswer(t, alice.callback("linuxdo", "ld-1", alice.state("")), 409, "该 LinuxDO 账户已被其他账户绑定")
	if n := len(env.linuxdo.exchanges()); n != 4 {
		t.Errorf("%d code exchanges, want 4", n)
	}

	// The exchange repeats the redirect_uri the console used for the
	// authorize step (its own address before ServerAddress is saved); a
	// value that is not an /oauth/linuxdo page falls back to ServerAddress.
	env.linuxdo.mu.Lock()
	env.linuxdo.redirect = "https://console.example:8443/oauth/linuxdo"
	env.linuxdo.mu.Unlock()
	b3 := newBrowser(t, env.TestServer)
	wantAnswer(t, b3.get("/api/oauth/linuxdo?code=ld-2&state="+url.QueryEscape(b3.state(""))+
		"&redirect_uri="+url.QueryEscape("https://console.example:8443/oauth/linuxdo"), true), 200, "")
	env.linuxdo.mu.Lock()
	env.linuxdo.redirect = ""
	env.linuxdo.mu.Unlock()
	for _, bad := range []string{"https://console.example/elsewhere", "javascript:alert(1)", "https://console.example/oauth/linuxdo?x=1", "/oauth/linuxdo"} {
		b4 := newBrowser(t, env.TestServer)
		wantAnswer(t, b4.get("/api/oauth/linuxdo?code=ld-2&state="+url.QueryEscape(b4.state(""))+"&redirect_uri="+url.QueryEscape(bad), true), 200, "")
	}
}

// A provider's profile name is only a suggestion for the display name: one
// the display-name rules refuse (a control character, as a tab or U+0085 in
// a GitHub or LinuxDO name) must not stop the person from signing up.
func TestOAuth_ProfileNameWithControlCharacters(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	env.github.setProfile("tab", `{"id":4343,"login":"tabby","name":"Tab\tName"}`)
	env.linuxdo.setProfile("nel", `{"id":4344,"username":"nel","name":"Line\u0085Next"}`)
	env.github.setProfile("only", `{"id":4345,"login":"bell","name":"\u0007"}`)
	for _, c := range []struct{ provider, code, want string }{
		{"github", "tab", "Tab Name"},
		{"linuxdo", "nel", "Line Next"},
		{"github", "only", "GitHub User"},
	} {
		b := newBrowser(t, env.TestServer)
		r := b.callback(c.provider, c.code, b.state(""))
		if r.StatusCode != 200 {
			t.Errorf("%s %s: %d %s", c.provider, c.code, r.StatusCode, r.Body)
			continue
		}
		var got oauthUser
		r.Envelope(t).DataInto(t, &got)
		if got.DisplayName != c.want {
			t.Errorf("%s %s: display name %q, want %q", c.provider, c.code, got.DisplayName, c.want)
		}
	}
}

func TestOAuthWeChat(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	env.MustSetOptions(t, "QuotaForNewUser", "500")

	b := newBrowser(t, env.TestServer)
	var got oauthUser
	wantAnswer(t, b.get("/api/oauth/wechat?code=111111&state="+b.state(""), false), 200, "").DataInto(t, &got)
	if !regexp.MustCompile(`^wechat_[1-9][0-9]{7}$`).MatchString(got.Username) || got.DisplayName != "WeChat User" ||
		got.WeChatID != "wx-open-1" || got.InviterID != 0 || got.Quota != 500 {
		t.Errorf("registered %+v", got)
	}
	var again oauthUser
	second := newBrowser(t, env.TestServer)
	wantAnswer(t, second.get("/api/oauth/wechat?code=111111&state="+second.state(""), false), 200, "").DataInto(t, &again)
	if again.ID != got.ID {
		t.Errorf("second sign-in got account %d, want %d", again.ID, got.ID)
	}
	wantAnswer(t, b.get("/api/oauth/wechat?code=999999&state="+b.state(""), false), 400, "验证码错误或已过期")
	wantAnswer(t, b.get("/api/oauth/wechat", false), 400, "请输入验证码")

	// Binding needs a logged-in user with New-Api-User.
	wantAnswer(t, newBrowser(t, env.TestServer).get("/api/oauth/wechat/bind?code=222222", false), 401, msgNoCredentials)
	alice := newBrowser(t, env.TestServer)
	alice.loginAs("alice")
	wantAnswer(t, alice.get("/api/oauth/wechat/bind?code=222222", true), 200, "bind")
	if id := env.user(t, alice.userID).WeChatID; id != "wx-open-2" {
		t.Errorf("alice wechat_id = %q", id)
	}
	wantAnswer(t, alice.get("/api/oauth/wechat/bind?code=111111", true), 409, "该微信账户已被其他账户绑定")

	// The banned and the deleted cannot sign in.
	env.link(t, "banned", store.UserUpdate{WeChatID: ptr("wx-open-banned")})
	env.MustSetOptions(t, "WeChatServerAddress", startWeChatDouble(t, map[string]string{"333333": "wx-open-banned"}).URL)
	wantAnswer(t, b.get("/api/oauth/wechat?code=333333&state="+b.state(""), false), 403, "用户已被封禁")

	env.MustSetOptions(t, "WeChatAuthEnabled", "false")
	wantAnswer(t, b.get("/api/oauth/wechat?code=111111", false), 403, "管理员未开启通过微信登录以及注册")
	wantAnswer(t, alice.get("/api/oauth/wechat/bind?code=111111", true), 403, "管理员未开启通过微信登录以及注册")
}

// telegramLogin returns the widget's parameters for a Telegram user, signed
// with the bot token as Telegram does.
func telegramLogin(id string, authDate time.Time, token string) url.Values {
	q := url.Values{
		"id": {id}, "first_name": {"Tele"}, "last_name": {"Gram"}, "username": {"tele_" + id},
		"photo_url": {"https://t.me/i/userpic/320/x.jpg"}, "auth_date": {strconv.FormatInt(authDate.Unix(), 10)},
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = k + "=" + q.Get(k)
	}
	secret := sha256.Sum256([]byte(token))
	mac := hmac.New(sha256.New, secret[:])
	mac.Write([]byte(strings.Join(lines, "\n")))
	q.Set("hash", hex.EncodeToString(mac.Sum(nil)))
	return q
}

func TestOAuthTelegram(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	now := time.Now()
	aliceID := env.UserID(t, "alice")

	// Bind: the widget's browser redirect carries the cookie and the state
	// the console put into data-auth-url, but no New-Api-User.
	alice := newBrowser(t, env.TestServer)
	alice.loginAs("alice")
	bind := func(b *browser, q url.Values, state string) string {
		t.Helper()
		if state != "" {
			q.Set("state", state)
		}
		r := b.get("/api/oauth/telegram/bind?"+q.Encode(), false)
		if r.StatusCode != http.StatusFound {
			t.Fatalf("bind: %d %s", r.StatusCode, r.Body)
		}
		return r.Header.Get("Location")
	}
	state := alice.state("")
	if loc := bind(alice, telegramLogin("9001", now, tgBotToken), state); loc != "/setting?tab=personal&bind=telegram" {
		t.Fatalf("bind went to %q", loc)
	}
	if id := env.user(t, aliceID).TelegramID; id != "9001" {
		t.Fatalf("alice telegram_id = %q", id)
	}
	errorOf := func(loc string) string {
		t.Helper()
		u, err := url.Parse(loc)
		if err != nil || u.Path != "/setting" || u.Query().Get("tab") != "personal" {
			t.Fatalf("redirect %q", loc)
		}
		return u.Query().Get("error")
	}
	// Replayed state, no state, no session: refused.
	if e := errorOf(bind(alice, telegramLogin("9009", now, tgBotToken), state)); !strings.Contains(e, "授权状态无效") {
		t.Errorf("replayed state: error %q", e)
	}
	if e := errorOf(bind(alice, telegramLogin("9009", now, tgBotToken), "")); !strings.Contains(e, "授权状态无效") {
		t.Errorf("no state: error %q", e)
	}
	if e := errorOf(bind(newBrowser(t, env.TestServer), telegramLogin("9009", now, tgBotToken), "x")); !strings.Contains(e, "授权状态无效") {
		t.Errorf("no session: error %q", e)
	}
	// A guest's state is not a login.
	guest := newBrowser(t, env.TestServer)
	if e := errorOf(bind(guest, telegramLogin("9009", now, tgBotToken), guest.state(""))); !strings.Contains(e, "未登录") {
		t.Errorf("guest: error %q", e)
	}
	// Telegram id of another account.
	env.link(t, "banned", store.UserUpdate{TelegramID: ptr("9002")})
	if e := errorOf(bind(alice, telegramLogin("9002", now, tgBotToken), alice.state(""))); !strings.Contains(e, "该 Telegram 账户已被其他账户绑定") {
		t.Errorf("taken: error %q", e)
	}
	// Forged data.
	if e := errorOf(bind(alice, telegramLogin("9003", now, "another-bot-token"), alice.state(""))); !strings.Contains(e, "校验失败") {
		t.Errorf("forged: error %q", e)
	}

	// Login works for bound accounts only, from the browser that asked
	// for the state the console puts into the widget's data-auth-url.
	b := newBrowser(t, env.TestServer)
	first := telegramLogin("9001", now, tgBotToken)
	first.Set("state", b.state(""))
	var got oauthUser
	wantAnswer(t, b.get("/api/oauth/telegram/login?"+first.Encode(), false), 200, "").DataInto(t, &got)
	if got.ID != aliceID || b.session() == "" {
		t.Errorf("login got %+v, session %q", got, b.session())
	}
	login := func(q url.Values) *Response {
		b := newBrowser(t, env.TestServer)
		q.Set("state", b.state(""))
		return b.get("/api/oauth/telegram/login?"+q.Encode(), false)
	}
	wantAnswer(t, login(telegramLogin("9404", now, tgBotToken)), 404, "该 Telegram 账户未绑定")
	wantAnswer(t, login(telegramLogin("9002", now, tgBotToken)), 403, "用户已被封禁")

	tampered := telegramLogin("9001", now, tgBotToken)
	tampered.Set("id", "9002")
	wantAnswer(t, login(tampered), 403, "Telegram 登录信息校验失败")
	noHash := telegramLogin("9001", now, tgBotToken)
	noHash.Del("hash")
	wantAnswer(t, login(noHash), 400, "Telegram 登录信息无效")
	wantAnswer(t, login(telegramLogin("9001", now.Add(-25*time.Hour), tgBotToken)), 403, "Telegram 登录信息已过期")
	wantAnswer(t, login(telegramLogin("9001", now.Add(10*time.Minute), tgBotToken)), 403, "Telegram 登录信息已过期")
	wantAnswer(t, login(telegramLogin("9001", now.Add(-23*time.Hour), tgBotToken)), 200, "")

	env.MustSetOptions(t, "TelegramOAuthEnabled", "false")
	wantAnswer(t, login(telegramLogin("9001", now, tgBotToken)), 403, "管理员未开启通过 Telegram 登录以及注册")
	if e := errorOf(bind(alice, telegramLogin("9001", now, tgBotToken), alice.state(""))); !strings.Contains(e, "管理员未开启") {
		t.Errorf("disabled: error %q", e)
	}
}

func TestOAuthStatusAndCSP(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ApiScenario{URL: "/api/status", WantStatus: 200, WantContains: []string{
		`"github_authorize_url":"https://github.com/login/oauth/authorize"`,
		`"linuxdo_authorize_url":"https://connect.linux.do/oauth2/authorize"`,
	}}.Test(t, ts)
	// The widget scripts are allowed while the logins are off, so a tab
	// opened before root switches them on can load them.
	policy := regexp.MustCompile(`script-src 'self' https://challenges\.cloudflare\.com https://telegram\.org;.*frame-src https: http:;.*object-src 'none'`)
	r := ApiScenario{URL: "/login", WantStatus: 200}.Test(t, ts)
	if csp := r.Header.Get("Content-Security-Policy"); !policy.MatchString(csp) {
		t.Errorf("CSP with the logins off = %q", csp)
	}

	ts = MustStartServer(t, func(c *api.Config) {
		c.GitHubAuthorizeURL = "http://127.0.0.1:1/authorize"
		c.LinuxDOAuthorizeURL = "http://127.0.0.1:2/authorize"
	})
	ts.MustSetOptions(t, "TelegramBotToken", tgBotToken, "TelegramOAuthEnabled", "true")
	ApiScenario{URL: "/api/status", WantStatus: 200, WantContains: []string{
		`"github_authorize_url":"http://127.0.0.1:1/authorize"`,
		`"linuxdo_authorize_url":"http://127.0.0.1:2/authorize"`,
	}}.Test(t, ts)
	r = ApiScenario{URL: "/login", WantStatus: 200}.Test(t, ts)
	if csp := r.Header.Get("Content-Security-Policy"); !policy.MatchString(csp) {
		t.Errorf("CSP with Telegram on = %q", csp)
	}
}

// An account made by a third-party login has no password: nobody logs in
// with one, and its owner sets the first without an old one; after that
// the old one is asked for as for everyone.
func TestOAuthAccountSetsItsFirstPassword(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	env.github.setProfile("code-pw", `{"id":5151,"login":"nopass","name":"No Pass"}`)
	b := newBrowser(t, env.TestServer)
	var got oauthUser
	wantAnswer(t, b.callback("github", "code-pw", b.state("")), 200, "").DataInto(t, &got)
	b.userID = got.ID
	hasPassword := func() bool {
		var v struct {
			HasPassword bool `json:"has_password"`
		}
		wantAnswer(t, b.get("/api/user/self", true), 200, "").DataInto(t, &v)
		return v.HasPassword
	}
	if hasPassword() {
		t.Fatal("an account made by a login reports a password")
	}
	login := func(password string) int {
		body := `{"username":"github_5151","password":"` + password + `"}`
		return ApiScenario{Method: "POST", URL: "/api/user/login", Body: body}.Do(t, env.TestServer).StatusCode
	}
	if code := login(""); code == 200 {
		t.Fatal("logged in without a password")
	}
	put := func(body string) *Response {
		return b.get("/api/user/self", true, func(r *http.Request) {
			r.Method = http.MethodPut
			r.Header.Set("Content-Type", "application/json")
			r.Body = io.NopCloser(strings.NewReader(body))
			r.ContentLength = int64(len(body))
		})
	}
	if r := put(`{"password":"first-pass-1"}`); r.StatusCode != 200 {
		t.Fatalf("first password: %d %s", r.StatusCode, r.Body)
	}
	if !hasPassword() || login("first-pass-1") != 200 {
		t.Fatal("the first password does not log in")
	}
	if r := put(`{"password":"second-pass-2"}`); r.StatusCode != 400 || !strings.Contains(string(r.Body), "原密码错误") {
		t.Fatalf("a second change without the old password: %d %s", r.StatusCode, r.Body)
	}
}

// A Telegram login must have been started by the browser that completes it.
// The widget's data is signed by Telegram for its owner and stays valid for a
// day, so without a state tied to the session anyone can put their own
// signed login into a link to the console's /oauth/telegram page (which
// calls the API from the gateway's own origin) or, on a plain-http
// deployment, to the API itself: the visitor ends up in the link author's
// account (login CSRF), sees it as their own and tops it up or binds their
// e-mail to it.
func TestOAuthTelegram_LoginNeedsTheBrowsersState(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	now := time.Now()
	env.link(t, "alice", store.UserUpdate{TelegramID: ptr("9101")})
	aliceID := env.UserID(t, "alice")
	// Alice's own signed login, put in a link she sends to someone else.
	attack := telegramLogin("9101", now, tgBotToken)
	const bad = "授权状态无效或已过期"

	// The console page /oauth/telegram calls the API from the gateway's own
	// origin; a plain-http gateway gets no Sec-Fetch-Site at all.
	sameOrigin := func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "same-origin") }
	victim := newBrowser(t, env.TestServer)
	wantAnswer(t, victim.get("/api/oauth/telegram/login?"+attack.Encode(), false, sameOrigin), 403, bad)
	wantAnswer(t, victim.get("/api/oauth/telegram/login?"+attack.Encode(), false), 403, bad)
	if victim.session() != "" {
		t.Fatal("a login the browser never started gave it a session")
	}
	// A browser that started a login of its own is not signed in by a link
	// without its state, nor with someone else's.
	victim.state("")
	q := telegramLogin("9101", now, tgBotToken)
	q.Set("state", newBrowser(t, env.TestServer).state(""))
	wantAnswer(t, victim.get("/api/oauth/telegram/login?"+q.Encode(), false, sameOrigin), 403, bad)
	if sess, err := env.Store.Session(victim.session()); err != nil || sess.UserID != 0 {
		t.Fatalf("victim session after a foreign login = %+v, %v", sess, err)
	}

	// The browser that asked for the state signs in, once.
	owner := newBrowser(t, env.TestServer)
	own := telegramLogin("9101", now, tgBotToken)
	own.Set("state", owner.state(""))
	var got oauthUser
	wantAnswer(t, owner.get("/api/oauth/telegram/login?"+own.Encode(), false, sameOrigin), 200, "").DataInto(t, &got)
	if got.ID != aliceID {
		t.Fatalf("login got %+v, want alice", got)
	}
	wantAnswer(t, newBrowser(t, env.TestServer).get("/api/oauth/telegram/login?"+own.Encode(), false), 403, bad)
}

// A WeChat login takes a code the WeChat server hands whoever follows the
// official account, valid a few minutes. Without a state tied to the
// browser, a link to /api/oauth/wechat?code=<the author's fresh code> signs
// whoever opens it into the author's account (login CSRF): a browser marks
// such a navigation Sec-Fetch-Site: cross-site only over https, so on a
// plain-http gateway (or a browser without Fetch Metadata) nothing tells it
// from the console's own call. The login needs the state of the browser
// that opened the WeChat dialog, as the Telegram login does.
func TestOAuthWeChat_LoginNeedsTheBrowsersState(t *testing.T) {
	t.Parallel()
	env := startOAuthEnv(t)
	const bad = "授权状态无效或已过期"

	// The link author's own code, opened by a browser that never asked for
	// a WeChat login: no Sec-Fetch-Site, no Origin (a plain-http navigation).
	victim := newBrowser(t, env.TestServer)
	wantAnswer(t, victim.get("/api/oauth/wechat?code=111111", false), 403, bad)
	if victim.session() != "" {
		t.Fatal("a WeChat login the browser never started gave it a session")
	}
	// Nor with a state of another browser.
	victim.state("")
	other := newBrowser(t, env.TestServer).state("")
	wantAnswer(t, victim.get("/api/oauth/wechat?code=111111&state="+url.QueryEscape(other), false), 403, bad)
	if sess, err := env.Store.Session(victim.session()); err != nil || sess.UserID != 0 {
		t.Fatalf("victim session after a foreign login = %+v, %v", sess, err)
	}

	// The browser that asked for the state signs in, once.
	owner := newBrowser(t, env.TestServer)
	state := owner.state("")
	var got oauthUser
	wantAnswer(t, owner.get("/api/oauth/wechat?code=111111&state="+url.QueryEscape(state), false), 200, "").DataInto(t, &got)
	if got.WeChatID != "wx-open-1" {
		t.Fatalf("login got %+v", got)
	}
	wantAnswer(t, newBrowser(t, env.TestServer).get("/api/oauth/wechat?code=111111&state="+url.QueryEscape(state), false), 403, bad)
}
