package relay_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/relay/tokenizer"
	"gateway/store"
)

// rawSSE answers a stream with the given lines as they are, each followed
// by a blank line, flushing each.
func rawSSE(lines ...string) relaytest.Handler {
	return func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, l := range lines {
			fmt.Fprintf(w, "%s\n\n", l)
			w.(http.Flusher).Flush()
		}
	}
}

// logOf returns the single consume log of alice.
func (g *gateway) oneLog(t *testing.T) *store.Log {
	t.Helper()
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 {
		t.Fatalf("consume logs = %d, want 1", len(logs))
	}
	return logs[0]
}

// An event longer than the read buffer (a whole tool call, an image in one
// chunk) reaches the client intact and is billed once.
func TestStream_LongEvent(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	long := strings.Repeat("a ", 100_000)
	up := relaytest.NewChat(t, "sk-long", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(miniModel, "start "))
		sse.Send(relaytest.Chunk(miniModel, long))
		sse.Send(relaytest.Chunk(miniModel, " end"))
		sse.Send(relaytest.UsageChunk(miniModel, 5, 100_002))
		sse.Done()
	})
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "long", false))
	events := relaytest.Events(res.Body)
	wantDoneLast(t, events)
	if got := contentOf(t, events); got != "start "+long+" end" {
		t.Fatalf("content of %d bytes, want %d", len(got), len("start "+long+" end"))
	}
	if l := g.oneLog(t); l.PromptTokens != 5 || l.CompletionTokens != 100_002 {
		t.Fatalf("billed %d/%d", l.PromptTokens, l.CompletionTokens)
	}
}

// Usage is read wherever the provider puts it: in a chunk whose content is
// an array of parts (Mistral's thinking models), and in the finishing choice
// (Moonshot), its counts written as strings or not. A client that asked for usage gets one usage chunk, with the
// figures billed.
func TestStream_UsageWhereProvidersPutIt(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"content parts": {
			`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"hmm"}]}]}}]}`,
			`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":[{"type":"text","text":"hi"}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":500,"completion_tokens":300,"total_tokens":800}}`,
			`data: [DONE]`,
		},
		"usage in the finishing choice": {
			`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}`,
			`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":500,"completion_tokens":300,"total_tokens":800}}]}`,
			`data: [DONE]`,
		},
		"usage in the finishing choice, counts as strings": {
			`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}`,
			`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":500,"completion_tokens":"300","total_tokens":"800"}}]}`,
			`data: [DONE]`,
		},
	}
	for name, lines := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			up := relaytest.NewChat(t, "sk-usage", rawSSE(lines...))
			g.MustCreateChannel(t, up, miniModel, nil)
			_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
			res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hello", true))
			events := relaytest.Events(res.Body)
			wantDoneLast(t, events)
			if l := g.oneLog(t); l.PromptTokens != 500 || l.CompletionTokens != 300 {
				t.Fatalf("billed %d/%d, want the provider's 500/300", l.PromptTokens, l.CompletionTokens)
			}
			var top []string
			for _, e := range events {
				if strings.HasPrefix(e, `{`) && strings.Contains(e, `"choices":[]`) && strings.Contains(e, `"usage"`) {
					top = append(top, e)
				}
			}
			if strings.HasPrefix(name, "usage in the finishing choice") && (len(top) != 1 || !strings.Contains(top[0], `"prompt_tokens":500`)) {
				t.Fatalf("usage chunks for a client that asked: %q", top)
			}
			n := 0
			for _, e := range events {
				if strings.Contains(e, `"usage":{`) && !strings.Contains(e, `"finish_reason":"stop","usage"`) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%d usage chunks for a client that asked, want 1: %q", n, events)
			}
		})
	}
}

