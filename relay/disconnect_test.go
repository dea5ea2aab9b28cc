package relay_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/relay/tokenizer"
	"gateway/store"
)

// A client that leaves in the middle of a stream: the gateway cancels the
// upstream request, and bills once for what was produced up to then,
// counted locally since the upstream never got to send its usage.
func TestStream_ClientDisconnect(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	const maxChunks = 400 // 8 s at 20 ms: far longer than the test runs
	var sent atomic.Int64
	upstreamCancelled := make(chan struct{})
	up := relaytest.NewChat(t, "sk-slow", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := range maxChunks {
			word := " hello"
			if i == 0 {
				word = "hello"
			}
			if sse.Send(relaytest.Chunk(miniModel, word)) != nil {
				break
			}
			sent.Add(1)
			select {
			case <-r.Context().Done():
				close(upstreamCancelled)
				return
			case <-tick.C:
			}
		}
		t.Error("the upstream streamed to the end: its request was never cancelled")
		sse.Done()
	})
	ch := g.MustCreateChannel(t, up, miniModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
	before := g.balances(t, "alice", tok.ID, ch)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"count forever"}]}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	// Read five events, then hang up.
	const seen = 5
	rd := bufio.NewReader(resp.Body)
	for n := 0; n < seen; {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("read after %d events: %v", n, err)
		}
		if strings.HasPrefix(line, "data: ") {
			if strings.Contains(line, "[DONE]") {
				t.Fatal("stream ended early")
			}
			n++
		}
	}
	cancel()
	resp.Body.Close()

	select {
	case <-upstreamCancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream request was not cancelled after the client left")
	}
	var logs []*store.Log
	eventually(t, 10*time.Second, "the consume log", func() bool {
		logs = g.consumeLogs(t, "alice")
		return len(logs) > 0
	})
	// One log; the balances below show there was one charge only.
	if len(logs) != 1 {
		t.Fatalf("consume logs = %d, want 1", len(logs))
	}
	l := logs[0]
	produced := sent.Load()
	// Every chunk is one token. The gateway read at least what the client
	// saw and at most what the upstream wrote.
	if l.CompletionTokens < seen || l.CompletionTokens > produced {
		t.Errorf("completion_tokens = %d, want between %d (seen by the client) and %d (sent upstream)", l.CompletionTokens, seen, produced)
	}
	wantPrompt := countChat(miniModel, []tokenizer.Message{{Role: "user", Content: "count forever"}})
	if l.PromptTokens != int64(wantPrompt) {
		t.Errorf("prompt_tokens = %d, want the local count %d", l.PromptTokens, wantPrompt)
	}
	if want := ratioQuota(int(l.PromptTokens), int(l.CompletionTokens), miniModelMR, miniModelCR, 1); l.Quota != want {
		t.Errorf("quota = %d, want %d", l.Quota, want)
	}
	if !l.IsStream {
		t.Error("is_stream = false")
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, l.Quota, 1)
}

