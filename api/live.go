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
	}
	// The socket lives only while what opened it would still be let in:
	// the session (or the access token) and the account as they were.
	sessionID, tokenHash := id.SessionID, string(u.AccessTokenHash)
	wid.Valid = func() bool {
		cur, err := s.store.User(u.ID)
		if err != nil || checkUsable(cur) != nil || cur.Role != u.Role {
			return false
		}
		if id.ViaToken {
			return len(tokenHash) > 0 && string(cur.AccessTokenHash) == tokenHash
		}
		sess, err := s.store.Session(sessionID)
		return err == nil && sess.UserID == u.ID
	}
	hello := ws.Message{Topic: TopicUserSelf, Data: LiveUser(u)}
	if err := s.hub.Serve(w, r, wid, hello); err != nil {
		slog.Debug("websocket closed", "user", u.ID, "err", err)
	}
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
