package relay_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/store"
)

// callRevoked makes one call through a channel (edited by edit) whose
// upstream refuses its key with 401, checks the client got the error, and
// returns the upstream, the channel as it is afterwards and the caller's
// token key.
func (g *gateway) callRevoked(t *testing.T, edit func(c *store.Channel)) (*relaytest.Upstream, *store.Channel, string) {
	t.Helper()
	up := relaytest.NewChat(t, "sk-revoked", failWith(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided"))
	ch := g.MustCreateChannel(t, up, ratioModel, edit)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi")).wantError(t, http.StatusUnauthorized, "bad_response_status_code")
	fresh, err := g.st.Channel(ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	return up, fresh, key
}

// An upstream 401 shows the channel's key is unusable: with automatic
// disabling on, a channel that allows it is disabled (status 3, with the
// reason in other_info) and leaves routing; with auto_ban 0 it stays.
func TestHealth_AutoDisable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		autoBan    int
		wantStatus int
	}{
		{"auto_ban on", 1, store.ChannelStatusAutoDisabled},
		{"auto_ban off", 0, store.ChannelStatusEnabled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"AutomaticDisableChannelEnabled": "true"}})
			up, fresh, key := g.callRevoked(t, func(c *store.Channel) { c.AutoBan = tc.autoBan })
			if fresh.Status != tc.wantStatus {
				t.Fatalf("channel status = %d, want %d", fresh.Status, tc.wantStatus)
			}
			if tc.wantStatus == store.ChannelStatusEnabled {
				if fresh.OtherInfo != "" {
					t.Errorf("other_info = %q on an enabled channel", fresh.OtherInfo)
				}
				return
			}
			var info store.ChannelStatusInfo
			if err := json.Unmarshal([]byte(fresh.OtherInfo), &info); err != nil || !strings.Contains(info.StatusReason, "401") || info.StatusTime == 0 {
				t.Errorf("other_info = %q, want the reason and time", fresh.OtherInfo)
			}
			// The disabled channel no longer routes.
			res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
			res.wantError(t, http.StatusServiceUnavailable, "model_not_found")
			if up.Hits() != 1 {
				t.Errorf("upstream hits = %d, want 1", up.Hits())
			}
		})
	}
}

// The "message contains" rules of S §5.9 do not judge an answer that
// refuses the request itself (400, 404, 413, 422): such a message quotes
// what the client sent, so any token holder could otherwise disable the
// channels one by one by sending the phrase. The other rules still apply
// to those statuses.
func TestHealth_MessageRulesIgnoreQuotedRequests(t *testing.T) {
	t.Parallel()
	quoted := "Invalid value: 'Operation not allowed'. Supported values are: 'system', 'assistant', 'user'."
	for _, tc := range []struct {
		name     string
		status   int
		typ      string
		msg      string
		disabled bool
	}{
		{"400 quoting the request", 400, "invalid_request_error", quoted, false},
		{"422 quoting the request", 422, "invalid_request_error", "Operation not allowed is not a role", false},
		{"403 saying it", 403, "", "Operation not allowed for this account", true},
		{"400 with a start rule", 400, "invalid_request_error", "Your credit balance is too low to access the API", true},
		{"400 with a type rule", 400, "insufficient_quota", "quota", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"AutomaticDisableChannelEnabled": "true"}})
			up := relaytest.NewChat(t, "sk-up", failWith(tc.status, tc.typ, "", tc.msg))
			ch := g.MustCreateChannel(t, up, ratioModel, func(c *store.Channel) { c.AutoBan = 1 })
			_, key := g.MustCreateToken(t, "alice", store.Token{})
			body := map[string]any{"model": ratioModel, "messages": []any{map[string]any{"role": "Operation not allowed", "content": "hi"}}}
			if res := g.post(t, key, "/v1/chat/completions", body); res.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", res.Status, tc.status, res.Body)
			}
			fresh, err := g.st.Channel(ch.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got := fresh.Status == store.ChannelStatusAutoDisabled; got != tc.disabled {
				t.Fatalf("channel status %d: disabled %v, want %v", fresh.Status, got, tc.disabled)
			}
		})
	}
}

