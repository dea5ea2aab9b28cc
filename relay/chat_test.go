package relay_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/relay/tokenizer"
	"gateway/store"
)

// A non-stream chat: the client gets the upstream's bytes, one consume log
// records the upstream's usage, and the user, the token and the channel all
// move by exactly the log's quota, which follows the ratio formula.
func TestChat_NonStream(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	const prompt, completion = 21, 13
	// The client's body, sent upstream byte for byte (no mapping, no stream).
	clientBody := `{"model":"test-model","messages":[{"role":"user","content":"Say hello"}],"temperature":0.3}`
	answer, _ := json.Marshal(relaytest.Completion(ratioModel, "Hello there!", relaytest.NewUsage(prompt, completion)))
	up := relaytest.NewChat(t, "sk-upstream-1", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		if string(req.Body) != clientBody {
			t.Errorf("upstream body = %s, want the client's bytes %s", req.Body, clientBody)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	})
	ch := g.MustCreateChannel(t, up, ratioModel, nil)
	// A vip token: group ratio 0.5 takes part in the price.
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000, Group: "vip"})
	before := g.balances(t, "alice", tok.ID, ch)

	res := g.post(t, key, "/v1/chat/completions", clientBody)
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if !bytes.Equal(res.Body, answer) {
		t.Errorf("client body = %s, want the upstream's %s", res.Body, answer)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	reqID := res.Header.Get("X-Oneapi-Request-Id")
	if reqID == "" {
		t.Error("no X-Oneapi-Request-Id")
	}
	if up.Hits() != 1 {
		t.Errorf("upstream hits = %d, want 1", up.Hits())
	}

	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 {
		t.Fatalf("consume logs = %d, want 1", len(logs))
	}
	l := logs[0]
	want := ratioQuota(prompt, completion, ratioModelMR, ratioModelCR, vipGroupRatio)
	if l.Quota != want {
		t.Errorf("log quota = %d, want %d", l.Quota, want)
	}
	if l.PromptTokens != prompt || l.CompletionTokens != completion {
		t.Errorf("log tokens = %d/%d, want %d/%d", l.PromptTokens, l.CompletionTokens, prompt, completion)
	}
	if l.ModelName != ratioModel || l.TokenID != tok.ID || l.TokenName != tok.Name || l.ChannelID != ch.ID || l.IsStream || l.Group != "vip" {
		t.Errorf("log = %+v", l)
	}
	o := other(t, l)
	if o.RequestID != reqID {
		t.Errorf("other.request_id = %q, want the response's %q", o.RequestID, reqID)
	}
	if len(o.AdminInfo.UseChannel) != 1 || o.AdminInfo.UseChannel[0] != ch.ID {
		t.Errorf("use_channel = %v, want [%d]", o.AdminInfo.UseChannel, ch.ID)
	}
	if o.FRT != -1000 || o.ModelRatio != ratioModelMR || o.GroupRatio != vipGroupRatio || o.ModelPrice != -1 {
		t.Errorf("other = %s", l.Other)
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, l.Quota, 1)
}

// streamCase is one upstream stream and what the client and the ledger
// must see of it.
type streamCase struct {
	name         string
	model        string
	includeUsage bool // the client asks for usage
	// send writes the upstream's events (after the checks on the request).
	send func(sse *relaytest.SSE, model string)
	// wantEvents checks the client's data payloads.
	wantEvents func(t *testing.T, events []string)
	// wantTokens returns the prompt and completion the log must hold.
	wantTokens func(messages []tokenizer.Message) (int, int)
	mr, cr     float64
}

// contentOf joins the content deltas of events.
func contentOf(t *testing.T, events []string) string {
	t.Helper()
	var b strings.Builder
	for _, e := range events {
		if e == "[DONE]" {
			continue
		}
		ev, err := relaytest.ParseEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range ev.Choices {
			b.WriteString(c.Delta.Content)
		}
	}
	return b.String()
}

// usageEvents returns the events that carry a usage object.
func usageEvents(t *testing.T, events []string) []relaytest.StreamEvent {
	t.Helper()
	var out []relaytest.StreamEvent
	for _, e := range events {
		if e == "[DONE]" {
			continue
		}
		ev, err := relaytest.ParseEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Usage != nil {
			out = append(out, ev)
		}
	}
	return out
}

