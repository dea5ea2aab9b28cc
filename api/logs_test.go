package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"gateway/api"
	"gateway/store"
)

// logPageOf is the data of the log list routes.
type logPageOf struct {
	Items    []map[string]any `json:"items"`
	Total    int              `json:"total"`
	Page     int              `json:"page"`
	PageSize int              `json:"page_size"`
}

type logFixture struct {
	*consoleEnv
	admin, alice, bob          *store.User
	adminTok, aliceTok, bobTok string
}

// newLogFixture writes 20 entries: alice has 12 consume entries at
// t=1001..1012 (even ones on gpt-4o via channel 7 and token "a-main", odd
// ones on claude-3 via channel 8 and token "a-side", quota = 10 × i) and a
// topup at 1013; bob has 6 consume entries at 1101..1106 on gpt-4o via
// channel 7 with token "b-main", quota 1; one system entry has no user.
func newLogFixture(t *testing.T) *logFixture {
	t.Helper()
	f := &logFixture{consoleEnv: newConsoleEnv(t)}
	f.admin, f.adminTok = f.mustUser("admin1", store.RoleAdmin)
	f.alice, f.aliceTok = f.mustUser("alice1", store.RoleCommon)
	f.bob, f.bobTok = f.mustUser("bob1", store.RoleCommon)
	add := func(l store.Log) {
		t.Helper()
		if err := f.store.AppendLog(&l); err != nil {
			t.Fatal(err)
		}
	}
	other := `{"model_ratio":15,"admin_info":{"use_channel":["7","8"]},"group_ratio":1}`
	for i := 1; i <= 12; i++ {
		l := store.Log{UserID: f.alice.ID, Username: "alice1", CreatedAt: int64(1000 + i), Type: store.LogTypeConsume,
			TokenName: "a-side", ModelName: "claude-3", ChannelID: 8, Quota: int64(10 * i), Other: other,
			Content: fmt.Sprintf("alice call %d", i), PromptTokens: 3, CompletionTokens: 4}
		if i%2 == 0 {
			l.TokenName, l.ModelName, l.ChannelID = "a-main", "gpt-4o", 7
		}
		add(l)
	}
	add(store.Log{UserID: f.alice.ID, Username: "alice1", CreatedAt: 1013, Type: store.LogTypeTopup, Quota: 5000, Content: "alice topup"})
	for i := 1; i <= 6; i++ {
		add(store.Log{UserID: f.bob.ID, Username: "bob1", CreatedAt: int64(1100 + i), Type: store.LogTypeConsume,
			TokenName: "b-main", ModelName: "gpt-4o", ChannelID: 7, Quota: 1, Other: other, Content: "bob call"})
	}
	add(store.Log{CreatedAt: 1200, Type: store.LogTypeSystem, Content: "system note"})
	return f
}

func (f *logFixture) page(url, token string) logPageOf {
	f.tb.Helper()
	return decodeData[logPageOf](f.tb, f.mustOK("GET", url, token, nil))
}

func TestLogAdminListAndFilters(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	cases := []struct {
		name      string
		query     string
		wantTotal int
		wantItems int
		wantPage  int
	}{
		{"all", "", 20, 10, 1},
		{"page 2 of 3", "?p=2&page_size=3", 20, 3, 2},
		{"p below 1 is 1", "?p=0&page_size=3", 20, 3, 1},
		{"last page", "?p=7&page_size=3", 20, 2, 7},
		{"past the end", "?p=9&page_size=3", 20, 0, 9},
		{"huge page", "?p=9223372036854775807&page_size=1000", 20, 0, 1 << 24},
		{"page_size 0 gives 10", "?page_size=0", 20, 10, 1},
		{"type consume", "?type=2&page_size=100", 18, 18, 1},
		{"type topup", "?type=1", 1, 1, 1},
		{"model", "?model_name=gpt-4o&page_size=100", 12, 12, 1},
		{"model LIKE", "?model_name=claude%25", 6, 6, 1},
		{"token name", "?token_name=a-main", 6, 6, 1},
		{"time range", "?start_timestamp=1005&end_timestamp=1010", 6, 6, 1},
		{"username", "?username=bob1", 6, 6, 1},
		{"unknown username", "?username=nobody", 0, 0, 1},
		{"channel", "?channel=8", 6, 6, 1},
		{"channel and username", "?channel=7&username=alice1", 6, 6, 1},
		{"everything", "?type=2&username=alice1&model_name=gpt-4o&token_name=a-main&start_timestamp=1004&end_timestamp=1008", 3, 3, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := f.page("/api/log/"+c.query, f.adminTok)
			if p.Total != c.wantTotal || len(p.Items) != c.wantItems || p.Page != c.wantPage {
				t.Fatalf("total %d items %d page %d, want %d %d %d", p.Total, len(p.Items), p.Page, c.wantTotal, c.wantItems, c.wantPage)
			}
		})
	}
	// Newest first; the admin sees ids, channels and admin_info.
	p := f.page("/api/log/?page_size=2", f.adminTok)
	if p.Items[0]["content"] != "system note" || p.Items[1]["content"] != "bob call" {
		t.Fatalf("order: %v", p.Items)
	}
	r := f.mustOK("GET", "/api/log/?username=alice1&page_size=1&type=2", f.adminTok, nil)
	for _, s := range []string{`"id":`, `"channel":7`, "admin_info"} {
		if !strings.Contains(r.Raw, s) {
			t.Errorf("admin item lacks %s: %s", s, r.Raw)
		}
	}
	// The admin page size is capped at 1000.
	if p := f.page("/api/log/?page_size=5000", f.adminTok); p.PageSize != 1000 {
		t.Fatalf("admin page size %d, want 1000", p.PageSize)
	}
}