// rootGet calls a console route as root with a system access token.
func (g *gateway) rootGet(t *testing.T, path string) map[string]any {
	t.Helper()
	token, err := g.st.ResetAccessToken(fixture.IDs["root"])
	if err != nil {
		t.Fatal(err)
	}
	status, body := g.get(t, token, path)
	var out map[string]any
	if status != 200 || json.Unmarshal(body, &out) != nil {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	return out
}

// A channel test against a healthy upstream re-enables a channel that was
// disabled automatically, only when automatic enabling is on, and never a
// channel an administrator turned off.
func TestHealth_ChannelTestReEnables(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-healthy", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		if req.Model() != ratioModel || req.Stream() {
			t.Errorf("channel test body = %s", req.Body)
		}
		// The test request is {"messages":[{"role":"user","content":"hi"}],"max_tokens":1};
		// the relay call at the end says something else.
		if strings.Contains(string(req.Body), `"content":"hi"`) {
			if mt, _ := req.JSON["max_tokens"].(float64); mt != 1 {
				t.Errorf("channel test max_tokens = %v, want 1", req.JSON["max_tokens"])
			}
		}
		relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "h", relaytest.NewUsage(8, 1)))
	})
	auto := g.MustCreateChannel(t, up, ratioModel, nil)
	manual := g.MustCreateChannel(t, up, ratioModel, nil)
	if _, _, err := g.st.SetChannelStatusAuto(auto.ID, store.ChannelStatusAutoDisabled, "test"); err != nil {
		t.Fatal(err)
	}
	off := store.ChannelStatusManuallyOff
	if _, err := g.st.UpdateChannel(manual.ID, store.ChannelUpdate{Status: &off}); err != nil {
		t.Fatal(err)
	}
	status := func(c *store.Channel) int {
		t.Helper()
		fresh, err := g.st.Channel(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return fresh.Status
	}
	test := func(c *store.Channel) {
		t.Helper()
		out := g.rootGet(t, "/api/channel/test/"+strconv.FormatUint(c.ID, 10))
		if out["success"] != true {
			t.Fatalf("channel test: %v", out)
		}
	}

	// Automatic enabling off: a clean test changes nothing.
	test(auto)
	if s := status(auto); s != store.ChannelStatusAutoDisabled {
		t.Fatalf("status = %d after a test with automatic enabling off, want 3", s)
	}
	if err := g.st.UpdateOption("AutomaticEnableChannelEnabled", "true"); err != nil {
		t.Fatal(err)
	}
	test(auto)
	if s := status(auto); s != store.ChannelStatusEnabled {
		t.Fatalf("status = %d after a clean test with automatic enabling on, want 1", s)
	}
	test(manual)
	if s := status(manual); s != store.ChannelStatusManuallyOff {
		t.Fatalf("manually disabled channel has status %d after a test, want 2", s)
	}
	if up.Hits() != 3 {
		t.Errorf("upstream hits = %d, want 3", up.Hits())
	}
	// The re-enabled channel routes again.
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	if res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "routed again")); res.Status != 200 {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
}

// ---- mails to root (S §5.9, §5.10) ----

const rootEmail = "root@example.com"

type sentMail struct{ to, subject, body string }

// mailBox is an injectable api.MailFunc (as the api tests' quota reminder
// uses) that keeps what the channel mailer sends.
type mailBox struct {
	mu   sync.Mutex
	sent []sentMail
}

func (b *mailBox) send(ctx context.Context, to, subject, body string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sent = append(b.sent, sentMail{to, subject, body})
	return nil
}

func (b *mailBox) take() []sentMail {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.sent
	b.sent = nil
	return out
}

// mustMailRoot gives root an address and, when smtp is true, configures
// SMTP (never dialled: the mails land in the box).
func (g *gateway) mustMailRoot(t *testing.T, smtp bool) {
	t.Helper()
	email := rootEmail
	if _, err := g.st.UpdateUser(fixture.IDs["root"], store.UserUpdate{Email: &email}); err != nil {
		t.Fatal(err)
	}
	if smtp {
		if err := g.st.UpdateOption("SMTPServer", "smtp.example.com"); err != nil {
			t.Fatal(err)
		}
	}
}

// A channel the relay disables automatically gets root one mail naming
// it, with the reason and time; without SMTP, or without an address for
// root, nothing is sent and the call answers as before.
func TestHealth_AutoDisableMailsRoot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		smtp      bool
		rootEmail bool
		wantMail  bool
	}{
		{"mailed", true, true, true},
		{"SMTP not set", false, true, false},
		{"root without address", true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			box := &mailBox{}
			g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"AutomaticDisableChannelEnabled": "true"}, Mail: box.send})
			if tc.rootEmail {
				g.mustMailRoot(t, tc.smtp)
			} else if err := g.st.UpdateOption("SMTPServer", "smtp.example.com"); err != nil {
				t.Fatal(err)
			}
			_, fresh, _ := g.callRevoked(t, func(c *store.Channel) { c.Name = "revoked-channel" })
			if fresh.Status != store.ChannelStatusAutoDisabled {
				t.Fatalf("channel status = %d, want 3", fresh.Status)
			}
			g.mail.Wait()
			got := box.take()
			if !tc.wantMail {
				if len(got) != 0 {
					t.Fatalf("sent %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("sent %d mails, want 1: %+v", len(got), got)
			}
			var info store.ChannelStatusInfo
			if err := json.Unmarshal([]byte(fresh.OtherInfo), &info); err != nil {
				t.Fatal(err)
			}
			m := got[0]
			id := "#" + strconv.FormatUint(fresh.ID, 10)
			at := time.Unix(info.StatusTime, 0).Format(time.DateTime)
			if m.to != rootEmail || !strings.Contains(m.subject, "revoked-channel") || !strings.Contains(m.subject, id) ||
				!strings.Contains(m.body, "Incorrect API key provided") || !strings.Contains(m.body, "401") || !strings.Contains(m.body, at) {
				t.Fatalf("mail %+v, want to %s naming %s and revoked-channel, the reason and %s", m, rootEmail, id, at)
			}
		})
	}
}