// Without usage, reasoning is counted with the content: it is billed as
// completion by every provider that streams it.
func TestStream_ReasoningCounted(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	reasoning := strings.Repeat("Let me think about this step by step. ", 40)
	up := relaytest.NewChat(t, "sk-think", rawSSE(
		fmt.Sprintf(`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":%q}}]}`, reasoning),
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"42"},"finish_reason":"stop"}]}`,
		`data: [DONE]`,
	))
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "6 x 7?", false))
	if l := g.oneLog(t); l.CompletionTokens < 200 {
		t.Fatalf("completion counted as %d tokens: the reasoning was not billed", l.CompletionTokens)
	}
}

// A usage chunk that reports nothing is not passed to a client that did not
// ask for usage.
func TestStream_EmptyUsageChunkHidden(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-zero", rawSSE(
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`,
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`,
		`data: [DONE]`,
	))
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	events := relaytest.Events(g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hello", false)).Body)
	if n := len(usageEvents(t, events)); n != 0 {
		t.Fatalf("%d usage chunks reached a client that did not ask: %q", n, events)
	}
	wantDoneLast(t, events)
}

// A stream without usage whose local count exceeds max_tokens is charged at
// the bound, and the usage chunk the client asked for says so: it shows the
// figures billed, not the count before the bound.
func TestStream_UsageChunkShowsTheBoundCharged(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-long", rawSSE(
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"one two three four five six seven eight nine ten eleven twelve"},"finish_reason":"stop"}]}`,
		`data: [DONE]`,
	))
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	body := streamChat(miniModel, "hello", true)
	body["max_tokens"] = 2
	events := relaytest.Events(g.post(t, key, "/v1/chat/completions", body).Body)
	us := usageEvents(t, events)
	if len(us) != 1 {
		t.Fatalf("%d usage chunks, want 1: %q", len(us), events)
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 || logs[0].CompletionTokens != 2 {
		t.Fatalf("consume logs: %+v, want one with completion 2", logs)
	}
	u := us[0].Usage
	if int64(u.CompletionTokens) != logs[0].CompletionTokens || int64(u.PromptTokens) != logs[0].PromptTokens || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage chunk %+v, billed prompt %d completion %d", *u, logs[0].PromptTokens, logs[0].CompletionTokens)
	}
	wantDoneLast(t, events)
}

// [DONE] and the charge do not wait for an upstream that keeps its answer
// open after [DONE]: the client has its whole answer while the upstream
// still holds the connection.
func TestStream_DoneDoesNotWaitForUpstreamClose(t *testing.T) {
	t.Parallel()
	// A long idle timeout: only the bounded wait after [DONE] explains a quick answer.
	g := MustOpenGateway(t, gatewayConfig{Relay: relay.Config{StreamIdleTimeout: 30 * time.Second}})
	release := make(chan struct{})
	up := relaytest.NewChat(t, "sk-linger", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(miniModel, "hi"))
		sse.Send(relaytest.UsageChunk(miniModel, 3, 1))
		sse.Done()
		select {
		case <-release:
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	})
	defer close(release)
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	done := make(chan result, 1)
	go func() { done <- g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hello", false)) }()
	select {
	case res := <-done:
		wantDoneLast(t, relaytest.Events(res.Body))
	case <-time.After(10 * time.Second):
		t.Fatal("the answer waited for the upstream to close its connection")
	}
	if l := g.oneLog(t); l.PromptTokens != 3 {
		t.Fatalf("billed %d prompt tokens", l.PromptTokens)
	}
}

// Keep-alive comments are not data: they neither count as the first byte
// nor keep a stream alive, so a channel that only pings is left for the
// next one.
func TestStream_CommentsAreNotAFirstByte(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{
		Options: map[string]string{"RetryTimes": "1"},
		// Long enough that the good channel, under the same timeout, cannot
		// miss it on a loaded machine.
		Relay: relay.Config{FirstByteTimeout: time.Second, StreamIdleTimeout: 30 * time.Second},
	})
	cancelled := make(chan struct{})
	pinger := relaytest.NewChat(t, "sk-ping", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			fmt.Fprint(w, ": ping\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				close(cancelled)
				return
			case <-tick.C:
			case <-time.After(20 * time.Second):
				return
			}
		}
	})
	good := relaytest.NewChat(t, "sk-good", chatEither(ratioModel))
	g.tier(t, pinger, ratioModel, 10, nil)
	c2 := g.tier(t, good, ratioModel, 0, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	res := g.post(t, key, "/v1/chat/completions", streamChat(ratioModel, "hi", false))
	if got := contentOf(t, relaytest.Events(res.Body)); got != "fine" {
		t.Fatalf("content %q: %s", got, res.Body)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the pinging upstream was not cancelled")
	}
	if l := g.oneLog(t); l.ChannelID != c2.ID {
		t.Fatalf("billed on channel %d, want %d", l.ChannelID, c2.ID)
	}
}