// An upstream that stops sending in the middle of a stream for longer than
// StreamIdleTimeout: the gateway cuts the client's connection after what
// came, without [DONE] (the client can tell it was cut), cancels the
// upstream request, and bills what came.
func TestStream_IdleTimeout(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Relay: relay.Config{StreamIdleTimeout: time.Second}})
	upstreamCancelled := make(chan struct{})
	up := relaytest.NewChat(t, "sk-stall", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(miniModel, "hello"))
		sse.Send(relaytest.Chunk(miniModel, " hello"))
		select {
		case <-r.Context().Done():
			close(upstreamCancelled)
		case <-time.After(20 * time.Second):
			t.Error("the stalled upstream request was never cancelled")
		}
	})
	ch := g.MustCreateChannel(t, up, miniModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
	before := g.balances(t, "alice", tok.ID, ch)

	res, err := g.do(context.Background(), key, "/v1/chat/completions", streamChat(miniModel, "stall", false))
	if !errors.Is(err, io.ErrUnexpectedEOF) || res.Status != 200 {
		t.Fatalf("status %d, err %v; want 200 and a cut connection", res.Status, err)
	}
	events := relaytest.Events(res.Body)
	if len(events) != 2 || contentOf(t, events) != "hello hello" {
		t.Errorf("events = %q, want the two chunks and no [DONE]", events)
	}
	select {
	case <-upstreamCancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream request was not cancelled")
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 || logs[0].CompletionTokens != 2 {
		t.Fatalf("logs = %+v, want one with 2 completion tokens", logs)
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, logs[0].Quota, 1)
}

// Before its first data a stream waits as long as the first-byte timeout
// allows, not the idle timeout: a model that sends its headers at once and
// its first token later is served. With the first-byte timeout off, the
// idle timeout applies from the headers on.
func TestStream_FirstDataWaitsForTheFirstByteTimeout(t *testing.T) {
	t.Parallel()
	late := func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w) // headers at once
		select {
		case <-time.After(1500 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		sse.Send(relaytest.Chunk(miniModel, "late"))
		sse.Send(relaytest.UsageChunk(miniModel, 3, 1))
		sse.Done()
	}
	t.Run("first-byte timeout longer than idle", func(t *testing.T) {
		t.Parallel()
		g := MustOpenGateway(t, gatewayConfig{Relay: relay.Config{StreamIdleTimeout: 500 * time.Millisecond, FirstByteTimeout: 30 * time.Second}})
		g.MustCreateChannel(t, relaytest.NewChat(t, "sk-late", late), miniModel, nil)
		_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
		res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "wait", false))
		if res.Status != http.StatusOK {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
		events := relaytest.Events(res.Body)
		wantDoneLast(t, events)
		if contentOf(t, events) != "late" {
			t.Errorf("events %q", events)
		}
		if l := g.oneLog(t); l.PromptTokens != 3 || l.CompletionTokens != 1 {
			t.Errorf("billed %d/%d, want 3/1", l.PromptTokens, l.CompletionTokens)
		}
	})
	t.Run("first-byte timeout off", func(t *testing.T) {
		t.Parallel()
		g := MustOpenGateway(t, gatewayConfig{Relay: relay.Config{StreamIdleTimeout: 500 * time.Millisecond, FirstByteTimeout: -1}})
		g.MustCreateChannel(t, relaytest.NewChat(t, "sk-late", late), miniModel, nil)
		_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
		res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "wait", false))
		if res.Status != http.StatusBadGateway || !strings.Contains(string(res.Body), "read_response_failed") {
			t.Fatalf("status %d: %s; want the idle timeout's 502", res.Status, res.Body)
		}
		if n := len(g.consumeLogs(t, "alice")); n != 0 {
			t.Errorf("%d consume logs for a stream that sent nothing", n)
		}
	})
}