func TestLogSelfView(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	for _, url := range []string{"/api/log/self/", "/api/log/self"} {
		p := f.page(url+"?page_size=100", f.aliceTok)
		if p.Total != 13 || len(p.Items) != 13 {
			t.Fatalf("%s: total %d items %d, want 13", url, p.Total, len(p.Items))
		}
		for _, it := range p.Items {
			if _, ok := it["id"]; ok {
				t.Fatalf("self item has id: %v", it)
			}
			if _, ok := it["channel"]; ok {
				t.Fatalf("self item has channel: %v", it)
			}
			if it["username"] != "alice1" {
				t.Fatalf("foreign row: %v", it)
			}
		}
	}
	r := f.mustOK("GET", "/api/log/self/?type=2&page_size=1", f.aliceTok, nil)
	if strings.Contains(r.Raw, "admin_info") || strings.Contains(r.Raw, "use_channel") || !strings.Contains(r.Raw, "model_ratio") {
		t.Fatalf("self other not stripped right: %s", r.Raw)
	}
	// username and channel are not filters for users: bob still sees only his.
	p := f.page("/api/log/self/?username=alice1&channel=8", f.bobTok)
	if p.Total != 6 {
		t.Fatalf("bob with alice filter: total %d, want his own 6", p.Total)
	}
	// Shared filters work, and the self page size is capped at 100.
	p = f.page("/api/log/self/?model_name=gpt-4o&start_timestamp=1003&end_timestamp=1009&page_size=500", f.aliceTok)
	if p.Total != 3 || p.PageSize != 100 {
		t.Fatalf("self filtered: total %d size %d, want 3 100", p.Total, p.PageSize)
	}
	// Self search is scoped too and stripped.
	r = f.mustOK("GET", "/api/log/self/search?keyword=2", f.bobTok, nil)
	items := decodeData[[]map[string]any](t, r)
	if len(items) != 6 || strings.Contains(r.Raw, "admin_info") || strings.Contains(r.Raw, "alice") {
		t.Fatalf("bob self search: %d items %s", len(items), r.Raw)
	}
	// The keyword is a type only, never a content prefix (S §8).
	for _, kw := range []string{"bob", "0", "x"} {
		if items := decodeData[[]map[string]any](t, f.mustOK("GET", "/api/log/self/search?keyword="+kw, f.bobTok, nil)); len(items) != 0 {
			t.Fatalf("self search %q matched %d entries", kw, len(items))
		}
	}
}

func TestLogAdminRoutesRefusedForUsers(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	var scenarios []consoleScenario
	for _, rt := range []struct{ method, url string }{
		{"GET", "/api/log/"}, {"DELETE", "/api/log/?target_timestamp=5000"},
		{"GET", "/api/log/stat"}, {"GET", "/api/log/search?keyword=alice"},
	} {
		scenarios = append(scenarios,
			consoleScenario{name: "user " + rt.method + " " + rt.url, method: rt.method, url: rt.url, token: f.aliceTok,
				wantStatus: 403, wantNotContains: []string{"alice call"}},
			consoleScenario{name: "guest " + rt.method + " " + rt.url, method: rt.method, url: rt.url, wantStatus: 401})
	}
	f.run(t, scenarios)
	if p := f.page("/api/log/", f.adminTok); p.Total != 20 {
		t.Fatalf("refused delete removed entries: total %d", p.Total)
	}
}

