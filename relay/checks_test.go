package relay_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/store"
)

// checkCase is one request the gateway must refuse (or let through) before
// anything is charged.
type checkCase struct {
	name string
	// setup returns the key to call with, and may change the store.
	setup      func(t *testing.T, g *gateway) string
	body       any
	header     []string
	wantStatus int
	wantCode   string // OpenAI error code; "" for a success
	// after checks the store once the call returned.
	after func(t *testing.T, g *gateway)
}

func tokenStatus(t *testing.T, g *gateway, id uint64) int {
	t.Helper()
	tok, err := g.st.Token(0, id)
	if err != nil {
		t.Fatal(err)
	}
	return tok.Status
}

// The token, user, model and group checks: each refusal has its status and
// code, reaches no upstream and charges nothing.
func TestChecks(t *testing.T) {
	t.Parallel()
	// The gateway sits behind a proxy on loopback, so X-Forwarded-For is
	// believed (and only then).
	g := MustOpenGateway(t, gatewayConfig{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	up := relaytest.New(t, "sk-up", relaytest.Routes{relaytest.ChatPath: func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, 200, relaytest.Completion(req.Model(), "ok", relaytest.NewUsage(5, 5)))
	}})
	ch := g.MustCreateChannel(t, up, ratioModel+","+fixedModel+","+unpricedModel, nil)
	token := func(user string, tok store.Token) string {
		_, key := g.MustCreateToken(t, user, tok)
		return key
	}
	var expired, exhausted *store.Token
	cases := []checkCase{{
		name:  "insufficient user quota",
		setup: func(t *testing.T, g *gateway) string { return token("fifty", store.Token{}) },
		// The reservation for 100k completion tokens exceeds fifty's quota:
		// some quota but not enough is 400 (S §5.8 step 5).
		body:       map[string]any{"model": ratioModel, "max_tokens": 100_000, "messages": []any{map[string]any{"role": "user", "content": "hi"}}},
		wantStatus: 400, wantCode: "insufficient_user_quota",
	}, {
		name:       "insufficient token quota",
		setup:      func(t *testing.T, g *gateway) string { return token("alice", store.Token{RemainQuota: 10}) },
		body:       chat(ratioModel, "hi"),
		wantStatus: 403, wantCode: "insufficient_token_quota",
	}, {
		name: "enabled token without remaining quota",
		setup: func(t *testing.T, g *gateway) string {
			tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10})
			zero := int64(0)
			if _, err := g.st.UpdateToken(tok.UserID, tok.ID, store.TokenUpdate{RemainQuota: &zero}); err != nil {
				t.Fatal(err)
			}
			return key
		},
		body:       chat(ratioModel, "hi"),
		wantStatus: 401, wantCode: "invalid_token",
	}, {
		name: "expired token",
		setup: func(t *testing.T, g *gateway) string {
			var key string
			expired, key = g.MustCreateToken(t, "alice", store.Token{ExpiredTime: time.Now().Add(-time.Minute).Unix()})
			return key
		},
		body:       chat(ratioModel, "hi"),
		wantStatus: 401, wantCode: "invalid_token",
		after: func(t *testing.T, g *gateway) {
			if s := tokenStatus(t, g, expired.ID); s != store.TokenStatusExpired {
				t.Errorf("expired token status = %d, want 3", s)
			}
		},
	}, {
		name: "exhausted token",
		setup: func(t *testing.T, g *gateway) string {
			// Funded for one call of the fixed-price model: the call that
			// spends it marks the token exhausted, and the next is refused.
			var key string
			exhausted, key = g.MustCreateToken(t, "alice", store.Token{RemainQuota: fixedCost})
			if res := g.post(t, key, "/v1/chat/completions", chat(fixedModel, "hi")); res.Status != 200 {
				t.Fatalf("first call: %d %s", res.Status, res.Body)
			}
			if s := tokenStatus(t, g, exhausted.ID); s != store.TokenStatusExhausted {
				t.Errorf("token status after spending it all = %d, want 4", s)
			}
			return key
		},
		body:       chat(fixedModel, "hi"),
		wantStatus: 401, wantCode: "invalid_token",
	}, {
		name: "disabled token",
		setup: func(t *testing.T, g *gateway) string {
			return token("alice", store.Token{Status: store.TokenStatusDisabled})
		},
		body:       chat(ratioModel, "hi"),
		wantStatus: 401, wantCode: "invalid_token",
	}, {
		name:       "unknown key",
		setup:      func(t *testing.T, g *gateway) string { return "sk-" + store.NewTokenKey() },
		body:       chat(ratioModel, "hi"),
		wantStatus: 401, wantCode: "invalid_token",
	}, {
		name:       "no key",
		setup:      func(t *testing.T, g *gateway) string { return "" },
		body:       chat(ratioModel, "hi"),
		wantStatus: 401, wantCode: "invalid_token",
	}, {
		name: "model limits allow",
		setup: func(t *testing.T, g *gateway) string {
			return token("alice", store.Token{ModelLimitsEnabled: true, ModelLimits: fixedModel})
		},
		body:       chat(fixedModel, "hi"),
		wantStatus: 200,
	}, {
		name: "model limits refuse",
		setup: func(t *testing.T, g *gateway) string {
			return token("alice", store.Token{ModelLimitsEnabled: true, ModelLimits: fixedModel})
		},
		body:       chat(ratioModel, "hi"),
		wantStatus: 403, wantCode: "model_not_allowed",
	}, {
		name: "IP in the allowed CIDR",
		setup: func(t *testing.T, g *gateway) string {
			return token("alice", store.Token{AllowIPs: "192.0.2.7\n10.1.0.0/16"})
		},
		header:     []string{"X-Forwarded-For", "10.1.200.3"},
		body:       chat(ratioModel, "hi"),
		wantStatus: 200,
	}, {
		name: "IP outside the allow list",
		setup: func(t *testing.T, g *gateway) string {
			return token("alice", store.Token{AllowIPs: "192.0.2.7\n10.1.0.0/16"})
		},
		header:     []string{"X-Forwarded-For", "10.2.0.1"},
		body:       chat(ratioModel, "hi"),
		wantStatus: 403, wantCode: "access_denied",
	}, {
		name:       "no forwarded address",
		setup:      func(t *testing.T, g *gateway) string { return token("alice", store.Token{AllowIPs: "10.1.0.0/16"}) },
		body:       chat(ratioModel, "hi"),
		wantStatus: 403, wantCode: "access_denied",
	}, {
		name:       "token group not usable",
		setup:      func(t *testing.T, g *gateway) string { return token("alice", store.Token{Group: "svip"}) },
		body:       chat(ratioModel, "hi"),
		wantStatus: 403, wantCode: "group_not_allowed",
	}, {
		name:       "model without a price",
		setup:      func(t *testing.T, g *gateway) string { return token("alice", store.Token{}) },
		body:       chat(unpricedModel, "hi"),
		wantStatus: 400, wantCode: "model_price_error",
	}, {
		name:       "no channel for the model",
		setup:      func(t *testing.T, g *gateway) string { return token("alice", store.Token{}) },
		body:       chat("model-nobody-serves", "hi"),
		wantStatus: 503, wantCode: "model_not_found",
	}, {
		name:       "invalid JSON",
		setup:      func(t *testing.T, g *gateway) string { return token("alice", store.Token{}) },
		body:       `{"model":`,
		wantStatus: 400, wantCode: "invalid_request",
	}, {
		name: "deleted user",
		setup: func(t *testing.T, g *gateway) string {
			key := token("fifty", store.Token{})
			if err := g.st.DeleteUser(fixture.IDs["fifty"]); err != nil {
				t.Fatal(err)
			}
			return key
		},
		body:       chat(ratioModel, "hi"),
		wantStatus: 403, wantCode: "user_banned",
	}}
	// The cases run in order on one store: each counts the upstream hits,
	// logs and balances it caused.
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.setup(t, g)
			hits := up.Hits()
			alice := g.balances(t, "alice", 0, ch)
			fifty := g.balances(t, "fifty", 0)
			logs := len(g.consumeLogs(t, "alice")) + len(g.consumeLogs(t, "fifty"))

			res := g.post(t, key, "/v1/chat/completions", tc.body, tc.header...)
			if tc.wantCode == "" {
				if res.Status != tc.wantStatus {
					t.Fatalf("status %d, want %d: %s", res.Status, tc.wantStatus, res.Body)
				}
				if up.Hits() != hits+1 {
					t.Errorf("upstream hits moved by %d, want 1", up.Hits()-hits)
				}
				return
			}
			res.wantError(t, tc.wantStatus, tc.wantCode)
			if up.Hits() != hits {
				t.Errorf("a refused call reached the upstream")
			}
			if n := len(g.consumeLogs(t, "alice")) + len(g.consumeLogs(t, "fifty")); n != logs {
				t.Errorf("a refused call wrote %d consume logs", n-logs)
			}
			wantMoved(t, alice, g.balances(t, "alice", 0, ch), false, ch.ID, 0, 0)
			wantMoved(t, fifty, g.balances(t, "fifty", 0), false, 0, 0, 0)
			if tc.after != nil {
				tc.after(t, g)
			}
		})
	}
}

