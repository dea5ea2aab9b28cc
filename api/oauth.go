package api

import (
	"bytes"
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"gateway/store"
)

// The providers' real endpoints; api.Config overrides each one (tests point
// them at local doubles).
const (
	DefaultGitHubAuthorizeURL  = "https://github.com/login/oauth/authorize"
	DefaultGitHubTokenURL      = "https://github.com/login/oauth/access_token"
	DefaultGitHubUserURL       = "https://api.github.com/user"
	DefaultLinuxDOAuthorizeURL = "https://connect.linux.do/oauth2/authorize"
	DefaultLinuxDOTokenURL     = "https://connect.linux.do/oauth2/token"
	DefaultLinuxDOUserURL      = "https://connect.linux.do/api/user"
)

const (
	// oauthStateTTL is how long a state from GET /api/oauth/state stays
	// valid; it is also the whole life of the anonymous session that holds it.
	oauthStateTTL = 10 * time.Minute
	// providerTimeout bounds each call to a provider (S §9: 5 s).
	providerTimeout = 5 * time.Second
	// providerMaxBody caps what is read from a provider's answer.
	providerMaxBody = 1 << 20
	// maxAffLen bounds the invite code carried by a state.
	maxAffLen = 32
)

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// provider is a source of third-party identities.
type provider struct {
	Key    string // store.UserByExternalID key
	Label  string // name in messages
	Prefix string // prefix of generated usernames
	Option string // the option that switches it on
}

var (
	providerGitHub   = provider{Key: "github", Label: "GitHub", Prefix: "github_", Option: "GitHubOAuthEnabled"}
	providerLinuxDO  = provider{Key: "linuxdo", Label: "LinuxDO", Prefix: "linuxdo_", Option: "LinuxDOOAuthEnabled"}
	providerWeChat   = provider{Key: "wechat", Label: "微信", Prefix: "wechat_", Option: "WeChatAuthEnabled"}
	providerTelegram = provider{Key: "telegram", Label: "Telegram", Prefix: "telegram_", Option: "TelegramOAuthEnabled"}
)

func (p provider) disabled() error {
	return store.Errorf(store.EFORBIDDEN, "管理员未开启通过%s登录以及注册", p.inText())
}

// inText is the label as it sits inside a Chinese sentence: Latin names get
// a space on each side.
func (p provider) inText() string {
	if p.Label != "" && p.Label[0] < utf8.RuneSelf {
		return " " + p.Label + " "
	}
	return p.Label
}

func (p provider) alreadyBound() error {
	return store.Errorf(store.ECONFLICT, "该%s账户已被其他账户绑定", p.inText())
}

// update returns the user update that links id to this provider.
func (p provider) update(id string) store.UserUpdate {
	switch p.Key {
	case "github":
		return store.UserUpdate{GitHubID: &id}
	case "linuxdo":
		return store.UserUpdate{LinuxDOID: &id}
	case "wechat":
		return store.UserUpdate{WeChatID: &id}
	default:
		return store.UserUpdate{TelegramID: &id}
	}
}

// externalAccount is what a provider told us about the person signing in.
type externalAccount struct {
	// ID is the provider's stable id: GitHub's and LinuxDO's numeric user
	// id (never the renameable login), the WeChat server's id.
	ID          string
	DisplayName string
	Email       string
	// NumericID says ID may appear in a generated username.
	NumericID bool
}

func (s *Server) registerOAuthRoutes() {
	s.handleCritical("GET /api/oauth/state", s.getOAuthState)
	s.handleCritical("GET /api/oauth/github", s.githubCallback)
	s.handleCritical("GET /api/oauth/linuxdo", s.linuxDOCallback)
	s.handleCritical("GET /api/oauth/wechat", s.wechatLogin)
	s.handleCritical("GET /api/oauth/wechat/bind", s.wechatBind)
	s.handleCritical("GET /api/oauth/telegram/login", s.telegramLogin)
	s.handleCritical("GET /api/oauth/telegram/bind", s.telegramBind)
}