func wantDoneLast(t *testing.T, events []string) {
	t.Helper()
	if len(events) == 0 || events[len(events)-1] != "[DONE]" {
		t.Fatalf("events do not end with [DONE]: %q", events)
	}
	for _, e := range events[:len(events)-1] {
		if e == "[DONE]" {
			t.Fatalf("[DONE] before the end: %q", events)
		}
	}
}

// Streams: events are relayed in order with [DONE] last; the upstream's
// usage chunk reaches the client only when it asked; without upstream usage
// the call is billed by local count, and a client that asked gets a
// synthetic usage chunk; tool-call deltas are counted.
func TestChat_Stream(t *testing.T) {
	t.Parallel()
	words := []string{"Hel", "lo", " wor", "ld", ", how are you?"}
	const upPrompt, upCompletion = 9, 5
	sendWords := func(withUsage bool) func(sse *relaytest.SSE, model string) {
		return func(sse *relaytest.SSE, model string) {
			for _, w := range words {
				sse.Send(relaytest.Chunk(model, w))
			}
			sse.Send(relaytest.FinishChunk(model, "stop"))
			if withUsage {
				sse.Send(relaytest.UsageChunk(model, upPrompt, upCompletion))
			}
			sse.Done()
		}
	}
	wantWords := func(t *testing.T, events []string) {
		wantDoneLast(t, events)
		if got := contentOf(t, events); got != strings.Join(words, "") {
			t.Errorf("client content = %q, want %q in order", got, strings.Join(words, ""))
		}
		// Five content chunks and the finish chunk come first, in order.
		for i, w := range words {
			ev, _ := relaytest.ParseEvent(events[i])
			if len(ev.Choices) != 1 || ev.Choices[0].Delta.Content != w {
				t.Errorf("event %d = %s, want content %q", i, events[i], w)
			}
		}
	}
	upstreamUsage := func([]tokenizer.Message) (int, int) { return upPrompt, upCompletion }
	localCount := func(model string) func(msgs []tokenizer.Message) (int, int) {
		return func(msgs []tokenizer.Message) (int, int) {
			return countChat(model, msgs), tokenizer.CountText(model, strings.Join(words, ""))
		}
	}
	const toolArgs1, toolArgs2 = `{"city":`, `"Paris"}`
	cases := []streamCase{{
		name: "usage asked", model: miniModel, includeUsage: true, mr: miniModelMR, cr: miniModelCR,
		send: sendWords(true),
		wantEvents: func(t *testing.T, events []string) {
			wantWords(t, events)
			// Words, finish, usage, [DONE]: the usage chunk passes through.
			if len(events) != len(words)+3 {
				t.Fatalf("events = %q", events)
			}
			ev, _ := relaytest.ParseEvent(events[len(events)-2])
			if ev.Usage == nil || ev.Usage.PromptTokens != upPrompt || ev.Usage.CompletionTokens != upCompletion || len(ev.Choices) != 0 {
				t.Errorf("usage event = %s", events[len(events)-2])
			}
		},
		wantTokens: upstreamUsage,
	}, {
		name: "usage not asked", model: miniModel, mr: miniModelMR, cr: miniModelCR,
		send: sendWords(true),
		wantEvents: func(t *testing.T, events []string) {
			wantWords(t, events)
			if u := usageEvents(t, events); len(u) != 0 {
				t.Errorf("the client did not ask for usage but got %d usage chunks: %q", len(u), events)
			}
			if len(events) != len(words)+2 {
				t.Errorf("events = %q", events)
			}
		},
		wantTokens: upstreamUsage,
	}, {
		name: "no upstream usage, asked", model: ratioModel, includeUsage: true, mr: ratioModelMR, cr: ratioModelCR,
		send: sendWords(false),
		wantEvents: func(t *testing.T, events []string) {
			wantWords(t, events)
			u := usageEvents(t, events)
			if len(u) != 1 {
				t.Fatalf("want one synthetic usage chunk, got %d: %q", len(u), events)
			}
			// It comes right before [DONE].
			last, _ := relaytest.ParseEvent(events[len(events)-2])
			if last.Usage == nil {
				t.Errorf("the usage chunk is not the last event before [DONE]: %q", events)
			}
			if u[0].Usage.CompletionTokens != tokenizer.CountText(ratioModel, strings.Join(words, "")) ||
				u[0].Usage.TotalTokens != u[0].Usage.PromptTokens+u[0].Usage.CompletionTokens || u[0].Usage.PromptTokens == 0 {
				t.Errorf("synthetic usage = %+v", *u[0].Usage)
			}
		},
		wantTokens: localCount(ratioModel),
	}, {
		name: "no upstream usage, not asked", model: ratioModel, mr: ratioModelMR, cr: ratioModelCR,
		send: sendWords(false),
		wantEvents: func(t *testing.T, events []string) {
			wantWords(t, events)
			if u := usageEvents(t, events); len(u) != 0 {
				t.Errorf("usage chunks = %d, want none", len(u))
			}
		},
		wantTokens: localCount(ratioModel),
	}, {
		// Some providers just close the stream: the client still gets its
		// [DONE], after the charge.
		name: "upstream ends without [DONE]", model: miniModel, mr: miniModelMR, cr: miniModelCR,
		send: func(sse *relaytest.SSE, model string) {
			for _, w := range words {
				sse.Send(relaytest.Chunk(model, w))
			}
			sse.Send(relaytest.UsageChunk(model, upPrompt, upCompletion))
		},
		wantEvents: func(t *testing.T, events []string) {
			wantWords(t, events)
			if len(events) != len(words)+1 {
				t.Errorf("events = %q", events)
			}
		},
		wantTokens: upstreamUsage,
	}, {
		name: "tool calls without usage", model: ratioModel, includeUsage: true, mr: ratioModelMR, cr: ratioModelCR,
		send: func(sse *relaytest.SSE, model string) {
			sse.Send(relaytest.ToolCallChunk(model, 0, "call_1", "get_weather", ""))
			sse.Send(relaytest.ToolCallChunk(model, 0, "", "", toolArgs1))
			sse.Send(relaytest.ToolCallChunk(model, 0, "", "", toolArgs2))
			sse.Send(relaytest.FinishChunk(model, "tool_calls"))
			sse.Done()
		},
		wantEvents: func(t *testing.T, events []string) {
			wantDoneLast(t, events)
			var args, name string
			for _, e := range events[:len(events)-1] {
				ev, err := relaytest.ParseEvent(e)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range ev.Choices {
					for _, tc := range c.Delta.ToolCalls {
						name += tc.Function.Name
						args += tc.Function.Arguments
					}
				}
			}
			if name != "get_weather" || args != toolArgs1+toolArgs2 {
				t.Errorf("client tool call = %q(%q)", name, args)
			}
		},
		wantTokens: func(msgs []tokenizer.Message) (int, int) {
			// Name and arguments, plus 7 for the one call per chunk.
			return countChat(ratioModel, msgs),
				tokenizer.CountText(ratioModel, "get_weather"+toolArgs1+toolArgs2) + tokenizer.StreamToolCallTokens
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			up := relaytest.NewChat(t, "sk-stream", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				if !req.Stream() {
					t.Errorf("upstream request is not a stream: %s", req.Body)
				}
				// An OpenAI channel always asks its upstream for usage.
				if !req.IncludeUsage() {
					t.Errorf("upstream request lacks stream_options.include_usage: %s", req.Body)
				}
				if req.Model() != tc.model {
					t.Errorf("upstream model = %q", req.Model())
				}
				tc.send(relaytest.NewSSE(w), tc.model)
			})
			ch := g.MustCreateChannel(t, up, tc.model, nil)
			tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
			before := g.balances(t, "alice", tok.ID, ch)
			body := streamChat(tc.model, "Tell me something nice about the weather", tc.includeUsage)
			res := g.post(t, key, "/v1/chat/completions", body)
			if res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type = %q", ct)
			}
			tc.wantEvents(t, relaytest.Events(res.Body))

			logs := g.consumeLogs(t, "alice")
			if len(logs) != 1 {
				t.Fatalf("consume logs = %d, want 1", len(logs))
			}
			l := logs[0]
			msgs := []tokenizer.Message{{Role: "user", Content: "Tell me something nice about the weather"}}
			p, c := tc.wantTokens(msgs)
			if int(l.PromptTokens) != p || int(l.CompletionTokens) != c {
				t.Errorf("log tokens = %d/%d, want %d/%d", l.PromptTokens, l.CompletionTokens, p, c)
			}
			if want := ratioQuota(p, c, tc.mr, tc.cr, 1); l.Quota != want {
				t.Errorf("log quota = %d, want %d", l.Quota, want)
			}
			if !l.IsStream {
				t.Error("log is_stream = false")
			}
			if o := other(t, l); o.FRT < 0 || o.RequestID != res.Header.Get("X-Oneapi-Request-Id") {
				t.Errorf("other = %s", l.Other)
			}
			wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, l.Quota, 1)
		})
	}
}