// A body of the wrong shape is refused with the field and the kind it
// should have, in OpenAI's param, never with the decoder's Go type names.
func TestChecks_WrongTypes(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-up", okChat(t, ratioModel, "ok", relaytest.NewUsage(1, 1)))
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	for _, tc := range []struct{ body, message, param string }{
		{`{"model":"` + ratioModel + `","messages":"hi"}`, "请求参数格式错误：字段 messages 应为数组", "messages"},
		{`{"model":"` + ratioModel + `","messages":[{"role":123,"content":"hi"}]}`, "请求参数格式错误：字段 messages.0.role 应为字符串", "messages.0.role"},
		{`{"model":"` + ratioModel + `","messages":[{"role":"user","content":"hi"}],"max_tokens":1.5}`, "请求参数格式错误：字段 max_tokens 应为整数", "max_tokens"},
		{`{"model":"` + ratioModel + `","messages":[{"role":"user","content":"hi"}],"stream_options":"x"}`, "请求参数格式错误：字段 stream_options 应为对象", "stream_options"},
		{`[]`, "请求参数格式错误：请求体应为对象", ""},
		{`{"model":"` + ratioModel + `","messages":[{"role":"user","content":"hi"}],"max_tokens":-1}`, "max_tokens 无效", ""},
		{`{"model":"` + ratioModel + `","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":-5,"max_tokens":10}`, "max_tokens 无效", ""},
		{`{"model":"` + ratioModel + `","messages":[{"role":"user","content":"hi"}],"n":-1}`, "n 和 best_of 不能为负数", ""},
		{`{"model":`, "请求体不是合法的 JSON", ""},
		// No channel lists such a name; the answer does not repeat it.
		{`{"model":"` + strings.Repeat("m", 256) + `","messages":[{"role":"user","content":"hi"}]}`, "model 过长：最多 255 字节", ""},
	} {
		e := g.post(t, key, "/v1/chat/completions", tc.body).wantError(t, http.StatusBadRequest, "invalid_request")
		if msg, _, _ := strings.Cut(e.Error.Message, " (request id:"); msg != tc.message || e.Error.Param != tc.param {
			t.Errorf("%s: message %q, param %q; want %q, %q", tc.body, e.Error.Message, e.Error.Param, tc.message, tc.param)
		}
	}
	if up.Hits() != 0 {
		t.Errorf("refused calls reached the upstream %d times", up.Hits())
	}
}

