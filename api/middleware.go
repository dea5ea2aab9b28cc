package api

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"gateway/policy"
	"gateway/store"
)

type ctxKey int

const (
	ctxRequestID ctxKey = iota
	ctxIdentity
)

// Identity is who made a console request.
type Identity struct {
	User      *store.User // nil for guests
	SessionID string      // cookie value when authenticated by session
	ViaToken  bool        // authenticated by a system access token
}

// identity returns the caller of r; User is nil for guests.
func identity(r *http.Request) *Identity {
	if id, ok := r.Context().Value(ctxIdentity).(*Identity); ok {
		return id
	}
	return &Identity{}
}

// currentUser returns the authenticated user; guarded routes always have one.
func currentUser(r *http.Request) *store.User { return identity(r).User }

func requestID(r *http.Request) string {
	id, _ := r.Context().Value(ctxRequestID).(string)
	return id
}

// RequestIDHeader carries the id of every request.
const RequestIDHeader = "X-Oneapi-Request-Id"

// NewRequestID returns a time-ordered request id: timestamp + 8 random characters.
func NewRequestID() string {
	// One allocation, the string: the parts are put together on the stack.
	var b [14 + 8]byte
	return string(store.AppendRandom(time.Now().AppendFormat(b[:0], "20060102150405"), 8))
}

func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := NewRequestID()
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxRequestID, id)))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush lets streaming handlers flush through the recorder.
func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		slog.Debug("request", append(logAttrs(r), "status", rec.status, "duration", time.Since(start))...)
	})
}

func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				// The request id is set inside this handler: read it from the answer's header.
				id := w.Header().Get(RequestIDHeader)
				slog.Error("panic", "method", r.Method, "path", r.URL.Path, "request_id", id, "panic", v, "stack", string(debug.Stack()))
				var e openAIError
				e.Error.Message = "服务器内部错误 (request id: " + id + ")"
				e.Error.Type = "new_api_panic"
				writeRaw(w, http.StatusInternalServerError, e)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// roleSubject maps a user role to its policy subject.
func roleSubject(u *store.User) string {
	switch {
	case u == nil:
		return policy.Guest
	case u.Role >= store.RoleRoot:
		return policy.Root
	case u.Role >= store.RoleAdmin:
		return policy.Admin
	case u.Role >= store.RoleCommon:
		return policy.User
	}
	return policy.Guest
}

// guard applies, in order: the rate limits, authentication and the policy
// line for (path, method). Routes a guest may call still learn who the caller
// is when a valid session or token comes with the request.
func (s *Server) guard(method, path string, critical bool, h http.HandlerFunc) http.Handler {
	guestAllowed := s.policy.Allowed(policy.Guest, path, method)
	// A browser cannot add headers to a WebSocket handshake; the socket is
	// protected by the session cookie and the Origin check instead.
	needHeader := path != "/api/ws"
	// The per-IP /api budget covers /api/* (S §12); the playground is a relay
	// call (S §11), bounded by what it costs like /v1.
	apiLimited := strings.HasPrefix(path, "/api/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The mux lets HEAD into every GET route, and some GETs act (a new
		// access token, a test of all channels, a mail sent): HEAD is a wrong
		// method here, as any other.
		if r.Method != method {
			writeNotFoundURL(w, r)
			return
		}
		// Answers carry keys, balances and personal data: no cache keeps them.
		w.Header().Set("Cache-Control", "no-store")
		ip := s.ips.of(r)
		if (apiLimited && !s.apiLimit.allow(ip)) || (critical && !s.critical.allow(ip)) {
			writeError(w, r, store.Errorf(store.ERATELIMIT, "请求过于频繁，请稍后再试"))
			return
		}
		id, err := s.authenticate(r, needHeader)
		if err != nil && !guestAllowed {
			writeError(w, r, err)
			return
		}
		if id == nil {
			id = &Identity{}
		}
		if !s.policy.Allowed(roleSubject(id.User), path, method) {
			if id.User == nil {
				writeError(w, r, store.Errorf(store.EUNAUTHORIZED, "未登录或登录已过期，请重新登录！"))
			} else {
				writeError(w, r, store.Errorf(store.EFORBIDDEN, "无权进行此操作，权限不足"))
			}
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), ctxIdentity, id)))
	})
}