func TestLogSearchAndDelete(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	r := f.mustOK("GET", "/api/log/search?keyword=alice%20call%201", f.adminTok, nil)
	if items := decodeData[[]map[string]any](t, r); len(items) != 4 { // 1, 10, 11, 12
		t.Fatalf("search by content prefix: %d items", len(items))
	}
	r = f.mustOK("GET", "/api/log/search?keyword=1", f.adminTok, nil)
	if items := decodeData[[]map[string]any](t, r); len(items) != 1 || items[0]["content"] != "alice topup" {
		t.Fatalf("search by type: %v", items)
	}

	f.run(t, []consoleScenario{
		{name: "missing timestamp", method: "DELETE", url: "/api/log/", token: f.adminTok,
			wantStatus: 400, wantContains: []string{"请选择日志记录时间"}},
		{name: "zero timestamp", method: "DELETE", url: "/api/log/?target_timestamp=0", token: f.adminTok,
			wantStatus: 400, wantContains: []string{"请选择日志记录时间"}},
		{name: "garbage timestamp", method: "DELETE", url: "/api/log/?target_timestamp=abc", token: f.adminTok,
			wantStatus: 400, wantContains: []string{"参数 target_timestamp 必须是整数"}},
		// Past int64's end: refused, not read as the end of time (which
		// would clear every log).
		{name: "timestamp out of range", method: "DELETE", url: "/api/log/?target_timestamp=9223372036854775808", token: f.adminTok,
			wantStatus: 400, wantContains: []string{"参数 target_timestamp 必须是整数"}},
		{name: "list with a start out of range", method: "GET", url: "/api/log/?start_timestamp=9223372036854775808", token: f.adminTok,
			wantStatus: 400, wantContains: []string{"参数 start_timestamp 必须是整数"}},
		{name: "self list with a garbage end", method: "GET", url: "/api/log/self/?end_timestamp=abc", token: f.adminTok,
			wantStatus: 400, wantContains: []string{"参数 end_timestamp 必须是整数"}},
		{name: "dashboard with a garbage start", method: "GET", url: "/api/data/?start_timestamp=x", token: f.adminTok,
			wantStatus: 400, wantContains: []string{"参数 start_timestamp 必须是整数"}},
		{name: "empty start is no filter", method: "GET", url: "/api/log/?start_timestamp=", token: f.adminTok, wantStatus: 200},
		{name: "channel that is not an id", method: "GET", url: "/api/log/?channel=abc", token: f.adminTok,
			wantStatus: 400, wantContains: []string{"渠道 ID 必须是正整数"}},
		{name: "stat with a channel that is not an id", method: "GET", url: "/api/log/stat?channel=3a", token: f.adminTok,
			wantStatus: 400, wantContains: []string{"渠道 ID 必须是正整数"}},
		{name: "type that is not an integer", method: "GET", url: "/api/log/?type=2.5", token: f.adminTok,
			wantStatus: 400, wantContains: []string{"参数 type 必须是整数"}},
		{name: "self type that is not an integer", method: "GET", url: "/api/log/self/?type=abc", token: f.adminTok,
			wantStatus: 400, wantContains: []string{"参数 type 必须是整数"}},
		{name: "empty type is no filter", method: "GET", url: "/api/log/?type=", token: f.adminTok, wantStatus: 200},
		{name: "channel 0 is no filter", method: "GET", url: "/api/log/?channel=0", token: f.adminTok, wantStatus: 200},
		{name: "before 1006", method: "DELETE", url: "/api/log/?target_timestamp=1006", token: f.adminTok,
			wantStatus: 200, wantContains: []string{"5 条日志已清理！", `"data":5`}},
		{name: "again", method: "DELETE", url: "/api/log/?target_timestamp=1006", token: f.adminTok,
			wantStatus: 200, wantContains: []string{"0 条日志已清理！"}},
	})
	if p := f.page("/api/log/", f.adminTok); p.Total != 15 {
		t.Fatalf("after delete: total %d, want 15", p.Total)
	}
	if p := f.page("/api/log/?username=alice1&start_timestamp=1", f.adminTok); p.Total != 8 {
		t.Fatalf("alice after delete: total %d, want 8", p.Total)
	}

	// A clear stopped by a shutdown (which ends every request's context)
	// says so, with what it cleared, instead of an empty 200.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("DELETE", "/api/log/?target_timestamp=2000", nil).WithContext(ctx)
	req.Header.Set("Authorization", "Bearer "+f.adminTok)
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "日志清理被中断：已清理 0 条") {
		t.Fatalf("a clear stopped before it began: %d %s", rec.Code, rec.Body)
	}
	if p := f.page("/api/log/", f.adminTok); p.Total != 15 {
		t.Fatalf("a stopped clear removed entries: total %d", p.Total)
	}
}