// X-Forwarded-For from a peer that is not a trusted proxy is ignored: the
// allow list sees the peer's own address.
func TestChecks_UntrustedForwardedFor(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-up", okChat(t, ratioModel, "ok", relaytest.NewUsage(1, 1)))
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{AllowIPs: "10.1.0.0/16"})
	res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"), "X-Forwarded-For", "10.1.2.3")
	res.wantError(t, http.StatusForbidden, "access_denied")
	_, key = g.MustCreateToken(t, "alice", store.Token{AllowIPs: "127.0.0.0/8"})
	if res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"), "X-Forwarded-For", "10.9.9.9"); res.Status != 200 {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
}

// A token bound to some addresses answers nothing from others: not the
// model list, not one model, not the billing reads.
func TestChecks_AllowListOnEveryTokenRoute(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	g.MustCreateChannel(t, relaytest.NewChat(t, "sk-up", okChat(t, ratioModel, "ok", relaytest.NewUsage(1, 1))), ratioModel, nil)
	_, far := g.MustCreateToken(t, "alice", store.Token{AllowIPs: "10.9.9.9"})
	_, near := g.MustCreateToken(t, "alice", store.Token{AllowIPs: "127.0.0.0/8"})
	for _, path := range []string{"/v1/models", "/v1/models/" + ratioModel, "/dashboard/billing/subscription", "/v1/dashboard/billing/usage"} {
		for key, want := range map[string]int{far: http.StatusForbidden, near: http.StatusOK} {
			status, body := g.get(t, "Bearer "+key, path)
			if status != want || want == http.StatusForbidden && !strings.Contains(string(body), "access_denied") {
				t.Errorf("%s with a token for %s: %d %s; want %d", path, map[bool]string{true: "10.9.9.9", false: "loopback"}[key == far], status, body, want)
			}
		}
	}
}

