package api_test

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"gateway/store"
)

// optionValues reads GET /api/option/ as root into key -> value.
func optionValues(tb testing.TB, ts *TestServer) map[string]string {
	tb.Helper()
	r := ApiScenario{URL: "/api/option/", As: "root", WantStatus: 200}.Test(tb, ts)
	var list []struct{ Key, Value string }
	r.Envelope(tb).DataInto(tb, &list)
	out := map[string]string{}
	for _, o := range list {
		out[o.Key] = o.Value
	}
	return out
}

func TestOptions(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "SMTPToken", "smtp-s3cret", "GitHubClientSecret", "gh-s3cret", "TurnstileSecretKey", "ts-s3cret")

	r := ApiScenario{URL: "/api/option/", As: "root", WantStatus: 200,
		WantContains:    []string{`"key":"SystemName"`, `"key":"ModelRatio"`},
		WantNotContains: []string{"SMTPToken", "smtp-s3cret", "GitHubClientSecret", "gh-s3cret", "TurnstileSecretKey", "ts-s3cret", "EpayKey", "WorkerValidKey"},
	}.Test(t, ts)
	_ = r
	before := optionValues(t, ts)
	if before["ModelRatio"] == "" {
		t.Fatal("ModelRatio missing from the list")
	}

	runScenarios(t, ts, []ApiScenario{
		{Name: "BadJSONRatio", Method: "PUT", URL: "/api/option/", As: "root",
			Body:       `{"key":"ModelRatio","value":"{\"gpt-4\": 15"}`,
			WantStatus: 400, WantContains: []string{"不是合法的 JSON 字符串"}},
		{Name: "DuplicateRatio", Method: "PUT", URL: "/api/option/", As: "root",
			Body:       `{"key":"GroupRatio","value":"{\"default\":1,\"default\":2}"}`,
			WantStatus: 400, WantContains: []string{msg("GroupRatio 中的 default 出现了不止一次")}},
		{Name: "DuplicateModelWithSlash", Method: "PUT", URL: "/api/option/", As: "root",
			Body:       `{"key":"ModelRatio","value":"{\"Qwen/Qwen2.5\":1,\"Qwen/Qwen2.5\":2}"}`,
			WantStatus: 400, WantContains: []string{msg("ModelRatio 中的 Qwen/Qwen2.5 出现了不止一次")}},
		{Name: "DuplicateChatName", Method: "PUT", URL: "/api/option/", As: "root",
			Body:       `{"key":"Chats","value":"[{\"a\":\"x\",\"a\":\"y\"}]"}`,
			WantStatus: 400, WantContains: []string{msg("Chats 中的 0/a 出现了不止一次")}},
		{Name: "UnknownKey", Method: "PUT", URL: "/api/option/", As: "root", Body: `{"key":"NoSuchKey","value":"1"}`,
			WantStatus: 400, WantContains: []string{"未知的配置项"}},
		// S §4.1's keys without effect are still stored for clients that save them.
		{Name: "StopOnSensitive", Method: "PUT", URL: "/api/option/", As: "root", Body: `{"key":"StopOnSensitiveEnabled","value":"false"}`,
			WantStatus: 200},
		{Name: "StreamCacheQueueLength", Method: "PUT", URL: "/api/option/", As: "root", Body: `{"key":"StreamCacheQueueLength","value":"5"}`,
			WantStatus: 200},
		{Name: "BadBool", Method: "PUT", URL: "/api/option/", As: "root", Body: `{"key":"RegisterEnabled","value":"yes"}`,
			WantStatus: 400},
		{Name: "ObjectValue", Method: "PUT", URL: "/api/option/", As: "root", Body: `{"key":"Notice","value":{"a":1}}`,
			WantStatus: 400, WantContains: []string{msg("配置值必须是字符串、布尔值或数字")}},
		{Name: "EnableWithoutPrerequisite", Method: "PUT", URL: "/api/option/", As: "root",
			Body: `{"key":"GitHubOAuthEnabled","value":"true"}`, WantStatus: 400, WantContains: []string{"GitHubClientId"}},
		{Name: "Notice", Method: "PUT", URL: "/api/option/", As: "root", Body: `{"key":"Notice","value":"hello <b>all</b>"}`,
			WantStatus: 200, WantContains: []string{msg("保存成功")}},
		{Name: "BoolAsJSON", Method: "PUT", URL: "/api/option/", As: "root", Body: `{"key":"RegisterEnabled","value":false}`,
			WantStatus: 200},
		{Name: "NumberAsJSON", Method: "PUT", URL: "/api/option/", As: "root", Body: `{"key":"QuotaForNewUser","value":250}`,
			WantStatus: 200},
		{Name: "TrailingSlash", Method: "PUT", URL: "/api/option/", As: "root", Body: `{"key":"ServerAddress","value":"https://gw.example.com/"}`,
			WantStatus: 200},
		{Name: "GoodRatio", Method: "PUT", URL: "/api/option/", As: "root", Body: `{"key":"CompletionRatio","value":"{\"m\":3}"}`,
			WantStatus: 200},
		{Name: "MissingValue", Method: "PUT", URL: "/api/option/", As: "root", Body: `{"key":"Notice"}`,
			WantStatus: 400, WantContains: []string{msg("缺少配置值（value）")}},
		{Name: "AdminRefused", Method: "PUT", URL: "/api/option/", As: "admin", Body: `{"key":"Notice","value":"x"}`,
			WantStatus: 403},
	})

	after := optionValues(t, ts)
	if after["ModelRatio"] != before["ModelRatio"] {
		t.Error("a refused ModelRatio changed the listed value")
	}
	if ts.Store.Settings().ModelRatio["gpt-4"] != 15 {
		t.Error("a refused ModelRatio changed the live map")
	}
	for k, want := range map[string]string{
		"Notice": "hello <b>all</b>", "RegisterEnabled": "false", "QuotaForNewUser": "250",
		"ServerAddress": "https://gw.example.com", "CompletionRatio": `{"m":3}`,
	} {
		if after[k] != want {
			t.Errorf("%s = %q, want %q", k, after[k], want)
		}
	}
	ApiScenario{URL: "/api/notice", WantStatus: 200, WantContains: []string{`"data":` + jsonString("hello <b>all</b>")}}.Test(t, ts)
}

