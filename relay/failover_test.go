package relay_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/store"
)

// failWith answers every request with status and an OpenAI error.
func failWith(status int, typ, code, msg string) relaytest.Handler {
	return func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteError(w, status, typ, code, msg)
	}
}

// tier creates a channel for model on up at priority.
func (g *gateway) tier(t *testing.T, up *relaytest.Upstream, model string, priority int64, edit func(*store.Channel)) *store.Channel {
	t.Helper()
	return g.MustCreateChannel(t, up, model, func(c *store.Channel) {
		c.Priority = priority
		c.Name = up.Key
		if edit != nil {
			edit(c)
		}
	})
}

// Failover walks the priority tiers: a 429 and a 500 move on, the answer
// comes from the third tier, the log names every channel tried, and only
// the channel that answered is charged.
func TestFailover_Tiers(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "2"}})
	busy := relaytest.NewChat(t, "sk-busy", failWith(429, "rate_limit_error", "rate_limit_exceeded", "slow down"))
	broken := relaytest.NewChat(t, "sk-broken", failWith(500, "server_error", "", "boom"))
	good := relaytest.NewChat(t, "sk-good", okChat(t, ratioModel, "fine", relaytest.NewUsage(10, 4)))
	c1 := g.tier(t, busy, ratioModel, 10, nil)
	c2 := g.tier(t, broken, ratioModel, 5, nil)
	c3 := g.tier(t, good, ratioModel, 0, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	before := g.balances(t, "alice", tok.ID, c1, c2, c3)

	res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	for _, u := range []*relaytest.Upstream{busy, broken, good} {
		if u.Hits() != 1 {
			t.Errorf("upstream %s hits = %d, want 1", u.Key, u.Hits())
		}
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 {
		t.Fatalf("consume logs = %d, want 1", len(logs))
	}
	if got, want := other(t, logs[0]).AdminInfo.UseChannel, []uint64{c1.ID, c2.ID, c3.ID}; !slices.Equal(got, want) {
		t.Errorf("use_channel = %v, want %v", got, want)
	}
	if logs[0].ChannelID != c3.ID {
		t.Errorf("log channel = %d, want %d", logs[0].ChannelID, c3.ID)
	}
	after := g.balances(t, "alice", tok.ID, c1, c2, c3)
	wantMoved(t, before, after, true, c3.ID, logs[0].Quota, 1)
	for _, c := range []*store.Channel{c1, c2} {
		if after.Channels[c.ID] != before.Channels[c.ID] {
			t.Errorf("channel %d that failed was charged", c.ID)
		}
	}
}

// A 400 is the caller's fault: it is not retried, and nothing is charged.
func TestFailover_BadRequestNotRetried(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "2"}})
	bad := relaytest.NewChat(t, "sk-bad", failWith(400, "invalid_request_error", "context_length_exceeded", "too long"))
	good := relaytest.NewChat(t, "sk-good", okChat(t, ratioModel, "fine", relaytest.NewUsage(10, 4)))
	c1 := g.tier(t, bad, ratioModel, 10, nil)
	c2 := g.tier(t, good, ratioModel, 0, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	before := g.balances(t, "alice", tok.ID, c1, c2)

	res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
	e := res.wantError(t, http.StatusBadRequest, "bad_response_status_code")
	if !strings.HasPrefix(e.Error.Message, "too long") || e.Error.Type != "upstream_error" || e.Error.Param != "400" {
		t.Errorf("error = %+v", e.Error)
	}
	if bad.Hits() != 1 || good.Hits() != 0 {
		t.Errorf("hits = %d/%d, want 1/0", bad.Hits(), good.Hits())
	}
	if n := len(g.consumeLogs(t, "alice")); n != 0 {
		t.Errorf("consume logs = %d, want 0", n)
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID, c1, c2), true, c1.ID, 0, 0)
}

