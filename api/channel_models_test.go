package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// modelsUpstream answers GET /v1/models in OpenAI's list format for the
// given key only, and 401 with OpenAI's error object otherwise.
func modelsUpstream(t *testing.T, key string, ids ...string) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"message":"Unknown request URL","type":"invalid_request_error"}}`)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		fmt.Fprint(w, `{"object":"list","data":[`)
		for i, id := range ids {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, `{"id":%q,"object":"model","created":1686935002,"owned_by":"organization-owner"}`, id)
		}
		fmt.Fprint(w, `]}`)
	}))
	t.Cleanup(up.Close)
	return up
}

func TestChannelFetchModels(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	saved := modelsUpstream(t, "secret-models", "gpt-4o", "gpt-4o-mini")
	moved := modelsUpstream(t, "secret-models", "o3-mini")
	c := f.create(map[string]any{"name": "lister", "type": 1, "key": "secret-models", "models": "gpt-4o", "base_url": saved.URL})[0]
	az := f.create(map[string]any{"name": "azure-lister", "type": 3, "key": "secret-models", "models": "gpt-4o", "base_url": saved.URL})[0]

	ids := func(method, url string, body any) []string {
		t.Helper()
		return decodeData[[]string](t, f.mustOK(method, url, f.adminTok, body))
	}
	if got := ids("GET", fmt.Sprintf("/api/channel/fetch_models/%d", c.ID), nil); !slices.Equal(got, []string{"gpt-4o", "gpt-4o-mini"}) {
		t.Fatalf("saved channel: %v", got)
	}
	// An edit form asks with the stored key where the channel points.
	if got := ids("POST", "/api/channel/fetch_models", map[string]any{"id": c.ID, "type": 1, "base_url": saved.URL + "/"}); !slices.Equal(got, []string{"gpt-4o", "gpt-4o-mini"}) {
		t.Fatalf("edit form with the stored key: %v", got)
	}
	// An edit form pointed elsewhere brings the key itself.
	if got := ids("POST", "/api/channel/fetch_models", map[string]any{"id": c.ID, "type": 1, "base_url": moved.URL, "key": "secret-models"}); !slices.Equal(got, []string{"o3-mini"}) {
		t.Fatalf("edit form with a new base URL and its key: %v", got)
	}
	// A base URL written with /v1, as providers print it, lists at /v1/models, not /v1/v1/models.
	if got := ids("POST", "/api/channel/fetch_models", map[string]any{"type": 25, "base_url": saved.URL + "/v1", "key": "secret-models"}); !slices.Equal(got, []string{"gpt-4o", "gpt-4o-mini"}) {
		t.Fatalf("base URL ending in /v1: %v", got)
	}
	// An unsaved form brings its key.
	if got := ids("POST", "/api/channel/fetch_models", map[string]any{"type": 8, "base_url": saved.URL, "key": "secret-models\nsecond-line"}); !slices.Equal(got, []string{"gpt-4o", "gpt-4o-mini"}) {
		t.Fatalf("unsaved form: %v", got)
	}

	f.run(t, []consoleScenario{
		{name: "type without a model list", method: "POST", url: "/api/channel/fetch_models", token: f.adminTok,
			body: map[string]any{"type": 14, "base_url": saved.URL, "key": "k"}, wantStatus: 400, wantContains: []string{`"message":"仅支持 OpenAI 接口格式"`}},
		// The type is checked before the key (A §5).
		{name: "type without a model list and no key", method: "POST", url: "/api/channel/fetch_models", token: f.adminTok,
			body: map[string]any{"type": 14, "base_url": saved.URL}, wantStatus: 400, wantContains: []string{`"message":"仅支持 OpenAI 接口格式"`}},
		{name: "no key", method: "POST", url: "/api/channel/fetch_models", token: f.adminTok,
			body: map[string]any{"type": 1, "base_url": saved.URL}, wantStatus: 400, wantContains: []string{"请填写密钥"}},
		{name: "the stored key to another base URL", method: "POST", url: "/api/channel/fetch_models", token: f.adminTok,
			body: map[string]any{"id": c.ID, "type": 1, "base_url": moved.URL}, wantStatus: 400, wantContains: []string{"更换了类型或 Base URL，请重新填写密钥"}},
		// A form that names no type asks as the channel's type, never as
		// OpenAI with another type's key.
		{name: "the stored key without a type", method: "POST", url: "/api/channel/fetch_models", token: f.adminTok,
			body: map[string]any{"id": az.ID, "base_url": saved.URL}, wantStatus: 400, wantContains: []string{`"message":"仅支持 OpenAI 接口格式"`}},
		{name: "the stored key for another type", method: "POST", url: "/api/channel/fetch_models", token: f.adminTok,
			body: map[string]any{"id": c.ID, "type": 8, "base_url": saved.URL}, wantStatus: 400, wantContains: []string{"更换了类型或 Base URL，请重新填写密钥"}},
		{name: "base URL not http", method: "POST", url: "/api/channel/fetch_models", token: f.adminTok,
			body: map[string]any{"type": 1, "base_url": "ftp://x", "key": "k"}, wantStatus: 400, wantContains: []string{"代理（Base URL）必须是 http 或 https 地址"}},
		{name: "unknown channel", method: "POST", url: "/api/channel/fetch_models", token: f.adminTok,
			body: map[string]any{"id": 999, "type": 1}, wantStatus: 404},
		{name: "upstream refuses the key", method: "POST", url: "/api/channel/fetch_models", token: f.adminTok,
			body: map[string]any{"type": 1, "base_url": saved.URL, "key": "wrong"}, wantStatus: 502, wantContains: []string{"获取模型列表失败：", "Incorrect API key provided"}},
		{name: "users may not", method: "POST", url: "/api/channel/fetch_models", token: f.userTok,
			body: map[string]any{"id": c.ID, "type": 1}, wantStatus: 403, wantNotContains: []string{"gpt-4o"}},
	})
}

// Updating every balance says how many channels failed; the list says why.
func TestChannelUpdateAllBalancesCountsFailures(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	billing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/dashboard/billing/subscription":
			fmt.Fprint(w, `{"object":"billing_subscription","has_payment_method":true,"hard_limit_usd":100}`)
		case "/v1/dashboard/billing/usage":
			fmt.Fprint(w, `{"object":"list","total_usage":2500}`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(billing.Close)
	missing := modelsUpstream(t, "secret-balance") // no billing endpoints: 404
	good := f.create(map[string]any{"name": "billed", "type": 1, "key": "secret-balance", "models": "gpt-4o", "base_url": billing.URL})[0]
	f.create(map[string]any{"name": "unbilled", "type": 1, "key": "secret-balance", "models": "gpt-4o", "base_url": missing.URL})

	r := f.mustOK("GET", "/api/channel/update_balance", f.adminTok, nil)
	if r.Message != "已更新 1 个渠道的余额，1 个更新失败" {
		t.Fatalf("message %q", r.Message)
	}
	type result struct {
		ID      uint64  `json:"id"`
		Balance float64 `json:"balance"`
		Error   string  `json:"error"`
	}
	for _, b := range decodeData[[]result](t, r) {
		if (b.ID == good.ID) != (b.Error == "") || b.ID == good.ID && b.Balance != 75 {
			t.Errorf("result %+v", b)
		}
	}
	f.mustOK("PUT", "/api/channel/", f.adminTok, map[string]any{"id": good.ID + 1, "status": 2})
	if r := f.mustOK("GET", "/api/channel/update_balance", f.adminTok, nil); r.Message != "已更新所有已启用渠道的余额" {
		t.Fatalf("message with the failing channel disabled: %q", r.Message)
	}
	// One channel's balance, with or without a trailing slash; a deeper
	// path is no such call, and nothing is asked upstream for it.
	for _, u := range []string{fmt.Sprintf("/api/channel/update_balance/%d", good.ID), fmt.Sprintf("/api/channel/update_balance/%d/", good.ID)} {
		if r := f.call("GET", u, f.adminTok, nil); r.Status != http.StatusOK || !strings.Contains(string(r.Raw), `"balance":75`) {
			t.Fatalf("GET %s: %d %s", u, r.Status, r.Raw)
		}
	}
	for _, u := range []string{fmt.Sprintf("/api/channel/update_balance/%d/x", good.ID), fmt.Sprintf("/api/channel/update_balance/%d/x/%d/", good.ID, good.ID)} {
		if r := f.call("GET", u, f.adminTok, nil); r.Status != http.StatusNotFound {
			t.Fatalf("GET %s: %d %s", u, r.Status, r.Raw)
		}
	}
}

// A key typed into the channel form is judged as a saved channel's key is:
// a control character cannot go into the Authorization header, and that is
// the form's mistake (400, A §5's message), not a failing upstream (502),
// and no request leaves.
func TestChannelFetchModelsKeyWithControlCharacter(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	var asked atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"gpt-4o"}]}`)
	}))
	t.Cleanup(up.Close)
	for name, key := range map[string]string{"NUL": "sk-a\x00b", "carriage return": "sk-a\rb", "DEL": "sk-a\x7fb"} {
		r := f.call("POST", "/api/channel/fetch_models", f.adminTok, map[string]any{"type": 1, "base_url": up.URL, "key": key})
		if r.Status != http.StatusBadRequest || r.Success || r.Message != "密钥不能包含控制字符" {
			t.Errorf("%s: status %d, body %s; want 400 密钥不能包含控制字符", name, r.Status, r.Raw)
		}
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the upstream was asked %d times", n)
	}
}

