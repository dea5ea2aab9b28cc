package api

import (
	"net/http"
	"strings"

	"gateway/store"
)

func (s *Server) registerTokenLogRoutes() {
	s.handle("GET /api/log/token", s.tokenLogs)
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
	if err != nil {
		writeError(w, r, store.Errorf(store.EUNAUTHORIZED, "无效的令牌"))
		return
	}
	logs, err := s.store.SearchLogs(store.LogFilter{TokenID: tok.ID}, 1000)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, viewSelfLogs(logs))
}
