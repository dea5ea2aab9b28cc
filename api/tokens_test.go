package api_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"gateway/api"
	"gateway/policy"
	"gateway/store"
	"gateway/ws"
)

// ---- shared fixture of the token, log and channel tests ----

// consoleEnv is a server over a real store in a temp dir.
type consoleEnv struct {
	tb    testing.TB
	store *store.Store
	srv   *api.Server
}

func newConsoleEnv(tb testing.TB) *consoleEnv {
	tb.Helper()
	return newConsoleEnvAt(tb, filepath.Join(tb.TempDir(), "data.db"))
}

// newConsoleEnvAt serves the data file at path, which a test may have
// prepared.
func newConsoleEnvAt(tb testing.TB, path string) *consoleEnv {
	tb.Helper()
	st, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	pol, err := policy.New()
	if err != nil {
		tb.Fatalf("policy: %v", err)
	}
	srv := api.New(api.Config{Store: st, Policy: pol, Hub: ws.NewHub()})
	tb.Cleanup(func() { srv.Close(); st.Close() })
	return &consoleEnv{tb: tb, store: st, srv: srv}
}

// mustUser creates an account and returns it with a system access token.
func (e *consoleEnv) mustUser(name string, role int) (*store.User, string) {
	e.tb.Helper()
	u, err := e.store.CreateUser(store.NewUser{Username: name, Password: "password-" + name, Role: role})
	if err != nil {
		e.tb.Fatalf("create user %s: %v", name, err)
	}
	tok, err := e.store.ResetAccessToken(u.ID)
	if err != nil {
		e.tb.Fatalf("access token: %v", err)
	}
	return u, tok
}

// consoleReply is one answer: status, raw body and the decoded envelope.
type consoleReply struct {
	Status  int
	Header  http.Header
	Raw     string
	Success bool
	Message string
	Data    json.RawMessage
}