// Retries never pick a channel twice, even when there are more attempts
// than channels: two failing channels on one tier are each hit once.
func TestFailover_NoChannelTwice(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "5"}})
	a := relaytest.NewChat(t, "sk-a", failWith(502, "server_error", "", "bad gateway a"))
	b := relaytest.NewChat(t, "sk-b", failWith(503, "server_error", "", "unavailable b"))
	ca := g.tier(t, a, ratioModel, 0, nil)
	cb := g.tier(t, b, ratioModel, 0, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	before := g.balances(t, "alice", tok.ID, ca, cb)
	for i := range 5 {
		res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
		if res.Status != 502 && res.Status != 503 {
			t.Fatalf("call %d: status %d: %s", i, res.Status, res.Body)
		}
		if a.Hits() != i+1 || b.Hits() != i+1 {
			t.Fatalf("after call %d hits = %d/%d, want each channel once per call", i, a.Hits(), b.Hits())
		}
	}
	if n := len(g.consumeLogs(t, "alice")); n != 0 {
		t.Errorf("consume logs = %d, want 0", n)
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID, ca, cb), true, 0, 0, 0)
}

// A stream upstream that sends its headers and then nothing for longer than
// FirstByteTimeout is abandoned for the next channel before anything
// reached the client.
func TestFailover_FirstByteTimeout(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{
		Options: map[string]string{"RetryTimes": "2"},
		// The idle timeout is long, so only the first-byte timeout can
		// explain a quick answer. The good channel gets as long for its
		// first byte: a loaded machine must not make it miss that.
		Relay: relay.Config{FirstByteTimeout: time.Second, StreamIdleTimeout: 30 * time.Second},
	})
	released := make(chan struct{})
	mute := relaytest.NewChat(t, "sk-mute", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.NewSSE(w) // headers only
		select {
		case <-r.Context().Done():
			close(released)
		case <-time.After(20 * time.Second):
			t.Error("the gateway never gave up on the silent upstream")
		}
	})
	good := relaytest.NewChat(t, "sk-good", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(ratioModel, "quick"))
		sse.Send(relaytest.UsageChunk(ratioModel, 3, 1))
		sse.Done()
	})
	c1 := g.tier(t, mute, ratioModel, 10, nil)
	c2 := g.tier(t, good, ratioModel, 0, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	before := g.balances(t, "alice", tok.ID, c1, c2)

	start := time.Now()
	res := g.post(t, key, "/v1/chat/completions", streamChat(ratioModel, "hi", false))
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	events := relaytest.Events(res.Body)
	wantDoneLast(t, events)
	if got := contentOf(t, events); got != "quick" {
		t.Errorf("content = %q", got)
	}
	// After the first-byte timeout, and well before the stream idle timeout
	// could have ended the silent stream instead.
	if d := time.Since(start); d < time.Second || d > 15*time.Second {
		t.Errorf("answered after %v, want just over the 1s first-byte timeout", d)
	}
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("the silent upstream's request was not cancelled")
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 {
		t.Fatalf("consume logs = %d", len(logs))
	}
	if got, want := other(t, logs[0]).AdminInfo.UseChannel, []uint64{c1.ID, c2.ID}; !slices.Equal(got, want) {
		t.Errorf("use_channel = %v, want %v", got, want)
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID, c1, c2), true, c2.ID, logs[0].Quota, 1)
}

// A stream upstream that answers an error status and then never finishes
// its body is held no longer than FirstByteTimeout (the idle timeout when
// that is off): the next channel answers.
func TestFailover_ErrorBodyThatStalls(t *testing.T) {
	t.Parallel()
	for _, cfg := range []relay.Config{
		{FirstByteTimeout: time.Second, StreamIdleTimeout: 30 * time.Second},
		{FirstByteTimeout: -1, StreamIdleTimeout: time.Second},
	} {
		t.Run(fmt.Sprintf("first-byte %v", cfg.FirstByteTimeout), func(t *testing.T) {
			t.Parallel()
			errorBodyThatStalls(t, cfg)
		})
	}
}

func errorBodyThatStalls(t *testing.T, cfg relay.Config) {
	g := MustOpenGateway(t, gatewayConfig{
		Options: map[string]string{"RetryTimes": "2"},
		Relay:   cfg,
	})
	stalled := relaytest.NewChat(t, "sk-stall", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"message":"over`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	})
	good := relaytest.NewChat(t, "sk-good", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(ratioModel, "quick"))
		sse.Send(relaytest.UsageChunk(ratioModel, 3, 1))
		sse.Done()
	})
	g.tier(t, stalled, ratioModel, 10, nil)
	g.tier(t, good, ratioModel, 0, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})

	start := time.Now()
	res := g.post(t, key, "/v1/chat/completions", streamChat(ratioModel, "hi", false))
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if got := contentOf(t, relaytest.Events(res.Body)); got != "quick" {
		t.Errorf("content = %q", got)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("answered after %v, want just over the 1s timeout", d)
	}
}

