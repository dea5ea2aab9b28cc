package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"gateway/api"
)

// turnstileDouble stands in for Cloudflare's siteverify: it accepts tokens
// that start with "good" when the secret is right, and records each call.
type turnstileDouble struct {
	*httptest.Server
	mu    sync.Mutex
	calls []map[string]string
}

func startTurnstileDouble(tb testing.TB, secret string) *turnstileDouble {
	tb.Helper()
	d := &turnstileDouble{}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			tb.Errorf("siteverify got %s with Content-Type %q", r.Method, r.Header.Get("Content-Type"))
		}
		if err := r.ParseForm(); err != nil {
			tb.Errorf("siteverify form: %v", err)
		}
		call := map[string]string{"secret": r.PostForm.Get("secret"), "response": r.PostForm.Get("response"), "remoteip": r.PostForm.Get("remoteip")}
		d.mu.Lock()
		d.calls = append(d.calls, call)
		d.mu.Unlock()
		ok := call["secret"] == secret && strings.HasPrefix(call["response"], "good")
		w.Header().Set("Content-Type", "application/json")
		if ok {
			w.Write([]byte(`{"success":true,"error-codes":[]}`))
		} else {
			w.Write([]byte(`{"success":false,"error-codes":["invalid-input-response"]}`))
		}
	}))
	tb.Cleanup(d.Close)
	return d
}

func (d *turnstileDouble) Calls() []map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]map[string]string(nil), d.calls...)
}

const msgTurnstilePending = "请稍后几秒重试，Turnstile 正在检查用户环境！"

func TestTurnstile(t *testing.T) {
	t.Parallel()
	const secret = "turnstile-secret"
	double := startTurnstileDouble(t, secret)
	ts := MustStartServer(t, func(c *api.Config) { c.TurnstileVerifyURL = double.URL })

	// Off by default: no token needed.
	ApiScenario{Method: "POST", URL: "/api/user/login", Body: `{}`, WantStatus: 400,
		WantContains: []string{msg("请输入用户名和密码！")}}.Test(t, ts)

	ts.MustSetOptions(t, "TurnstileSiteKey", "site-key-1", "TurnstileSecretKey", secret, "TurnstileCheckEnabled", "true")
	runScenarios(t, ts, []ApiScenario{
		{Name: "LoginNoToken", Method: "POST", URL: "/api/user/login", Body: `{}`,
			WantStatus: 400, WantContains: []string{msg(msgTurnstilePending)}},
		{Name: "RegisterNoToken", Method: "POST", URL: "/api/user/register", Body: `{}`,
			WantStatus: 400, WantContains: []string{msg(msgTurnstilePending)}},
		{Name: "VerificationNoToken", URL: "/api/verification?email=a@example.com",
			WantStatus: 400, WantContains: []string{msg(msgTurnstilePending)}},
		{Name: "ResetNoToken", URL: "/api/reset_password?email=" + aliceEmail,
			WantStatus: 400, WantContains: []string{msg(msgTurnstilePending)}},
		{Name: "Failed", Method: "POST", URL: "/api/user/login?turnstile=bad-token", Body: `{}`,
			WantStatus: 403, WantContains: []string{"Turnstile 校验失败"}},
		// A passed check reaches the handler, which then wants the fields.
		{Name: "Passed", Method: "POST", URL: "/api/user/login?turnstile=good-1", Body: `{}`,
			WantStatus: 400, WantContains: []string{msg("请输入用户名和密码！")}},
		{Name: "Reused", Method: "POST", URL: "/api/user/login?turnstile=good-1", Body: `{}`,
			WantStatus: 403, WantContains: []string{"Turnstile 校验失败"}},
		{Name: "ReusedOnAnotherRoute", Method: "POST", URL: "/api/user/register?turnstile=good-1", Body: `{}`,
			WantStatus: 403},
		{Name: "NextToken", Method: "POST", URL: "/api/user/register?turnstile=good-2", Body: `{}`,
			WantStatus: 400, WantContains: []string{msg("请输入用户名和密码！")}},
		{Name: "StatusShowsIt", URL: "/api/status", WantStatus: 200,
			WantContains: []string{`"turnstile_check":true`, `"turnstile_site_key":"site-key-1"`}},
	})

	calls := double.Calls()
	// bad-token, good-1, good-2: a reused token is refused without asking.
	if len(calls) != 3 {
		t.Fatalf("siteverify called %d times (%v), want 3", len(calls), calls)
	}
	for _, c := range calls {
		if c["secret"] != secret || c["remoteip"] != "127.0.0.1" {
			t.Errorf("siteverify call = %v", c)
		}
	}

	// The console page may load Cloudflare's script while the check is on.
	r := ApiScenario{URL: "/login", WantStatus: 200}.Test(t, ts)
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "https://challenges.cloudflare.com") {
		t.Errorf("CSP = %q", csp)
	}
}

func TestTurnstile_Unreachable(t *testing.T) {
	t.Parallel()
	double := startTurnstileDouble(t, "s")
	double.Close() // refuse connections
	ts := MustStartServer(t, func(c *api.Config) { c.TurnstileVerifyURL = double.URL })
	ts.MustSetOptions(t, "TurnstileSiteKey", "k", "TurnstileSecretKey", "s", "TurnstileCheckEnabled", "true")
	ApiScenario{Method: "POST", URL: "/api/user/login?turnstile=good-1", Body: `{}`,
		WantStatus: 502, WantContains: []string{"Turnstile 校验服务不可用"}}.Test(t, ts)
}

// A Turnstile token is at most 2048 characters (Cloudflare's documented
// bound). The server keeps every token it was given for ten minutes to
// refuse its reuse, so an anonymous client sending a login, a registration
// or a mail request with a token of a megabyte (the request line may be
// that long) made it hold a megabyte per request: twenty per address per
// twenty minutes under the critical limit, from as many addresses (an IPv6
// /64 each) as the client has. A token that cannot be one is refused
// without being kept or sent to Cloudflare.
func TestTurnstile_OversizedTokenIsNotKept(t *testing.T) {
	t.Parallel()
	double := startTurnstileDouble(t, "s")
	ts := MustStartServer(t, func(c *api.Config) { c.TurnstileVerifyURL = double.URL })
	ts.MustSetOptions(t, "TurnstileSiteKey", "k", "TurnstileSecretKey", "s", "TurnstileCheckEnabled", "true")
	for i := 0; i < 3; i++ {
		token := strings.Repeat(string(rune('a'+i)), 256<<10)
		resp, err := http.Post(ts.URL+"/api/user/login?turnstile="+token, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("login with a token of 256 KiB: status %d, want 403", resp.StatusCode)
		}
	}
	if n := api.TurnstileHeldBytes(ts.API); n > 3*2048 {
		t.Errorf("the server keeps %d bytes of tokens after three oversized ones", n)
	}
	if calls := double.Calls(); len(calls) != 0 {
		t.Errorf("siteverify was asked %d times about tokens no widget makes", len(calls))
	}
	// A token of a real size still passes.
	ApiScenario{Method: "POST", URL: "/api/user/login?turnstile=good-" + strings.Repeat("x", 2000), Body: `{}`,
		WantStatus: 400, WantContains: []string{msg("请输入用户名和密码！")}}.Test(t, ts)
}