// Each event reaches the client as soon as the upstream sends it: the
// upstream here sends the next event only after the client has read the
// previous one, so a gateway that held anything back would stall. A burst
// of events that arrive together is passed on whole as well.
func TestStream_EventsAreNotHeldBack(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	const lockstep = 5
	read := make(chan struct{})
	up := relaytest.NewChat(t, "sk-lockstep", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		for i := range lockstep {
			if sse.Send(relaytest.Chunk(miniModel, fmt.Sprintf("w%d ", i))) != nil {
				return
			}
			select {
			case <-read:
			case <-time.After(10 * time.Second):
				t.Errorf("the client never read event %d", i)
				return
			case <-r.Context().Done():
				return
			}
		}
		// A burst in one write, then a pause before the end.
		var burst strings.Builder
		for i := range 3 {
			data, _ := json.Marshal(relaytest.Chunk(miniModel, fmt.Sprintf("b%d ", i)))
			fmt.Fprintf(&burst, "data: %s\n\n", data)
		}
		w.Write([]byte(burst.String()))
		w.(http.Flusher).Flush()
		select {
		case <-read:
		case <-time.After(10 * time.Second):
			t.Error("the client never got the burst")
		}
		sse.Send(relaytest.UsageChunk(miniModel, 3, lockstep+3))
		sse.Done()
	})
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"step"}]}`
	req, _ := http.NewRequest(http.MethodPost, g.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	next := func() string {
		t.Helper()
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if strings.HasPrefix(line, "data: ") {
				return line
			}
		}
	}
	ack := func() {
		t.Helper()
		select {
		case read <- struct{}{}:
		case <-time.After(10 * time.Second):
			t.Fatal("the upstream stopped waiting: an event was held back")
		}
	}
	for i := range lockstep {
		if line := next(); !strings.Contains(line, fmt.Sprintf("w%d ", i)) {
			t.Fatalf("event %d = %q", i, line)
		}
		ack()
	}
	for i := range 3 {
		if line := next(); !strings.Contains(line, fmt.Sprintf("b%d ", i)) {
			t.Fatalf("burst event %d = %q", i, line)
		}
	}
	ack()
	if line := next(); !strings.Contains(line, "[DONE]") {
		t.Fatalf("last event = %q", line)
	}
}

// flushWatch records, at every flush, how many events the client has been
// sent so far.
type flushWatch struct {
	http.ResponseWriter
	events  int
	flushes []int
}

func (w *flushWatch) Write(p []byte) (int, error) {
	w.events += strings.Count(string(p), "data:")
	return w.ResponseWriter.Write(p)
}

func (w *flushWatch) Flush() {
	w.flushes = append(w.flushes, w.events)
	w.ResponseWriter.(http.Flusher).Flush()
}

// The first event of a stream leaves at once even when the upstream sent
// many in one write: the rest of the burst follows in one more flush.
func TestStream_FirstEventLeavesAtOnce(t *testing.T) {
	t.Parallel()
	var watch *flushWatch
	done := make(chan struct{})
	g := MustOpenGateway(t, gatewayConfig{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/chat/completions" {
				h.ServeHTTP(w, r)
				return
			}
			watch = &flushWatch{ResponseWriter: w}
			h.ServeHTTP(watch, r)
			close(done)
		})
	}})
	up := relaytest.NewChat(t, "sk-burst", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		var burst strings.Builder
		for i := range 10 {
			data, _ := json.Marshal(relaytest.Chunk(miniModel, fmt.Sprintf("b%d ", i)))
			fmt.Fprintf(&burst, "data: %s\n\n", data)
		}
		data, _ := json.Marshal(relaytest.UsageChunk(miniModel, 3, 10))
		fmt.Fprintf(&burst, "data: %s\n\ndata: [DONE]\n\n", data)
		w.Write([]byte(burst.String()))
	})
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
	res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "burst", false))
	<-done
	if n := strings.Count(string(res.Body), "data:"); res.Status != http.StatusOK || n != 11 {
		t.Fatalf("status %d, %d events (want 10 and [DONE]):\n%s", res.Status, n, res.Body)
	}
	if len(watch.flushes) == 0 || watch.flushes[0] != 1 {
		t.Fatalf("events sent at each flush = %v, want the first flush after the first event", watch.flushes)
	}
	if len(watch.flushes) > 3 {
		t.Fatalf("events sent at each flush = %v: the burst was flushed event by event", watch.flushes)
	}
}

// A stream client that stops reading counts as gone once its writes stall
// for ClientWriteTimeout: the upstream call is stopped and what was
// produced is billed once, instead of the handler waiting for ever.
func TestStream_ClientThatStopsReading(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Relay: relay.Config{ClientWriteTimeout: 300 * time.Millisecond}})
	stopped := make(chan struct{})
	up := relaytest.NewChat(t, "sk-flood", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		big := strings.Repeat(" word", 2000)
		for {
			select {
			case <-r.Context().Done():
				close(stopped)
				return
			default:
			}
			if sse.Send(relaytest.Chunk(ratioModel, big)) != nil {
				close(stopped)
				return
			}
		}
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	g.postUnread(t, key, `{"model":"`+ratioModel+`","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	// Never read: the socket buffers fill and the gateway's writes stall.
	// The bounds are generous: megabytes pass before the buffers fill, and
	// what the upstream sent is then counted locally (seconds on a loaded
	// machine under -race).
	select {
	case <-stopped:
	case <-time.After(60 * time.Second):
		t.Fatal("the upstream call was not stopped")
	}
	eventually(t, 60*time.Second, "the charge", func() bool { return len(g.consumeLogs(t, "alice")) == 1 })
	if l := g.consumeLogs(t, "alice")[0]; l.CompletionTokens == 0 {
		t.Fatalf("billed %+v; want what was produced", l)
	}
}