// With RetryTimes 0 the first failure is the answer: OpenAI's error object
// with the request id appended, and the reservation given back in full.
func TestFailover_NoRetry(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	broken := relaytest.NewChat(t, "sk-broken", failWith(500, "server_error", "", "upstream exploded"))
	good := relaytest.NewChat(t, "sk-good", okChat(t, ratioModel, "fine", relaytest.NewUsage(1, 1)))
	c1 := g.tier(t, broken, ratioModel, 10, nil)
	c2 := g.tier(t, good, ratioModel, 0, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	before := g.balances(t, "alice", tok.ID, c1, c2)

	res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
	e := res.wantError(t, http.StatusInternalServerError, "bad_response_status_code")
	id := res.Header.Get("X-Oneapi-Request-Id")
	if id == "" || e.Error.Message != "upstream exploded (request id: "+id+")" {
		t.Errorf("message = %q, want the upstream's message and request id %q", e.Error.Message, id)
	}
	if e.Error.Type != "upstream_error" || e.Error.Param != "500" {
		t.Errorf("error = %+v", e.Error)
	}
	if broken.Hits() != 1 || good.Hits() != 0 {
		t.Errorf("hits = %d/%d, want 1/0", broken.Hits(), good.Hits())
	}
	if n := len(g.consumeLogs(t, "alice")); n != 0 {
		t.Errorf("consume logs = %d, want 0", n)
	}
	after := g.balances(t, "alice", tok.ID, c1, c2)
	if after.UserQuota != before.UserQuota || after.TokenRemain != before.TokenRemain || after.UserUsed != before.UserUsed ||
		after.TokenUsed != before.TokenUsed || after.UserCount != before.UserCount {
		t.Errorf("balances moved without a charge: before %+v after %+v", before, after)
	}

	// A final 429 is reworded: the client learns the group is saturated.
	busy := relaytest.NewChat(t, "sk-busy", failWith(429, "rate_limit_error", "", "slow down"))
	g.tier(t, busy, miniModel, 0, nil)
	res = g.post(t, key, "/v1/chat/completions", chat(miniModel, "hi"))
	e = res.wantError(t, http.StatusTooManyRequests, "bad_response_status_code")
	if strings.Contains(e.Error.Message, "slow down") || !strings.HasSuffix(e.Error.Message, "(request id: "+res.Header.Get("X-Oneapi-Request-Id")+")") {
		t.Errorf("429 message = %q", e.Error.Message)
	}
}

// The wait an upstream's 429 asks for reaches the client: Azure OpenAI's
// Retry-After and retry-after-ms go out with the gateway's 429 (streamed
// calls included) and are exposed to a page, while a value that is no wait
// is dropped, and so is the header of an answer that is no 429 or 503.
func TestFailover_RetryAfterPassedOn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, retryAfter, retryAfterMs string
		status                         int
		stream                         bool
		want, wantMs                   string
	}{
		{"seconds", "7", "6500", 429, false, "7", "6500"},
		{"seconds, streamed", "7", "6500", 429, true, "7", "6500"},
		{"date", "Wed, 21 Oct 2099 07:28:00 GMT", "", 503, false, "Wed, 21 Oct 2099 07:28:00 GMT", ""},
		{"no wait", "soon", "a while", 429, false, "", ""},
		{"not a 429", "7", "6500", 400, false, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "0"}})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Retry-After", tc.retryAfter)
				w.Header().Set("retry-after-ms", tc.retryAfterMs)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				io.WriteString(w, `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 7 seconds."}}`)
			}))
			defer srv.Close()
			g.MustCreateChannel(t, &relaytest.Upstream{Server: srv, Key: "azure-key"}, miniModel, func(c *store.Channel) {
				c.Type = relay.TypeAzure
				c.Other = "2024-10-21"
			})
			_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
			body := chat(miniModel, "hi")
			if tc.stream {
				body = streamChat(miniModel, "hi", true)
			}
			res := g.post(t, key, "/v1/chat/completions", body)
			if res.Status != tc.status {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if got := res.Header.Get("Retry-After"); got != tc.want {
				t.Errorf("Retry-After = %q, want %q", got, tc.want)
			}
			if got := res.Header.Get("Retry-After-Ms"); got != tc.wantMs {
				t.Errorf("retry-after-ms = %q, want %q", got, tc.wantMs)
			}
			// A page (the SDK in a browser) reads only the headers CORS
			// exposes.
			exposed := strings.Split(strings.ReplaceAll(res.Header.Get("Access-Control-Expose-Headers"), " ", ""), ",")
			for _, name := range []string{"Retry-After", "Retry-After-Ms"} {
				if !slices.ContainsFunc(exposed, func(s string) bool { return strings.EqualFold(s, name) }) {
					t.Errorf("%s not exposed to a page: %q", name, res.Header.Get("Access-Control-Expose-Headers"))
				}
			}
		})
	}
}