// The default sensitive word is found in array (multimodal) content as in
// plain content; a clean prompt passes.
func TestChecks_SensitiveWords(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-up", okChat(t, ratioModel, "ok", relaytest.NewUsage(1, 1)))
	g.MustCreateChannel(t, up, ratioModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	parts := func(text string) map[string]any {
		return map[string]any{"model": ratioModel, "messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "look at this"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA", "detail": "low"}},
			map[string]any{"type": "text", "text": text},
		}}}}
	}
	before := g.balances(t, "alice", tok.ID)
	for _, body := range []any{parts("this has TEST_SENSITIVE inside"), chat(ratioModel, "also test_sensitive here")} {
		res := g.post(t, key, "/v1/chat/completions", body)
		e := res.wantError(t, http.StatusBadRequest, "sensitive_words_detected")
		if e.Error.Type != "new_api_error" {
			t.Errorf("type = %q", e.Error.Type)
		}
	}
	if up.Hits() != 0 {
		t.Errorf("a refused prompt reached the upstream")
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID), true, 0, 0, 0)
	if res := g.post(t, key, "/v1/chat/completions", parts("a harmless sentence")); res.Status != 200 {
		t.Fatalf("clean array content: %d %s", res.Status, res.Body)
	}
	if up.Hits() != 1 {
		t.Errorf("upstream hits = %d, want 1", up.Hits())
	}
}

// A sensitive word typed in full-width letters (a Chinese input method's
// ＴＥＳＴ＿ｓｅｎｓｉｔｉｖｅ) is the word, and a word listed in full width
// finds its ASCII form; nothing is charged for a refused call.
func TestChecks_SensitiveWordsFullWidth(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	if err := g.st.UpdateOptions([]store.Option{{Key: "SensitiveWords", Value: "test_sensitive\nＢＡＤ词"}}); err != nil {
		t.Fatal(err)
	}
	up := relaytest.NewChat(t, "sk-up", okChat(t, ratioModel, "ok", relaytest.NewUsage(1, 1)))
	g.MustCreateChannel(t, up, ratioModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	before := g.balances(t, "alice", tok.ID)
	for _, text := range []string{"say ＴＥＳＴ＿ｓｅｎｓｉｔｉｖｅ now", "say Ｔest_Ｓensitive now", "a bad词 here"} {
		g.post(t, key, "/v1/chat/completions", chat(ratioModel, text)).wantError(t, http.StatusBadRequest, "sensitive_words_detected")
	}
	if up.Hits() != 0 {
		t.Errorf("a refused prompt reached the upstream")
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID), true, 0, 0, 0)
	if res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "ｈａｒｍｌｅｓｓ")); res.Status != 200 {
		t.Fatalf("clean full-width prompt: %d %s", res.Status, res.Body)
	}
}

