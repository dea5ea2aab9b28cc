package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"gateway/store"
)

const (
	// telegramMaxAge is how old a widget login may be (S §15.5: the
	// reference accepts any age, so a leaked login URL works forever).
	telegramMaxAge = 24 * time.Hour
	// telegramMaxSkew tolerates a clock slightly behind Telegram's.
	telegramMaxSkew = time.Minute
)

// telegramUnsigned are the parameters outside the widget's signature: the
// hash itself, and the state the console adds to the bind redirect URL.
var telegramUnsigned = map[string]bool{"hash": true, "state": true}

// verifyTelegram checks the Login Widget's data and returns the Telegram
// user id. The check string is every signed parameter as k=v, sorted by key
// and joined by "\n"; the hash is its hex HMAC-SHA256 under SHA-256(bot
// token). auth_date must be at most telegramMaxAge old.
// Errors: EINVALID for malformed data, EFORBIDDEN for a bad signature or a
// stale login.
func verifyTelegram(q url.Values, botToken string, now time.Time) (string, error) {
	got, err := hex.DecodeString(q.Get("hash"))
	if err != nil || len(got) != sha256.Size {
		return "", store.Errorf(store.EINVALID, "Telegram 登录信息无效")
	}
	lines := make([]string, 0, len(q))
	for k, vs := range q {
		if telegramUnsigned[k] {
			continue
		}
		if len(vs) != 1 {
			return "", store.Errorf(store.EINVALID, "Telegram 登录信息无效")
		}
		lines = append(lines, k+"="+vs[0])
	}
	sort.Strings(lines)
	key := sha256.Sum256([]byte(botToken))
	mac := hmac.New(sha256.New, key[:])
	mac.Write([]byte(strings.Join(lines, "\n")))
	if !hmac.Equal(mac.Sum(nil), got) {
		return "", store.Errorf(store.EFORBIDDEN, "Telegram 登录信息校验失败")
	}
	authDate, err := strconv.ParseInt(q.Get("auth_date"), 10, 64)
	if err != nil {
		return "", store.Errorf(store.EINVALID, "Telegram 登录信息无效")
	}
	at := time.Unix(authDate, 0)
	if now.Sub(at) > telegramMaxAge || at.Sub(now) > telegramMaxSkew {
		return "", store.Errorf(store.EFORBIDDEN, "Telegram 登录信息已过期，请重新授权")
	}
	id := q.Get("id")
	if n, err := strconv.ParseUint(id, 10, 64); err != nil || n == 0 {
		return "", store.Errorf(store.EINVALID, "Telegram 登录信息无效")
	}
	return id, nil
}

// telegramSettings returns the bot token when Telegram login is on.
func (s *Server) telegramSettings() (string, error) {
	set := s.store.Settings()
	token := set.Get("TelegramBotToken")
	if !set.Bool(providerTelegram.Option) || token == "" {
		return "", providerTelegram.disabled()
	}
	return token, nil
}

// telegramLogin signs in the account bound to the widget's Telegram user;
// there is no registration through Telegram (S §9). Like the bind, it needs
// the state the console put into the widget's data-auth-url (from GET
// /api/oauth/state, tied to this browser's session): the signed data is the
// Telegram user's for a day, so without it anyone could send a browser a
// link with their own login and sign the visitor into their account.
func (s *Server) telegramLogin(w http.ResponseWriter, r *http.Request) {
	token, err := s.telegramSettings()
	if err != nil {
		writeError(w, r, err)
		return
	}
	if _, err := s.consumeOAuthState(r); err != nil {
		writeError(w, r, err)
		return
	}
	id, err := verifyTelegram(r.URL.Query(), token, s.store.Now())
	if err != nil {
		writeError(w, r, err)
		return
	}
	u, err := s.store.UserByExternalID(providerTelegram.Key, id)
	if err != nil {
		if store.ErrorCode(err) == store.ENOTFOUND {
			err = store.Errorf(store.ENOTFOUND, "该 Telegram 账户未绑定，请先登录后在个人设置中绑定")
		}
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

// telegramBindResult is where the bind redirect sends the browser back to.
const telegramBindResult = "/setting?tab=personal"

// telegramBind is the widget's browser redirect (data-auth-url). It carries
// the session cookie but cannot carry New-Api-User, so the policy lets
// guests in and the handler takes the user from the session. The state the
// console put into the redirect URL (from GET /api/oauth/state) must match
// the session's: without it, any site could send a logged-in browser here
// with the attacker's signed Telegram data and bind the attacker's Telegram
// to the victim's account. The answer is a 302 back to the settings page
// with ?bind=telegram or ?error=<message>.
func (s *Server) telegramBind(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	fail := func(err error) {
		if store.ErrorCode(err) == store.EINTERNAL {
			slog.Error("telegram bind", append(logAttrs(r), "err", err)...)
		}
		http.Redirect(w, r, telegramBindResult+"&error="+url.QueryEscape(store.ErrorMessage(err)), http.StatusFound)
	}
	token, err := s.telegramSettings()
	if err != nil {
		fail(err)
		return
	}
	sess, err := s.consumeOAuthState(r)
	if err != nil {
		fail(err)
		return
	}
	if sess.UserID == 0 {
		fail(store.Errorf(store.EUNAUTHORIZED, "未登录或登录已过期，请重新登录！"))
		return
	}
	id, err := verifyTelegram(r.URL.Query(), token, s.store.Now())
	if err != nil {
		fail(err)
		return
	}
	if err := s.bindExternal(sess.UserID, providerTelegram, id); err != nil {
		fail(err)
		return
	}
	http.Redirect(w, r, telegramBindResult+"&bind=telegram", http.StatusFound)
}