// status_code_mapping rewrites the upstream status before the retry
// decision: a 429 mapped to 400 is not retried.
func TestMapping_StatusCode(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "2"}})
	busy := relaytest.NewChat(t, "sk-busy", failWith(429, "rate_limit_error", "", "slow down"))
	good := relaytest.NewChat(t, "sk-good", okChat(t, ratioModel, "fine", relaytest.NewUsage(1, 1)))
	g.tier(t, busy, ratioModel, 10, func(c *store.Channel) { c.StatusCodeMapping = `{"429":"400"}` })
	g.tier(t, good, ratioModel, 0, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})

	res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
	e := res.wantError(t, http.StatusBadRequest, "bad_response_status_code")
	if e.Error.Param != "400" {
		t.Errorf("param = %q, want the mapped status", e.Error.Param)
	}
	if busy.Hits() != 1 || good.Hits() != 0 {
		t.Errorf("hits = %d/%d, want 1/0: the mapped 400 must stop the retry", busy.Hits(), good.Hits())
	}
}

// model_mapping sends the mapped name upstream, while the log (and the
// price) keep the requested name.
func TestMapping_Model(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	const upstreamName = "provider-model-x"
	const p, c = 30, 20
	up := relaytest.NewChat(t, "sk-mapped", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		if req.Model() != upstreamName {
			t.Errorf("upstream model = %q, want the mapped %q", req.Model(), upstreamName)
		}
		// Everything else the client sent goes along.
		if req.JSON["temperature"] != 0.5 || req.JSON["messages"] == nil {
			t.Errorf("upstream body lost fields: %s", req.Body)
		}
		if req.IncludeUsage() {
			t.Errorf("a non-stream request got stream_options: %s", req.Body)
		}
		relaytest.WriteJSON(w, 200, relaytest.Completion(upstreamName, "ok", relaytest.NewUsage(p, c)))
	})
	ch := g.MustCreateChannel(t, up, ratioModel, func(c *store.Channel) {
		c.ModelMapping = `{"` + ratioModel + `":"` + upstreamName + `"}`
	})
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	before := g.balances(t, "alice", tok.ID, ch)
	body := chat(ratioModel, "hi")
	body["temperature"] = 0.5
	res := g.post(t, key, "/v1/chat/completions", body)
	if res.Status != 200 {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 {
		t.Fatalf("consume logs = %d", len(logs))
	}
	l := logs[0]
	if l.ModelName != ratioModel {
		t.Errorf("log model = %q, want the requested %q", l.ModelName, ratioModel)
	}
	if o := other(t, l); o.UpstreamModel != upstreamName || o.ModelRatio != ratioModelMR {
		t.Errorf("other = %s", l.Other)
	}
	if want := ratioQuota(p, c, ratioModelMR, ratioModelCR, 1); l.Quota != want {
		t.Errorf("quota = %d, want %d (priced by the requested model)", l.Quota, want)
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, l.Quota, 1)
}

