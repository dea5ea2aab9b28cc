// Package relay serves the OpenAI-compatible API: it authenticates the
// caller's sk- token, picks a channel for the requested model and group,
// converts the request for that channel's provider, relays the answer
// (streamed or not) and charges the call exactly once through the store's
// ledger: a reservation before the upstream call, a settlement after it, a
// refund when every attempt failed.
//
// One adapter per provider family builds the upstream URL and headers,
// converts the body, and reads usage and errors from the answer. Channel
// health lives here too: channel tests use the same adapters as the relay,
// and failures can disable a channel automatically.
package relay