// A provider that does not take stream_options (Mistral answers 422
// "extra_forbidden" for it) never receives the client's: the option is
// removed for channel types without stream usage. The client that asked
// for usage still gets it, from the provider's own usage or counted locally.
func TestChat_StreamOptionsRemovedForProvidersWithout(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-mistral", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		if _, ok := req.JSON["stream_options"]; ok {
			relaytest.WriteJSON(w, 422, map[string]any{"object": "error", "type": "invalid_request_error",
				"message": map[string]any{"detail": []any{map[string]any{"type": "extra_forbidden", "loc": []any{"body", "stream_options", "include_usage"}, "msg": "Extra inputs are not permitted"}}}})
			return
		}
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(req.Model(), "Bonjour"))
		sse.Done()
	})
	g.MustCreateChannel(t, up, ratioModel, func(c *store.Channel) { c.Type = relay.TypeMistral })
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	res := g.post(t, key, "/v1/chat/completions", streamChat(ratioModel, "Say hello in French", true))
	if res.Status != 200 {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	events := relaytest.Events(res.Body)
	wantDoneLast(t, events)
	if u := usageEvents(t, events); len(u) != 1 || u[0].Usage.CompletionTokens != tokenizer.CountText(ratioModel, "Bonjour") {
		t.Errorf("usage events = %+v, want the local count", u)
	}
	if logs := g.consumeLogs(t, "alice"); len(logs) != 1 {
		t.Errorf("consume logs = %d", len(logs))
	}
}

