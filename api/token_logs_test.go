package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gateway/store"
)

// GET /api/log/token lists the logs of the token in the Authorization
// header only, without admin detail, and answers other origins (S §3.1).
func TestTokenLogLookup(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	u, _ := e.mustUser("holly", store.RoleCommon)
	a, err := e.store.CreateToken(&store.Token{UserID: u.ID, Name: "a", UnlimitedQuota: true, ExpiredTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.store.CreateToken(&store.Token{UserID: u.ID, Name: "b", UnlimitedQuota: true, ExpiredTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []store.Log{
		{TokenID: a.ID, TokenName: "a", Content: "a1", Other: `{"model_ratio":1,"admin_info":{"use_channel":[3]}}`},
		{TokenID: a.ID, TokenName: "a", Content: "a2"},
		{TokenID: b.ID, TokenName: "b", Content: "b1"},
	} {
		l.UserID, l.Username, l.Type = u.ID, "holly", store.LogTypeConsume
		if err := e.store.AppendLog(&l); err != nil {
			t.Fatal(err)
		}
	}
	send := func(method, url, auth string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, url, nil)
		req.Header.Set("Origin", "https://usage.example")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if method == http.MethodOptions {
			req.Header.Set("Access-Control-Request-Method", "GET")
			req.Header.Set("Access-Control-Request-Headers", "authorization")
		}
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, req)
		return rec
	}

	rec := send("GET", "/api/log/token", "Bearer sk-"+a.Key)
	var env struct {
		Success bool `json:"success"`
		Data    []struct {
			TokenID uint64 `json:"token_id"`
			Content string `json:"content"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || rec.Code != 200 || !env.Success || len(env.Data) != 2 {
		t.Fatalf("own logs: %d %s", rec.Code, rec.Body)
	}
	for _, l := range env.Data {
		if l.TokenID != a.ID {
			t.Fatalf("another token's log: %s", rec.Body)
		}
	}
	if strings.Contains(rec.Body.String(), "admin_info") || rec.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("admin detail or no CORS header: %v %s", rec.Header(), rec.Body)
	}

	for name, tc := range map[string]struct{ url, auth string }{
		"no token":          {"/api/log/token", ""},
		"unknown token":     {"/api/log/token", "Bearer sk-" + store.NewTokenKey()},
		"key in the query":  {"/api/log/token?key=sk-" + a.Key, ""},
		"not a token key":   {"/api/log/token", "Bearer " + a.Key},
		"deleted token key": {"/api/log/token", "Bearer sk-" + b.Key},
	} {
		if name == "deleted token key" {
			if err := e.store.DeleteToken(u.ID, b.ID); err != nil {
				t.Fatal(err)
			}
		}
		rec := send("GET", tc.url, tc.auth)
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: %d %v %s", name, rec.Code, rec.Header(), rec.Body)
		}
	}

	rec = send("OPTIONS", "/api/log/token", "")
	if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", rec.Code, rec.Header())
	}
	// The console's own routes stay same-origin.
	if rec := send("GET", "/api/status", ""); rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("CORS on a console route: %v", rec.Header())
	}
}

// The lookup takes a token where the relay would: a disabled token, a token
// used from outside its IP allow list and the tokens of a banned or deleted
// owner read nothing; an expired or used-up token still shows its history.
func TestTokenLogLookupRefusesWhatTheRelayRefuses(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	owner, _ := e.mustUser("tlowner", store.RoleCommon)
	banned, _ := e.mustUser("tlbanned", store.RoleCommon)
	gone, _ := e.mustUser("tlgone", store.RoleCommon)
	token := func(u *store.User, name string, edit func(*store.Token)) *store.Token {
		t.Helper()
		tok := &store.Token{UserID: u.ID, Name: name, UnlimitedQuota: true, ExpiredTime: -1}
		if edit != nil {
			edit(tok)
		}
		tok, err := e.store.CreateToken(tok)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	disabled := token(owner, "disabled", nil)
	if err := e.store.SetTokenStatus(disabled.ID, store.TokenStatusDisabled); err != nil {
		t.Fatal(err)
	}
	expired := token(owner, "expired", func(t *store.Token) { t.ExpiredTime = time.Now().Unix() + 60 })
	e.store.Now = func() time.Time { return time.Now().Add(time.Hour) } // its expiry has passed
	if err := e.store.SetTokenStatus(expired.ID, store.TokenStatusExpired); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.store.Token(0, expired.ID); got.Status != store.TokenStatusExpired {
		t.Fatalf("the expired token's status: %d", got.Status)
	}
	exhausted := token(owner, "exhausted", func(t *store.Token) { t.UnlimitedQuota = false })
	if err := e.store.SetTokenStatus(exhausted.ID, store.TokenStatusExhausted); err != nil {
		t.Fatal(err)
	}
	fenced := token(owner, "fenced", func(t *store.Token) { t.AllowIPs = "10.0.0.0/8" })
	inside := token(owner, "inside", func(t *store.Token) { t.AllowIPs = "192.0.2.0/24" })
	ofBanned := token(banned, "b", nil)
	off := store.UserStatusDisabled
	if _, err := e.store.UpdateUser(banned.ID, store.UserUpdate{Status: &off}); err != nil {
		t.Fatal(err)
	}
	ofGone := token(gone, "g", nil)
	if err := e.store.DeleteUser(gone.ID); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		tok  *store.Token
		want int
	}{
		{"disabled token", disabled, http.StatusUnauthorized},
		{"outside the allow list", fenced, http.StatusForbidden},
		{"banned owner", ofBanned, http.StatusForbidden},
		{"deleted owner", ofGone, http.StatusForbidden},
		{"expired token", expired, http.StatusOK},
		{"used-up token", exhausted, http.StatusOK},
		{"inside the allow list", inside, http.StatusOK},
	} {
		req := httptest.NewRequest("GET", "/api/log/token", nil) // from 192.0.2.1
		req.Header.Set("Authorization", "Bearer sk-"+tc.tok.Key)
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.name, rec.Code, tc.want, rec.Body)
		}
	}
}