// waitTestAll waits until the running test of all channels has finished.
func (g *gateway) waitTestAll(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for g.rl.Testing() {
		if time.Now().After(deadline) {
			t.Fatal("test of all channels still running")
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.mail.Wait()
}

// A test of all channels started from the console mails root one summary
// when it ends (besides the mail for each channel it disables); the
// periodic run sends no summary.
func TestHealth_TestAllMailsRoot(t *testing.T) {
	t.Parallel()
	box := &mailBox{}
	g := MustOpenGateway(t, gatewayConfig{Mail: box.send, Options: map[string]string{
		"AutomaticDisableChannelEnabled": "true", "AutomaticEnableChannelEnabled": "true"}})
	g.mustMailRoot(t, true)
	healthy := relaytest.NewChat(t, "sk-healthy", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "h", relaytest.NewUsage(8, 1)))
	})
	g.MustCreateChannel(t, healthy, ratioModel, nil)

	// The periodic loop runs TestAll without a console to report to.
	if err := g.rl.TestAll(nil, nil); err != nil {
		t.Fatal(err)
	}
	g.waitTestAll(t)
	if got := box.take(); len(got) != 0 {
		t.Fatalf("periodic run sent %+v, want nothing", got)
	}
	if st := g.rl.TestRunState(); st != (relay.TestRun{Periodic: true, Done: 1, Total: 1}) {
		t.Fatalf("periodic run's state %+v", st)
	}
	// The periodic run's test log belongs to no one; a fast test still
	// records a response time (0 would read as never tested).
	testLogs := func() []*store.Log {
		page, err := g.st.Logs(store.LogFilter{Type: store.LogTypeConsume}, 1, 100)
		if err != nil {
			t.Fatal(err)
		}
		return page.Items
	}
	if logs := testLogs(); len(logs) != 1 || logs[0].UserID != 0 || logs[0].TokenName != "模型测试" {
		t.Fatalf("periodic test logs %+v, want one of user 0", logs)
	}
	if ch, _ := g.st.Channel(1); ch == nil || ch.ResponseTime < 1 || ch.TestTime == 0 {
		t.Fatalf("tested channel %+v has no response time", ch)
	}

	broke := relaytest.NewChat(t, "sk-broke", failWith(429, "", "", "You exceeded your current quota, please check your plan and billing details."))
	brokeCh := g.MustCreateChannel(t, broke, ratioModel, func(c *store.Channel) { c.Name = "broke" })
	back := g.MustCreateChannel(t, healthy, ratioModel, nil)
	if _, _, err := g.st.SetChannelStatusAuto(back.ID, store.ChannelStatusAutoDisabled, "test"); err != nil {
		t.Fatal(err)
	}
	if out := g.rootGet(t, "/api/channel/test"); out["success"] != true {
		t.Fatalf("test all: %v", out)
	}
	g.waitTestAll(t)
	if st := g.rl.TestRunState(); st != (relay.TestRun{Done: 3, Total: 3, Failed: 1, Disabled: 1}) {
		t.Fatalf("console run's state %+v", st)
	}
	var summaries, disables []sentMail
	for _, m := range box.take() {
		if m.to != rootEmail {
			t.Errorf("mail to %q, want %q", m.to, rootEmail)
		}
		if strings.Contains(m.subject, "渠道测试完成") {
			summaries = append(summaries, m)
		} else {
			disables = append(disables, m)
		}
	}
	if len(summaries) != 1 {
		t.Fatalf("%d summary mails, want 1: %+v", len(summaries), summaries)
	}
	if want := "共测试 3 个渠道，失败 1 个，自动禁用 1 个，自动启用 1 个"; !strings.Contains(summaries[0].body, want) {
		t.Errorf("summary %q, want %q", summaries[0].body, want)
	}
	if len(disables) != 1 || !strings.Contains(disables[0].subject, "#"+strconv.FormatUint(brokeCh.ID, 10)) {
		t.Errorf("disable mails %+v, want one for channel %d", disables, brokeCh.ID)
	}
	// The console's run is logged under the administrator who started it.
	var byRoot int
	for _, l := range testLogs() {
		if l.UserID == fixture.IDs["root"] && l.Username == "root" {
			byRoot++
		}
	}
	if byRoot != 2 {
		t.Errorf("%d test logs of the console's run name root, want the 2 successful tests", byRoot)
	}
}