// A stream body goes upstream as the client sent it when it already asks
// for usage; without it, include_usage is added and every other field kept.
func TestChat_StreamBodyRewrittenOnlyWhenNeeded(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	var got []*relaytest.Request
	var mu sync.Mutex
	up := relaytest.NewChat(t, "sk-upstream-s", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(req.Model(), "Hi"))
		sse.Send(relaytest.UsageChunk(req.Model(), 4, 1))
		sse.Done()
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})

	asks := `{"model":"test-model", "stream":true, "stream_options":{"include_usage":true}, "messages":[{"role":"user","content":"Hi"}], "x_vendor":{"keep":[1,2]}}`
	plain := `{"model":"test-model","stream":true,"messages":[{"role":"user","content":"Hi"}],"x_vendor":{"keep":[1,2]}}`
	for _, body := range []string{asks, plain} {
		if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("upstream calls = %d", len(got))
	}
	if string(got[0].Body) != asks {
		t.Errorf("upstream body = %s, want the client's bytes %s", got[0].Body, asks)
	}
	opts, _ := got[1].JSON["stream_options"].(map[string]any)
	if opts["include_usage"] != true {
		t.Errorf("stream_options = %v, want include_usage added", got[1].JSON["stream_options"])
	}
	if v, _ := json.Marshal(got[1].JSON["x_vendor"]); string(v) != `{"keep":[1,2]}` || got[1].Model() != ratioModel {
		t.Errorf("other fields changed: %s", got[1].Body)
	}
}