// authenticate resolves the caller from a session cookie (with the
// New-Api-User header) or, when the request has no live session, a system
// access token (S §2). A session comes first, so an Authorization header
// that a proxy in front adds (HTTP Basic, say) does not log a signed-in
// console out. It returns nil and an error for a request that has neither.
func (s *Server) authenticate(r *http.Request, needHeader bool) (*Identity, error) {
	expired := false
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		if sess, err := s.store.Session(c.Value); err == nil && sess.UserID != 0 {
			return s.sessionIdentity(r, c.Value, sess.UserID, needHeader)
		}
		expired = true
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		tok := strings.TrimSpace(strings.TrimPrefix(auth, "Bearer "))
		u, err := s.store.UserByAccessToken(tok)
		if err != nil {
			return nil, store.Errorf(store.EUNAUTHORIZED, "无效的访问令牌")
		}
		if err := checkUsable(u); err != nil {
			return nil, err
		}
		return &Identity{User: u, ViaToken: true}, nil
	}
	if expired {
		return nil, store.Errorf(store.EUNAUTHORIZED, "未登录或登录已过期，请重新登录！")
	}
	return nil, store.Errorf(store.EUNAUTHORIZED, "无权进行此操作，未登录且未提供 access token")
}

// sessionIdentity finishes authenticate for a live session of userID.
func (s *Server) sessionIdentity(r *http.Request, sessionID string, userID uint64, needHeader bool) (*Identity, error) {
	if needHeader {
		// Each refusal says what is wrong with the header (S §2: 401),
		// so a script that forgot it is not told its login expired.
		hv := r.Header.Get("New-Api-User")
		if hv == "" {
			return nil, store.Errorf(store.EUNAUTHORIZED, "无权进行此操作，未提供 New-Api-User")
		}
		uid, perr := strconv.ParseUint(hv, 10, 64)
		if perr != nil {
			return nil, store.Errorf(store.EUNAUTHORIZED, "无权进行此操作，New-Api-User 格式错误")
		}
		if uid != userID {
			return nil, store.Errorf(store.EUNAUTHORIZED, "无权进行此操作，与登录用户不匹配，请重新登录")
		}
	}
	u, err := s.store.User(userID)
	if err != nil {
		return nil, store.Errorf(store.EUNAUTHORIZED, "未登录或登录已过期，请重新登录！")
	}
	if err := checkUsable(u); err != nil {
		return nil, err
	}
	return &Identity{User: u, SessionID: sessionID}, nil
}

// checkUsable refuses deleted and banned accounts.
func checkUsable(u *store.User) error {
	if u.Deleted() {
		return store.Errorf(store.EUNAUTHORIZED, "用户已注销")
	}
	if u.Status != store.UserStatusEnabled {
		return store.Errorf(store.EFORBIDDEN, "用户已被封禁")
	}
	return nil
}

// refuseCrossSite refuses /api requests that a page on another site could
// have made a browser send: a page elsewhere could otherwise log a visitor
// into the page author's account (login takes any body) or out of their own.
// Two signs, neither of which a proxy in front of the gateway disturbs:
//
//   - Sec-Fetch-Site: cross-site, the browser's own verdict (sent to https
//     and localhost addresses), on anything that could change something
//     (every method but GET, HEAD and OPTIONS, and the logout GET);
//   - a browser's body of a kind a page may send anywhere without asking
//     (a form, text/plain, or no type at all: the CORS "simple" ones). The
//     console sends JSON;
//     JSON from another site needs the server's leave, which the gateway
//     never gives, so such a request never leaves the browser.
//
// Scripts, which send no Origin, are not affected.
func refuseCrossSite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/pg/")) && crossSite(r) {
			writeError(w, r, store.Errorf(store.EFORBIDDEN, "拒绝来自其他站点的请求"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sessionGETs are the GET routes that start, end or bind a session: the
// console calls them from its own pages, so another site's link to one is
// refused like any change (a link with the author's own Telegram or WeChat
// login would sign the visitor into the author's account). The Telegram
// bind, which Telegram itself sends the browser to, carries a state tied to
// the session instead.
var sessionGETs = map[string]bool{
	"/api/user/logout":          true,
	"/api/oauth/github":         true,
	"/api/oauth/linuxdo":        true,
	"/api/oauth/wechat":         true,
	"/api/oauth/wechat/bind":    true,
	"/api/oauth/telegram/login": true,
}

func crossSite(r *http.Request) bool {
	changes := r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions
	if !changes && !sessionGETs[r.URL.Path] {
		return false
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return true
	}
	if r.Header.Get("Origin") == "" {
		return false
	}
	// The type as a browser reads it, the part before any ";": a parameter
	// that does not parse (a=1;a=2) must not hide it.
	mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if mt == "" {
		// A body without a type (a page's Blob or ArrayBuffer) is as simple
		// as a form; the console types every body it sends.
		return r.ContentLength != 0
	}
	switch mt {
	case "application/x-www-form-urlencoded", "multipart/form-data", "text/plain":
		return true
	}
	return false
}
