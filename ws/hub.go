// Package ws is the live hub: one WebSocket per console tab, carrying
// {topic, data} messages. Publishing never blocks; a subscriber that falls
// behind is disconnected and its console reconnects.
package ws

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	json "github.com/goccy/go-json"
)

// Message is what subscribers receive.
type Message struct {
	Topic string `json:"topic"`
	Data  any    `json:"data"`
}

// Audience says who may receive a message.
type Audience struct {
	UserID  uint64 // when non-zero, only this user's connections
	MinRole int    // only connections whose role is at least this
	MaxRole int    // when non-zero, only connections whose role is at most this
}

// Identity is the authenticated owner of a connection.
type Identity struct {
	UserID  uint64
	Role    int
	Session string // an opaque id of the login session, for DisconnectSession
	// Valid, when set, tells whether the credential and the account still
	// allow this connection as it was opened (same role, session or token
	// alive). It is asked once the connection is registered, which closes
	// the gap between authentication and registration, and at every ping.
	Valid func() bool
}

// CloseUnauthorized is the close code sent when the owner's session ends.
const CloseUnauthorized websocket.StatusCode = 4401

type subscriber struct {
	id   Identity
	seq  uint64 // registration order, to close a user's oldest first
	msgs chan []byte
	kick func(code websocket.StatusCode, reason string)
}

// Hub fans messages out to subscribers.
type Hub struct {
	// SendBuffer is the number of queued messages a subscriber may lag.
	SendBuffer int
	// WriteTimeout bounds every write to a client.
	WriteTimeout time.Duration
	// OriginPatterns are extra allowed origins (same-origin is always
	// allowed); Origins, when set, is asked for more at each upgrade (e.g.
	// the configured public address).
	OriginPatterns []string
	Origins        func() []string
	// MaxPerUser bounds one user's connections: a new one closes the
	// user's oldest. MaxTotal bounds all of them: beyond it new
	// connections are refused.
	MaxPerUser int
	MaxTotal   int
	// PingInterval is how often a connection is pinged (and its Valid asked).
	PingInterval time.Duration

	mu   sync.Mutex
	seq  uint64
	subs map[*subscriber]struct{}
}

// NewHub returns a hub with default limits.
func NewHub() *Hub {
	return &Hub{SendBuffer: 64, WriteTimeout: 5 * time.Second, MaxPerUser: 16, MaxTotal: 10000, PingInterval: 30 * time.Second, subs: make(map[*subscriber]struct{})}
}

// ErrFull is Serve's answer when MaxTotal connections are open.
var ErrFull = errors.New("ws: too many connections")

// register adds s, closing its user's oldest connection beyond MaxPerUser.
func (h *Hub) register(s *subscriber) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.MaxTotal > 0 && len(h.subs) >= h.MaxTotal {
		return false
	}
	h.seq++
	s.seq = h.seq
	h.subs[s] = struct{}{}
	if h.MaxPerUser <= 0 {
		return true
	}
	var mine []*subscriber
	for o := range h.subs {
		if o.id.UserID == s.id.UserID {
			mine = append(mine, o)
		}
	}
	for len(mine) > h.MaxPerUser {
		oldest := 0
		for i := range mine {
			if mine[i].seq < mine[oldest].seq {
				oldest = i
			}
		}
		o := mine[oldest]
		delete(h.subs, o)
		go o.kick(websocket.StatusPolicyViolation, "too many connections for this account")
		mine = append(mine[:oldest], mine[oldest+1:]...)
	}
	return true
}

func (a Audience) matches(id Identity) bool {
	if a.UserID != 0 && id.UserID != a.UserID {
		return false
	}
	return id.Role >= a.MinRole && (a.MaxRole == 0 || id.Role <= a.MaxRole)
}

// Wants reports whether any connection belongs to the audience, so that a
// publisher can skip building a message nobody would receive.
func (h *Hub) Wants(aud Audience) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if aud.matches(s.id) {
			return true
		}
	}
	return false
}

// Publish queues msg for every subscriber in the audience without blocking.
func (h *Hub) Publish(aud Audience, topic string, data any) {
	if !h.Wants(aud) {
		return
	}
	payload, err := json.Marshal(Message{Topic: topic, Data: data})
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if aud.UserID != 0 && s.id.UserID != aud.UserID {
			continue
		}
		if s.id.Role < aud.MinRole || (aud.MaxRole != 0 && s.id.Role > aud.MaxRole) {
			continue
		}
		select {
		case s.msgs <- payload:
		default:
			delete(h.subs, s)
			go s.kick(websocket.StatusPolicyViolation, "connection too slow to keep up with messages")
		}
	}
}