// A usage that names the prompt and the total but not the completion is
// charged the difference as the completion, as a stream's would be.
func TestChat_UsageWithoutCompletionTokens(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-upstream-1", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"`+ratioModel+`","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"total_tokens":1205}}`)
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	if res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi")); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if l := g.consumeLogs(t, "alice")[0]; l.PromptTokens != 5 || l.CompletionTokens != 1200 {
		t.Fatalf("billed %d prompt and %d completion tokens, want 5 and 1200", l.PromptTokens, l.CompletionTokens)
	}
}

// A stream's usage chunk is read as a whole answer's usage is: one that
// names the prompt and the total but not the completion is charged the
// difference as the completion, and one that holds only a total is charged
// that total once (the completion counted here, the rest as the prompt),
// not the few words of text the stream happened to carry.
func TestChat_StreamUsageWithoutCompletionTokens(t *testing.T) {
	t.Parallel()
	hello := int64(tokenizer.CountText(ratioModel, "Hello!"))
	for _, tc := range []struct {
		name                  string
		usage                 string
		wantPrompt, wantCompl int64
	}{
		{"prompt and total", `{"prompt_tokens":5,"total_tokens":1205}`, 5, 1200},
		{"total alone", `{"total_tokens":1205}`, 1205 - hello, hello},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			up := relaytest.NewChat(t, "sk-upstream-1", rawSSE(
				`data: {"id":"x","object":"chat.completion.chunk","model":"`+ratioModel+`","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}]}`,
				`data: {"id":"x","object":"chat.completion.chunk","model":"`+ratioModel+`","choices":[],"usage":`+tc.usage+`}`,
				`data: [DONE]`,
			))
			g.MustCreateChannel(t, up, ratioModel, nil)
			_, key := g.MustCreateToken(t, "alice", store.Token{})
			res := g.post(t, key, "/v1/chat/completions", streamChat(ratioModel, "hi", true))
			if res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			l := g.oneLog(t)
			if l.PromptTokens != tc.wantPrompt || l.CompletionTokens != tc.wantCompl {
				t.Fatalf("billed %d prompt and %d completion tokens, want %d and %d", l.PromptTokens, l.CompletionTokens, tc.wantPrompt, tc.wantCompl)
			}
			if want := ratioQuota(int(tc.wantPrompt), int(tc.wantCompl), ratioModelMR, ratioModelCR, 1); l.Quota != want {
				t.Fatalf("log quota %d, want %d", l.Quota, want)
			}
			// The client that asked for usage is shown the figures billed.
			u := usageEvents(t, relaytest.Events(res.Body))
			if len(u) != 1 || int64(u[0].Usage.PromptTokens) != tc.wantPrompt || int64(u[0].Usage.CompletionTokens) != tc.wantCompl {
				t.Fatalf("usage chunks %+v, want one with %d/%d", u, tc.wantPrompt, tc.wantCompl)
			}
		})
	}
}