// A JSON body goes upstream as application/json whatever the client called
// it, and a model the relay chose (the engines path) is written into it.
func TestRequestBodyAsUpstreamsNeedIt(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.New(t, "sk-body", relaytest.Routes{
		relaytest.ChatPath: okChat(t, miniModel, "ok", relaytest.NewUsage(3, 1)),
		"POST /v1/embeddings": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			relaytest.WriteJSON(w, http.StatusOK, relaytest.Embedding(req.Model(), 1, relaytest.NewUsage(2, 0)))
		},
	})
	g.MustCreateChannel(t, up, miniModel+","+embedModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})

	if res := g.post(t, key, "/v1/chat/completions", chat(miniModel, "hi"), "Content-Type", "application/x-www-form-urlencoded"); res.Status != http.StatusOK {
		t.Fatalf("form-typed JSON: %d %s", res.Status, res.Body)
	}
	if res := g.post(t, key, "/v1/engines/"+embedModel+"/embeddings", map[string]any{"input": "embed me"}); res.Status != http.StatusOK {
		t.Fatalf("engines path: %d %s", res.Status, res.Body)
	}
	reqs := up.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d upstream requests", len(reqs))
	}
	if reqs[1].Model() != embedModel {
		t.Fatalf("the engines path sent model %q upstream: %s", reqs[1].Model(), reqs[1].Body)
	}
}

// A non-stream answer without usage is counted locally with its reasoning.
func TestBody_ReasoningCounted(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	reasoning := strings.Repeat("Let me think about this step by step. ", 40)
	up := relaytest.NewChat(t, "sk-think", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusOK, map[string]any{"id": "x", "object": "chat.completion", "model": miniModel,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "42", "reasoning_content": reasoning}}}})
	})
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	if res := g.post(t, key, "/v1/chat/completions", chat(miniModel, "6 x 7?")); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if l := g.oneLog(t); l.CompletionTokens < 200 {
		t.Fatalf("completion counted as %d tokens: the reasoning was not billed", l.CompletionTokens)
	}
}

// A stream without usage longer than the events a stream holds is counted
// as it goes, with the count of the whole text.
func TestStream_LongStreamCountedAsItGoes(t *testing.T) {
	t.Parallel()
	const words = 15000 // about 1.9 MB of events, 75 KB of text
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-long", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		var b strings.Builder
		for i := range words {
			fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":\" word%d\"},\"finish_reason\":null}]}\n\n", ratioModel, i%10)
		}
		b.WriteString("data: [DONE]\n\n")
		fmt.Fprint(w, b.String())
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	if res := g.post(t, key, "/v1/chat/completions", streamChat(ratioModel, "hi", false)); res.Status != http.StatusOK {
		t.Fatalf("status %d", res.Status)
	}
	var text strings.Builder
	for i := range words {
		fmt.Fprintf(&text, " word%d", i%10)
	}
	if got, want := g.oneLog(t).CompletionTokens, int64(tokenizer.CountText(ratioModel, text.String())); got != want {
		t.Fatalf("completion tokens %d, want %d", got, want)
	}
}

// sseJoined reads an event stream as SSE clients do: an event is the data
// lines up to its blank line, joined with newlines.
func sseJoined(body []byte) []string {
	var out, cur []string
	for _, line := range strings.Split(string(body), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			if cur != nil {
				out = append(out, strings.Join(cur, "\n"))
				cur = nil
			}
			continue
		}
		if p, ok := strings.CutPrefix(line, "data:"); ok {
			cur = append(cur, strings.TrimPrefix(p, " "))
		}
	}
	if cur != nil {
		out = append(out, strings.Join(cur, "\n"))
	}
	return out
}

