package api_test

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gateway/policy"
)

// wantAccess is the least privileged role that may call each console route,
// written from the spec's permission tables (S §3: P public, U user, A admin,
// R root; A §6), not from policy.csv, so that a wrong policy line fails.
var wantAccess = map[string]string{
	// S §3.1 and §3.2: public.
	"GET /api/status":            policy.Guest,
	"GET /api/status/test":       policy.Admin,
	"GET /api/notice":            policy.Guest,
	"GET /api/about":             policy.Guest,
	"GET /api/home_page_content": policy.Guest,
	"GET /api/user/groups":       policy.Guest,
	"POST /api/user/register":    policy.Guest,
	"POST /api/user/login":       policy.Guest,
	"GET /api/user/logout":       policy.Guest,
	"POST /api/user/logout":      policy.Guest,
	"GET /api/verification":      policy.Guest,
	"GET /api/reset_password":    policy.Guest,
	"POST /api/user/reset":       policy.Guest,
	"GET /api/log/token":         policy.Guest, // S §3.1: P, by token key
	"OPTIONS /api/log/token":     policy.Guest, // its CORS preflight

	// S §3.2: signed-in users, their own account.
	"GET /api/user/self":          policy.User,
	"PUT /api/user/self":          policy.User,
	"DELETE /api/user/self":       policy.User,
	"GET /api/user/token":         policy.User,
	"GET /api/user/aff":           policy.User,
	"POST /api/user/aff_transfer": policy.User,
	"GET /api/user/self/groups":   policy.User,
	"GET /api/oauth/email/bind":   policy.User,
	"GET /api/ws":                 policy.User,

	// S §3.1, §3.2, §11: models and the playground.
	"GET /api/models":           policy.User,
	"GET /api/user/models":      policy.User,
	"POST /pg/chat/completions": policy.User,

	// S §3.5: tokens, always scoped to the caller.
	"GET /api/token/{$}":      policy.User,
	"GET /api/token/search":   policy.User,
	"GET /api/token/{id}":     policy.User,
	"POST /api/token/{$}":     policy.User,
	"PUT /api/token/{$}":      policy.User,
	"DELETE /api/token/{id}":  policy.User,
	"DELETE /api/token/{id}/": policy.User,

	// S §8: own logs (U) and all logs (A); log clearing is A, not root (§3.7).
	"GET /api/log/self/{$}":    policy.User,
	"GET /api/log/self":        policy.User,
	"GET /api/log/self/stat":   policy.User,
	"GET /api/log/self/search": policy.User,
	"GET /api/log/{$}":         policy.Admin,
	"DELETE /api/log/{$}":      policy.Admin,
	"GET /api/log/stat":        policy.Admin,
	"GET /api/log/search":      policy.Admin,

	// S §3.4 and A §6: channels are administrators' business.
	"GET /api/channel/{$}":                  policy.Admin,
	"GET /api/channel/search":               policy.Admin,
	"GET /api/channel/{id}":                 policy.Admin,
	"POST /api/channel/{$}":                 policy.Admin,
	"PUT /api/channel/{$}":                  policy.Admin,
	"DELETE /api/channel/{id}":              policy.Admin,
	"DELETE /api/channel/{id}/":             policy.Admin,
	"DELETE /api/channel/disabled":          policy.Admin,
	"POST /api/channel/batch":               policy.Admin,
	"POST /api/channel/fix":                 policy.Admin,
	"POST /api/channel/copy/{id}":           policy.Admin,
	"GET /api/channel/test/{id}":            policy.Admin,
	"GET /api/channel/test":                 policy.Admin,
	"GET /api/channel/test/progress":        policy.Admin,
	"GET /api/channel/update_balance/{id}":  policy.Admin,
	"GET /api/channel/update_balance/{id}/": policy.Admin,
	"GET /api/channel/update_balance":       policy.Admin,
	"GET /api/channel/models":               policy.Admin,
	"GET /api/channel/fetch_models/{id}":    policy.Admin,
	"POST /api/channel/fetch_models":        policy.Admin,

	// S §3.7 and A §6: super administrator.
	"GET /api/option/{$}":               policy.Root,
	"PUT /api/option/{$}":               policy.Root,
	"POST /api/option/rest_model_ratio": policy.Root,
	"GET /api/backup":                   policy.Root,

	// S §4.4 and §6.3: public pricing; the payment provider's notification
	// carries no session (its signature is checked by the handler).
	"GET /api/pricing":           policy.Guest,
	"GET /api/user/epay/notify":  policy.Guest,
	"POST /api/user/epay/notify": policy.Guest,

	// S §6.2, §6.3 and §8: the wallet and the own dashboard.
	"POST /api/user/topup":   policy.User,
	"POST /api/user/amount":  policy.User,
	"POST /api/user/pay":     policy.User,
	"GET /api/data/self":     policy.User,
	"GET /api/data/self/{$}": policy.User,

	// S §3.3, §3.6, §8 and A §6: user, group, redemption, order and
	// dashboard administration.
	"GET /api/user/{$}":            policy.Admin,
	"GET /api/user/search":         policy.Admin,
	"GET /api/user/{id}":           policy.Admin,
	"DELETE /api/user/{id}":        policy.Admin,
	"POST /api/user/{$}":           policy.Admin,
	"PUT /api/user/{$}":            policy.Admin,
	"POST /api/user/manage":        policy.Admin,
	"GET /api/group/{$}":           policy.Admin,
	"GET /api/redemption/{$}":      policy.Admin,
	"GET /api/redemption/search":   policy.Admin,
	"GET /api/redemption/{id}":     policy.Admin,
	"POST /api/redemption/{$}":     policy.Admin,
	"PUT /api/redemption/{$}":      policy.Admin,
	"DELETE /api/redemption/{id}":  policy.Admin,
	"DELETE /api/redemption/{id}/": policy.Admin,
	"GET /api/topup/{$}":           policy.Admin,
	"GET /api/data/{$}":            policy.Admin,

	// S §9: third-party login. The callbacks are public and bind to the
	// session's user themselves; the Telegram bind is the widget's browser
	// redirect (no New-Api-User), so it is public too and checks the
	// session and its state itself. WeChat bind is an ordinary user call.
	"GET /api/oauth/state":          policy.Guest,
	"GET /api/oauth/github":         policy.Guest,
	"GET /api/oauth/linuxdo":        policy.Guest,
	"GET /api/oauth/wechat":         policy.Guest,
	"GET /api/oauth/telegram/login": policy.Guest,
	"GET /api/oauth/telegram/bind":  policy.Guest,
	"GET /api/oauth/wechat/bind":    policy.User,
}

