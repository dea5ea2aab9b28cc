package api

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"gateway/store"
	"gateway/ws"
)

const sessionCookie = "session"

// sessionTag names a session to the hub without handing it the secret.
func sessionTag(cookie string) string {
	h := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(h[:8])
}

func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, value string) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: value, Path: "/", MaxAge: int(store.SessionTTL.Seconds()),
		HttpOnly: true, Secure: s.ips.isSecure(r), SameSite: http.SameSiteLaxMode,
	})
}

func (s *Server) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.ips.isSecure(r), SameSite: http.SameSiteLaxMode})
}

// startSession ends any session the request came with and starts a new one
// for u, so a session id is never carried across a login. Live sockets of the
// ended session move to the new one when it belongs to the same user (so a
// later logout still closes them) and are closed otherwise.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, u *store.User) error {
	old := ""
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		old = c.Value
	}
	id, _, err := s.store.CreateSessionFor(u)
	if err != nil {
		if old != "" {
			_ = s.store.DeleteSession(old)
			s.hub.DisconnectSession(sessionTag(old))
		}
		return err
	}
	if old != "" {
		// The sockets move before the old session ends, so that none is
		// checked against it in between.
		s.hub.MoveSession(sessionTag(old), ws.Identity{UserID: u.ID, Role: u.Role, Session: sessionTag(id), Valid: s.liveSessionValid(u, id)})
		_ = s.store.DeleteSession(old)
	}
	s.setSessionCookie(w, r, id)
	return nil
}

type registerRequest struct {
	Username         string `json:"username"`
	Password         string `json:"password"`
	Password2        string `json:"password2"`
	Email            string `json:"email"`
	VerificationCode string `json:"verification_code"`
	AffCode          string `json:"aff_code"`
}

func (s *Server) register_(w http.ResponseWriter, r *http.Request) {
	set := s.store.Settings()
	if !set.Bool("RegisterEnabled") {
		writeError(w, r, store.Errorf(store.EFORBIDDEN, "管理员关闭了新用户注册"))
		return
	}
	if !set.Bool("PasswordRegisterEnabled") {
		writeError(w, r, store.Errorf(store.EFORBIDDEN, "管理员关闭了通过密码进行注册，请使用第三方账户验证的形式进行注册"))
		return
	}
	if err := s.checkTurnstile(r); err != nil {
		writeError(w, r, err)
		return
	}
	var req registerRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	req.Username = strings.TrimSpace(req.Username)
	if req.Username == "" || req.Password == "" {
		writeError(w, r, store.Errorf(store.EINVALID, "请输入用户名和密码！"))
		return
	}
	if req.Password2 != "" && req.Password2 != req.Password {
		writeError(w, r, store.Errorf(store.EINVALID, "两次输入的密码不一致"))
		return
	}
	in := store.NewUser{Username: req.Username, Password: req.Password, InviterCode: strings.TrimSpace(req.AffCode),
		DefaultToken: s.cfg.DefaultToken}
	if set.Bool("EmailVerificationEnabled") {
		req.Email = strings.TrimSpace(req.Email)
		if req.Email == "" || req.VerificationCode == "" {
			writeError(w, r, store.Errorf(store.EINVALID, "管理员开启了邮箱验证，请输入邮箱地址和验证码"))
			return
		}
		// What CreateUser would refuse is told before the code is looked at
		// (a taken name before a mistyped code); a refused registration
		// leaves the code unspent either way.
		if err := precheckNewUser(s.store, in.Username, in.Password, req.Email); err != nil {
			writeError(w, r, err)
			return
		}
		// The code is spent with the registration, in one transaction.
		in.Code = &store.CodeUse{Purpose: store.CodeEmailVerify, Subject: req.Email, Code: strings.TrimSpace(req.VerificationCode)}
		in.Email = req.Email
	}
	if _, err := s.store.CreateUser(in); err != nil {
		writeError(w, r, err)
		return
	}
	writeMessage(w, "注册成功！", nil)
}

// precheckNewUser runs the checks of CreateUser that need no transaction.
func precheckNewUser(st *store.Store, username, password, email string) error {
	if err := store.ValidateUsername(username); err != nil {
		return err
	}
	if err := store.ValidatePassword(password); err != nil {
		return err
	}
	if err := store.ValidateEmail(email); err != nil {
		return err
	}
	if st.UsernameTaken(username) {
		return store.Errorf(store.ECONFLICT, "用户名已存在")
	}
	if st.EmailTaken(email) {
		return store.Errorf(store.ECONFLICT, "邮箱地址已被占用")
	}
	return nil
}

type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// defaultPasswordWarning is sent with a login that used the first-start password.
const defaultPasswordWarning = "您正在使用默认密码，请立即修改密码！"

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !s.store.Settings().Bool("PasswordLoginEnabled") {
		writeError(w, r, store.Errorf(store.EFORBIDDEN, "管理员关闭了密码登录"))
		return
	}
	if err := s.checkTurnstile(r); err != nil {
		writeError(w, r, err)
		return
	}
	var req loginRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if strings.TrimSpace(req.Username) == "" || req.Password == "" {
		writeError(w, r, store.Errorf(store.EINVALID, "请输入用户名和密码！"))
		return
	}
	u, err := s.store.UserByLogin(req.Username)
	if err != nil {
		u = nil
	}
	// CheckPassword does the same bcrypt work for an unknown user, and every
	// failure gets the same message, so a login reveals nothing.
	if !store.CheckPassword(u, req.Password) || u.Deleted() || u.Status != store.UserStatusEnabled {
		writeError(w, r, store.Errorf(store.EUNAUTHORIZED, "用户名或密码错误，或用户已被封禁"))
		return
	}
	if err := s.startSession(w, r, u); err != nil {
		writeError(w, r, err)
		return
	}
	msg := ""
	if u.PasswordIsDefault {
		msg = defaultPasswordWarning
	}
	writeMessage(w, msg, viewUser(u))
}

// logout ends the request's session. The GET form (kept for older
// consoles, which send New-Api-User with every call) needs that header to
// name the session's user: a link on another site followed over plain http
// carries no Sec-Fetch-Site for refuseCrossSite to read, and an image in a
// page of the gateway is same-origin, but neither can add the header.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		if r.Method != http.MethodPost {
			if sess, err := s.store.Session(c.Value); err == nil && sess.UserID != 0 &&
				strings.TrimSpace(r.Header.Get("New-Api-User")) != strconv.FormatUint(sess.UserID, 10) {
				writeError(w, r, store.Errorf(store.EFORBIDDEN, "拒绝来自其他站点的请求"))
				return
			}
		}
		defer s.hub.DisconnectSession(sessionTag(c.Value))
		if err := s.store.DeleteSession(c.Value); err != nil {
			// Ended in memory all the same: the browser forgets it too.
			s.clearSessionCookie(w, r)
			writeError(w, r, err)
			return
		}
	}
	s.clearSessionCookie(w, r)
	writeMessage(w, "", nil)
}