// piecesSSE answers a stream with pieces of an event stream as they are,
// flushing each and pausing between them.
func piecesSSE(pieces ...string) relaytest.Handler {
	return func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range pieces {
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// streamedParts reads a stream's events as an SSE client does: the content,
// and the usage of every event that has one.
func streamedParts(t *testing.T, body []byte) (string, []relaytest.Usage) {
	t.Helper()
	events := sseJoined(body)
	wantDoneLast(t, events)
	var content strings.Builder
	var usages []relaytest.Usage
	for _, e := range events[:len(events)-1] {
		var ev relaytest.StreamEvent
		if err := json.Unmarshal([]byte(e), &ev); err != nil {
			t.Fatalf("event %q: %v", e, err)
		}
		for _, c := range ev.Choices {
			content.WriteString(c.Delta.Content)
		}
		if ev.Usage != nil {
			usages = append(usages, *ev.Usage)
		}
	}
	return content.String(), usages
}

// An event may spread its data over several lines (SSE joins them): it
// reaches the client whole, as the same lines, and its usage is billed,
// also when its lines arrive apart. An upstream that sends no blank lines
// at all still has each line taken as an event.
func TestStream_EventsOfSeveralDataLines(t *testing.T) {
	t.Parallel()
	const head = `{"id":"up","object":"chat.completion.chunk","model":"gpt-4o-mini",`
	const usageLine = `"usage":{"prompt_tokens":100,"completion_tokens":40,"total_tokens":140}}`
	cases := map[string][]string{
		"several lines": {
			"data: " + head + "\ndata: \"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello\"}}]}\n\n",
			"data: " + head + "\n", // the rest of this event comes later
			"data: \"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"},\"finish_reason\":\"stop\"}]}\n\n",
			"data: " + head + "\ndata: \"choices\":[],\ndata: " + usageLine + "\n\n",
			"data: [DONE]\n\n",
		},
		"no blank lines": {
			"data: " + head + "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello\"}}]}\n",
			"data: " + head + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"},\"finish_reason\":\"stop\"}]}\n",
			"data: " + head + "\"choices\":[]," + usageLine + "\n",
			"data: [DONE]\n",
		},
	}
	for name, pieces := range cases {
		for _, asked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, include_usage=%v", name, asked), func(t *testing.T) {
				t.Parallel()
				g := MustOpenGateway(t, gatewayConfig{})
				g.MustCreateChannel(t, relaytest.NewChat(t, "sk-lines", piecesSSE(pieces...)), miniModel, nil)
				_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
				res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hi", asked))
				content, usages := streamedParts(t, res.Body)
				if content != "Hello world" {
					t.Errorf("content %q", content)
				}
				if asked && (len(usages) != 1 || usages[0].PromptTokens != 100 || usages[0].CompletionTokens != 40) {
					t.Errorf("usage chunks %+v, want the upstream's 100/40 once", usages)
				}
				if !asked && len(usages) != 0 {
					t.Errorf("usage chunks %+v for a client that did not ask", usages)
				}
				if l := g.oneLog(t); l.PromptTokens != 100 || l.CompletionTokens != 40 {
					t.Errorf("billed %d/%d, want the upstream's 100/40", l.PromptTokens, l.CompletionTokens)
				}
			})
		}
	}
}

// A provider that reports the prompt in a usage-only chunk before the
// answer: a client that asked for usage gets one usage chunk, at the end,
// with the figures billed (the upstream's final one when it sends it, else
// the gateway's, with the completion counted).
func TestStream_EarlyUsageOnlyChunk(t *testing.T) {
	t.Parallel()
	const head = `{"id":"up","object":"chat.completion.chunk","model":"gpt-4o-mini",`
	early := "data: " + head + `"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":0,"total_tokens":100}}` + "\n\n"
	words := "data: " + head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"}}]}` + "\n\n" +
		"data: " + head + `"choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"stop"}]}` + "\n\n"
	final := "data: " + head + `"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":40,"total_tokens":140}}` + "\n\n"
	for name, tc := range map[string]struct {
		pieces     []string
		completion int
	}{
		"with a final usage":    {[]string{early, words, final, "data: [DONE]\n\n"}, 40},
		"without a final usage": {[]string{early, words, "data: [DONE]\n\n"}, 2},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			g.MustCreateChannel(t, relaytest.NewChat(t, "sk-early", piecesSSE(tc.pieces...)), miniModel, nil)
			_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
			res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hi", true))
			content, usages := streamedParts(t, res.Body)
			if content != "Hello world" {
				t.Errorf("content %q", content)
			}
			l := g.oneLog(t)
			if l.PromptTokens != 100 || int(l.CompletionTokens) != tc.completion {
				t.Errorf("billed %d/%d, want 100/%d", l.PromptTokens, l.CompletionTokens, tc.completion)
			}
			if len(usages) != 1 || usages[0].PromptTokens != 100 || usages[0].CompletionTokens != tc.completion {
				t.Errorf("usage chunks %+v, want one with the figures billed (100/%d)", usages, tc.completion)
			}
		})
	}
}