// A channel test matches the disable rules against the upstream's own
// message: "You exceeded your current quota" with a status no other rule
// knows disables the channel, while the console still sees the status.
func TestHealth_ChannelTestMatchesUpstreamMessage(t *testing.T) {
	t.Parallel()
	const upMsg = "You exceeded your current quota, please check your plan and billing details."
	box := &mailBox{}
	g := MustOpenGateway(t, gatewayConfig{Mail: box.send, Options: map[string]string{"AutomaticDisableChannelEnabled": "true"}})
	g.mustMailRoot(t, true)
	up := relaytest.NewChat(t, "sk-broke", failWith(429, "", "", upMsg))
	ch := g.MustCreateChannel(t, up, ratioModel, nil)

	out := g.rootGet(t, "/api/channel/test/"+strconv.FormatUint(ch.ID, 10))
	if want := "状态码 429：" + upMsg; out["success"] != false || out["message"] != want {
		t.Fatalf("channel test = %v, want message %q", out, want)
	}
	fresh, err := g.st.Channel(ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Status != store.ChannelStatusAutoDisabled {
		t.Fatalf("channel status = %d, want 3", fresh.Status)
	}
	var info store.ChannelStatusInfo
	if err := json.Unmarshal([]byte(fresh.OtherInfo), &info); err != nil || info.StatusReason != "测试失败：状态码 429："+upMsg {
		t.Errorf("other_info = %q", fresh.OtherInfo)
	}
	g.mail.Wait()
	if got := box.take(); len(got) != 1 || got[0].to != rootEmail || !strings.Contains(got[0].body, upMsg) {
		t.Errorf("mails %+v, want one to root with the reason", got)
	}
}

// The latency rule of S §5.9: a test slower than ChannelDisableThreshold
// disables the channel whether the upstream answered well or not (a slow
// failure and a hang count too); a fast failure that matches no rule and a
// fast answer leave it enabled.
func TestHealth_SlowTestDisables(t *testing.T) {
	t.Parallel()
	// Far on either side of the threshold, so a loaded machine cannot
	// move a case across it.
	const slow = 2 * time.Second
	answer := func(delay time.Duration, status int) *relaytest.Upstream {
		return relaytest.NewChat(t, "sk-h", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			time.Sleep(delay)
			if status != 200 {
				relaytest.WriteError(w, status, "server_error", "", "boom")
				return
			}
			relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "h", relaytest.NewUsage(8, 1)))
		})
	}
	for _, tc := range []struct {
		name   string
		up     *relaytest.Upstream
		status int
	}{
		{"slow answer", answer(slow, 200), store.ChannelStatusAutoDisabled},
		{"slow failure", answer(slow, 500), store.ChannelStatusAutoDisabled},
		{"fast failure", answer(0, 500), store.ChannelStatusEnabled},
		{"fast answer", answer(0, 200), store.ChannelStatusEnabled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
				"AutomaticDisableChannelEnabled": "true", "ChannelDisableThreshold": "1",
			}})
			c := g.MustCreateChannel(t, tc.up, ratioModel, nil)
			g.rootGet(t, "/api/channel/test/"+strconv.FormatUint(c.ID, 10))
			fresh, err := g.st.Channel(c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if fresh.Status != tc.status {
				t.Errorf("status %d, want %d (%s)", fresh.Status, tc.status, fresh.OtherInfo)
			}
		})
	}
}

// A test-all run tests each channel as it is when its turn comes: a key an
// administrator fixed while the run was testing another channel is the one
// tested, and a verdict reached on the old key does not disable the channel
// once its key has changed.
func TestHealth_TestAllUsesTheChannelAsItIsNow(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"AutomaticDisableChannelEnabled": "true"}})
	slow, reached, release := heldChat(t)
	var mu sync.Mutex
	var keys []string
	fixed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer sk-new-working" {
			relaytest.WriteError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided")
			return
		}
		relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "ok", relaytest.NewUsage(1, 1)))
	}))
	t.Cleanup(fixed.Close)
	// The run goes newest first: the slow channel is created last.
	second := g.MustCreateChannel(t, &relaytest.Upstream{Server: fixed, Key: "sk-old-revoked"}, ratioModel, nil)
	g.MustCreateChannel(t, slow, ratioModel, nil)
	if err := g.rl.TestAll(nil, nil); err != nil {
		t.Fatal(err)
	}
	<-reached
	newKey := "sk-new-working"
	if _, err := g.st.UpdateChannel(second.ID, store.ChannelUpdate{Key: &newKey}); err != nil {
		t.Fatal(err)
	}
	close(release)
	eventually(t, 10*time.Second, "the run to end", func() bool { return !g.rl.Testing() })
	mu.Lock()
	got := append([]string(nil), keys...)
	mu.Unlock()
	if len(got) != 1 || got[0] != "Bearer sk-new-working" {
		t.Fatalf("the fixed channel was tested with %q", got)
	}
	if c, _ := g.st.Channel(second.ID); c.Status != store.ChannelStatusEnabled {
		t.Fatalf("fixed channel status %d", c.Status)
	}

	// A verdict on the old key, applied after the key changed, changes nothing.
	stale := *second // as it was, with the revoked key
	r := g.rl.TestChannel(context.Background(), &stale, "", nil)
	if r.Err == nil || r.Status != http.StatusUnauthorized {
		t.Fatalf("test with the old key: %+v", r)
	}
	if status := g.rl.ApplyTestOutcome(&stale, r); status != 0 {
		t.Fatalf("a stale verdict set status %d", status)
	}
	if c, _ := g.st.Channel(second.ID); c.Status != store.ChannelStatusEnabled {
		t.Fatalf("channel disabled by a verdict on its old key: status %d", c.Status)
	}
}

