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
	// MoveSession replaces it with the new session's.
	Valid func() bool
}

// Close codes of the hub besides the standard ones.
const (
	// CloseUnauthorized is sent when the owner's session ends.
	CloseUnauthorized websocket.StatusCode = 4401
	// CloseReplaced is sent to an account's oldest connection when a newer
	// one takes its place beyond MaxPerUser. A console closed so does not
	// reconnect by itself (two tabs would take turns for ever), only when
	// it is looked at again.
	CloseReplaced websocket.StatusCode = 4409
)

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
	// ValidGrace is how long a connection whose Valid said no at a ping
	// lives before it is asked again and closed: a login or password change
	// in the same browser ends the old session a moment before
	// MoveSession hands its connections the new one.
	ValidGrace time.Duration

	mu     sync.Mutex
	closed bool // CloseAll ran: the server is shutting down
	seq    uint64
	subs   map[*subscriber]struct{}
	byUser map[uint64]map[*subscriber]struct{}
	byRole map[int]map[*subscriber]struct{}
}

// NewHub returns a hub with default limits.
func NewHub() *Hub {
	return &Hub{SendBuffer: 64, WriteTimeout: 5 * time.Second, MaxPerUser: 16, MaxTotal: 10000, PingInterval: 30 * time.Second, ValidGrace: 2 * time.Second,
		subs: make(map[*subscriber]struct{}), byUser: make(map[uint64]map[*subscriber]struct{}), byRole: make(map[int]map[*subscriber]struct{})}
}

// add and remove keep the indexes with the set; h.mu is held.
func (h *Hub) add(s *subscriber) {
	h.subs[s] = struct{}{}
	addTo(h.byUser, s.id.UserID, s)
	addTo(h.byRole, s.id.Role, s)
}

func (h *Hub) remove(s *subscriber) {
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	removeFrom(h.byUser, s.id.UserID, s)
	removeFrom(h.byRole, s.id.Role, s)
}

func addTo[K comparable](m map[K]map[*subscriber]struct{}, k K, s *subscriber) {
	set := m[k]
	if set == nil {
		set = make(map[*subscriber]struct{})
		m[k] = set
	}
	set[s] = struct{}{}
}

func removeFrom[K comparable](m map[K]map[*subscriber]struct{}, k K, s *subscriber) {
	if set := m[k]; set != nil {
		delete(set, s)
		if len(set) == 0 {
			delete(m, k)
		}
	}
}

// each calls f for every subscriber in aud, visiting only the user's
// connections or the roles in range, so that a user's message costs the
// same with one console open as with thousands; h.mu is held. f returns
// false to stop.
func (h *Hub) each(aud Audience, f func(*subscriber) bool) {
	if aud.UserID != 0 {
		for s := range h.byUser[aud.UserID] {
			if aud.matches(s.id) && !f(s) {
				return
			}
		}
		return
	}
	for role, set := range h.byRole {
		if role < aud.MinRole || (aud.MaxRole != 0 && role > aud.MaxRole) {
			continue
		}
		for s := range set {
			if !f(s) {
				return
			}
		}
	}
}

// ErrFull is Serve's answer when MaxTotal connections are open.
var ErrFull = errors.New("ws: too many connections")

// register adds s, closing its user's oldest connection beyond MaxPerUser.
// It answers the close code of a connection it refuses, 0 when it took s.
func (h *Hub) register(s *subscriber) websocket.StatusCode {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		// Upgraded while the server was shutting down: CloseAll has
		// passed and would never close it.
		return websocket.StatusGoingAway
	}
	if h.MaxTotal > 0 && len(h.subs) >= h.MaxTotal {
		return websocket.StatusTryAgainLater
	}
	h.seq++
	s.seq = h.seq
	h.add(s)
	for h.MaxPerUser > 0 && len(h.byUser[s.id.UserID]) > h.MaxPerUser {
		var oldest *subscriber
		for o := range h.byUser[s.id.UserID] {
			if oldest == nil || o.seq < oldest.seq {
				oldest = o
			}
		}
		h.remove(oldest)
		go oldest.kick(CloseReplaced, "too many connections for this account")
	}
	return 0
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
	found := false
	h.each(aud, func(*subscriber) bool {
		found = true
		return false
	})
	return found
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
	var slow []*subscriber
	h.each(aud, func(s *subscriber) bool {
		select {
		case s.msgs <- payload:
		default:
			slow = append(slow, s)
		}
		return true
	})
	for _, s := range slow {
		h.remove(s)
		go s.kick(websocket.StatusPolicyViolation, "connection too slow to keep up with messages")
	}
}

// Disconnect closes every connection of userID, e.g. after a ban or logout.
func (h *Hub) Disconnect(userID uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.byUser[userID] {
		h.remove(s)
		go s.kick(CloseUnauthorized, "session ended")
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
			h.remove(s)
			go s.kick(CloseUnauthorized, "session ended")
		}
	}
}

// DisconnectOthers closes the connections of userID except those opened
// under the session keep, e.g. after the user changed their password.
func (h *Hub) DisconnectOthers(userID uint64, keep string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.byUser[userID] {
		if keep == "" || s.id.Session != keep {
			h.remove(s)
			go s.kick(CloseUnauthorized, "session ended")
		}
	}
}