func TestResetModelRatio(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "ModelRatio", `{"only-model":1}`)
	ApiScenario{Method: "POST", URL: "/api/option/rest_model_ratio", As: "root", WantStatus: 200,
		WantContains: []string{`"success":true`}}.Test(t, ts)
	set := ts.Store.Settings()
	if len(set.ModelRatio) != len(store.DefaultModelRatio) || set.ModelRatio["only-model"] != 0 {
		t.Fatalf("ModelRatio after reset has %d entries", len(set.ModelRatio))
	}
	var listed map[string]float64
	if err := json.Unmarshal([]byte(optionValues(t, ts)["ModelRatio"]), &listed); err != nil || len(listed) != len(store.DefaultModelRatio) {
		t.Fatalf("listed ModelRatio: %v (%d entries)", err, len(listed))
	}
	ApiScenario{Method: "POST", URL: "/api/option/rest_model_ratio", As: "admin", WantStatus: 403}.Test(t, ts)
}

func TestSiteText(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "Notice", "the notice", "About", "# about\nus", "HomePageContent", "https://home.example.com")
	for path, want := range map[string]string{
		"/api/notice":            "the notice",
		"/api/about":             "# about\nus",
		"/api/home_page_content": "https://home.example.com",
	} {
		var got string
		ApiScenario{URL: path, WantStatus: 200}.Test(t, ts).Envelope(t).DataInto(t, &got)
		if got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
}

// statusFields is every field of the public status object: A §3 "Public
// status object" and S §4.3.
var statusFields = strings.Fields(`
	system_name logo footer_html quota_per_unit display_in_currency enable_drawing enable_task
	enable_data_export chats data_export_default_time default_collapse_sidebar mj_notify_enabled
	chat_link chat_link2 email_verification turnstile_check turnstile_site_key github_oauth
	github_client_id linuxdo_oauth linuxdo_client_id wechat_login wechat_qrcode telegram_oauth
	telegram_bot_name
	version start_time server_address price min_topup top_up_link enable_batch_update
	enable_online_topup`)