// Channel tests of OpenAI's reasoning models ask with max_completion_tokens,
// which they take, not max_tokens, which they refuse.
func TestHealth_TestBodyOfReasoningModels(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	for _, tc := range []struct {
		model     string
		reasoning bool
	}{
		{"o1-mini", true}, {"o3", true}, {"o4-mini", true}, {"gpt-5", true}, {"gpt-5-mini-2025-08-07", true},
		{"openai/o3-mini", true}, {"gpt-4o-mini", false}, {"gpt-3.5-turbo", false},
	} {
		up := relaytest.NewChat(t, "sk-"+strings.ReplaceAll(tc.model, "/", "-"), func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			_, hasMax := req.JSON["max_tokens"]
			_, hasMaxCompletion := req.JSON["max_completion_tokens"]
			if tc.reasoning && (hasMax || !hasMaxCompletion) || !tc.reasoning && (!hasMax || hasMaxCompletion) {
				relaytest.WriteError(w, http.StatusBadRequest, "invalid_request_error", "unsupported_parameter", "Unsupported parameter: "+string(req.Body))
				return
			}
			relaytest.WriteJSON(w, 200, relaytest.Completion(tc.model, "ok", relaytest.NewUsage(1, 1)))
		})
		ch := g.MustCreateChannel(t, up, tc.model, nil)
		if r := g.rl.TestChannel(context.Background(), ch, tc.model, nil); r.Err != nil {
			t.Errorf("%s: %v", tc.model, r.Err)
		}
	}
}

// A channel serving embedding, rerank or moderation models is tested on the
// model's own endpoint, which it answers (a chat request to such a channel
// failed every test, so an automatically disabled one was never enabled
// again); the log carries the tokens the answer reports or counts.
func TestHealth_TestAsksTheModelsOwnEndpoint(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"AutomaticEnableChannelEnabled": "true"}})
	for _, tc := range []struct {
		model, route string
		answer       map[string]any
		prompt       int64
	}{
		{"text-embedding-3-small", "POST /v1/embeddings", relaytest.Embedding("text-embedding-3-small", 1, relaytest.NewUsage(3, 0)), 3},
		{"BAAI/bge-m3", "POST /v1/embeddings", relaytest.Embedding("BAAI/bge-m3", 1, relaytest.NewUsage(2, 0)), 2},
		{"BAAI/bge-reranker-v2-m3", "POST /v1/rerank", map[string]any{"results": []map[string]any{{"index": 0, "relevance_score": 0.9}},
			"meta": map[string]any{"tokens": map[string]any{"input_tokens": 5, "output_tokens": 0}}}, 5},
		{"omni-moderation-latest", "POST /v1/moderations", map[string]any{"id": "modr-1", "model": "omni-moderation-latest",
			"results": []map[string]any{{"flagged": false}}}, 1},
	} {
		up := relaytest.New(t, "sk-"+strings.ReplaceAll(tc.model, "/", "-"), relaytest.Routes{tc.route: func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			if req.Model() != tc.model || req.JSON["messages"] != nil {
				relaytest.WriteError(w, http.StatusBadRequest, "invalid_request_error", "", "unexpected body "+string(req.Body))
				return
			}
			relaytest.WriteJSON(w, 200, tc.answer)
		}})
		ch := g.MustCreateChannel(t, up, tc.model, nil)
		if _, _, err := g.st.SetChannelStatusAuto(ch.ID, store.ChannelStatusAutoDisabled, "test"); err != nil {
			t.Fatal(err)
		}
		r := g.rl.TestChannel(context.Background(), ch, "", nil)
		if r.Err != nil {
			t.Errorf("%s: %v", tc.model, r.Err)
			continue
		}
		fresh, _ := g.st.Channel(ch.ID)
		if g.rl.ApplyTestOutcome(fresh, r) != store.ChannelStatusEnabled {
			t.Errorf("%s: a passed test did not enable the channel again", tc.model)
		}
		page, err := g.st.Logs(store.LogFilter{Type: store.LogTypeConsume, ChannelID: ch.ID}, 1, 10)
		if err != nil || page.Total != 1 || page.Items[0].PromptTokens != tc.prompt || page.Items[0].ModelName != tc.model {
			t.Errorf("%s: logs %+v (%v), want one with %d prompt tokens", tc.model, page, err, tc.prompt)
		}
	}

	// Azure has no rerank endpoint: the test says so instead of asking.
	up := relaytest.New(t, "sk-azure-rerank", relaytest.Routes{})
	ch := g.MustCreateChannel(t, up, "bge-reranker-v2-m3", func(c *store.Channel) { c.Type = relay.TypeAzure })
	if r := g.rl.TestChannel(context.Background(), ch, "", nil); r.Err == nil || !strings.Contains(r.Err.Error(), "不支持此接口") || up.Hits() != 0 {
		t.Errorf("Azure rerank test: %v after %d upstream requests", r.Err, up.Hits())
	}
}