// Disconnect closes every connection of userID, e.g. after a ban or logout.
func (h *Hub) Disconnect(userID uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.id.UserID == userID {
			delete(h.subs, s)
			go s.kick(CloseUnauthorized, "session ended")
		}
	}
}

// DisconnectSession closes the connections opened under one login session.
func (h *Hub) DisconnectSession(session string) {
	if session == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.id.Session == session {
			delete(h.subs, s)
			go s.kick(CloseUnauthorized, "session ended")
		}
	}
}

// DisconnectOthers closes the connections of userID except those opened
// under the session keep, e.g. after the user changed their password.
func (h *Hub) DisconnectOthers(userID uint64, keep string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.id.UserID == userID && (keep == "" || s.id.Session != keep) {
			delete(h.subs, s)
			go s.kick(CloseUnauthorized, "session ended")
		}
	}
}

// MoveSession hands the connections opened under session from over to
// session to, when userID has started a new login session in the same
// browser (a repeated login, a password change), so that logging out of the
// new session still closes them. Connections of any other user under from
// are closed: that login session is over.
func (h *Hub) MoveSession(from, to string, userID uint64) {
	if from == "" || from == to {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.id.Session != from {
			continue
		}
		if to != "" && s.id.UserID == userID {
			s.id.Session = to
			continue
		}
		delete(h.subs, s)
		go s.kick(CloseUnauthorized, "session ended")
	}
}

// CloseAll closes every connection, e.g. when the server shuts down.
func (h *Hub) CloseAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		delete(h.subs, s)
		go s.kick(websocket.StatusGoingAway, "server shutting down")
	}
}

// Count returns the number of connected subscribers.
func (h *Hub) Count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Serve upgrades the request and streams messages to it until the client
// goes away. The caller has authenticated the request as id.
func (h *Hub) Serve(w http.ResponseWriter, r *http.Request, id Identity, hello ...Message) error {
	if h.MaxTotal > 0 && h.Count() >= h.MaxTotal {
		http.Error(w, "too many live connections", http.StatusServiceUnavailable)
		return ErrFull
	}
	origins := h.OriginPatterns
	if h.Origins != nil {
		origins = append(append([]string(nil), origins...), h.Origins()...)
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: origins})
	if err != nil {
		return err
	}
	ctx := c.CloseRead(r.Context())
	var once sync.Once
	s := &subscriber{id: id, msgs: make(chan []byte, h.SendBuffer)}
	s.kick = func(code websocket.StatusCode, reason string) {
		once.Do(func() { c.Close(code, reason) })
	}
	if !h.register(s) {
		c.Close(websocket.StatusTryAgainLater, "too many connections")
		return ErrFull
	}
	defer func() {
		h.mu.Lock()
		delete(h.subs, s)
		h.mu.Unlock()
		s.kick(websocket.StatusNormalClosure, "")
	}()
	if id.Valid != nil && !id.Valid() {
		// The session ended, or the account changed, while this one was
		// being opened.
		s.kick(CloseUnauthorized, "session ended")
		return nil
	}
	for _, m := range hello {
		payload, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if err := h.write(ctx, c, payload); err != nil {
			return err
		}
	}
	ping := time.NewTicker(h.PingInterval)
	defer ping.Stop()
	for {
		select {
		case payload := <-s.msgs:
			if err := h.write(ctx, c, payload); err != nil {
				return err
			}
		case <-ping.C:
			if id.Valid != nil && !id.Valid() {
				s.kick(CloseUnauthorized, "session ended")
				return nil
			}
			pctx, cancel := context.WithTimeout(ctx, h.WriteTimeout)
			err := c.Ping(pctx)
			cancel()
			if err != nil {
				return err
			}
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return nil
			}
			return ctx.Err()
		}
	}
}

func (h *Hub) write(ctx context.Context, c *websocket.Conn, payload []byte) error {
	ctx, cancel := context.WithTimeout(ctx, h.WriteTimeout)
	defer cancel()
	return c.Write(ctx, websocket.MessageText, payload)
}