// panicTransport fails every upstream call with a panic, standing in for a
// bug anywhere between the reservation and the settlement.
type panicTransport struct{}

func (panicTransport) RoundTrip(*http.Request) (*http.Response, error) {
	panic("upstream transport bug")
}

// A panic after the reservation gives the held quota back: the call fails
// with a 500, and the user's and the token's balances are as before.
func TestPanicReturnsReservation(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{UpstreamClient: &http.Client{Transport: panicTransport{}}})
	up := relaytest.NewChat(t, "sk-panic", okChat(t, "gpt-4o-mini", "never", relaytest.NewUsage(1, 1)))
	g.MustCreateChannel(t, up, "gpt-4o-mini", nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 100000})
	before := g.balances(t, "alice", tok.ID)
	body := chat("gpt-4o-mini", "hello")
	body["max_tokens"] = 1000
	if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusInternalServerError {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if after := g.balances(t, "alice", tok.ID); after.UserQuota != before.UserQuota || after.TokenRemain != before.TokenRemain || after.UserUsed != before.UserUsed {
		t.Fatalf("balances moved by a call that panicked: %+v -> %+v", before, after)
	}
	// The balances shown count held quota as the user's: what a new call
	// may spend tells whether the hold came back.
	g.wantNothingHeld(t, "alice", tok.ID, before)
	if logs := g.consumeLogs(t, "alice"); len(logs) != 0 {
		t.Fatalf("%d consume logs for a call that panicked", len(logs))
	}
}

// wantNothingHeld fails unless a new call may spend all of the user's and
// the token's balances b: no reservation is left open.
func (g *gateway) wantNothingHeld(tb testing.TB, user string, tokenID uint64, b balances) {
	tb.Helper()
	if live, err := g.st.LiveBalance(fixture.IDs[user]); err != nil || live.Quota != b.UserQuota {
		tb.Errorf("spendable user quota %d (%v), want %d", live.Quota, err, b.UserQuota)
	}
	r, err := g.st.Reserve(fixture.IDs[user], tokenID, b.TokenRemain)
	if err != nil {
		tb.Errorf("a reservation of the token's remaining %d: %v", b.TokenRemain, err)
		return
	}
	g.st.Refund(r)
}

// A provider that echoes the key it refused does not hand it to the
// caller, nor to the channel test's report.
func TestUpstreamMessageHidesKey(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	const key = "sk-secret-channel-key-1234"
	up := relaytest.NewChat(t, key, failWith(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+key+". Check it."))
	ch := g.MustCreateChannel(t, up, ratioModel, func(c *store.Channel) { c.Key = key; c.AutoBan = 0 })
	_, tokKey := g.MustCreateToken(t, "alice", store.Token{})

	res := g.post(t, tokKey, "/v1/chat/completions", chat(ratioModel, "hi"))
	e := res.wantError(t, 401, "bad_response_status_code")
	if strings.Contains(string(res.Body), key) || !strings.HasPrefix(e.Error.Message, "Incorrect API key provided: [key hidden]. Check it.") {
		t.Errorf("client got %s", res.Body)
	}
	tr := g.rl.TestChannel(context.Background(), ch, "", nil)
	if tr.Err == nil || strings.Contains(tr.Err.Error(), key) || strings.Contains(tr.Message, key) {
		t.Errorf("channel test reported %v / %q", tr.Err, tr.Message)
	}
}