// A channel test writes its log only while consume logging is on, as the
// calls' logs are; it still records its response time.
func TestHealth_TestLogFollowsLogConsumeEnabled(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"LogConsumeEnabled": "false"}})
	up := relaytest.NewChat(t, "sk-quiet", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "h", relaytest.NewUsage(8, 1)))
	})
	ch := g.MustCreateChannel(t, up, ratioModel, nil)
	if r := g.rl.TestChannel(context.Background(), ch, "", nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	page, err := g.st.Logs(store.LogFilter{Type: store.LogTypeConsume}, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 0 {
		t.Fatalf("%d consume logs written with consume logging off", page.Total)
	}
	if fresh, _ := g.st.Channel(ch.ID); fresh == nil || fresh.TestTime == 0 {
		t.Fatalf("channel %+v: the test was not recorded", fresh)
	}
}

// A channel's status_code_mapping applies before the auto-disable decision
// (S §5.6), in a channel test as in the relay (S §5.9: the test-all loop
// applies "the rule above"): a mapping that hides an upstream's 401 keeps a
// test from disabling the channel for it, and one that maps a status to 401
// disables it, as the relay's calls through the same channel do.
func TestHealth_ChannelTestFollowsStatusCodeMapping(t *testing.T) {
	t.Parallel()
	const busy = "upstream busy, try again"
	for _, tc := range []struct {
		name     string
		upstream int
		mapping  string
		msg      string
		want     int
	}{
		// A message, type and code no disable rule knows: only the status
		// can decide.
		{"401 hidden", http.StatusUnauthorized, `{"401":"500"}`, busy, store.ChannelStatusEnabled},
		{"500 shown as 401", http.StatusInternalServerError, `{"500":"401"}`, busy, store.ChannelStatusAutoDisabled},
		// The "message contains" rules skip an upstream 400 (it quotes the
		// request), not an upstream 500 that a mapping shows as 400.
		{"500 shown as 400", http.StatusInternalServerError, `{"500":"400"}`, "Your account is not authorized to use this model", store.ChannelStatusAutoDisabled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"AutomaticDisableChannelEnabled": "true"}})
			up := relaytest.NewChat(t, "sk-mapped", failWith(tc.upstream, "server_error", "", tc.msg))
			edit := func(c *store.Channel) { c.StatusCodeMapping = tc.mapping }
			viaRelay := g.MustCreateChannel(t, up, ratioModel, edit)
			_, key := g.MustCreateToken(t, "alice", store.Token{})
			g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
			if c, _ := g.st.Channel(viaRelay.ID); c.Status != tc.want {
				t.Fatalf("after a relay call: status %d, want %d", c.Status, tc.want)
			}

			tested := g.MustCreateChannel(t, up, ratioModel, edit)
			out := g.rootGet(t, "/api/channel/test/"+strconv.FormatUint(tested.ID, 10))
			if out["success"] != false {
				t.Fatalf("channel test = %v, want a failure", out)
			}
			if c, _ := g.st.Channel(tested.ID); c.Status != tc.want {
				t.Errorf("after a channel test: status %d, want %d as after the relay call (other_info %s)", c.Status, tc.want, c.OtherInfo)
			}
		})
	}
}

