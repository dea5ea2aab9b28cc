package api

import (
	"gateway/relay"
	"gateway/store"
	"gateway/ws"
)

// RelayEvents forwards the relay's events to the live hub and the rpm/tpm
// counters, and mails root about channels the relay disables.
type RelayEvents struct {
	Hub *ws.Hub
	// Store is where channel pushes read the channel as committed; without
	// it no channel is pushed.
	Store *store.Store
	// Mail mails root when a channel is disabled automatically; nil sends
	// nothing.
	Mail *ChannelMailer
}

// ChannelChanged implements relay.Events.
func (e RelayEvents) ChannelChanged(c *store.Channel) { PublishChannel(e.Hub, e.Store, c.ID) }

// ChannelDisabled implements relay.Events: the mail goes out in the
// background.
func (e RelayEvents) ChannelDisabled(c *store.Channel) { e.Mail.ChannelDisabled(c) }

// Logged implements relay.Events: a channel test's log joins the live tail.
func (e RelayEvents) Logged(l *store.Log) { PublishLogs(e.Hub, []*store.Log{l}) }

// Activity implements relay.Events.
func (e RelayEvents) Activity(a relay.Activity) {
	RecordActivity(ActivityEvent{Time: a.Time, UserID: a.UserID, TokenName: a.TokenName, Model: a.Model, ChannelID: a.ChannelID, Tokens: a.Tokens})
}
