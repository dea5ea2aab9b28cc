package api

import (
	"net/http"
	"strings"

	"gateway/store"
)

// The token log lookup is called from pages on other origins (S §3.1: P,
// CORS): its answers, errors included, carry CORS headers, and the
// preflight a browser sends for the Authorization header is answered.
func (s *Server) registerTokenLogRoutes() {
	s.handle("GET /api/log/token", s.tokenLogs)
	s.handle("OPTIONS /api/log/token", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	s.cors["/api/log/token"] = true
}

// withCORS adds the CORS headers of the routes that allow other origins,
// before the guard so that its refusals carry them too.
func (s *Server) withCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cors[r.URL.Path] {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", "*")
			h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			h.Set("Access-Control-Expose-Headers", RequestIDHeader)
			h.Set("Access-Control-Max-Age", "86400")
		}
		next.ServeHTTP(w, r)
	})
}

// tokenLogs lists the logs of the token that authenticates the request
// (Authorization: Bearer sk-..., as on /v1), newest first, without admin detail. It is
// how a token holder without a console account checks their usage.
func (s *Server) tokenLogs(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSpace(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	if !strings.HasPrefix(key, "sk-") {
		writeError(w, r, store.Errorf(store.EUNAUTHORIZED, "请在 Authorization 请求头中提供令牌（Bearer sk-...）"))
		return
	}
	tok, err := s.store.TokenByKey(key)
	if err != nil && store.ErrorCode(err) != store.ENOTFOUND {
		writeError(w, r, err)
		return
	}
	if err != nil {
		writeError(w, r, store.Errorf(store.EUNAUTHORIZED, "无效的令牌"))
		return
	}
	// The token answers here where the relay would take it: a disabled
	// token, or one whose owner is banned or deleted, reads nothing, and its
	// IP allow list applies. An expired or used-up token still shows how it
	// was used, which is what its holder comes to look for.
	if tok.Status == store.TokenStatusDisabled {
		writeError(w, r, store.Errorf(store.EUNAUTHORIZED, "该令牌状态不可用"))
		return
	}
	if !tok.AllowsIP(s.ips.of(r)) {
		writeError(w, r, store.Errorf(store.EFORBIDDEN, "您的 IP 不在令牌允许访问的列表中"))
		return
	}
	u, err := s.store.User(tok.UserID)
	if err != nil && store.ErrorCode(err) != store.ENOTFOUND {
		writeError(w, r, err)
		return
	}
	if err != nil || u.Deleted() || u.Status != store.UserStatusEnabled {
		writeError(w, r, store.Errorf(store.EFORBIDDEN, "用户已被封禁"))
		return
	}
	logs, err := s.store.SearchLogsContext(r.Context(), store.LogFilter{TokenID: tok.ID}, 1000)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, viewSelfLogs(logs))
}