// A relay built without a ClientIP function checks allow lists against the
// peer's address (RemoteAddr without its port).
func TestChecks_DefaultClientIP(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{DefaultClientIP: true})
	up := relaytest.NewChat(t, "sk-up", okChat(t, ratioModel, "ok", relaytest.NewUsage(1, 1)))
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{AllowIPs: "127.0.0.1"})
	if res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi")); res.Status != 200 {
		t.Fatalf("allowed peer: status %d: %s", res.Status, res.Body)
	}
	_, key = g.MustCreateToken(t, "alice", store.Token{AllowIPs: "10.0.0.0/8"})
	g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi")).wantError(t, http.StatusForbidden, "access_denied")
}

// S §5.3: a token's group must be usable by its owner and still have a
// ratio; the owner's own group needs neither, and a group without a ratio
// is priced at 1.
func TestGroupResolution(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	if err := g.st.UpdateOptions([]store.Option{{Key: "UserUsableGroups", Value: `{"default":"默认分组","vip":"vip分组","legacy":"旧分组"}`}}); err != nil {
		t.Fatal(err)
	}
	up := relaytest.New(t, "sk-up", relaytest.Routes{relaytest.ChatPath: func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, 200, relaytest.Completion(req.Model(), "ok", relaytest.NewUsage(5, 5)))
	}})
	g.MustCreateChannel(t, up, ratioModel, func(c *store.Channel) { c.Group = "default,vip,legacy,retired" })

	// Usable but no longer priced: deprecated.
	_, key := g.MustCreateToken(t, "alice", store.Token{Group: "legacy"})
	g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi")).wantError(t, 403, "group_deprecated")
	// Neither usable nor the owner's group: refused before the ratio check.
	_, key = g.MustCreateToken(t, "alice", store.Token{Group: "retired"})
	g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi")).wantError(t, 403, "group_not_allowed")

	// An owner whose own group has no ratio still calls, at ratio 1; a token
	// naming that group is usable (it is the owner's) but not priced.
	retired := "retired"
	if _, err := g.st.UpdateUser(fixture.IDs["alice"], store.UserUpdate{Group: &retired}); err != nil {
		t.Fatal(err)
	}
	_, key = g.MustCreateToken(t, "alice", store.Token{Group: "retired"})
	g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi")).wantError(t, 403, "group_deprecated")
	_, key = g.MustCreateToken(t, "alice", store.Token{})
	if res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi")); res.Status != 200 {
		t.Fatalf("a user in a group without a ratio: %d %s", res.Status, res.Body)
	}
	logs := g.consumeLogs(t, "alice")
	if l := logs[0]; len(logs) != 1 || l.Group != "retired" || l.Quota != ratioQuota(int(l.PromptTokens), int(l.CompletionTokens), ratioModelMR, ratioModelCR, 1) {
		t.Fatalf("log of a call in a group without a ratio: group %q quota %d", l.Group, l.Quota)
	}
}

// A browser client on another origin may call the relay with its key: the
// preflight names Authorization, which a wildcard does not cover, and the
// answer is readable across origins with its request id.
func TestChecks_CORS(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	g.MustCreateChannel(t, relaytest.NewChat(t, "sk-up", okChat(t, ratioModel, "ok", relaytest.NewUsage(1, 1))), ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	for _, path := range []string{"/v1/chat/completions", "/v1/dashboard/billing/subscription", "/dashboard/billing/subscription", "/dashboard/billing/usage"} {
		req, _ := http.NewRequest(http.MethodOptions, g.srv.URL+path, nil)
		req.Header.Set("Origin", "https://app.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-stainless-os")
		resp, err := g.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		allowed := strings.Split(strings.ReplaceAll(h.Get("Access-Control-Allow-Headers"), " ", ""), ",")
		if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
			!slices.ContainsFunc(allowed, func(s string) bool { return strings.EqualFold(s, "Authorization") }) || !slices.Contains(allowed, "*") {
			t.Fatalf("preflight of %s: %d %v", path, resp.StatusCode, h)
		}
	}
	res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
	if res.Status != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "X-Oneapi-Request-Id") {
		t.Fatalf("answer %d %v", res.Status, res.Header)
	}
}