func TestStatus(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	get := func() map[string]json.RawMessage {
		var m map[string]json.RawMessage
		ApiScenario{URL: "/api/status", WantStatus: 200}.Test(t, ts).Envelope(t).DataInto(t, &m)
		return m
	}
	status := get()
	for _, f := range statusFields {
		if _, ok := status[f]; !ok {
			t.Errorf("status has no %q", f)
		}
	}
	for f, want := range map[string]string{
		"system_name": `"New API"`, "logo": `"/logo.png"`, "quota_per_unit": "500000", "display_in_currency": "true",
		"version": `"test-version"`, "start_time": "1700000000", "server_address": `"http://localhost:3000"`,
		"price": "7.3", "min_topup": "1", "enable_online_topup": "false", "email_verification": "false",
		"github_oauth": "false", "data_export_default_time": `"hour"`, "enable_drawing": "true",
	} {
		if got := string(status[f]); got != want {
			t.Errorf("status %s = %s, want %s", f, got, want)
		}
	}
	var chats []map[string]string
	if err := json.Unmarshal(status["chats"], &chats); err != nil || len(chats) != 4 {
		t.Errorf("chats = %s", status["chats"])
	}
	for _, secret := range []string{"SMTPToken", "EpayKey", "secret"} {
		if strings.Contains(strings.ToLower(string(mustJSON(t, status))), strings.ToLower(secret)) {
			t.Errorf("status mentions %q", secret)
		}
	}

	ts.MustSetOptions(t, "PayAddress", "https://pay.example.com", "EpayId", "1001", "EpayKey", "k",
		"SystemName", "My Gateway", "Logo", "https://cdn.example.com/l.png", "GitHubClientId", "gh-id", "GitHubOAuthEnabled", "true",
		"Chats", "[]")
	status = get()
	for f, want := range map[string]string{
		"enable_online_topup": "true", "system_name": `"My Gateway"`, "logo": `"https://cdn.example.com/l.png"`,
		"github_oauth": "true", "github_client_id": `"gh-id"`, "chats": "[]",
	} {
		if got := string(status[f]); got != want {
			t.Errorf("after saving, status %s = %s, want %s", f, got, want)
		}
	}
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// GET /api/status/test (S §3.1): administrators learn whether the data file
// answers; others are refused.
func TestStatusCheck(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	runScenarios(t, ts, []ApiScenario{
		{Name: "Guest", URL: "/api/status/test", WantStatus: 401},
		{Name: "User", URL: "/api/status/test", As: "user", WantStatus: 403},
		{Name: "Admin", URL: "/api/status/test", As: "admin", WantStatus: 200,
			WantContains: []string{`"success":true`, `"message":"Server is running"`}},
		// Within 10 s the last check stands.
		{Name: "Again", URL: "/api/status/test", As: "root", WantStatus: 200},
	})
}

// A change the data file cannot take (a full disk; here a file size limit
// below the file's pages: Go's runtime ignores the SIGXFSZ that comes with
// it) answers 503 数据文件写入失败, which tells the operator where to look,
// instead of 500 "Internal error."; the data-file check says so too.
func TestAFileThatRefusesWritesAnswers503(t *testing.T) {
	ts := MustStartServer(t)
	cookie, uid := ts.MustSession(t, "root")
	limitFileSize(t, 8<<10)
	ApiScenario{Method: "PUT", URL: "/api/option/", Cookie: cookie, UserID: uid,
		Body:       `{"key":"Notice","value":"` + strings.Repeat("x", 5000) + `"}`,
		WantStatus: 503, WantContains: []string{`"success":false`, msg("数据文件写入失败")}}.Test(t, ts)
	ApiScenario{URL: "/api/status/test", Cookie: cookie, UserID: uid, WantStatus: 503}.Test(t, ts)
}

// A logout the data file cannot write (a full disk) still ends the session:
// the cookie is cleared and the session refused from then on, although
// the answer tells that the file refused the change.
func TestLogoutWhileTheFileRefusesWrites(t *testing.T) {
	ts := MustStartServer(t)
	cookie, uid := ts.MustSession(t, "alice")
	ApiScenario{URL: "/api/user/self", Cookie: cookie, UserID: uid, WantStatus: 200}.Test(t, ts)
	limitFileSize(t, 8<<10)
	r := ApiScenario{Method: "POST", URL: "/api/user/logout", Cookie: cookie, UserID: uid,
		WantStatus: 503, WantContains: []string{msg("数据文件写入失败")}}.Test(t, ts)
	cleared := false
	for _, c := range r.Cookies() {
		if c.Name == "session" && c.MaxAge < 0 {
			cleared = true
		}
	}
	if !cleared {
		t.Errorf("the session cookie is not cleared: %v", r.Header["Set-Cookie"])
	}
	ApiScenario{URL: "/api/user/self", Cookie: cookie, UserID: uid, WantStatus: 401}.Test(t, ts)
}

// limitFileSize makes every write past size bytes of any file fail, as a
// full disk does (Go's runtime ignores the SIGXFSZ that comes with it),
// until the test ends. The limit holds for the whole process: tests that
// use it do not run in parallel.
func limitFileSize(t *testing.T, size uint64) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: size, Max: old.Max}); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) })
}