// getOAuthState issues a random state bound to the caller's session, with
// the invite code ?aff= riding along. A caller without a live session gets
// an anonymous one that lives as long as the state.
func (s *Server) getOAuthState(w http.ResponseWriter, r *http.Request) {
	aff := strings.TrimSpace(r.URL.Query().Get("aff"))
	if len(aff) > maxAffLen {
		aff = ""
	}
	state := store.RandomString(32)
	now := s.store.Now()
	expires := now.Add(oauthStateTTL).Unix()
	attach := func(sess *store.Session) error {
		if sess.ExpiresAt < now.Unix() {
			return store.Errorf(store.EUNAUTHORIZED, "会话已过期")
		}
		sess.OAuthState, sess.OAuthAff, sess.OAuthStateExpires = state, aff, expires
		if sess.UserID == 0 {
			sess.ExpiresAt = expires
		}
		return nil
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		if err := s.store.UpdateSession(c.Value, attach); err == nil {
			writeJSON(w, state)
			return
		}
	}
	id, _, err := s.store.CreateSession(0)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.store.UpdateSession(id, attach); err != nil {
		writeError(w, r, err)
		return
	}
	s.setSessionCookie(w, r, id)
	writeJSON(w, state)
}

var errOAuthState = store.Errorf(store.EFORBIDDEN, "授权状态无效或已过期，请重新发起登录")

// consumeOAuthState checks ?state= against the state of the request's
// session and clears it, so each state is used once. It returns the session
// as it was before, which tells the user (0 = anonymous) and the invite code.
// Errors: EFORBIDDEN for no session, no pending state, a mismatch or an
// expired state.
func (s *Server) consumeOAuthState(r *http.Request) (*store.Session, error) {
	state := r.URL.Query().Get("state")
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" || state == "" {
		return nil, errOAuthState
	}
	now := s.store.Now().Unix()
	var before store.Session
	ok := false
	err = s.store.UpdateSession(c.Value, func(sess *store.Session) error {
		if sess.ExpiresAt < now || sess.OAuthState == "" {
			return nil
		}
		match := subtle.ConstantTimeCompare([]byte(sess.OAuthState), []byte(state)) == 1
		expired := sess.OAuthStateExpires < now
		if !match && !expired {
			// A wrong guess leaves the owner's pending login alone.
			return nil
		}
		before = *sess
		ok = match && !expired
		sess.OAuthState, sess.OAuthAff, sess.OAuthStateExpires = "", "", 0
		return nil
	})
	if err != nil || !ok {
		return nil, errOAuthState
	}
	return &before, nil
}