// An administrator pins a channel with sk-KEY-CHANNELID: the call goes to
// that channel whatever its priority, is not retried elsewhere, and the
// token's model limits still apply. Only administrators pin, and only
// channels that exist and are enabled.
func TestAdminChannelPin(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "3"}})
	ok := okChat(t, ratioModel, "hello", relaytest.NewUsage(3, 1))
	high := relaytest.NewChat(t, "sk-high", ok)
	low := relaytest.NewChat(t, "sk-low", ok)
	failing := relaytest.NewChat(t, "sk-failing", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteError(w, http.StatusInternalServerError, "server_error", "", "boom")
	})
	g.tier(t, high, ratioModel, 10, nil)
	cLow := g.tier(t, low, ratioModel, 0, nil)
	cFailing := g.tier(t, failing, ratioModel, 0, nil)
	cOff := g.tier(t, relaytest.NewChat(t, "sk-off", ok), ratioModel, 0, nil)
	if _, _, err := g.st.SetChannelStatusAuto(cOff.ID, store.ChannelStatusAutoDisabled, "test"); err != nil {
		t.Fatal(err)
	}
	_, rootKey := g.MustCreateToken(t, "root", store.Token{UnlimitedQuota: true})
	_, limitedKey := g.MustCreateToken(t, "root", store.Token{UnlimitedQuota: true, ModelLimitsEnabled: true, ModelLimits: miniModel})
	_, aliceKey := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	pin := func(key string, id any) string { return fmt.Sprintf("%s-%v", key, id) }

	if res := g.post(t, pin(rootKey, cLow.ID), "/v1/chat/completions", chat(ratioModel, "hi")); res.Status != http.StatusOK {
		t.Fatalf("pinned call: %d %s", res.Status, res.Body)
	}
	if high.Hits() != 0 || low.Hits() != 1 {
		t.Fatalf("hits high %d, low %d; want the pinned low-priority channel only", high.Hits(), low.Hits())
	}
	if res := g.post(t, pin(rootKey, cFailing.ID), "/v1/chat/completions", chat(ratioModel, "hi")); res.Status != http.StatusInternalServerError {
		t.Fatalf("pinned failing channel: %d %s", res.Status, res.Body)
	}
	if failing.Hits() != 1 || high.Hits() != 0 || low.Hits() != 1 {
		t.Fatalf("a pinned call was retried elsewhere: hits failing %d, high %d, low %d", failing.Hits(), high.Hits(), low.Hits())
	}
	for _, tc := range []struct {
		name, key string
		status    int
		want      string
	}{
		{"model limits kept", pin(limitedKey, cLow.ID), http.StatusForbidden, ratioModel},
		{"a user does not pin", pin(aliceKey, cLow.ID), http.StatusForbidden, "普通用户不支持指定渠道"},
		{"not a number", pin(rootKey, "abc"), http.StatusBadRequest, "无效的渠道 ID"},
		{"zero", pin(rootKey, 0), http.StatusBadRequest, "无效的渠道 ID"},
		{"no such channel", pin(rootKey, 999999), http.StatusBadRequest, "指定的渠道不存在"},
		{"disabled", pin(rootKey, cOff.ID), http.StatusForbidden, "指定的渠道已被禁用"},
	} {
		res := g.post(t, tc.key, "/v1/chat/completions", chat(ratioModel, "hi"))
		if res.Status != tc.status || !strings.Contains(string(res.Body), tc.want) {
			t.Errorf("%s: %d %s; want %d naming %q", tc.name, res.Status, res.Body, tc.status, tc.want)
		}
	}
	if high.Hits() != 0 || low.Hits() != 1 {
		t.Fatalf("a refused pin reached an upstream: hits high %d, low %d", high.Hits(), low.Hits())
	}
}

// An upstream that answers a call with another success status than 200
// (204 No Content, 201) or a 304 failed it: the client gets OpenAI's
// error object with a failure status (502) and the upstream's status in
// param, never a body-less 204 or an error object under a success status
// that an SDK would read as the answer. Nothing is charged.
func TestUpstreamSuccessStatusOtherThan200(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	var status atomic.Int64
	up := relaytest.NewChat(t, "sk-odd", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.WriteHeader(int(status.Load()))
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	for _, s := range []int{http.StatusNoContent, http.StatusCreated, http.StatusNotModified} {
		status.Store(int64(s))
		res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
		if res.Status != http.StatusBadGateway {
			t.Errorf("upstream %d: client got %d %q, want 502 with an error object", s, res.Status, res.Body)
			continue
		}
		e := res.wantError(t, http.StatusBadGateway, "bad_response_status_code")
		if e.Error.Param != fmt.Sprint(s) || res.Header.Get("X-Oneapi-Request-Id") == "" {
			t.Errorf("upstream %d: error %+v, request id %q", s, e.Error, res.Header.Get("X-Oneapi-Request-Id"))
		}
	}
	if n := len(g.consumeLogs(t, "alice")); n != 0 {
		t.Errorf("consume logs = %d, want 0", n)
	}
}
