package api

import (
	"gateway/relay"
	"gateway/store"
	"gateway/ws"
)

// RelayEvents forwards the relay's events to the live hub and the rpm/tpm
// counters.
type RelayEvents struct{ Hub *ws.Hub }

// ChannelChanged implements relay.Events.
func (e RelayEvents) ChannelChanged(c *store.Channel) { PublishChannel(e.Hub, c) }

// Activity implements relay.Events.
func (e RelayEvents) Activity(a relay.Activity) {
	RecordActivity(ActivityEvent{Time: a.Time, UserID: a.UserID, TokenName: a.TokenName, Model: a.Model, ChannelID: a.ChannelID, Tokens: a.Tokens})
}