// wantCritical is every route behind the critical rate limit (S §12:
// register, login, verification, reset_password, user/reset and all of
// /api/oauth/*; docs/decisions.md adds the redemption of a code). Every
// other console route is under the /api limit only.
var wantCritical = map[string]bool{
	"POST /api/user/register":       true,
	"POST /api/user/login":          true,
	"GET /api/verification":         true,
	"GET /api/reset_password":       true,
	"POST /api/user/reset":          true,
	"GET /api/oauth/state":          true,
	"GET /api/oauth/github":         true,
	"GET /api/oauth/linuxdo":        true,
	"GET /api/oauth/wechat":         true,
	"GET /api/oauth/wechat/bind":    true,
	"GET /api/oauth/telegram/login": true,
	"GET /api/oauth/telegram/bind":  true,
	"GET /api/oauth/email/bind":     true,
	"POST /api/user/topup":          true,
}

// msgBadAccessToken is the guard's answer to a system access token it does not know.
const msgBadAccessToken = "无效的访问令牌"

var roleRank = map[string]int{policy.Guest: 0, policy.User: 1, policy.Admin: 2, policy.Root: 3}

// destructive routes run last in the matrix: they end the caller's account.
var destructive = map[string]bool{"DELETE /api/user/self": true}

var pathParam = regexp.MustCompile(`\{[^}]*\}`)

func TestPolicyCoversRoutes(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	pol, err := policy.New()
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, pm := range pol.Routes() {
		lines[pm[1]+" "+pm[0]] = true
	}
	registered := map[string]bool{}
	for _, r := range ts.API.Routes() {
		key := r.Method + " " + r.Path
		if registered[key] {
			t.Errorf("route %s registered twice", key)
		}
		registered[key] = true
		if !lines[key] {
			t.Errorf("route %s has no policy line", key)
		}
		if _, ok := wantAccess[key]; !ok {
			t.Errorf("route %s is missing from this test's access table", key)
		}
		if r.Critical != wantCritical[key] {
			t.Errorf("route %s: critical rate limit %v, want %v (S §12)", key, r.Critical, wantCritical[key])
		}
	}
	for key := range lines {
		if !registered[key] {
			t.Errorf("policy line %s names no registered route", key)
		}
	}
	for key := range wantAccess {
		if !registered[key] {
			t.Errorf("access table names %s, which is not registered", key)
		}
	}
	for key := range wantCritical {
		if !registered[key] {
			t.Errorf("critical table names %s, which is not registered", key)
		}
	}
	if len(registered) == 0 {
		t.Fatal("no routes registered")
	}
}