// signInExternal logs in the account linked to acct, creating one when
// there is none, and answers like POST /api/user/login.
func (s *Server) signInExternal(w http.ResponseWriter, r *http.Request, p provider, acct externalAccount, inviterCode string) {
	u, err := s.store.UserByExternalID(p.Key, acct.ID)
	if store.ErrorCode(err) == store.ENOTFOUND {
		u, err = s.registerExternal(p, acct, inviterCode)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := checkExternalLogin(u); err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.startSession(w, r, u); err != nil {
		writeError(w, r, err)
		return
	}
	writeMessage(w, "", viewUser(u))
}

// checkExternalLogin refuses deleted and banned accounts with their own
// messages; 403 rather than 401, so the console does not treat it as an
// expired session.
func checkExternalLogin(u *store.User) error {
	if u.Deleted() {
		return store.Errorf(store.EFORBIDDEN, "用户已注销")
	}
	if u.Status != store.UserStatusEnabled {
		return store.Errorf(store.EFORBIDDEN, "用户已被封禁")
	}
	return nil
}

// registerExternal creates an account for acct (S §9, §6.4): a generated
// username, the profile's display name and e-mail when usable, no password
// (its owner may set one in the settings without an old one),
// QuotaForNewUser and the invite rewards.
// Errors: EFORBIDDEN when registration is closed, ECONFLICT when no free
// username was found.
func (s *Server) registerExternal(p provider, acct externalAccount, inviterCode string) (*store.User, error) {
	if !s.store.Settings().Bool("RegisterEnabled") {
		return nil, store.Errorf(store.EFORBIDDEN, "管理员关闭了新用户注册")
	}
	in := p.newUser(acct.ID)
	in.NoPassword = true
	// The profile's name is a suggestion: control characters (a tab, U+0085),
	// which the display-name rules refuse, become spaces rather than refuse
	// the sign-up.
	name := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, acct.DisplayName)
	in.DisplayName = strings.TrimSpace(store.ClipRunes(strings.TrimSpace(name), store.MaxDisplayNameLen))
	if in.DisplayName == "" {
		in.DisplayName = p.Label + " User"
	}
	in.InviterCode = inviterCode
	if e := strings.TrimSpace(acct.Email); e != "" && store.ValidateEmail(e) == nil && !s.store.EmailTaken(e) {
		in.Email = e
	}
	for attempt := 0; attempt < 5; attempt++ {
		in.Username = generatedUsername(p.Prefix, acct, attempt)
		if s.store.UsernameTaken(in.Username) {
			continue
		}
		u, err := s.store.CreateUser(in)
		if store.ErrorCode(err) != store.ECONFLICT {
			return u, err
		}
		// Lost a race: the same person signing in twice at once, or someone
		// taking the name or the e-mail in between.
		if u, err := s.store.UserByExternalID(p.Key, acct.ID); err == nil {
			return u, nil
		}
		if in.Email != "" && s.store.EmailTaken(in.Email) {
			in.Email = ""
		}
	}
	return nil, store.Errorf(store.ECONFLICT, "无法生成可用的用户名，请稍后重试")
}

func (p provider) newUser(id string) store.NewUser {
	switch p.Key {
	case "github":
		return store.NewUser{GitHubID: id}
	case "linuxdo":
		return store.NewUser{LinuxDOID: id}
	case "wechat":
		return store.NewUser{WeChatID: id}
	default:
		return store.NewUser{TelegramID: id}
	}
}

// generatedUsername is prefix + the numeric id first (github_123), then
// prefix + random digits; always within the username limit.
func generatedUsername(prefix string, acct externalAccount, attempt int) string {
	if attempt == 0 && acct.NumericID && len(prefix)+len(acct.ID) <= store.MaxUsernameLen {
		return prefix + acct.ID
	}
	n := min(8, store.MaxUsernameLen-len(prefix))
	return prefix + randomDigits(n)
}

func randomDigits(n int) string {
	const digits = "0123456789"
	raw := store.RandomString(n)
	out := make([]byte, n)
	for i := range out {
		out[i] = digits[int(raw[i])%10]
	}
	if out[0] == '0' {
		out[0] = '1'
	}
	return string(out)
}

// bindExternal links id to the account uid. Binding the id the account
// already has is a no-op; an id linked to another account (deleted ones
// included) is refused. Errors: EUNAUTHORIZED, EFORBIDDEN, ECONFLICT.
func (s *Server) bindExternal(uid uint64, p provider, id string) error {
	u, err := s.store.User(uid)
	if err != nil {
		return store.Errorf(store.EUNAUTHORIZED, "未登录或登录已过期，请重新登录！")
	}
	if err := checkExternalLogin(u); err != nil {
		return err
	}
	if other, err := s.store.UserByExternalID(p.Key, id); err == nil {
		if other.ID == u.ID {
			return nil
		}
		return p.alreadyBound()
	}
	// The index check inside UpdateUser settles a race with another bind.
	if _, err := s.store.UpdateUser(u.ID, p.update(id)); err != nil {
		if store.ErrorCode(err) == store.ECONFLICT {
			return p.alreadyBound()
		}
		return err
	}
	return nil
}