// One update of every balance runs at a time: a second one asked for while
// the first still waits on a provider is refused (409) and asks no provider,
// and once the first ends another may start.
func TestChannelUpdateAllBalancesOneAtATime(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	var inFlight, most atomic.Int32
	entered := make(chan struct{}, 16)
	release := make(chan struct{})
	billing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		entered <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/dashboard/billing/subscription":
			fmt.Fprint(w, `{"object":"billing_subscription","has_payment_method":true,"hard_limit_usd":100}`)
		default:
			fmt.Fprint(w, `{"object":"list","total_usage":2500}`)
		}
	}))
	t.Cleanup(billing.Close)
	f.create(map[string]any{"name": "billed", "type": 1, "key": "secret-balance", "models": "gpt-4o", "base_url": billing.URL})

	first := make(chan int, 1)
	go func() { first <- f.call("GET", "/api/channel/update_balance", f.adminTok, nil).Status }()
	<-entered // the first update waits on the provider
	second := make(chan consoleReply, 1)
	go func() { second <- f.call("GET", "/api/channel/update_balance", f.adminTok, nil) }()
	select {
	case r := <-second:
		if r.Status != http.StatusConflict || !strings.Contains(string(r.Raw), "已有一个余额更新任务正在运行") {
			close(release)
			t.Fatalf("second update while the first runs: %d %s", r.Status, r.Raw)
		}
	case <-entered:
		close(release)
		<-second
		t.Fatalf("a second update asked the provider while the first still waited on it")
	}
	close(release)
	if s := <-first; s != http.StatusOK {
		t.Fatalf("first update: %d", s)
	}
	if m := most.Load(); m != 1 {
		t.Fatalf("%d balance queries at once", m)
	}
	if r := f.mustOK("GET", "/api/channel/update_balance", f.adminTok, nil); r.Message != "已更新所有已启用渠道的余额" {
		t.Fatalf("update after the first ended: %q", r.Message)
	}
}

