package relay

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"gateway/store"
)

// tokenKey reads the caller's key: the bearer token, else mj-api-secret.
func tokenKey(r *http.Request) string {
	key := strings.TrimSpace(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	if key == "" || key == "midjourney-proxy" {
		key = strings.TrimSpace(r.Header.Get("mj-api-secret"))
	}
	return key
}

// maskKey shows the first and last characters of a key only.
func maskKey(key string) string {
	if len(key) <= 8 {
		return "***"
	}
	return key[:4] + "***" + key[len(key)-4:]
}

// authenticateBound is authenticate with the token's IP allow list applied,
// for the routes a token opens besides calls (the model list, the billing
// reads): a token bound to some addresses answers nothing from others.
// Calls apply the list later, once their body is checked (distribute).
func (rl *Relay) authenticateBound(r *http.Request) (*Caller, *Error) {
	c, err := rl.authenticate(r)
	if err == nil && !c.Token.AllowsIP(rl.cfg.ClientIP(r)) {
		return nil, errIPNotAllowed()
	}
	return c, err
}

func errIPNotAllowed() *Error {
	return localError(http.StatusForbidden, "access_denied", "您的 IP 不在令牌允许访问的列表中")
}

func unauthorized(msg string) *Error {
	return &Error{Status: http.StatusUnauthorized, Type: "new_api_error", Code: "invalid_token", Message: msg, Local: true}
}

// authenticate checks the sk- token and its owner (S §5.2). An admin may
// pin a channel with sk-KEY-CHANNELID.
func (rl *Relay) authenticate(r *http.Request) (*Caller, *Error) {
	raw := tokenKey(r)
	if raw == "" {
		return nil, unauthorized("未提供令牌")
	}
	raw = strings.TrimPrefix(raw, "sk-")
	key, pin, _ := strings.Cut(raw, "-")
	tok, err := rl.store.TokenByKey(key)
	if err != nil {
		return nil, unauthorized("无效的令牌")
	}
	now := rl.store.Now().Unix()
	switch tok.Status {
	case store.TokenStatusEnabled:
	case store.TokenStatusExhausted:
		return nil, unauthorized("该令牌额度已用尽 TokenStatusExhausted[sk-" + maskKey(key) + "]")
	case store.TokenStatusExpired:
		return nil, unauthorized("该令牌已过期")
	default:
		return nil, unauthorized("该令牌状态不可用")
	}
	if tok.ExpiredTime != -1 && tok.ExpiredTime < now {
		_ = rl.store.SetTokenStatus(tok.ID, store.TokenStatusExpired)
		return nil, unauthorized("该令牌已过期")
	}
	if !tok.UnlimitedQuota && tok.RemainQuota <= 0 {
		// 401 like the other token checks (S §5.2). This is the balance
		// charged calls left; quota that calls in flight hold is refused by
		// the reservation (令牌额度不足). The token is not marked exhausted
		// here: the ledger does that when a commit empties it.
		return nil, unauthorized("该令牌额度已用尽")
	}
	u, err := rl.store.User(tok.UserID)
	if err != nil || u.Deleted() || u.Status != store.UserStatusEnabled {
		return nil, localError(http.StatusForbidden, "user_banned", "用户已被封禁")
	}
	c := &Caller{User: u, Token: tok, IsAdmin: u.Role >= store.RoleAdmin}
	if pin != "" {
		if !c.IsAdmin {
			return nil, localError(http.StatusForbidden, "channel_pin_forbidden", "普通用户不支持指定渠道")
		}
		id, err := strconv.ParseUint(pin, 10, 64)
		if err != nil || id == 0 {
			return nil, badRequest("无效的渠道 ID")
		}
		c.Pinned = id
	}
	return c, nil
}

// recheckAfter is how long a request may take to arrive before the
// credentials it was let in with are checked again.
const recheckAfter = time.Second

// recheck asks again whether c's token (or, for the playground, its
// session's account) still allows the call.
func (rl *Relay) recheck(c *call) *Error {
	if c.caller.Token != nil {
		// The call goes on with the token and owner as they are now: what
		// they allow (model limits, IP list, group) is judged on them too.
		caller, err := rl.authenticate(c.r)
		if err == nil {
			c.caller = caller
		}
		return err
	}
	u, err := rl.store.User(c.caller.User.ID)
	if err != nil || u.Deleted() || u.Status != store.UserStatusEnabled {
		return localError(http.StatusForbidden, "user_banned", "用户已被封禁")
	}
	return nil
}