// OpenAI's SDKs take the request id from x-request-id (an error's
// request_id, an answer's _request_id): every relay answer, an error
// included, carries the gateway's id there too, readable from a page.
func TestChecks_RequestIDForSDKs(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	g.MustCreateChannel(t, relaytest.NewChat(t, "sk-up", okChat(t, ratioModel, "ok", relaytest.NewUsage(1, 1))), ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	for _, tc := range []struct {
		name, key string
		status    int
	}{{"answer", key, http.StatusOK}, {"error", "sk-wrong", http.StatusUnauthorized}} {
		res := g.post(t, tc.key, "/v1/chat/completions", chat(ratioModel, "hi"))
		id := res.Header.Get("X-Oneapi-Request-Id")
		if res.Status != tc.status || id == "" || res.Header.Get("X-Request-Id") != id {
			t.Fatalf("%s: %d, X-Oneapi-Request-Id %q, X-Request-Id %q", tc.name, res.Status, id, res.Header.Get("X-Request-Id"))
		}
		if tc.status != http.StatusOK && !strings.Contains(string(res.Body), "(request id: "+id+")") {
			t.Fatalf("%s: the message names another id: %s", tc.name, res.Body)
		}
		if !strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id") {
			t.Fatalf("%s: X-Request-Id not exposed to a page: %v", tc.name, res.Header)
		}
	}
}

// A request whose body takes long to arrive (a large upload) is let in by
// its token before the body is read; a token disabled or an account banned
// meanwhile must not still get the call served and charged.
func TestSlowUploadIsCheckedAgain(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-upstream-1", okChat(t, ratioModel, "ok", relaytest.NewUsage(5, 5)))
	ch := g.MustCreateChannel(t, up, ratioModel, nil)
	for _, tc := range []struct {
		name     string
		user     string
		revoke   func(t *testing.T, tok *store.Token)
		wantCode string
	}{
		{"token disabled", "alice", func(t *testing.T, tok *store.Token) {
			if _, err := g.st.UpdateToken(tok.UserID, tok.ID, store.TokenUpdate{Status: new(store.TokenStatusDisabled)}); err != nil {
				t.Fatal(err)
			}
		}, "invalid_token"},
		{"user banned", "fifty", func(t *testing.T, tok *store.Token) {
			if _, err := g.st.UpdateUser(tok.UserID, store.UserUpdate{Status: new(store.UserStatusDisabled)}); err != nil {
				t.Fatal(err)
			}
		}, "user_banned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, key := g.MustCreateToken(t, tc.user, store.Token{})
			before := g.balances(t, tc.user, tok.ID, ch)
			hits := up.Hits()
			res := g.slowUpload(t, "/v1/chat/completions", chat(ratioModel, "a long upload"), func() { tc.revoke(t, tok) },
				"Authorization", "Bearer "+key)
			res.wantError(t, map[string]int{"invalid_token": 401, "user_banned": 403}[tc.wantCode], tc.wantCode)
			if up.Hits() != hits {
				t.Errorf("upstream hits moved by %d, want 0", up.Hits()-hits)
			}
			if after := g.balances(t, tc.user, tok.ID, ch); !reflect.DeepEqual(after, before) {
				t.Errorf("balances %+v, want %+v unchanged", after, before)
			}
		})
	}
}