type logStat struct {
	Quota int64 `json:"quota"`
	RPM   int64 `json:"rpm"`
	TPM   int64 `json:"tpm"`
}

func TestLogStat(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	stat := func(url, token string) logStat {
		t.Helper()
		return decodeData[logStat](t, f.mustOK("GET", url, token, nil))
	}
	// alice consume quota: 10 × (1+…+12) = 780; bob 6.
	for _, c := range []struct {
		url, token string
		want       int64
	}{
		{"/api/log/stat", f.adminTok, 786},
		{"/api/log/stat?type=1", f.adminTok, 786}, // type is ignored
		{"/api/log/stat?username=alice1", f.adminTok, 780},
		{"/api/log/stat?channel=7", f.adminTok, 10*(2+4+6+8+10+12) + 6},
		{"/api/log/stat?model_name=gpt-4o&username=bob1", f.adminTok, 6},
		{"/api/log/stat?start_timestamp=1011", f.adminTok, 110 + 120 + 6},
		{"/api/log/stat?username=nobody", f.adminTok, 0},
		{"/api/log/self/stat", f.aliceTok, 780},
		{"/api/log/self/stat?token_name=a-main&end_timestamp=1004", f.aliceTok, 20 + 40},
		{"/api/log/self/stat", f.bobTok, 6},
	} {
		if got := stat(c.url, c.token); got.Quota != c.want {
			t.Errorf("%s: quota %d, want %d", c.url, got.Quota, c.want)
		}
	}

	// rpm and tpm come from the recent-activity window. The window is
	// process-wide, so this test's events use token names no other test (nor
	// another run of this one, with -count) uses.
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	tokA, tokB := "stat-"+run+"-A", "stat-"+run+"-B"
	api.RecordActivity(api.ActivityEvent{UserID: f.alice.ID, TokenName: tokA, Model: "gpt-4o", ChannelID: 7, Tokens: 100})
	api.RecordActivity(api.ActivityEvent{UserID: f.alice.ID, TokenName: tokA, Model: "gpt-4o", ChannelID: 8, Tokens: 50})
	api.RecordActivity(api.ActivityEvent{UserID: f.alice.ID, TokenName: tokB, Model: "claude-3", ChannelID: 8, Tokens: 7})
	api.RecordActivity(api.ActivityEvent{UserID: f.alice.ID, TokenName: tokA, Model: "gpt-4o", Time: time.Now().Add(-2 * time.Minute), Tokens: 1000})
	if got := stat("/api/log/self/stat?token_name="+tokA, f.aliceTok); got.RPM != 2 || got.TPM != 150 {
		t.Errorf("self rpm/tpm = %d/%d, want 2/150", got.RPM, got.TPM)
	}
	if got := stat("/api/log/self/stat?token_name="+tokA, f.bobTok); got.RPM != 0 || got.TPM != 0 {
		t.Errorf("bob sees alice's activity: %d/%d", got.RPM, got.TPM)
	}
	if got := stat("/api/log/stat?channel=8&token_name="+tokA, f.adminTok); got.RPM != 1 || got.TPM != 50 {
		t.Errorf("admin channel rpm/tpm = %d/%d, want 1/50", got.RPM, got.TPM)
	}
	if got := stat("/api/log/stat?username=alice1&token_name="+tokB, f.adminTok); got.RPM != 1 || got.TPM != 7 {
		t.Errorf("admin username rpm/tpm = %d/%d, want 1/7", got.RPM, got.TPM)
	}
}

