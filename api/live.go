package api

import (
	"log/slog"
	"net/http"

	"gateway/store"
	"gateway/ws"
)

// Live topics.
const (
	TopicUserSelf = "user.self"
	TopicNotice   = "notice"
)

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	id := identity(r)
	u := id.User
	wid := ws.Identity{UserID: u.ID, Role: u.Role, Session: sessionTag(id.SessionID)}
	hello := ws.Message{Topic: TopicUserSelf, Data: LiveUser(u)}
	if err := s.hub.Serve(w, r, wid, hello); err != nil {
		slog.Debug("websocket closed", "user", u.ID, "err", err)
	}
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
