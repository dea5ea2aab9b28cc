package relay_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"gateway/relay/relaytest"
	"gateway/store"
)

// typeAnthropic is a channel type the console offers but no adapter
// implements yet.
const typeAnthropic = 14

// A channel of a type without an adapter is refused with a message naming
// the type: nothing is sent to its base URL, nothing is charged or logged,
// and the channel is not disabled for it.
func TestUnsupportedType_Refused(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-claude", okChat(t, ratioModel, "never", relaytest.NewUsage(1, 1)))
	ch := g.MustCreateChannel(t, up, ratioModel, func(c *store.Channel) { c.Type = typeAnthropic })
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	before := g.balances(t, "alice", tok.ID, ch)

	for _, body := range []map[string]any{chat(ratioModel, "hi"), streamChat(ratioModel, "hi", true)} {
		res := g.post(t, key, "/v1/chat/completions", body)
		e := res.wantError(t, http.StatusNotImplemented, "channel_type_not_supported")
		id := res.Header.Get("X-Oneapi-Request-Id")
		if want := "渠道类型 Anthropic Claude 尚未支持 (request id: " + id + ")"; id == "" || e.Error.Message != want {
			t.Errorf("message = %q, request id header %q", e.Error.Message, id)
		}
	}
	if up.Hits() != 0 {
		t.Errorf("the unsupported channel's base URL got %d requests", up.Hits())
	}
	if n := len(g.consumeLogs(t, "alice")); n != 0 {
		t.Errorf("consume logs = %d, want 0", n)
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, 0, 0)
	if fresh, err := g.st.Channel(ch.ID); err != nil || fresh.Status != store.ChannelStatusEnabled {
		t.Errorf("channel after refusals: %+v, %v; want it still enabled", fresh, err)
	}
}

// An unsupported channel on the top tier does not stop a call: the next
// tier answers, and the log names both channels.
func TestUnsupportedType_NextTierAnswers(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "1"}})
	claude := relaytest.NewChat(t, "sk-claude", okChat(t, ratioModel, "never", relaytest.NewUsage(1, 1)))
	good := relaytest.NewChat(t, "sk-good", okChat(t, ratioModel, "fine", relaytest.NewUsage(10, 4)))
	c1 := g.tier(t, claude, ratioModel, 10, func(c *store.Channel) { c.Type = typeAnthropic })
	c2 := g.tier(t, good, ratioModel, 0, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	before := g.balances(t, "alice", tok.ID, c1, c2)

	res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if claude.Hits() != 0 || good.Hits() != 1 {
		t.Errorf("hits = %d/%d, want 0/1", claude.Hits(), good.Hits())
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 {
		t.Fatalf("consume logs = %d, want 1", len(logs))
	}
	if got, want := other(t, logs[0]).AdminInfo.UseChannel, []uint64{c1.ID, c2.ID}; !slices.Equal(got, want) {
		t.Errorf("use_channel = %v, want %v", got, want)
	}
	after := g.balances(t, "alice", tok.ID, c1, c2)
	wantMoved(t, before, after, true, c2.ID, ratioQuota(10, 4, ratioModelMR, ratioModelCR, 1), 1)
	if after.Channels[c1.ID] != before.Channels[c1.ID] {
		t.Error("the unsupported channel was charged")
	}
}

// A channel test of an unsupported type fails with the same message and
// leaves the channel as it was, untested.
func TestUnsupportedType_ChannelTest(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-claude", okChat(t, ratioModel, "never", relaytest.NewUsage(1, 1)))
	ch := g.MustCreateChannel(t, up, ratioModel, func(c *store.Channel) { c.Type = typeAnthropic })

	res := g.rl.TestChannel(context.Background(), ch, "", nil)
	if res.Err == nil || res.Err.Error() != "渠道类型 Anthropic Claude 尚未支持" {
		t.Fatalf("test error = %v", res.Err)
	}
	if up.Hits() != 0 {
		t.Errorf("upstream hits = %d, want 0", up.Hits())
	}
	fresh, err := g.st.Channel(ch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Status != store.ChannelStatusEnabled || fresh.TestTime != 0 || fresh.ResponseTime != 0 {
		t.Errorf("channel after the test: status %d, test_time %d, response_time %d", fresh.Status, fresh.TestTime, fresh.ResponseTime)
	}
}

// The OpenAI routes the gateway does not serve answer 501 with OpenAI's
// error object and a request id, whatever the key.
func TestNotImplementedRoutes(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	for _, route := range []string{"POST /v1/edits", "POST /v1/images/edits", "POST /v1/images/variations",
		"GET /v1/files", "POST /v1/files", "GET /v1/files/file-1", "DELETE /v1/files/file-1", "GET /v1/files/file-1/content",
		"GET /v1/fine-tunes", "POST /v1/fine-tunes", "GET /v1/fine-tunes/ft-1", "POST /v1/fine-tunes/ft-1/cancel",
		"GET /v1/fine-tunes/ft-1/events", "DELETE /v1/models/gpt-4o"} {
		method, path, _ := strings.Cut(route, " ")
		req, err := http.NewRequest(method, g.srv.URL+path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := g.client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", route, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: read: %v", route, err)
		}
		res := result{Status: resp.StatusCode, Header: resp.Header, Body: body}
		e := res.wantError(t, http.StatusNotImplemented, "not_implemented")
		id := resp.Header.Get("X-Oneapi-Request-Id")
		if want := "API not implemented (request id: " + id + ")"; id == "" || e.Error.Message != want || e.Error.Type != "new_api_error" {
			t.Errorf("%s: error = %+v, request id header %q", route, e.Error, id)
		}
	}
}