func TestRecentActivity(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	a := api.NewRecentActivity()
	a.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	a.Add(api.ActivityEvent{UserID: 1, TokenName: "t1", Model: "gpt-4o", ChannelID: 7, Tokens: 10})
	a.Add(api.ActivityEvent{UserID: 1, TokenName: "t1", Model: "gpt-4o-mini", ChannelID: 8, Tokens: 20})
	a.Add(api.ActivityEvent{UserID: 2, TokenName: "t2", Model: "claude-3", ChannelID: 7, Tokens: 40})
	a.Add(api.ActivityEvent{UserID: 2, Time: now.Add(-61 * time.Second), Tokens: 1000}) // too old
	a.Add(api.ActivityEvent{UserID: 2, Time: now.Add(-30 * time.Second), Model: "late", Tokens: 5})

	cases := []struct {
		name     string
		f        api.ActivityFilter
		rpm, tpm int64
	}{
		{"all", api.ActivityFilter{}, 4, 75},
		{"user", api.ActivityFilter{UserID: 1}, 2, 30},
		{"token", api.ActivityFilter{TokenName: "t2"}, 1, 40},
		{"model exact", api.ActivityFilter{Model: "gpt-4o"}, 1, 10},
		{"model like", api.ActivityFilter{Model: "gpt-4o%"}, 2, 30},
		{"channel", api.ActivityFilter{ChannelID: 7}, 2, 50},
		{"user and channel", api.ActivityFilter{UserID: 1, ChannelID: 8}, 1, 20},
		{"no match", api.ActivityFilter{UserID: 3}, 0, 0},
	}
	for _, c := range cases {
		if rpm, tpm := a.Stats(c.f); rpm != c.rpm || tpm != c.tpm {
			t.Errorf("%s: %d/%d, want %d/%d", c.name, rpm, tpm, c.rpm, c.tpm)
		}
	}

	// 31 s later the late event (30 s old when added) has left the window.
	advance(31 * time.Second)
	if rpm, tpm := a.Stats(api.ActivityFilter{}); rpm != 3 || tpm != 70 {
		t.Errorf("after 31 s: %d/%d, want 3/70", rpm, tpm)
	}
	// 60 s after the first events they are gone too; a new one counts.
	advance(29 * time.Second)
	a.Add(api.ActivityEvent{UserID: 9, Tokens: 1})
	if rpm, tpm := a.Stats(api.ActivityFilter{}); rpm != 1 || tpm != 1 {
		t.Errorf("after 60 s: %d/%d, want 1/1", rpm, tpm)
	}
	// A slot reused a minute later starts empty.
	advance(60 * time.Second)
	a.Add(api.ActivityEvent{UserID: 9, Tokens: 2})
	if rpm, tpm := a.Stats(api.ActivityFilter{UserID: 9}); rpm != 1 || tpm != 2 {
		t.Errorf("reused slot: %d/%d, want 1/2", rpm, tpm)
	}

	// Concurrent adds are all counted (and race-free under -race).
	b := api.NewRecentActivity()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 500 {
				b.Add(api.ActivityEvent{UserID: uint64(g), Tokens: 2})
			}
		}()
	}
	wg.Wait()
	if rpm, tpm := b.Stats(api.ActivityFilter{}); rpm != 4000 || tpm != 8000 {
		t.Errorf("concurrent: %d/%d, want 4000/8000", rpm, tpm)
	}
}

func TestStripAdminInfoInSelfSearch(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	u, tok := e.mustUser("gina", store.RoleCommon)
	for _, other := range []string{
		"",
		`{"admin_info":{"use_channel":["3"]}}`,
		`not json admin_info`,
		`{"frt":12.5,"admin_info":null,"ws":true}`,
		`{"model_ratio":1,"upstream_model":"provider-secret-model"}`,
	} {
		if err := e.store.AppendLog(&store.Log{UserID: u.ID, Username: "gina", Type: store.LogTypeConsume, Content: "x", Other: other}); err != nil {
			t.Fatal(err)
		}
	}
	r := e.mustOK("GET", "/api/log/self/search?keyword=2", tok, nil)
	if strings.Contains(r.Raw, "admin_info") || strings.Contains(r.Raw, "provider-secret-model") {
		t.Fatalf("admin_info or the upstream model shown: %s", r.Raw)
	}
	var items []struct {
		Other string `json:"other"`
	}
	if err := json.Unmarshal(r.Data, &items); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, it := range items {
		got[it.Other] = true
	}
	for _, want := range []string{"", "{}", `{"frt":12.5,"ws":true}`, `{"model_ratio":1}`} {
		if !got[want] {
			t.Errorf("missing other %q in %v", want, got)
		}
	}
}