// The playground reads its body itself (for its group field) before the
// relay starts the call: an account banned while a slow body arrives must
// be refused as a token call's is, not served and charged.
func TestSlowPlaygroundUploadIsCheckedAgain(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-upstream-1", okChat(t, ratioModel, "ok", relaytest.NewUsage(5, 5)))
	g.MustCreateChannel(t, up, ratioModel, nil)
	uid := fixture.IDs["fifty"]
	sid, _, err := g.st.CreateSession(uid)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := g.st.LiveBalance(uid)
	res := g.slowUpload(t, "/pg/chat/completions", chat(ratioModel, "a long upload"), func() {
		if _, err := g.st.UpdateUser(uid, store.UserUpdate{Status: new(store.UserStatusDisabled)}); err != nil {
			t.Error(err)
		}
	}, "New-Api-User", strconv.FormatUint(uid, 10), "Cookie", "session="+sid)
	res.wantError(t, http.StatusForbidden, "user_banned")
	if up.Hits() != 0 {
		t.Errorf("upstream hit %d times, want 0", up.Hits())
	}
	if after, _ := g.st.LiveBalance(uid); after != before {
		t.Errorf("balance %d, want %d unchanged", after, before)
	}
}

// slowUpload posts body to path with the headers given as name, value
// pairs, sending half of it, then running during once the gateway has let
// the call in (it reads the body), and the rest after relay.RecheckAfter
// from then: an upload that took longer than that. The calls of one
// gateway's slowUploads do not overlap.
func (g *gateway) slowUpload(t *testing.T, path string, body any, during func(), header ...string) result {
	t.Helper()
	data, _ := json.Marshal(body)
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, g.srv.URL+path, pr)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(slowUploadHeader, "1")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	done := make(chan result, 1)
	go func() {
		resp, err := g.client.Do(req)
		if err != nil {
			done <- result{Status: -1, Body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- result{Status: resp.StatusCode, Header: resp.Header, Body: b}
	}()
	half := len(data) / 2
	if _, err := pw.Write(data[:half]); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.bodyRead:
	case res := <-done:
		pw.Close()
		t.Errorf("answered before the body was read: %d %s", res.Status, res.Body)
		return res
	}
	during()
	time.Sleep(relay.RecheckAfter + 100*time.Millisecond)
	if _, err := pw.Write(data[half:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	return <-done
}

// What the token allows is asked again after a slow upload, not only its
// status: model limits narrowed while the body arrived refuse the call, and
// a token group changed meanwhile prices it, as for a call made after the
// change.
func TestSlowUploadTakesTheTokenAsItIsNow(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-upstream-1", okChat(t, ratioModel, "ok", relaytest.NewUsage(5, 5)))
	ch := g.MustCreateChannel(t, up, ratioModel, nil)

	t.Run("model limits narrowed", func(t *testing.T) {
		tok, key := g.MustCreateToken(t, "alice", store.Token{Name: "limits", ModelLimitsEnabled: true, ModelLimits: ratioModel})
		before := g.balances(t, "alice", tok.ID, ch)
		hits := up.Hits()
		res := g.slowUpload(t, "/v1/chat/completions", chat(ratioModel, "a long upload"), func() {
			if _, err := g.st.UpdateToken(tok.UserID, tok.ID, store.TokenUpdate{ModelLimits: new(miniModel)}); err != nil {
				t.Fatal(err)
			}
		}, "Authorization", "Bearer "+key)
		res.wantError(t, http.StatusForbidden, "model_not_allowed")
		if up.Hits() != hits {
			t.Errorf("upstream hits moved by %d, want 0", up.Hits()-hits)
		}
		if after := g.balances(t, "alice", tok.ID, ch); !reflect.DeepEqual(after, before) {
			t.Errorf("balances %+v, want %+v unchanged", after, before)
		}
	})

	t.Run("token group changed", func(t *testing.T) {
		tok, key := g.MustCreateToken(t, "alice", store.Token{Name: "vip", Group: "vip"})
		res := g.slowUpload(t, "/v1/chat/completions", chat(ratioModel, "a long upload"), func() {
			if _, err := g.st.UpdateToken(tok.UserID, tok.ID, store.TokenUpdate{Group: new("default")}); err != nil {
				t.Fatal(err)
			}
		}, "Authorization", "Bearer "+key)
		if res.Status != http.StatusOK {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
		logs, err := g.st.Logs(store.LogFilter{Type: store.LogTypeConsume, TokenID: tok.ID}, 1, 10)
		if err != nil || len(logs.Items) != 1 {
			t.Fatalf("logs %v, %v", logs, err)
		}
		if l := logs.Items[0]; l.Group != "default" || l.Quota != ratioQuota(5, 5, ratioModelMR, ratioModelCR, 1) {
			t.Errorf("charged %d in group %q, want %d in default (the token's group when the call was priced)",
				l.Quota, l.Group, ratioQuota(5, 5, ratioModelMR, ratioModelCR, 1))
		}
	})
}

// A playground call whose body arrives slowly is priced at the group its
// account has when the call is priced, as a token call is: a group changed
// while the body arrived applies.
func TestSlowPlaygroundUploadTakesTheGroupAsItIsNow(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-upstream-1", okChat(t, ratioModel, "ok", relaytest.NewUsage(5, 5)))
	g.MustCreateChannel(t, up, ratioModel, nil)
	uid := fixture.IDs["alice"]
	sid, _, err := g.st.CreateSession(uid)
	if err != nil {
		t.Fatal(err)
	}
	res := g.slowUpload(t, "/pg/chat/completions", chat(ratioModel, "a long upload"), func() {
		if _, err := g.st.UpdateUser(uid, store.UserUpdate{Group: new("vip")}); err != nil {
			t.Error(err)
		}
	}, "New-Api-User", strconv.FormatUint(uid, 10), "Cookie", "session="+sid)
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	logs, err := g.st.Logs(store.LogFilter{Type: store.LogTypeConsume, UserID: uid}, 1, 10)
	if err != nil || len(logs.Items) != 1 {
		t.Fatalf("logs %v, %v", logs, err)
	}
	want := ratioQuota(5, 5, ratioModelMR, ratioModelCR, vipGroupRatio)
	if l := logs.Items[0]; l.Group != "vip" || l.Quota != want {
		t.Errorf("charged %d in group %q, want %d in vip (the account's group when the call was priced)", l.Quota, l.Group, want)
	}
}

// A token whose group its calls are refused in (no longer usable by its
// owner, or no longer priced) gets the same refusal from the model list and
// the model read: it lists nothing it could not call.
func TestModelsFollowTheTokenGroup(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	if err := g.st.UpdateOptions([]store.Option{{Key: "UserUsableGroups", Value: `{"default":"默认分组","vip":"vip分组","legacy":"旧分组"}`}}); err != nil {
		t.Fatal(err)
	}
	g.MustCreateChannel(t, relaytest.NewChat(t, "sk-up", okChat(t, ratioModel, "ok", relaytest.NewUsage(1, 1))), ratioModel,
		func(c *store.Channel) { c.Group = "default,vip,legacy,retired" })
	_, legacy := g.MustCreateToken(t, "alice", store.Token{Group: "legacy"})
	_, retired := g.MustCreateToken(t, "alice", store.Token{Group: "retired", ModelLimitsEnabled: true, ModelLimits: ratioModel})
	_, own := g.MustCreateToken(t, "alice", store.Token{})
	for _, path := range []string{"/v1/models", "/v1/models/" + ratioModel} {
		for key, want := range map[string]string{legacy: "group_deprecated", retired: "group_not_allowed", own: ""} {
			status, body := g.get(t, "Bearer "+key, path)
			if want == "" && (status != http.StatusOK || !strings.Contains(string(body), ratioModel)) ||
				want != "" && (status != http.StatusForbidden || !strings.Contains(string(body), want)) {
				t.Errorf("%s: %d %s; want %q", path, status, body, want)
			}
		}
	}
}