func TestPolicyMatrix(t *testing.T) {
	t.Parallel()
	// Rate limits are off (the zero Config), so nothing but the guard and
	// the handlers answer. Every role calls with a login session and with a
	// system access token, which S §2 accepts on every route of its level.
	for _, role := range policy.Roles {
		for _, cred := range []string{"session", "token"} {
			if role == policy.Guest && cred == "token" {
				continue
			}
			t.Run(role+"/"+cred, func(t *testing.T) {
				t.Parallel()
				policyMatrix(t, role, cred == "token")
			})
		}
	}
}

func policyMatrix(t *testing.T, role string, viaToken bool) {
	ts := MustStartServer(t)
	routes := ts.API.Routes()
	sort.SliceStable(routes, func(i, j int) bool {
		return !destructive[routes[i].Method+" "+routes[i].Path] && destructive[routes[j].Method+" "+routes[j].Path]
	})
	for _, r := range routes {
		key := r.Method + " " + r.Path
		min, ok := wantAccess[key]
		if !ok {
			t.Errorf("%s: not in the access table", key)
			continue
		}
		allowed := roleRank[role] >= roleRank[min]
		url := pathParam.ReplaceAllStringFunc(r.Path, func(p string) string {
			if p == "{$}" {
				return ""
			}
			return "1"
		})
		// A fresh session or token per request: logout ends the session
		// it gets, GET /api/user/token replaces the token.
		sc := ApiScenario{Method: r.Method, URL: url, As: role, Body: `{}`}
		if viaToken {
			tok, err := ts.Store.ResetAccessToken(ts.UserID(t, roleUser[role]))
			if err != nil {
				t.Fatal(err)
			}
			sc.As, sc.Headers = "", map[string]string{"Authorization": "Bearer " + tok}
		}
		resp := sc.Do(t, ts)
		guardRefusal := false
		if resp.StatusCode == 401 || resp.StatusCode == 403 {
			if e, err := decodeEnvelope(resp.Body); err == nil && (e.Message == msgNotLoggedIn || e.Message == msgNoCredentials || e.Message == msgNoPermission || e.Message == msgBadAccessToken) {
				guardRefusal = true
			}
		}
		switch {
		case allowed && guardRefusal:
			t.Errorf("%s as %s: refused by the guard (%d %s); the spec allows %s and up", key, role, resp.StatusCode, resp.Body, min)
		case !allowed && role == policy.Guest && (resp.StatusCode != 401 || !guardRefusal):
			t.Errorf("%s as guest: %d %s, want 401 from the guard", key, resp.StatusCode, resp.Body)
		case !allowed && role != policy.Guest && (resp.StatusCode != 403 || !guardRefusal):
			t.Errorf("%s as %s: %d %s, want 403 from the guard", key, role, resp.StatusCode, resp.Body)
		}
	}
}

func decodeEnvelope(body []byte) (Envelope, error) {
	var e Envelope
	err := json.Unmarshal(body, &e)
	return e, err
}