// oauthCallback completes a GitHub or LinuxDO redirect: the state is checked
// and consumed, the code exchanged, and the identity bound to the session's
// user or signed in.
func (s *Server) oauthCallback(w http.ResponseWriter, r *http.Request, p provider,
	fetch func(ctx context.Context, set *store.Settings, code, redirectURI string) (externalAccount, error)) {
	q := r.URL.Query()
	// The state comes first: a provider's ?error= (the user declined) is
	// told only to the browser that started the login, since anyone may
	// link to the console's /oauth/{provider} page with words of their own
	// as the error.
	sess, err := s.consumeOAuthState(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if e := q.Get("error"); e != "" {
		writeError(w, r, store.Errorf(store.EFORBIDDEN, "%s 授权失败：%s", p.Label, store.ClipRunes(e, 64)))
		return
	}
	set := s.store.Settings()
	if !set.Bool(p.Option) {
		writeError(w, r, p.disabled())
		return
	}
	code := q.Get("code")
	if code == "" {
		writeError(w, r, store.Errorf(store.EINVALID, "缺少授权码"))
		return
	}
	acct, err := fetch(r.Context(), set, code, oauthRedirectURI(q.Get("redirect_uri"), set, p))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if sess.UserID != 0 {
		if err := s.bindExternal(sess.UserID, p, acct.ID); err != nil {
			writeError(w, r, err)
			return
		}
		writeMessage(w, "bind", nil)
		return
	}
	s.signInExternal(w, r, p, acct, sess.OAuthAff)
}

func (s *Server) githubCallback(w http.ResponseWriter, r *http.Request) {
	s.oauthCallback(w, r, providerGitHub, s.githubAccount)
}

func (s *Server) linuxDOCallback(w http.ResponseWriter, r *http.Request) {
	s.oauthCallback(w, r, providerLinuxDO, s.linuxDOAccount)
}

// oauthToken is a provider's answer to a code exchange.
type oauthToken struct {
	AccessToken string `json:"access_token"`
	Error       string `json:"error"`
}

// check turns a refused exchange into an error: the provider's error code
// (bad_verification_code, invalid_grant) is shown, as it tells the user to
// start over and the administrator what is wrong.
func (t *oauthToken) check(label string) error {
	if t.AccessToken != "" {
		return nil
	}
	if t.Error != "" {
		return store.Errorf(store.EINVALID, "%s 授权失败：%s", label, store.ClipRunes(t.Error, 64))
	}
	return store.Errorf(store.EUPSTREAM, "%s 没有返回访问令牌", label)
}

// oauthRedirectURI is the redirect_uri of a code exchange, which must equal
// the authorize step's: the one the console says it used (any http(s)
// address of its /oauth/{provider} page; the provider compares it with the
// authorize step and its registered list, so nobody gains by lying), else
// {ServerAddress}/oauth/{provider}.
func oauthRedirectURI(given string, set *store.Settings, p provider) string {
	if u, err := url.Parse(given); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.Path == "/oauth/"+p.Key && u.RawQuery == "" && u.Fragment == "" && u.User == nil {
		return given
	}
	return set.ServerAddress() + "/oauth/" + p.Key
}

// githubAccount exchanges code with a JSON POST and reads the profile; the
// identity is the numeric id.
func (s *Server) githubAccount(ctx context.Context, set *store.Settings, code, _ string) (externalAccount, error) {
	body, _ := json.Marshal(map[string]string{
		"client_id": set.Get("GitHubClientId"), "client_secret": set.Get("GitHubClientSecret"), "code": code,
	})
	var tok oauthToken
	err := s.providerCall(ctx, "GitHub", http.MethodPost, orDefault(s.cfg.GitHubTokenURL, DefaultGitHubTokenURL), true,
		bytes.NewReader(body), func(h http.Header) {
			h.Set("Content-Type", "application/json")
			h.Set("Accept", "application/json")
		}, &tok)
	if err != nil {
		return externalAccount{}, err
	}
	return s.oauthProfile(ctx, "GitHub", tok, orDefault(s.cfg.GitHubUserURL, DefaultGitHubUserURL), "application/vnd.github+json")
}

// linuxDOAccount exchanges code with a form POST and Basic client auth,
// repeating the authorize step's redirect_uri (oauthRedirectURI), never one
// built from the request's Host.
func (s *Server) linuxDOAccount(ctx context.Context, set *store.Settings, code, redirectURI string) (externalAccount, error) {
	form := url.Values{
		"grant_type":   {"authorization_code"},
		"code":         {code},
		"redirect_uri": {redirectURI},
	}
	var tok oauthToken
	err := s.providerCall(ctx, "LinuxDO", http.MethodPost, orDefault(s.cfg.LinuxDOTokenURL, DefaultLinuxDOTokenURL), true,
		strings.NewReader(form.Encode()), func(h http.Header) {
			h.Set("Content-Type", "application/x-www-form-urlencoded")
			h.Set("Accept", "application/json")
			h.Set("Authorization", basicAuth(set.Get("LinuxDOClientId"), set.Get("LinuxDOClientSecret")))
		}, &tok)
	if err != nil {
		return externalAccount{}, err
	}
	return s.oauthProfile(ctx, "LinuxDO", tok, orDefault(s.cfg.LinuxDOUserURL, DefaultLinuxDOUserURL), "application/json")
}

// oauthProfile checks the token a provider answered and reads the account
// behind it: the numeric id (never the renameable login), the display name
// and the e-mail. A GitHub profile without a name gets "GitHub User" (S §9),
// not its login; a LinuxDO one falls back to its username.
func (s *Server) oauthProfile(ctx context.Context, provider string, tok oauthToken, userURL, accept string) (externalAccount, error) {
	if err := tok.check(provider); err != nil {
		return externalAccount{}, err
	}
	var profile struct {
		ID       uint64 `json:"id"`
		Login    string `json:"login"`    // GitHub
		Username string `json:"username"` // LinuxDO
		Name     string `json:"name"`
		Email    string `json:"email"`
	}
	err := s.providerCall(ctx, provider, http.MethodGet, userURL, false, nil, func(h http.Header) {
		h.Set("Authorization", "Bearer "+tok.AccessToken)
		h.Set("Accept", accept)
	}, &profile)
	if err != nil {
		return externalAccount{}, err
	}
	if profile.ID == 0 {
		return externalAccount{}, store.Errorf(store.EUPSTREAM, "%s 返回的用户信息无效", provider)
	}
	name := profile.Name
	if name == "" {
		name = profile.Username
	}
	return externalAccount{ID: strconv.FormatUint(profile.ID, 10), DisplayName: name, Email: profile.Email, NumericID: true}, nil
}

func basicAuth(user, pass string) string {
	req := http.Request{Header: http.Header{}}
	req.SetBasicAuth(user, pass)
	return req.Header.Get("Authorization")
}

// providerCall makes one request to a provider through the guarded client,
// bounded by providerTimeout, and decodes a 2xx JSON answer into out. With
// clientErrors, a 4xx answer is decoded too: token endpoints report a bad
// code that way (OAuth 2 error responses).
// Errors: EUPSTREAM.
func (s *Server) providerCall(ctx context.Context, label, method, target string, clientErrors bool,
	body io.Reader, headers func(http.Header), out any) error {
	ctx, cancel := context.WithTimeout(ctx, providerTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return &store.Error{Code: store.EUPSTREAM, Message: label + " 接口地址无效", Err: err}
	}
	headers(req.Header)
	resp, err := s.cfg.HTTPClient.Do(req)
	if err != nil {
		return &store.Error{Code: store.EUPSTREAM, Message: "无法连接 " + label + "，请稍后重试", Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, providerMaxBody))
	if err != nil {
		return &store.Error{Code: store.EUPSTREAM, Message: "无法连接 " + label + "，请稍后重试", Err: err}
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	if !ok && !(clientErrors && resp.StatusCode >= 400 && resp.StatusCode <= 499) {
		return &store.Error{Code: store.EUPSTREAM, Message: fmt.Sprintf("%s 返回错误（HTTP %d）", label, resp.StatusCode)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		if !ok {
			return &store.Error{Code: store.EUPSTREAM, Message: fmt.Sprintf("%s 返回错误（HTTP %d）", label, resp.StatusCode)}
		}
		return &store.Error{Code: store.EUPSTREAM, Message: label + " 返回了无法识别的内容", Err: err}
	}
	return nil
}

// wechatAccount asks the WeChat server which account the code belongs to;
// the code's validity (3 minutes) is that server's business.
func (s *Server) wechatAccount(ctx context.Context, set *store.Settings, code string) (string, error) {
	code = strings.TrimSpace(code)
	if code == "" {
		return "", store.Errorf(store.EINVALID, "请输入验证码")
	}
	base := set.Get("WeChatServerAddress")
	if base == "" {
		return "", providerWeChat.disabled()
	}
	var out struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
		Data    string `json:"data"`
	}
	token := set.Get("WeChatServerToken")
	err := s.providerCall(ctx, "微信服务器", http.MethodGet, base+"/api/wechat/user?code="+url.QueryEscape(code), false, nil,
		func(h http.Header) {
			h.Set("Authorization", token)
			h.Set("Accept", "application/json")
		}, &out)
	if err != nil {
		return "", err
	}
	if !out.Success {
		msg := store.ClipRunes(strings.TrimSpace(out.Message), 100)
		if msg == "" {
			msg = "验证码错误或已过期"
		}
		return "", store.Errorf(store.EINVALID, "%s", msg)
	}
	if out.Data == "" {
		return "", store.Errorf(store.EUPSTREAM, "微信服务器返回的用户信息无效")
	}
	return out.Data, nil
}

// wechatLogin signs in with a code from the WeChat official account, or
// registers wechat_<n> (no inviter, S §6.4). Like the Telegram login, it
// needs the state the console's WeChat dialog got from GET
// /api/oauth/state (tied to this browser's session): the code is its
// WeChat user's for minutes, so without it anyone could send a browser a
// link with their own code and sign the visitor into their account, and a
// plain-http navigation carries no Sec-Fetch-Site to refuse.
func (s *Server) wechatLogin(w http.ResponseWriter, r *http.Request) {
	set := s.store.Settings()
	if !set.Bool(providerWeChat.Option) {
		writeError(w, r, providerWeChat.disabled())
		return
	}
	if strings.TrimSpace(r.URL.Query().Get("code")) == "" {
		writeError(w, r, store.Errorf(store.EINVALID, "请输入验证码"))
		return
	}
	if _, err := s.consumeOAuthState(r); err != nil {
		writeError(w, r, err)
		return
	}
	id, err := s.wechatAccount(r.Context(), set, r.URL.Query().Get("code"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.signInExternal(w, r, providerWeChat, externalAccount{ID: id, DisplayName: "WeChat User"}, "")
}

// wechatBind links the caller's account to the WeChat account of the code.
func (s *Server) wechatBind(w http.ResponseWriter, r *http.Request) {
	set := s.store.Settings()
	if !set.Bool(providerWeChat.Option) {
		writeError(w, r, providerWeChat.disabled())
		return
	}
	id, err := s.wechatAccount(r.Context(), set, r.URL.Query().Get("code"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.bindExternal(currentUser(r).ID, providerWeChat, id); err != nil {
		writeError(w, r, err)
		return
	}
	writeMessage(w, "bind", nil)
}
