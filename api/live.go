package api

import (
	"encoding/hex"
	"log/slog"
	"net/http"

	"gateway/store"
	"gateway/ws"
)

// Live topics.
const (
	TopicUserSelf = "user.self"
	TopicNotice   = "notice"
	TopicStatus   = "status"
	// TopicTokenUsage carries a token's quota after a charge to its owner.
	TopicTokenUsage = "token.usage"
)

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	id := identity(r)
	u := id.User
	wid := ws.Identity{UserID: u.ID, Role: u.Role, Session: sessionTag(id.SessionID)}
	if id.ViaToken {
		wid.Session = accessTokenTag(u.AccessTokenHash)
		wid.Valid = s.liveTokenValid(u)
	} else {
		wid.Valid = s.liveSessionValid(u, id.SessionID)
	}
	// The balance is read once the socket is registered: a charge committed
	// while it was being opened is in it or pushed after it.
	hello := func() []ws.Message {
		cur, err := s.store.User(u.ID)
		if err != nil {
			cur = u
		}
		return []ws.Message{{Topic: TopicUserSelf, Data: LiveUser(cur)}}
	}
	if err := s.hub.Serve(w, r, wid, hello); err != nil {
		slog.Debug("websocket closed", "user", u.ID, "err", err)
	}
}

// liveSessionValid is the check of a socket opened under a login session:
// the session is alive and the account usable with the role it had. A
// socket moved to a newer session of the same browser (a repeated login, a
// password change) gets that session's check.
func (s *Server) liveSessionValid(u *store.User, sessionID string) func() bool {
	return func() bool {
		if _, ok := s.liveAccount(u); !ok {
			return false
		}
		sess, err := s.store.Session(sessionID)
		return err == nil && sess.UserID == u.ID
	}
}

// liveTokenValid is the check of a socket opened with a system access
// token: the account is usable with the role it had and the token has not
// been rotated.
func (s *Server) liveTokenValid(u *store.User) func() bool {
	tokenHash := string(u.AccessTokenHash)
	return func() bool {
		cur, ok := s.liveAccount(u)
		return ok && len(tokenHash) > 0 && string(cur.AccessTokenHash) == tokenHash
	}
}

// liveAccount reads u's account and tells whether it can still be used
// with the role it had when the socket opened.
func (s *Server) liveAccount(u *store.User) (*store.User, bool) {
	cur, err := s.store.User(u.ID)
	return cur, err == nil && checkUsable(cur) == nil && cur.Role == u.Role
}

// accessTokenTag is the hub's session tag of sockets opened with a system
// access token, so that rotating the token closes them.
func accessTokenTag(hash []byte) string {
	if len(hash) == 0 {
		return ""
	}
	return "token:" + hex.EncodeToString(hash[:min(8, len(hash))])
}

// PublishUser pushes a user's live balance and status to their consoles,
// and disconnects them when the account can no longer be used.
func PublishUser(hub *ws.Hub, u *store.User) {
	hub.Publish(ws.Audience{UserID: u.ID}, TopicUserSelf, LiveUser(u))
	if u.Deleted() || u.Status != store.UserStatusEnabled {
		hub.Disconnect(u.ID)
	}
}

// PublishNotice pushes the notice text to every console.
func PublishNotice(hub *ws.Hub, notice string) {
	hub.Publish(ws.Audience{}, TopicNotice, map[string]string{"notice": notice})
}

// PublishStatusChanged tells every console that the options changed, so
// that it reads GET /api/status again: how quota is shown (QuotaPerUnit,
// DisplayInCurrencyEnabled), the name, the chat links and the rest follow
// without a reload.
func PublishStatusChanged(hub *ws.Hub) {
	hub.Publish(ws.Audience{}, TopicStatus, map[string]any{})
}