// relayAccess is every route on the server's mux that the policy does not
// guard, written from the spec: the relay's routes, which a token opens and
// nothing else (S §5.1, §5.2), the ones it answers 501 (S §5.1), the CORS
// preflights, the unknown-URL answers (S §1) and the console's files.
var relayAccess = map[string]string{
	// S §5.1: token auth.
	"POST /v1/chat/completions":              "token",
	"POST /v1/completions":                   "token",
	"POST /v1/embeddings":                    "token",
	"POST /v1/engines/{model}/embeddings":    "token",
	"POST /v1/moderations":                   "token",
	"POST /v1/images/generations":            "token",
	"POST /v1/audio/speech":                  "token",
	"POST /v1/audio/transcriptions":          "token",
	"POST /v1/audio/translations":            "token",
	"POST /v1/rerank":                        "token",
	"GET /v1/models":                         "token",
	"GET /v1/models/{model...}":              "token",
	"GET /dashboard/billing/subscription":    "token",
	"GET /dashboard/billing/usage":           "token",
	"GET /v1/dashboard/billing/subscription": "token",
	"GET /v1/dashboard/billing/usage":        "token",
	// S §5.1: not implemented (POST /v1/edits too, docs/decisions.md).
	"POST /v1/edits":                  "501",
	"POST /v1/images/edits":           "501",
	"POST /v1/images/variations":      "501",
	"GET /v1/files":                   "501",
	"POST /v1/files":                  "501",
	"GET /v1/files/{id}":              "501",
	"DELETE /v1/files/{id}":           "501",
	"GET /v1/files/{id}/content":      "501",
	"GET /v1/fine-tunes":              "501",
	"POST /v1/fine-tunes":             "501",
	"GET /v1/fine-tunes/{id}":         "501",
	"POST /v1/fine-tunes/{id}/cancel": "501",
	"GET /v1/fine-tunes/{id}/events":  "501",
	"DELETE /v1/models/{model}":       "501",
	// CORS preflights of the relay (S §5.1).
	"OPTIONS /v1/":                "preflight",
	"OPTIONS /dashboard/billing/": "preflight",
	// S §1: unknown /api and /v1 paths.
	"/api/": "404",
	"/api":  "404",
	"/v1/":  "404",
	"/v1":   "404",
	// Unknown billing reads outside /v1, answered like /v1's.
	"/dashboard/billing/": "404",
	// The console's files and page (S §1).
	"/": "console",
}

// TestEveryMuxRouteIsAccountedFor enumerates the server's mux, not only the
// routes registered through the guard: a route added straight to the mux
// (or by the relay) must be in one of the two tables, so none is reachable
// without either a policy line or the relay's own token check.
func TestEveryMuxRouteIsAccountedFor(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	guarded := map[string]bool{}
	for _, r := range ts.API.Routes() {
		guarded[r.Method+" "+r.Path] = true
	}
	seen := map[string]bool{}
	for _, p := range ts.API.Patterns() {
		if seen[p] {
			t.Errorf("pattern %s registered twice", p)
		}
		seen[p] = true
		_, relay := relayAccess[p]
		switch {
		case guarded[p] && relay:
			t.Errorf("%s is both a guarded route and in the relay table", p)
		case !guarded[p] && !relay:
			t.Errorf("%s is on the mux without a policy line or an entry in the relay table", p)
		}
	}
	for p := range relayAccess {
		if !seen[p] {
			t.Errorf("relay table names %s, which is not on the mux", p)
		}
	}
	for p := range guarded {
		if !seen[p] {
			t.Errorf("guarded route %s is not on the mux", p)
		}
	}

	// A token opens the relay's routes, nothing else: neither a console
	// session nor a system access token, even root's.
	cookie, rootID := ts.MustSession(t, "root")
	access, err := ts.Store.ResetAccessToken(rootID)
	if err != nil {
		t.Fatal(err)
	}
	for p, kind := range relayAccess {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			continue
		}
		url := pathParam.ReplaceAllString(path, "m")
		body := ""
		if method == "POST" {
			body = `{"model":"m","messages":[{"role":"user","content":"hi"}],"input":"hi","prompt":"hi"}`
		}
		creds := []ApiScenario{
			{Name: "nobody"},
			{Name: "session", Cookie: cookie, UserID: rootID},
			{Name: "access token", Headers: map[string]string{"Authorization": "Bearer " + access}},
		}
		for _, sc := range creds {
			sc.Method, sc.URL, sc.Body = method, url, body
			r := sc.Do(t, ts)
			switch kind {
			case "token":
				if r.StatusCode != 401 {
					t.Errorf("%s with %s: %d %s, want 401", p, sc.Name, r.StatusCode, r.Body)
				}
			case "501":
				if r.StatusCode != 501 {
					t.Errorf("%s with %s: %d %s, want 501", p, sc.Name, r.StatusCode, r.Body)
				}
			case "preflight":
				if r.StatusCode != 204 {
					t.Errorf("%s with %s: %d, want 204", p, sc.Name, r.StatusCode)
				}
			}
		}
	}
}