// An event stream the upstream labels application/json is relayed and
// billed as the stream it is; a JSON document stays the upstream's failure.
func TestStream_EventsLabelledJSON(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-json-label", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "\n"+`data: {"id":"up","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"}}]}`+"\n\n")
		io.WriteString(w, `data: {"id":"up","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":1,"total_tokens":8}}`+"\n\ndata: [DONE]\n\n")
	})
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hi", false))
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if content, _ := streamedParts(t, res.Body); content != "Hello" {
		t.Errorf("content %q", content)
	}
	if l := g.oneLog(t); l.PromptTokens != 7 || l.CompletionTokens != 1 {
		t.Errorf("billed %d/%d, want 7/1", l.PromptTokens, l.CompletionTokens)
	}
}

// An upstream without blank lines whose lines arrive apart, one of them
// not JSON and one longer than a read: each line reaches the client as an
// event of its own and the upstream's usage is billed.
func TestStream_NoBlankLinesArrivingApart(t *testing.T) {
	t.Parallel()
	const head = `{"id":"up","object":"chat.completion.chunk","model":"gpt-4o-mini",`
	long := strings.Repeat("a", 20<<10)
	pieces := []string{
		"data: processing\n",
		"data: " + head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"` + long + `"}}]}` + "\n",
		"data: " + head + `"choices":[{"index":0,"delta":{"content":" end"},"finish_reason":"stop"}]}` + "\n",
		"data: " + head + `"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":40,"total_tokens":140}}` + "\n",
		"data: [DONE]\n",
	}
	g := MustOpenGateway(t, gatewayConfig{})
	g.MustCreateChannel(t, relaytest.NewChat(t, "sk-apart", piecesSSE(pieces...)), miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hi", true))
	events := sseJoined(res.Body)
	wantDoneLast(t, events)
	var content strings.Builder
	var usages []relaytest.Usage
	for _, e := range events[:len(events)-1] {
		if e == "processing" {
			continue
		}
		var ev relaytest.StreamEvent
		if err := json.Unmarshal([]byte(e), &ev); err != nil {
			t.Fatalf("event of %d bytes: %v", len(e), err)
		}
		for _, c := range ev.Choices {
			content.WriteString(c.Delta.Content)
		}
		if ev.Usage != nil {
			usages = append(usages, *ev.Usage)
		}
	}
	if content.String() != long+" end" {
		t.Errorf("content of %d bytes, want %d", content.Len(), len(long)+4)
	}
	if len(usages) != 1 || usages[0].PromptTokens != 100 || usages[0].CompletionTokens != 40 {
		t.Errorf("usage chunks %+v, want the upstream's 100/40 once", usages)
	}
	if l := g.oneLog(t); l.PromptTokens != 100 || l.CompletionTokens != 40 {
		t.Errorf("billed %d/%d, want 100/40", l.PromptTokens, l.CompletionTokens)
	}
}

// closeDelimited answers a stream as an HTTP/1.0 server may: no length, no
// chunks, the body ended by closing the connection after body.
func closeDelimited(body string) relaytest.Handler {
	return func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		io.WriteString(conn, "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"+body)
	}
}

// A stream whose body ends inside an event, its JSON still open, was cut,
// even when the body is delimited by the connection's close and so ends
// without an error of its framing: the client gets the events before it
// and a cut connection, not the broken part followed by [DONE] as if the
// stream had ended; a cut inside the first event is the upstream's
// failure. A last line whose JSON closed is whole without its newline.
func TestStream_EndInsideAnEventIsACut(t *testing.T) {
	t.Parallel()
	chunk, _ := json.Marshal(relaytest.Chunk(miniModel, "hello there"))
	one := "data: " + string(chunk) + "\n\n"
	part := "data: " + string(chunk)[:40]
	t.Run("after an event", func(t *testing.T) {
		t.Parallel()
		g := MustOpenGateway(t, gatewayConfig{})
		g.MustCreateChannel(t, relaytest.NewChat(t, "sk-cut", closeDelimited(one+part)), miniModel, nil)
		_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
		res, err := g.do(t.Context(), key, "/v1/chat/completions", streamChat(miniModel, "hi", false))
		if !errors.Is(err, io.ErrUnexpectedEOF) || res.Status != http.StatusOK {
			t.Fatalf("status %d, err %v; want 200 and a cut connection: %s", res.Status, err, res.Body)
		}
		if events := relaytest.Events(res.Body); len(events) != 1 || contentOf(t, events) != "hello there" {
			t.Fatalf("events = %q, want the whole chunk alone", events)
		}
		if l := g.oneLog(t); l.CompletionTokens != 2 {
			t.Fatalf("billed %d completion tokens, want the 2 that came", l.CompletionTokens)
		}
	})
	t.Run("inside the first event", func(t *testing.T) {
		t.Parallel()
		g := MustOpenGateway(t, gatewayConfig{})
		g.MustCreateChannel(t, relaytest.NewChat(t, "sk-cut", closeDelimited(part)), miniModel, nil)
		_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
		res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hi", false))
		res.wantError(t, http.StatusBadGateway, "read_response_failed")
		if logs := g.consumeLogs(t, "alice"); len(logs) != 0 {
			t.Fatalf("%d consume logs, want none", len(logs))
		}
	})
	t.Run("last line without its newline", func(t *testing.T) {
		t.Parallel()
		g := MustOpenGateway(t, gatewayConfig{})
		g.MustCreateChannel(t, relaytest.NewChat(t, "sk-cut", closeDelimited(one+"data: "+string(chunk))), miniModel, nil)
		_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
		res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hi", false))
		events := relaytest.Events(res.Body)
		if res.Status != http.StatusOK || len(events) != 3 || events[2] != "[DONE]" {
			t.Fatalf("status %d, events %q; want both chunks and [DONE]", res.Status, events)
		}
	})
}

// eventStream is a stream of n events of content and a usage event, last
// as OpenAI sends it or first, then [DONE].
func eventStream(n int, usageFirst bool) []byte {
	var b strings.Builder
	usage, _ := json.Marshal(relaytest.UsageChunk(miniModel, 5, n))
	if usageFirst {
		fmt.Fprintf(&b, "data: %s\n\n", usage)
	}
	for range n {
		data, _ := json.Marshal(relaytest.Chunk(miniModel, " hello"))
		fmt.Fprintf(&b, "data: %s\n\n", data)
	}
	if !usageFirst {
		fmt.Fprintf(&b, "data: %s\n\n", usage)
	}
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// streamAllocs returns the allocations, in the whole process (the fake
// upstream and the client included), of a stream call answered with a and
// of one answered with b. The upstream writes each answer in one piece and
// the client reads into a buffer of its own, so that only the gateway's
// work differs between the two.
func streamAllocs(t *testing.T, a, b []byte) (aAllocs, bAllocs float64) {
	t.Helper()
	if raceOn {
		t.Skip("allocations are not counted under the race detector: sync.Pool drops what it is given at random")
	}
	g := MustOpenGateway(t, gatewayConfig{})
	answers := map[string][]byte{"a": a, "b": b}
	up := relaytest.NewChat(t, "sk-events", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if bytes.Contains(req.Body, []byte(`"b"`)) {
			w.Write(answers["b"])
		} else {
			w.Write(answers["a"])
		}
	})
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	buf := make([]byte, 32<<10)
	bodies := map[string][]byte{}
	for content := range answers {
		bodies[content], _ = json.Marshal(streamChat(miniModel, content, false))
	}
	call := func(content string) {
		req, _ := http.NewRequest(http.MethodPost, g.srv.URL+"/v1/chat/completions", bytes.NewReader(bodies[content]))
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.CopyBuffer(io.Discard, struct{ io.Reader }{res.Body}, buf)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	call("a")
	call("b")
	aAllocs = testing.AllocsPerRun(20, func() { call("a") })
	bAllocs = testing.AllocsPerRun(20, func() { call("b") })
	return aAllocs, bAllocs
}

// Events pass to the client without an allocation of their own: the bytes
// written around them are made once, not converted at every write.
func TestStream_EventsPassWithoutAllocating(t *testing.T) {
	shortAllocs, longAllocs := streamAllocs(t, eventStream(40, false), eventStream(300, false))
	if perEvent := (longAllocs - shortAllocs) / 260; perEvent > 0.5 {
		t.Errorf("%.2f allocations an event (a stream of 300 events %v, one of 40 %v)", perEvent, longAllocs, shortAllocs)
	}
}

// A stream whose usage comes in its last event keeps every event before it
// for a local count. The buffer that holds them is reused from one stream
// to the next, not grown anew event by event: such a stream costs about as
// many allocations as the same events after their usage, which are not
// kept.
func TestStream_KeptEventsReuseABuffer(t *testing.T) {
	notKept, kept := streamAllocs(t, eventStream(200, true), eventStream(200, false))
	if kept-notKept > 3 {
		t.Errorf("200 events kept took %v allocations, the same events not kept %v: the buffer of kept events grows in every stream", kept, notKept)
	}
}
