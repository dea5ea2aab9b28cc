package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"gateway/store"
)

// maxTurnstileToken is the longest token Cloudflare's widget issues.
const maxTurnstileToken = 2048

// turnstileGuard remembers tokens already accepted so each is used once.
type turnstileGuard struct {
	mu   sync.Mutex
	used map[string]time.Time
}

func newTurnstileGuard() *turnstileGuard { return &turnstileGuard{used: make(map[string]time.Time)} }

// claim records token and reports whether it was unused.
func (g *turnstileGuard) claim(token string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	for t, at := range g.used {
		if now.Sub(at) > 10*time.Minute {
			delete(g.used, t)
		}
	}
	if _, ok := g.used[token]; ok {
		return false
	}
	g.used[token] = now
	return true
}

// checkTurnstile verifies the ?turnstile= token with the configured secret
// when the human check is on. Every token is verified, and accepted once.
func (s *Server) checkTurnstile(r *http.Request) error {
	set := s.store.Settings()
	if !set.Bool("TurnstileCheckEnabled") {
		return nil
	}
	token := r.URL.Query().Get("turnstile")
	if token == "" {
		return store.Errorf(store.EINVALID, "请稍后几秒重试，Turnstile 正在检查用户环境！")
	}
	// No widget makes a longer token (Cloudflare's bound): one that cannot
	// be valid is neither kept nor sent on, so a client cannot make the
	// server hold a megabyte per request for ten minutes.
	if len(token) > maxTurnstileToken || !s.turnstile.claim(token) {
		return store.Errorf(store.EFORBIDDEN, "Turnstile 校验失败，请刷新重试！")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	form := url.Values{"secret": {set.Get("TurnstileSecretKey")}, "response": {token}, "remoteip": {s.ips.of(r)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.TurnstileVerifyURL, strings.NewReader(form.Encode()))
	if err != nil {
		return store.Internal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.cfg.HTTPClient.Do(req)
	if err != nil {
		return &store.Error{Code: store.EUPSTREAM, Message: "Turnstile 校验服务不可用，请稍后重试", Err: err}
	}
	defer resp.Body.Close()
	var out struct {
		Success bool `json:"success"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 64<<10)).Decode(&out); err != nil || !out.Success {
		return store.Errorf(store.EFORBIDDEN, "Turnstile 校验失败，请刷新重试！")
	}
	return nil
}
