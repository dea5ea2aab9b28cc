package api

import (
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"

	"gateway/store"
)

// checkEmailPolicy applies the domain whitelist and the alias restriction.
func checkEmailPolicy(set *store.Settings, email string) error {
	if err := store.ValidateEmail(email); err != nil {
		return err
	}
	at := strings.LastIndexByte(email, '@')
	local, domain := email[:at], strings.ToLower(email[at+1:])
	if set.Bool("EmailDomainRestrictionEnabled") {
		ok := false
		for _, d := range set.List("EmailDomainWhitelist") {
			ok = ok || strings.EqualFold(d, domain)
		}
		if !ok {
			return store.Errorf(store.EINVALID, "管理员启用了邮箱域名白名单，您的邮箱地址的域名不在白名单中")
		}
	}
	if set.Bool("EmailAliasRestrictionEnabled") && strings.ContainsAny(local, "+.") {
		return store.Errorf(store.EINVALID, "管理员已启用邮箱地址别名限制，您的邮箱地址由于包含特殊符号而被拒绝。")
	}
	return nil
}

func (s *Server) sendVerification(w http.ResponseWriter, r *http.Request) {
	if err := s.checkTurnstile(r); err != nil {
		writeError(w, r, err)
		return
	}
	set := s.store.Settings()
	email := strings.TrimSpace(r.URL.Query().Get("email"))
	if err := checkEmailPolicy(set, email); err != nil {
		writeError(w, r, err)
		return
	}
	if s.store.EmailTaken(email) {
		writeError(w, r, store.Errorf(store.ECONFLICT, "邮箱地址已被占用"))
		return
	}
	code := store.RandomString(6)
	if err := s.store.IssueCode(store.CodeEmailVerify, email, code); err != nil {
		writeError(w, r, err)
		return
	}
	name := html.EscapeString(set.Get("SystemName"))
	body := fmt.Sprintf("<p>您好，你正在进行%s邮箱验证。</p><p>您的验证码为：<strong>%s</strong></p><p>验证码 %d 分钟内有效，如果不是本人操作，请忽略。</p>",
		name, code, int(store.CodeTTL.Minutes()))
	if err := s.sendMail(r.Context(), email, set.Get("SystemName")+"邮箱验证邮件", body); err != nil {
		s.store.DropCode(store.CodeEmailVerify, email)
		writeError(w, r, err)
		return
	}
	writeMessage(w, "验证码发送成功，请检查你的邮箱！", nil)
}

func (s *Server) sendPasswordReset(w http.ResponseWriter, r *http.Request) {
	if err := s.checkTurnstile(r); err != nil {
		writeError(w, r, err)
		return
	}
	set := s.store.Settings()
	email := strings.TrimSpace(r.URL.Query().Get("email"))
	if err := store.ValidateEmail(email); err != nil {
		writeError(w, r, err)
		return
	}
	u, err := s.store.UserByEmail(email)
	if err != nil || u.Deleted() {
		writeError(w, r, store.Errorf(store.ENOTFOUND, "该邮箱地址未注册"))
		return
	}
	token := store.RandomHex(32)
	if err := s.store.IssueCode(store.CodePasswordReset, email, token); err != nil {
		writeError(w, r, err)
		return
	}
	link := fmt.Sprintf("%s/user/reset?email=%s&token=%s", set.ServerAddress(), url.QueryEscape(email), token)
	name := html.EscapeString(set.Get("SystemName"))
	body := fmt.Sprintf(`<p>您好，你正在进行%s密码重置。</p><p>点击 <a href="%s">此处</a> 进行密码重置。</p><p>如果链接无法点击，请尝试复制以下链接到浏览器中打开：<br>%s</p><p>重置链接 %d 分钟内有效，如果不是本人操作，请忽略。</p>`,
		name, html.EscapeString(link), html.EscapeString(link), int(store.CodeTTL.Minutes()))
	if err := s.sendMail(r.Context(), email, set.Get("SystemName")+"密码重置", body); err != nil {
		s.store.DropCode(store.CodePasswordReset, email)
		writeError(w, r, err)
		return
	}
	writeMessage(w, "重置邮件发送成功，请检查邮箱！", nil)
}

type resetRequest struct {
	Email string `json:"email"`
	Token string `json:"token"`
}

func (s *Server) resetPassword(w http.ResponseWriter, r *http.Request) {
	var req resetRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	req.Email = strings.TrimSpace(req.Email)
	if req.Email == "" || req.Token == "" {
		writeError(w, r, store.Errorf(store.EINVALID, "无效的参数"))
		return
	}
	badLink := store.Errorf(store.EINVALID, "重置链接非法或已过期")
	u, err := s.store.UserByEmail(req.Email)
	if err != nil {
		// No account has the address: no link was sent to it.
		writeError(w, r, badLink)
		return
	}
	// The link is spent with the new password, in one transaction.
	pw := store.RandomString(12)
	code := &store.CodeUse{Purpose: store.CodePasswordReset, Subject: req.Email, Code: req.Token}
	if _, err := s.store.UpdateUser(u.ID, store.UserUpdate{Password: &pw, Code: code}); err != nil {
		if errors.Is(err, store.ErrBadCode) {
			err = badLink
		}
		writeError(w, r, err)
		return
	}
	s.hub.Disconnect(u.ID)
	writeJSON(w, pw)
}

func (s *Server) bindEmail(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	email, code := strings.TrimSpace(q.Get("email")), strings.TrimSpace(q.Get("code"))
	if email == "" {
		writeError(w, r, store.Errorf(store.EINVALID, "请输入邮箱！"))
		return
	}
	if code == "" {
		writeError(w, r, store.Errorf(store.EINVALID, "请输入邮箱验证码！"))
		return
	}
	// The code is spent with the binding, in one transaction: an address
	// refused (taken meanwhile) leaves the code for another try.
	use := &store.CodeUse{Purpose: store.CodeEmailVerify, Subject: email, Code: code}
	if _, err := s.store.UpdateUser(currentUser(r).ID, store.UserUpdate{Email: &email, Code: use}); err != nil {
		writeError(w, r, err)
		return
	}
	writeMessage(w, "邮箱账户绑定成功！", nil)
}