// A channel test's consume log carries the pricing its quota was computed
// with (B §3's log entry: other holds model_ratio, completion_ratio,
// group_ratio, model_price, frt), so the log page's billing process
// explains the quota the row shows instead of a model ratio of 0.
func TestHealth_TestLogCarriesPricing(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-priced", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, 200, relaytest.Completion(req.Model(), "h", relaytest.NewUsage(8, 1)))
	})
	ch := g.MustCreateChannel(t, up, ratioModel+","+fixedModel, nil)
	for _, tc := range []struct {
		model string
		quota int64
		want  logOther
		cr    float64
	}{
		{ratioModel, ratioQuota(8, 1, ratioModelMR, ratioModelCR, 1), logOther{ModelRatio: ratioModelMR, GroupRatio: 1, ModelPrice: -1, FRT: -1000}, ratioModelCR},
		{fixedModel, fixedCost, logOther{GroupRatio: 1, ModelPrice: fixedModelPrice, FRT: -1000}, 0},
	} {
		if r := g.rl.TestChannel(context.Background(), ch, tc.model, nil); r.Err != nil {
			t.Fatal(r.Err)
		}
		page, err := g.st.Logs(store.LogFilter{Type: store.LogTypeConsume, ModelName: tc.model}, 1, 10)
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("%s: logs %v (%v)", tc.model, page, err)
		}
		l := page.Items[0]
		if l.Quota != tc.quota {
			t.Errorf("%s: quota %d, want %d", tc.model, l.Quota, tc.quota)
		}
		o := other(t, l)
		var cr struct {
			CompletionRatio *float64 `json:"completion_ratio"`
		}
		json.Unmarshal([]byte(l.Other), &cr)
		if o.ModelRatio != tc.want.ModelRatio || o.GroupRatio != tc.want.GroupRatio || o.ModelPrice != tc.want.ModelPrice || o.FRT != tc.want.FRT ||
			cr.CompletionRatio == nil || *cr.CompletionRatio != tc.cr {
			t.Errorf("%s: other %s, want model_ratio %v, completion_ratio %v, group_ratio %v, model_price %v, frt %v", tc.model, l.Other,
				tc.want.ModelRatio, tc.cr, tc.want.GroupRatio, tc.want.ModelPrice, tc.want.FRT)
		}
		if len(o.AdminInfo.UseChannel) != 1 || o.AdminInfo.UseChannel[0] != ch.ID {
			t.Errorf("%s: use_channel %v, want [%d]", tc.model, o.AdminInfo.UseChannel, ch.ID)
		}
	}
}

// The console's template maps a channel's 400 to 500 (to have it retried):
// the 400 still refuses the request and quotes what the client sent, so
// the "message contains" rules must not judge it under its mapped status.
func TestHealth_MessageRulesIgnoreQuotedRequestsUnderAMapping(t *testing.T) {
	t.Parallel()
	quoted := "Invalid value: 'Operation not allowed'. Supported values are: 'system', 'assistant', 'user'."
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"AutomaticDisableChannelEnabled": "true"}})
	up := relaytest.NewChat(t, "sk-up", failWith(400, "invalid_request_error", "", quoted))
	ch := g.MustCreateChannel(t, up, ratioModel, func(c *store.Channel) { c.AutoBan = 1; c.StatusCodeMapping = `{"400":"500"}` })
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	body := map[string]any{"model": ratioModel, "messages": []any{map[string]any{"role": "Operation not allowed", "content": "hi"}}}
	if res := g.post(t, key, "/v1/chat/completions", body); res.Status != 500 {
		t.Fatalf("status %d, want the mapped 500: %s", res.Status, res.Body)
	}
	fresh, err := g.st.Channel(ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Status == store.ChannelStatusAutoDisabled {
		t.Fatalf("a client's quoted phrase in an upstream 400 (mapped to 500) disabled the channel: %s", fresh.OtherInfo)
	}
}

// A channel test of a mapped model logs both names, as a call's log does:
// the model tested under the requested one, the name sent upstream in
// upstream_model.
func TestHealth_TestLogNamesTheMappedModel(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	const upstreamName = "provider-model-tested"
	up := relaytest.NewChat(t, "sk-mapped-test", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		if req.Model() != upstreamName {
			t.Errorf("upstream model = %q, want the mapped %q", req.Model(), upstreamName)
		}
		relaytest.WriteJSON(w, 200, relaytest.Completion(req.Model(), "h", relaytest.NewUsage(8, 1)))
	})
	ch := g.MustCreateChannel(t, up, ratioModel, func(c *store.Channel) {
		c.ModelMapping = `{"` + ratioModel + `":"` + upstreamName + `"}`
	})
	if r := g.rl.TestChannel(context.Background(), ch, ratioModel, nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	page, err := g.st.Logs(store.LogFilter{Type: store.LogTypeConsume, ModelName: ratioModel}, 1, 10)
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("logs %v (%v)", page, err)
	}
	if o := other(t, page.Items[0]); o.UpstreamModel != upstreamName {
		t.Errorf("other = %s, want upstream_model %q", page.Items[0].Other, upstreamName)
	}
}

// A channel whose upstream redirects its POST with 301 (an http:// address
// moved to https://) fails its test saying where to, instead of sending the
// redirect's target a GET without the body and reporting that answer.
func TestHealth_TestRedirectedPostSaysWhereTo(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-moved", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		http.Redirect(w, r, "/moved/v1/chat/completions", http.StatusMovedPermanently)
	})
	ch := g.MustCreateChannel(t, up, ratioModel, nil)
	r := g.rl.TestChannel(context.Background(), ch, "", nil)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "以 301 把请求重定向到 "+up.URL+"/moved/v1/chat/completions") {
		t.Fatalf("test of a redirected channel: %v", r.Err)
	}
	if up.Hits() != 1 {
		t.Fatalf("upstream hits = %d, want 1 (the redirect not followed)", up.Hits())
	}
}

