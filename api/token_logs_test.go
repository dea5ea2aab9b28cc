package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