// Counts written as decimals or strings, as some OpenAI-compatible servers
// write them, are charged rounded up, in a stream's usage chunk and in a
// whole answer alike.
func TestChat_UsageCountsNotIntegers(t *testing.T) {
	t.Parallel()
	const usage = `"usage":{"prompt_tokens":12.0,"completion_tokens":"7","total_tokens":18.5,"completion_tokens_details":{"audio_tokens":"0"}}`
	for _, stream := range []bool{false, true} {
		t.Run("stream="+strconv.FormatBool(stream), func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			up := relaytest.NewChat(t, "sk-upstream-1", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				if stream {
					rawSSE(
						`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}]}`,
						`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[],`+usage+`}`,
						`data: [DONE]`,
					)(w, r, req)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],`+usage+`}`)
			})
			g.MustCreateChannel(t, up, miniModel, nil)
			_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
			body := chat(miniModel, "hi")
			if stream {
				body = streamChat(miniModel, "hi", true)
			}
			if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if l := g.oneLog(t); l.PromptTokens != 12 || l.CompletionTokens != 7 {
				t.Fatalf("billed %d prompt and %d completion tokens, want 12 and 7", l.PromptTokens, l.CompletionTokens)
			}
		})
	}
}

// A count an upstream reports below zero is no count: the call is charged
// as when the count is missing (the local count of the completion, the
// total's remainder or the local count of the prompt), never nothing for
// the words it sent. A count beyond 2^40, written as a number or a string,
// is no count either: no call produces a trillion tokens.
func TestChat_UsageCountsBelowZero(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, usage          string
		wantPrompt, wantComp int64 // -1: the local count, above 0
	}{
		{"negative completion", `"usage":{"prompt_tokens":12,"completion_tokens":-7,"total_tokens":5}`, 12, -1},
		{"negative prompt", `"usage":{"prompt_tokens":-12,"completion_tokens":7,"total_tokens":-5}`, -1, 7},
		{"negative prompt with total", `"usage":{"prompt_tokens":-12,"completion_tokens":7,"total_tokens":20}`, 13, 7},
		{"decimal negative completion", `"usage":{"prompt_tokens":12.0,"completion_tokens":"-7","total_tokens":5}`, 12, -1},
		{"completion beyond 2^40", `"usage":{"prompt_tokens":12,"completion_tokens":2199023255552,"total_tokens":2199023255564}`, 12, -1},
		{"completion beyond 2^40 as a string", `"usage":{"prompt_tokens":12,"completion_tokens":"2199023255552","total_tokens":5}`, 12, -1},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(tc.name+"/stream="+strconv.FormatBool(stream), func(t *testing.T) {
				t.Parallel()
				g := MustOpenGateway(t, gatewayConfig{})
				up := relaytest.NewChat(t, "sk-upstream-1", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
					if stream {
						rawSSE(
							`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello there, how are you?"},"finish_reason":"stop"}]}`,
							`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[],`+tc.usage+`}`,
							`data: [DONE]`,
						)(w, r, req)
						return
					}
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there, how are you?"},"finish_reason":"stop"}],`+tc.usage+`}`)
				})
				g.MustCreateChannel(t, up, miniModel, nil)
				_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
				body := chat(miniModel, "hi")
				if stream {
					body = streamChat(miniModel, "hi", true)
				}
				if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
					t.Fatalf("status %d: %s", res.Status, res.Body)
				}
				l := g.oneLog(t)
				if tc.wantPrompt >= 0 && l.PromptTokens != tc.wantPrompt || tc.wantPrompt < 0 && (l.PromptTokens <= 0 || l.PromptTokens > 100) {
					t.Errorf("billed %d prompt tokens, want %d (-1: the local count)", l.PromptTokens, tc.wantPrompt)
				}
				if tc.wantComp >= 0 && l.CompletionTokens != tc.wantComp || tc.wantComp < 0 && (l.CompletionTokens <= 0 || l.CompletionTokens > 100) {
					t.Errorf("billed %d completion tokens, want %d (-1: the local count)", l.CompletionTokens, tc.wantComp)
				}
				if want := ratioQuota(int(l.PromptTokens), int(l.CompletionTokens), miniModelMR, miniModelCR, 1); l.Quota != want {
					t.Errorf("log quota %d, want %d", l.Quota, want)
				}
			})
		}
	}
}

// A usage that came with the answer's last choices but does not hold the
// figures billed (it names the prompt only, and the completion is counted
// here) is followed by a usage chunk that does: the last usage a client that
// asked for it reads is what it was charged.
func TestStream_UsageBesideChoicesThatIsNotBilledIsFollowedByTheBilledOne(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-upstream-1", rawSSE(
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello there, how are you?"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":0,"total_tokens":12}}`,
		`data: [DONE]`,
	))
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hi", true))
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	l := g.oneLog(t)
	if l.PromptTokens != 12 || l.CompletionTokens <= 0 {
		t.Fatalf("billed %d/%d tokens, want 12 and the local count", l.PromptTokens, l.CompletionTokens)
	}
	events := relaytest.Events(res.Body)
	wantDoneLast(t, events)
	u := usageEvents(t, events)
	if len(u) == 0 {
		t.Fatal("no usage reached the client")
	}
	if last := u[len(u)-1].Usage; int64(last.PromptTokens) != l.PromptTokens || int64(last.CompletionTokens) != l.CompletionTokens {
		t.Fatalf("the last usage the client read is %d/%d, billed %d/%d", last.PromptTokens, last.CompletionTokens, l.PromptTokens, l.CompletionTokens)
	}
}

// countChat is the prompt of msgs counted by the zero Counter.
func countChat(model string, msgs []tokenizer.Message) int {
	n, _ := tokenizer.Counter{}.CountChat(model, msgs, nil)
	return n
}