// MoveSession hands the connections opened under session from over to the
// new login session to, when to.UserID has started one in the same browser
// (a repeated login, a password change), so that logging out of the new
// session still closes them; to.Valid, when set, replaces their check.
// Connections under from of any other user, or opened with another role,
// are closed: that login session is over.
func (h *Hub) MoveSession(from string, to Identity) {
	if from == "" || from == to.Session {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.id.Session != from {
			continue
		}
		if to.Session != "" && s.id.UserID == to.UserID && s.id.Role == to.Role {
			s.id.Session = to.Session
			if to.Valid != nil {
				s.id.Valid = to.Valid
			}
			continue
		}
		h.remove(s)
		go s.kick(CloseUnauthorized, "session ended")
	}
}

// CloseAll closes every connection with 1001, e.g. when the server shuts
// down, and every one registered after it: an upgrade under way when the
// server began shutting down closes with 1001 too. It returns once each
// connection's close frame is sent and answered, or after WriteTimeout:
// the caller may then end the requests, and the process, without cutting
// a socket before its client was told.
func (h *Hub) CloseAll() {
	h.mu.Lock()
	h.closed = true
	subs := make([]*subscriber, 0, len(h.subs))
	for s := range h.subs {
		h.remove(s)
		subs = append(subs, s)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range subs {
		wg.Go(func() { s.kick(websocket.StatusGoingAway, "server shutting down") })
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(h.WriteTimeout):
	}
}

// Count returns the number of connected subscribers.
func (h *Hub) Count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Serve upgrades the request and streams messages to it until the client
// goes away. The caller has authenticated the request as id. hello, when
// set, gives the first messages; it is asked once the connection is
// registered, so that nothing published meanwhile is missed by them.
func (h *Hub) Serve(w http.ResponseWriter, r *http.Request, id Identity, hello func() []Message) error {
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
	// The client's frames are read here, not with CloseRead, whose own
	// goroutine closing the connection on a data message would wait for
	// itself: the connection lingered 15 s, still counted. A data message
	// (consoles only listen) is told apart from the end of the connection:
	// cancelling the context of a message being read would drop the
	// connection without its close frame.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	dataMessage := make(chan struct{})
	go func() {
		if _, _, err := c.Reader(ctx); err == nil {
			close(dataMessage)
		} else {
			cancel()
		}
	}()
	var once sync.Once
	s := &subscriber{id: id, msgs: make(chan []byte, h.SendBuffer)}
	s.kick = func(code websocket.StatusCode, reason string) {
		once.Do(func() { c.Close(code, reason) })
	}
	switch h.register(s) {
	case websocket.StatusGoingAway:
		s.kick(websocket.StatusGoingAway, "server shutting down")
		return nil
	case websocket.StatusTryAgainLater:
		s.kick(websocket.StatusTryAgainLater, "too many connections")
		return ErrFull
	}
	defer func() {
		h.mu.Lock()
		h.remove(s)
		h.mu.Unlock()
		s.kick(websocket.StatusNormalClosure, "")
	}()
	if !h.valid(s) {
		// The session ended, or the account changed, while this one was
		// being opened.
		s.kick(CloseUnauthorized, "session ended")
		return nil
	}
	if hello != nil {
		for _, m := range hello() {
			payload, err := json.Marshal(m)
			if err != nil {
				return err
			}
			if err := h.write(ctx, c, payload); err != nil {
				return err
			}
		}
	}
	ping := time.NewTicker(h.PingInterval)
	defer ping.Stop()
	var recheck <-chan time.Time
	// A ping waits a round trip for its pong: it runs beside this loop, so
	// that messages keep going out meanwhile (a distant console of a busy
	// gateway fell SendBuffer behind, and was closed, at every ping).
	pong := make(chan error, 1)
	pinging := false
	for {
		select {
		case payload := <-s.msgs:
			if err := h.write(ctx, c, payload); err != nil {
				return err
			}
		case <-recheck:
			recheck = nil
			if !h.valid(s) {
				s.kick(CloseUnauthorized, "session ended")
				return nil
			}
		case <-ping.C:
			if recheck == nil && !h.valid(s) {
				recheck = time.After(h.ValidGrace)
			}
			if !pinging {
				pinging = true
				go func() {
					pctx, cancel := context.WithTimeout(ctx, h.WriteTimeout)
					defer cancel()
					pong <- c.Ping(pctx)
				}()
			}
		case err := <-pong:
			pinging = false
			if err != nil {
				return err
			}
		case <-dataMessage:
			s.kick(websocket.StatusPolicyViolation, "unexpected data message")
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// valid asks s's current Valid (MoveSession may have replaced it).
func (h *Hub) valid(s *subscriber) bool {
	h.mu.Lock()
	v := s.id.Valid
	h.mu.Unlock()
	return v == nil || v()
}

func (h *Hub) write(ctx context.Context, c *websocket.Conn, payload []byte) error {
	ctx, cancel := context.WithTimeout(ctx, h.WriteTimeout)
	defer cancel()
	return c.Write(ctx, websocket.MessageText, payload)
}