// A client that reads slowly holds the gateway's writes back (TCP
// backpressure) while the upstream has long sent what follows: the
// gateway is not reading the upstream then, and the upstream is not idle.
// A pause shorter than ClientWriteTimeout must not end the stream as an
// idle upstream: the client gets every event and [DONE], billed the
// upstream's usage.
func TestStream_SlowReaderIsNotAnIdleUpstream(t *testing.T) {
	t.Parallel()
	// The idle timeout leaves room for a scheduling stall of the race
	// detector on a loaded machine between two reads of the upstream; the
	// client's pause is four times as long.
	g := MustOpenGateway(t, gatewayConfig{Relay: relay.Config{StreamIdleTimeout: time.Second}})
	const events = 3000
	pad := strings.Repeat("x", 10<<10)
	up := relaytest.NewChat(t, "sk-bulk", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		for range events {
			ev := relaytest.Chunk(ratioModel, "w ")
			ev["pad"] = pad // not text: cheap to count
			if sse.Send(ev) != nil {
				return
			}
		}
		sse.Send(relaytest.UsageChunk(ratioModel, 7, events))
		sse.Done()
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 100_000_000})
	body, _ := json.Marshal(streamChat(ratioModel, "bulk", false))
	req, _ := http.NewRequest(http.MethodPost, g.srv.URL+"/v1/chat/completions", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReaderSize(resp.Body, 64<<10)
	if _, err := rd.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	// The client pauses, far below the write timeout (60 s) but above the
	// idle timeout: the socket buffers fill and the gateway's write waits.
	time.Sleep(4 * time.Second)
	rest, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	evs := relaytest.Events(rest)
	if len(evs) == 0 || evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("stream cut after %d more events, no [DONE]: the client's pause was taken for an idle upstream", len(evs))
	}
	if n := len(evs); n != events {
		t.Errorf("%d events after the first, want %d (the rest and [DONE])", n, events)
	}
	eventually(t, 10*time.Second, "the charge", func() bool { return len(g.consumeLogs(t, "alice")) == 1 })
	if l := g.consumeLogs(t, "alice")[0]; l.CompletionTokens != events || l.PromptTokens != 7 {
		t.Errorf("billed prompt %d completion %d, want 7 and %d", l.PromptTokens, l.CompletionTokens, events)
	}
}

// A client that never reads a large non-stream answer (speech, a long
// completion, many embeddings) counts as gone after ClientWriteTimeout, as
// a stream's does: the handler must not hold its goroutine, its
// connection and the buffered answer for ever.
func TestBody_ClientThatNeverReads(t *testing.T) {
	t.Parallel()
	done := make(chan struct{}, 1)
	g := MustOpenGateway(t, gatewayConfig{
		Relay: relay.Config{ClientWriteTimeout: 300 * time.Millisecond},
		Wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(w, r)
				if r.URL.Path == "/v1/chat/completions" {
					done <- struct{}{}
				}
			})
		},
	})
	// Far more than the socket buffers of both ends hold.
	big := strings.Repeat("word ", 6<<20)
	up := relaytest.NewChat(t, "sk-big", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion(ratioModel, big, relaytest.NewUsage(3, 5)))
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	g.postUnread(t, key, `{"model":"`+ratioModel+`","messages":[{"role":"user","content":"hi"}]}`)
	// Never read.
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the handler still writes to a client that has read nothing for 20 s (ClientWriteTimeout 300ms)")
	}
}

// postUnread sends a chat completion over a raw connection that the test
// then does not read, so the gateway's writes stall once the socket
// buffers are full. The connection closes with the test.
func (g *gateway) postUnread(t *testing.T, key, body string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", key, len(body), body)
	return conn
}