// A channel test reads the usage as calls read it: counts written as
// decimals or strings (as some OpenAI-compatible servers write them) are a
// usage, so a channel that serves calls passes its test, and a count below
// zero or beyond any call does not make the test's log say so.
func TestHealth_TestReadsUsageAsCallsDo(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	var usage atomic.Value
	up := relaytest.NewChat(t, "sk-loose", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"`+req.Model()+`","choices":[{"index":0,"message":{"role":"assistant","content":"h"},"finish_reason":"stop"}],"usage":`+usage.Load().(string)+`}`)
	})
	ch := g.MustCreateChannel(t, up, ratioModel, nil)
	for i, tc := range []struct {
		usage            string
		prompt, complete int64
	}{
		{`{"prompt_tokens":"8","completion_tokens":1.0,"total_tokens":"9"}`, 8, 1},
		{`{"prompt_tokens":8,"completion_tokens":-1000000,"total_tokens":9}`, 8, 0},
	} {
		usage.Store(tc.usage)
		if r := g.rl.TestChannel(context.Background(), ch, "", nil); r.Err != nil {
			t.Fatalf("%s: %v", tc.usage, r.Err)
		}
		page, err := g.st.Logs(store.LogFilter{Type: store.LogTypeConsume}, 1, 10)
		if err != nil || len(page.Items) != i+1 {
			t.Fatalf("%s: logs %v (%v)", tc.usage, page, err)
		}
		l := page.Items[0]
		if l.PromptTokens != tc.prompt || l.CompletionTokens != tc.complete || l.Quota != ratioQuota(int(tc.prompt), int(tc.complete), ratioModelMR, ratioModelCR, 1) {
			t.Errorf("%s: logged %d/%d tokens for %d quota, want %d/%d", tc.usage, l.PromptTokens, l.CompletionTokens, l.Quota, tc.prompt, tc.complete)
		}
	}
}

// Closing the relay ends a test-all run after the test under way, whose
// outcome is not applied, and waits for it: the store is closed after, and
// nothing is written to it then.
func TestHealth_CloseEndsTestAll(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"AutomaticDisableChannelEnabled": "true"}})
	var asked atomic.Int32
	held := make(chan struct{}, 4)
	up := relaytest.NewChat(t, "sk-slow", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		asked.Add(1)
		held <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
		relaytest.WriteJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}})
	})
	first := g.MustCreateChannel(t, up, ratioModel, nil)
	g.MustCreateChannel(t, up, ratioModel, nil)
	if err := g.rl.TestAll(nil, nil); err != nil {
		t.Fatal(err)
	}
	<-held
	closed := make(chan struct{})
	go func() {
		g.rl.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the test-all run")
	}
	if g.rl.Testing() || g.rl.TestRunState().Running {
		t.Fatalf("a test-all run still reads as running after Close: %+v", g.rl.TestRunState())
	}
	if n := asked.Load(); n != 1 {
		t.Fatalf("the upstream was asked %d times, want 1: the run went on after Close", n)
	}
	if err := g.rl.TestAll(nil, nil); err == nil || g.rl.Testing() {
		t.Fatalf("a test-all run started after Close: %v", err)
	}
	ch, err := g.st.Channel(first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Status != store.ChannelStatusEnabled {
		t.Fatalf("the channel whose test Close cut short has status %d, want enabled", ch.Status)
	}
}

// An answer cut off before its end is no answer, even when the part that
// arrived reads as a whole one: a call through the channel fails with it
// (read_response_failed), so the test fails too and does not enable the
// channel again.
func TestHealth_TestOfAnAnswerCutOffFails(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-cut", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		body := `{"id":"c1","object":"chat.completion","created":1,"model":"` + req.Model() + `","choices":[{"index":0,"message":{"role":"assistant","content":"h"},"finish_reason":"stop"}],"usage":{"prompt_tokens":8,"completion_tokens":1,"total_tokens":9}}`
		w.Header().Set("Content-Type", "application/json")
		// More is announced than sent: the connection closes short of it.
		w.Header().Set("Content-Length", strconv.Itoa(len(body)+100))
		io.WriteString(w, body)
	})
	ch := g.MustCreateChannel(t, up, ratioModel, nil)
	if _, _, err := g.st.SetChannelStatusAuto(ch.ID, store.ChannelStatusAutoDisabled, "test"); err != nil {
		t.Fatal(err)
	}
	if err := g.st.UpdateOption("AutomaticEnableChannelEnabled", "true"); err != nil {
		t.Fatal(err)
	}
	out := g.rootGet(t, "/api/channel/test/"+strconv.FormatUint(ch.ID, 10))
	if out["success"] != false {
		t.Errorf("channel test of a cut answer: %v, want a failure", out)
	}
	fresh, err := g.st.Channel(ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Status != store.ChannelStatusAutoDisabled {
		t.Errorf("status = %d after a test whose answer was cut off, want 3", fresh.Status)
	}
}