// call sends a request with a bearer access token (none when token is "").
// body may be nil, a string (sent as is) or a value encoded as JSON.
func (e *consoleEnv) call(method, url, token string, body any) consoleReply {
	e.tb.Helper()
	var rd *bytes.Reader
	switch b := body.(type) {
	case nil:
		rd = bytes.NewReader(nil)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.tb.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(data)
	}
	req := httptest.NewRequest(method, url, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	out := consoleReply{Status: rec.Code, Header: rec.Header(), Raw: rec.Body.String()}
	var env struct {
		Success bool            `json:"success"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err == nil {
		out.Success, out.Message, out.Data = env.Success, env.Message, env.Data
	}
	return out
}

// No /api answer may be kept by a cache: they carry token keys, access
// tokens and balances; refusals are not kept either.
func TestAPIAnswersAreNotCached(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	_, tok := e.mustUser("nocache", store.RoleCommon)
	for _, r := range []consoleReply{
		e.mustOK("GET", "/api/token/", tok, nil),
		e.mustOK("GET", "/api/user/self", tok, nil),
		e.call("GET", "/api/user/self", "", nil),
		e.call("GET", "/api/channel/", tok, nil),
	} {
		if got := r.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("Cache-Control %q on %d %s", got, r.Status, r.Raw)
		}
	}
}

// mustOK calls and fails the test unless the answer is 200 with success.
func (e *consoleEnv) mustOK(method, url, token string, body any) consoleReply {
	e.tb.Helper()
	r := e.call(method, url, token, body)
	if r.Status != http.StatusOK || !r.Success {
		e.tb.Fatalf("%s %s: status %d body %s", method, url, r.Status, r.Raw)
	}
	return r
}

func decodeData[T any](tb testing.TB, r consoleReply) T {
	tb.Helper()
	var v T
	if err := json.Unmarshal(r.Data, &v); err != nil {
		tb.Fatalf("decode data %s: %v", r.Data, err)
	}
	return v
}

// consoleScenario is one request test as data, in PocketBase's style.
type consoleScenario struct {
	name            string
	method, url     string
	token           string
	body            any
	wantStatus      int
	wantContains    []string
	wantNotContains []string
}

func (e *consoleEnv) run(t *testing.T, scenarios []consoleScenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			r := e.call(sc.method, sc.url, sc.token, sc.body)
			if r.Status != sc.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", r.Status, sc.wantStatus, r.Raw)
			}
			for _, s := range sc.wantContains {
				if !strings.Contains(r.Raw, s) {
					t.Errorf("body lacks %q: %s", s, r.Raw)
				}
			}
			for _, s := range sc.wantNotContains {
				if strings.Contains(r.Raw, s) {
					t.Errorf("body contains %q: %s", s, r.Raw)
				}
			}
		})
	}
}

// ---- tokens ----

// mustCreateToken creates a token through the API and returns it.
func (e *consoleEnv) mustCreateToken(token string, body map[string]any) store.Token {
	e.tb.Helper()
	r := e.mustOK("POST", "/api/token/", token, body)
	return decodeData[store.Token](e.tb, r)
}

func TestTokenCRUDScopedToOwner(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	_, tokA := e.mustUser("alice", store.RoleCommon)
	_, tokB := e.mustUser("bob", store.RoleCommon)

	a1 := e.mustCreateToken(tokA, map[string]any{"name": "a-one", "remain_quota": 500000})
	if len(a1.Key) != store.TokenKeyLen || strings.HasPrefix(a1.Key, "sk-") {
		t.Fatalf("key %q: want 48 characters without sk-", a1.Key)
	}
	if a1.Status != store.TokenStatusEnabled || a1.ExpiredTime != -1 {
		t.Fatalf("defaults: status %d expired %d", a1.Status, a1.ExpiredTime)
	}
	b1 := e.mustCreateToken(tokB, map[string]any{"name": "b-one"})
	aURL := fmt.Sprintf("/api/token/%d", a1.ID)

	e.run(t, []consoleScenario{
		{name: "owner gets own token with key", method: "GET", url: aURL, token: tokA,
			wantStatus: 200, wantContains: []string{a1.Key, `"name":"a-one"`}},
		{name: "other user gets 404", method: "GET", url: aURL, token: tokB,
			wantStatus: 404, wantNotContains: []string{a1.Key}},
		{name: "guest gets 401", method: "GET", url: aURL, wantStatus: 401},
		{name: "B list lacks A tokens", method: "GET", url: "/api/token/?p=0&size=10", token: tokB,
			wantStatus: 200, wantContains: []string{b1.Key}, wantNotContains: []string{a1.Key, "a-one"}},
		{name: "B search lacks A tokens", method: "GET", url: "/api/token/search?keyword=one", token: tokB,
			wantStatus: 200, wantContains: []string{"b-one"}, wantNotContains: []string{"a-one"}},
		{name: "B cannot edit A token", method: "PUT", url: "/api/token/", token: tokB,
			body: map[string]any{"id": a1.ID, "name": "stolen"}, wantStatus: 404},
		{name: "B cannot toggle A token", method: "PUT", url: "/api/token/?status_only=true", token: tokB,
			body: map[string]any{"id": a1.ID, "status": 2}, wantStatus: 404},
		{name: "B cannot delete A token", method: "DELETE", url: aURL, token: tokB, wantStatus: 404},
		{name: "bad id", method: "GET", url: "/api/token/abc", token: tokA, wantStatus: 400},
		{name: "deeper path under the slash twin", method: "DELETE", url: aURL + "/x", token: tokA, wantStatus: 404},
	})

	// The edit keeps omitted fields and writes zeros that are present.
	r := e.mustOK("PUT", "/api/token/", tokA, map[string]any{"id": a1.ID, "name": "a-renamed", "remain_quota": 0, "unlimited_quota": true})
	up := decodeData[store.Token](t, r)
	if up.Name != "a-renamed" || up.RemainQuota != 0 || !up.UnlimitedQuota || up.ExpiredTime != -1 || up.Key != a1.Key {
		t.Fatalf("after edit: %+v", up)
	}
	// id may come as a string.
	r = e.mustOK("PUT", "/api/token/", tokA, fmt.Sprintf(`{"id":"%d","allow_ips":"10.0.0.1\n192.168.0.0/16"}`, a1.ID))
	if up = decodeData[store.Token](t, r); up.Name != "a-renamed" || up.AllowIPs != "10.0.0.1\n192.168.0.0/16" {
		t.Fatalf("after string-id edit: %+v", up)
	}

	// Delete through the trailing-slash twin; the key stops working.
	e.mustOK("DELETE", aURL+"/", tokA, nil)
	if r := e.call("GET", aURL, tokA, nil); r.Status != 404 {
		t.Fatalf("deleted token: status %d", r.Status)
	}
	if _, err := e.store.TokenByKey(a1.Key); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("deleted key still resolves: %v", err)
	}
	if r := e.call("DELETE", aURL, tokA, nil); r.Status != 404 {
		t.Fatalf("second delete: status %d", r.Status)
	}
}

func TestTokenCreateValidation(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	_, tok := e.mustUser("carol", store.RoleCommon)
	e.run(t, []consoleScenario{
		{name: "name required", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "  "}, wantStatus: 400, wantContains: []string{"令牌名称不能为空"}},
		{name: "name over 30 bytes", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": strings.Repeat("名", 11)}, wantStatus: 400, wantContains: []string{"令牌名称过长"}},
		{name: "bad expiry", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "x", "expired_time": -5}, wantStatus: 400, wantContains: []string{"过期时间格式错误！"}},
		{name: "name not UTF-8", method: "POST", url: "/api/token/", token: tok,
			body: "{\"name\":\"\xff\xfe\"}", wantStatus: 400, wantContains: []string{"字符串中有不合法的 UTF-8 字节"}},
		{name: "expiry beyond the year 9999", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "x", "expired_time": 253402300800}, wantStatus: 400, wantContains: []string{"过期时间格式错误！"}},
		{name: "negative quota", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "x", "remain_quota": -1}, wantStatus: 400, wantContains: []string{"额度不能为负数"}},
		{name: "edit without an id", method: "PUT", url: "/api/token/", token: tok,
			body: map[string]any{"name": "x"}, wantStatus: 400, wantContains: []string{`"message":"缺少 id"`}},
		{name: "created expired", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "x", "status": 3}, wantStatus: 400, wantContains: []string{"新令牌的状态只能是启用（1）或禁用（2）"}},
		{name: "created with an unknown status", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "x", "status": 7}, wantStatus: 400, wantContains: []string{"新令牌的状态只能是启用（1）或禁用（2）"}},
		{name: "control character in the name", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "a\x00b"}, wantStatus: 400, wantContains: []string{"令牌名称不能包含控制字符"}},
		{name: "quota as text", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "x", "remain_quota": "5"}, wantStatus: 400, wantContains: []string{`"message":"无效的参数：字段 remain_quota 应为整数"`}},
		{name: "quota beyond int64", method: "POST", url: "/api/token/", token: tok,
			body: `{"name":"x","remain_quota":9223372036854776000}`, wantStatus: 400, wantContains: []string{`"message":"无效的参数：字段 remain_quota 超出范围"`}},
		{name: "quota written as a decimal", method: "POST", url: "/api/token/", token: tok,
			body: `{"name":"x","remain_quota":1e2}`, wantStatus: 400, wantContains: []string{`"message":"无效的参数：字段 remain_quota 应为整数（不带小数点或指数）"`}},
		{name: "quota beyond the bound", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "x", "remain_quota": int64(1) << 60}, wantStatus: 400, wantContains: []string{"额度不能超过"}},
		{name: "bad ip", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "x", "allow_ips": "10.0.0.1\nnot-an-ip"}, wantStatus: 400, wantContains: []string{"not-an-ip"}},
		{name: "unusable group", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "x", "group": "svip"}, wantStatus: 400, wantContains: []string{"svip"}},
		{name: "unknown group", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "x", "group": "nope"}, wantStatus: 400},
		{name: "not JSON", method: "POST", url: "/api/token/", token: tok, body: "{", wantStatus: 400},
		{name: "usable group", method: "POST", url: "/api/token/", token: tok,
			body:       map[string]any{"name": "vip-token", "group": "vip", "model_limits_enabled": true, "model_limits": []string{"gpt-4o", " gpt-4o-mini", "gpt-4o"}},
			wantStatus: 200, wantContains: []string{`"group":"vip"`, `"model_limits":"gpt-4o,gpt-4o-mini"`, "令牌创建成功"}},
		{name: "expiry 0 becomes -1", method: "POST", url: "/api/token/", token: tok,
			body: map[string]any{"name": "never", "expired_time": 0}, wantStatus: 200, wantContains: []string{`"expired_time":-1`}},
	})

	// Editing keeps a group that is no longer usable, but refuses to move to one.
	r := e.mustOK("GET", "/api/token/search?keyword=vip", tok, nil)
	vip := decodeData[[]store.Token](t, r)[0]
	if err := e.store.UpdateOption("UserUsableGroups", `{"default":"默认分组"}`); err != nil {
		t.Fatal(err)
	}
	e.mustOK("PUT", "/api/token/", tok, map[string]any{"id": vip.ID, "name": "vip-renamed", "group": "vip"})
	if r := e.call("PUT", "/api/token/", tok, map[string]any{"id": vip.ID, "group": "svip"}); r.Status != 400 {
		t.Fatalf("move to unusable group: %d %s", r.Status, r.Raw)
	}
	if r := e.call("PUT", "/api/token/", tok, map[string]any{"id": vip.ID, "name": ""}); r.Status != 400 || !strings.Contains(r.Message, "令牌名称不能为空") {
		t.Fatalf("empty name on edit: %d %s", r.Status, r.Raw)
	}
}

func TestTokenStatusRules(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	_, tok := e.mustUser("dave", store.RoleCommon)
	expired := e.mustCreateToken(tok, map[string]any{"name": "expired", "expired_time": 1000, "remain_quota": 100, "status": 2})
	exhausted := e.mustCreateToken(tok, map[string]any{"name": "exhausted", "remain_quota": 0, "status": 2})
	ok := e.mustCreateToken(tok, map[string]any{"name": "ok", "remain_quota": 100})
	if expired.Status != store.TokenStatusDisabled {
		t.Fatalf("create with status 2: got %d", expired.Status)
	}
	e.run(t, []consoleScenario{
		{name: "expired cannot be enabled", method: "PUT", url: "/api/token/?status_only=true", token: tok,
			body: map[string]any{"id": expired.ID, "status": 1}, wantStatus: 400, wantContains: []string{"令牌已过期"}},
		{name: "exhausted cannot be enabled", method: "PUT", url: "/api/token/?status_only=1", token: tok,
			body: map[string]any{"id": exhausted.ID, "status": 1}, wantStatus: 400, wantContains: []string{"令牌可用额度已用尽"}},
		{name: "unknown status", method: "PUT", url: "/api/token/?status_only=true", token: tok,
			body: map[string]any{"id": ok.ID, "status": 3}, wantStatus: 400},
		{name: "status missing", method: "PUT", url: "/api/token/?status_only=true", token: tok,
			body: map[string]any{"id": ok.ID}, wantStatus: 400},
		{name: "disable", method: "PUT", url: "/api/token/?status_only=true", token: tok,
			body: map[string]any{"id": ok.ID, "status": 2}, wantStatus: 200, wantContains: []string{`"status":2`}},
		{name: "enable again", method: "PUT", url: "/api/token/?status_only=true", token: tok,
			body: map[string]any{"id": ok.ID, "status": 1}, wantStatus: 200, wantContains: []string{`"status":1`}},
	})

	// status_only writes nothing but the status.
	r := e.mustOK("PUT", "/api/token/?status_only=true", tok, map[string]any{"id": ok.ID, "status": 2, "name": "ignored", "remain_quota": 7})
	if got := decodeData[store.Token](t, r); got.Name != "ok" || got.RemainQuota != 100 || got.Status != 2 {
		t.Fatalf("status_only wrote more: %+v", got)
	}
	// A full edit ignores the status field.
	r = e.mustOK("PUT", "/api/token/", tok, map[string]any{"id": ok.ID, "status": 1, "name": "ok2"})
	if got := decodeData[store.Token](t, r); got.Status != 2 || got.Name != "ok2" {
		t.Fatalf("full edit changed status: %+v", got)
	}
	// Fixing the cause makes enabling possible.
	e.mustOK("PUT", "/api/token/", tok, map[string]any{"id": expired.ID, "expired_time": -1})
	e.mustOK("PUT", "/api/token/?status_only=true", tok, map[string]any{"id": expired.ID, "status": 1})
	e.mustOK("PUT", "/api/token/", tok, map[string]any{"id": exhausted.ID, "unlimited_quota": true})
	e.mustOK("PUT", "/api/token/?status_only=true", tok, map[string]any{"id": exhausted.ID, "status": 1})
}

// An enabled token past its expiry is listed, searched, read, created and
// saved as expired, before any call finds it out; the record keeps its
// status, so fixing the expiry shows it enabled again.
func TestTokenShownExpired(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	_, tok := e.mustUser("erin", store.RoleCommon)
	past := e.mustCreateToken(tok, map[string]any{"name": "past", "expired_time": 1000, "remain_quota": 100})
	if past.Status != store.TokenStatusExpired {
		t.Fatalf("created with a past expiry: status %d, want 3", past.Status)
	}
	live := e.mustCreateToken(tok, map[string]any{"name": "live", "expired_time": -1, "remain_quota": 100})
	statuses := func(url string) map[string]int {
		out := map[string]int{}
		for _, x := range decodeData[[]store.Token](t, e.mustOK("GET", url, tok, nil)) {
			out[x.Name] = x.Status
		}
		return out
	}
	want := map[string]int{"past": store.TokenStatusExpired, "live": store.TokenStatusEnabled}
	for _, url := range []string{"/api/token/?p=0&size=10", "/api/token/search?keyword="} {
		if got := statuses(url); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: statuses %v, want %v", url, got, want)
		}
	}
	if got := decodeData[store.Token](t, e.mustOK("GET", fmt.Sprintf("/api/token/%d", past.ID), tok, nil)); got.Status != store.TokenStatusExpired {
		t.Errorf("get: status %d, want 3", got.Status)
	}
	if got := decodeData[store.Token](t, e.mustOK("PUT", "/api/token/", tok, map[string]any{"id": past.ID, "name": "past2"})); got.Status != store.TokenStatusExpired {
		t.Errorf("saved without a new expiry: status %d, want 3", got.Status)
	}
	if got := decodeData[store.Token](t, e.mustOK("PUT", "/api/token/", tok, map[string]any{"id": past.ID, "expired_time": -1})); got.Status != store.TokenStatusEnabled {
		t.Errorf("saved with no expiry: status %d, want 1", got.Status)
	}
	if got := decodeData[store.Token](t, e.mustOK("GET", fmt.Sprintf("/api/token/%d", live.ID), tok, nil)); got.Status != store.TokenStatusEnabled {
		t.Errorf("a live token: status %d", got.Status)
	}
}

func TestTokenSearchAndPaging(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	_, tok := e.mustUser("erin", store.RoleCommon)
	var made []store.Token
	for i := range 12 {
		made = append(made, e.mustCreateToken(tok, map[string]any{"name": fmt.Sprintf("t%02d", i)}))
	}
	target := made[5]
	part := target.Key[10:20]

	list := func(url string) []store.Token { return decodeData[[]store.Token](t, e.mustOK("GET", url, tok, nil)) }
	if got := list("/api/token/search?token=sk-" + target.Key); len(got) != 1 || got[0].ID != target.ID {
		t.Fatalf("search by sk- key: %d results", len(got))
	}
	if got := list("/api/token/search?token=" + part); len(got) != 1 || got[0].ID != target.ID {
		t.Fatalf("search by key part: %d results", len(got))
	}
	// "sk-" is stripped as a prefix, not as a character set: "k" + the key's
	// start is not in any key (a character-set trim would find the token).
	if got := list("/api/token/search?token=k" + target.Key[:8]); len(got) != 0 {
		t.Fatalf("k-prefixed fragment: %d results, want 0", len(got))
	}
	if got := list("/api/token/search?keyword=t05&token=" + target.Key[:6]); len(got) != 1 {
		t.Fatalf("search by name and key: %d results", len(got))
	}
	if got := list("/api/token/search?keyword=zzz"); len(got) != 0 {
		t.Fatalf("no match: %d results", len(got))
	}
	if r := e.mustOK("GET", "/api/token/search?keyword=zzz", tok, nil); string(r.Data) != "[]" {
		t.Fatalf("empty search data = %s, want []", r.Data)
	}

	// Newest first; size ≤ 0 gives 10; p is 0-based.
	if got := list("/api/token/?p=0&size=0"); len(got) != 10 || got[0].Name != "t11" {
		t.Fatalf("default page: %d items, first %q", len(got), got[0].Name)
	}
	if got := list("/api/token/?p=1&size=5"); len(got) != 5 || got[0].Name != "t06" {
		t.Fatalf("second page of 5: %d items, first %q", len(got), got[0].Name)
	}
	if got := list("/api/token/?p=2&size=5"); len(got) != 2 {
		t.Fatalf("last page: %d items", len(got))
	}
	if got := list("/api/token/?p=-3&size=1000"); len(got) != 12 {
		t.Fatalf("capped size: %d items", len(got))
	}
	if got := list("/api/token/?p=9223372036854775807&size=100"); len(got) != 0 {
		t.Fatalf("huge page: %d items", len(got))
	}
}

func TestTokenRoutesWithSessionCookie(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	u, _ := e.mustUser("frank", store.RoleCommon)
	req := httptest.NewRequest("POST", "/api/user/login", strings.NewReader(`{"username":"frank","password":"password-frank"}`))
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("login: %d %s", rec.Code, rec.Body)
	}
	cookies := rec.Result().Cookies()
	req = httptest.NewRequest("POST", "/api/token/", strings.NewReader(`{"name":"from-cookie"}`))
	for _, c := range cookies {
		req.AddCookie(c)
	}
	req.Header.Set("New-Api-User", fmt.Sprint(u.ID))
	rec = httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "from-cookie") {
		t.Fatalf("create with session: %d %s", rec.Code, rec.Body)
	}
}

// A list field (a comma-joined string or an array of strings) that holds
// something else is refused with the field's name.
func TestListFieldsNameThemselves(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	runScenarios(t, ts, []ApiScenario{
		{Name: "TokenModelLimits", Method: "POST", URL: "/api/token/", As: "user",
			Body:       `{"name":"t","model_limits":[1]}`,
			WantStatus: 400, WantContains: []string{"无效的参数：字段 model_limits 应为字符串或字符串数组"}},
		{Name: "ChannelModels", Method: "POST", URL: "/api/channel/", As: "admin",
			Body:       `{"name":"c","type":1,"key":"sk-x","models":[1],"group":"default"}`,
			WantStatus: 400, WantContains: []string{"无效的参数：字段 models 应为字符串或字符串数组"}},
		{Name: "OtherCase", Method: "POST", URL: "/api/token/", As: "user",
			Body:       `{"name":"t","Model_Limits":[1]}`,
			WantStatus: 400, WantContains: []string{"无效的参数：字段 Model_Limits 应为字符串或字符串数组"}},
		{Name: "ChannelGroup", Method: "POST", URL: "/api/channel/", As: "admin",
			Body:       `{"name":"c","type":1,"key":"sk-x","models":"m","group":{"a":1}}`,
			WantStatus: 400, WantContains: []string{"无效的参数：字段 group 应为字符串或字符串数组"}},
	})
}

// S §3.5: the search is `name LIKE %kw% AND key LIKE %t%`, with the LIKE of
// the databases S runs on: ASCII case does not count and % and _ are
// wildcards, in the key as in the name (as the redemption search has it).
func TestTokenSearchIsLike(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	_, tok := e.mustUser("lena", store.RoleCommon)
	target := e.mustCreateToken(tok, map[string]any{"name": "alpha-1"})
	e.mustCreateToken(tok, map[string]any{"name": "beta"})
	swap := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z':
				return r - 'a' + 'A'
			case r >= 'A' && r <= 'Z':
				return r - 'A' + 'a'
			}
			return r
		}, s)
	}
	list := func(url string) []store.Token { return decodeData[[]store.Token](t, e.mustOK("GET", url, tok, nil)) }
	if got := list("/api/token/search?token=" + swap(target.Key[5:25])); len(got) != 1 || got[0].ID != target.ID {
		t.Fatalf("search by a key part in the other case: %d results, want the token", len(got))
	}
	if got := list("/api/token/search?keyword=ALPHA_1"); len(got) != 1 || got[0].ID != target.ID {
		t.Fatalf("search by name with _ and other case: %d results, want the token", len(got))
	}
	if got := list("/api/token/search?keyword=al%25-1"); len(got) != 1 || got[0].ID != target.ID {
		t.Fatalf("search by name with %%: %d results, want the token", len(got))
	}
}

// S §3.5: model_limits is a CSV of at most 1024 characters. Model names are
// free text (Chinese ones included): a list within 1024 characters is kept
// even when its UTF-8 form is longer than 1024 bytes.
func TestTokenModelLimitsCountCharacters(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	_, tok := e.mustUser("mei", store.RoleCommon)
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("中文模型%02d", i) // 6 characters, 14 bytes
	}
	csv := strings.Join(names, ",") // 699 characters, 1 499 bytes
	r := e.call("POST", "/api/token/", tok, map[string]any{"name": "中文", "model_limits_enabled": true, "model_limits": csv})
	if r.Status != 200 || !strings.Contains(r.Raw, csv) {
		t.Fatalf("699-character limits list: %d %s", r.Status, r.Message)
	}
	over := strings.Repeat("模", 1025)
	if r := e.call("POST", "/api/token/", tok, map[string]any{"name": "x", "model_limits_enabled": true, "model_limits": over}); r.Status != 400 {
		t.Fatalf("1025-character limits list: %d, want 400", r.Status)
	}
}
