package relay_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"gateway/relay/relaytest"
	"gateway/store"
)

// chatEither answers a chat request, streamed or not, with "fine" and usage.
func chatEither(model string) relaytest.Handler {
	return func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		if !req.Stream() {
			relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion(model, "fine", relaytest.NewUsage(10, 4)))
			return
		}
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(model, "fine"))
		sse.Send(relaytest.FinishChunk(model, "stop"))
		if req.IncludeUsage() {
			sse.Send(relaytest.UsageChunk(model, 10, 4))
		}
		sse.Done()
	}
}

// A 200 answer that is an error, an HTML page or an empty stream is the
// upstream's failure: the next tier answers, and only that channel is
// charged, once.
func TestFailover_OKButFailed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		stream bool
		answer relaytest.Handler
	}{
		{"error object", false, func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			relaytest.WriteJSON(w, http.StatusOK, map[string]any{"error": map[string]any{"message": "upstream overloaded", "type": "server_error"}})
		}},
		{"html page", false, func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>Welcome to nginx!</body></html>")
		}},
		{"stream answered with an error object", true, func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			relaytest.WriteJSON(w, http.StatusOK, map[string]any{"error": map[string]any{"message": "upstream overloaded", "type": "server_error"}})
		}},
		{"stream whose first event is an error", true, func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			sse := relaytest.NewSSE(w)
			sse.Send(map[string]any{"error": map[string]any{"message": "upstream overloaded", "type": "server_error"}})
			sse.Done()
		}},
		{"stream answered with an html page", true, func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<html><body>Welcome to nginx!</body></html>")
		}},
		{"empty stream", true, func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "1"}})
			bad := relaytest.NewChat(t, "sk-bad", tc.answer)
			good := relaytest.NewChat(t, "sk-good", chatEither(ratioModel))
			c1 := g.tier(t, bad, ratioModel, 10, nil)
			c2 := g.tier(t, good, ratioModel, 0, nil)
			tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
			before := g.balances(t, "alice", tok.ID, c1, c2)

			body := chat(ratioModel, "hi")
			if tc.stream {
				body["stream"] = true
			}
			res := g.post(t, key, "/v1/chat/completions", body)
			if res.Status != http.StatusOK || !strings.Contains(string(res.Body), "fine") {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if bad.Hits() != 1 || good.Hits() != 1 {
				t.Fatalf("hits: failing %d, answering %d", bad.Hits(), good.Hits())
			}
			logs := g.consumeLogs(t, "alice")
			if len(logs) != 1 || logs[0].ChannelID != c2.ID {
				t.Fatalf("consume logs: %+v", logs)
			}
			after := g.balances(t, "alice", tok.ID, c1, c2)
			wantMoved(t, before, after, true, c2.ID, logs[0].Quota, 1)
			if after.Channels[c1.ID] != before.Channels[c1.ID] {
				t.Errorf("the failing channel was charged")
			}
		})
	}

	// With no channel left, the client gets the upstream's message and nothing is charged.
	t.Run("no channel left", func(t *testing.T) {
		t.Parallel()
		g := MustOpenGateway(t, gatewayConfig{})
		bad := relaytest.NewChat(t, "sk-bad", cases[0].answer)
		g.tier(t, bad, ratioModel, 0, nil)
		tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
		before := g.balances(t, "alice", tok.ID)
		e := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi")).wantError(t, http.StatusInternalServerError, "bad_response")
		if !strings.Contains(e.Error.Message, "upstream overloaded") {
			t.Fatalf("message %q", e.Error.Message)
		}
		if after := g.balances(t, "alice", tok.ID); after.UserQuota != before.UserQuota || after.TokenRemain != before.TokenRemain {
			t.Fatalf("balances moved: %+v -> %+v", before, after)
		}
		if logs := g.consumeLogs(t, "alice"); len(logs) != 0 {
			t.Fatalf("%d consume logs", len(logs))
		}
	})
}

// A non-stream client that leaves while the upstream works is billed its
// prompt (counted locally), once, as a stream that ends before its first
// event is: the provider processed it.
func TestNonStream_ClientDisconnectBillsPrompt(t *testing.T) {
	t.Parallel()
	clientLeavesBillsPrompt(t, func(w http.ResponseWriter) {}, 0)
}

// A client that leaves while the answer's body is on its way (the headers
// came) is billed its prompt too, once: the provider processed it. Nothing
// stays held.
func TestNonStream_ClientLeavesDuringTheBodyBillsPrompt(t *testing.T) {
	t.Parallel()
	clientLeavesBillsPrompt(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"id":"chatcmpl-1","object":"chat.completion","choices":[`))
		w.(http.Flusher).Flush()
	}, 50*time.Millisecond) // the relay is reading the body
}

// clientLeavesBillsPrompt has an upstream start its answer with begin and
// then wait, the client leave after wait, and checks that the upstream call
// is cancelled and the call billed its prompt alone, once, with nothing
// left held.
func clientLeavesBillsPrompt(t *testing.T, begin func(w http.ResponseWriter), wait time.Duration) {
	g := MustOpenGateway(t, gatewayConfig{})
	begun := make(chan struct{})
	cancelled := make(chan struct{})
	up := relaytest.NewChat(t, "sk-slow", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		begin(w)
		close(begun)
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(10 * time.Second):
			t.Error("the upstream request was never cancelled")
		}
	})
	ch := g.MustCreateChannel(t, up, miniModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
	before := g.balances(t, "alice", tok.ID, ch)

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-begun
		time.Sleep(wait)
		cancel()
	}()
	if _, err := g.do(ctx, key, "/v1/chat/completions", chat(miniModel, "a question that takes long to answer")); err == nil {
		t.Fatal("the call finished although its client left")
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream request was not cancelled")
	}
	var logs []*store.Log
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if logs = g.consumeLogs(t, "alice"); len(logs) > 0 {
			break
		}
	}
	if len(logs) != 1 || logs[0].PromptTokens == 0 || logs[0].CompletionTokens != 0 {
		t.Fatalf("consume logs: %+v", logs)
	}
	if want := ratioQuota(int(logs[0].PromptTokens), 0, miniModelMR, miniModelCR, 1); logs[0].Quota != want {
		t.Errorf("the log charged %d, want the prompt's %d", logs[0].Quota, want)
	}
	time.Sleep(50 * time.Millisecond) // nothing else may follow
	if n := len(g.consumeLogs(t, "alice")); n != 1 {
		t.Fatalf("%d consume logs, want 1", n)
	}
	after := g.balances(t, "alice", tok.ID, ch)
	wantMoved(t, before, after, true, ch.ID, logs[0].Quota, 1)
	g.wantNothingHeld(t, "alice", tok.ID, after)
}