// A 200 that carries no model list is a failure the console is told of, not
// an empty list that would clear the form's suggested models.
func TestChannelFetchModelsAnswerWithoutList(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.Header.Get("Authorization") {
		case "Bearer error-object":
			fmt.Fprint(w, `{"error":{"message":"该令牌额度已用尽","type":"new_api_error"}}`)
		case "Bearer success-false":
			fmt.Fprint(w, `{"success":false,"message":"无效的令牌"}`)
		case "Bearer no-list":
			fmt.Fprint(w, `{"object":"list"}`)
		case "Bearer null-list":
			// Ollama while it has no model pulled.
			fmt.Fprint(w, `{"object":"list","data":null}`)
		default:
			fmt.Fprint(w, `{"object":"list","data":[]}`)
		}
	}))
	t.Cleanup(up.Close)
	form := func(key string) map[string]any { return map[string]any{"type": 1, "base_url": up.URL, "key": key} }
	if got := decodeData[[]string](t, f.mustOK("POST", "/api/channel/fetch_models", f.adminTok, form("empty-list"))); len(got) != 0 {
		t.Fatalf("an empty list: %v", got)
	}
	if got := decodeData[[]string](t, f.mustOK("POST", "/api/channel/fetch_models", f.adminTok, form("null-list"))); got == nil || len(got) != 0 {
		t.Fatalf("a list whose data is null: %v, want an empty list", got)
	}
	f.run(t, []consoleScenario{
		{name: "an error object", method: "POST", url: "/api/channel/fetch_models", token: f.adminTok,
			body: form("error-object"), wantStatus: 502, wantContains: []string{"获取模型列表失败：", "该令牌额度已用尽"}},
		{name: "success false", method: "POST", url: "/api/channel/fetch_models", token: f.adminTok,
			body: form("success-false"), wantStatus: 502, wantContains: []string{"获取模型列表失败：", "无效的令牌"}},
		{name: "no data member", method: "POST", url: "/api/channel/fetch_models", token: f.adminTok,
			body: form("no-list"), wantStatus: 502, wantContains: []string{"上游返回的模型列表格式错误"}},
	})
}
