// Package relaytest provides fake upstream providers for tests of the relay:
// each fake is its own httptest.Server speaking OpenAI's wire format (JSON
// answers, OpenAI error objects and server-sent events), in the style of
// miniflux's readeck test doubles. A fake checks what every upstream double
// must check (the route and the channel key) and records each request, so a
// test can count hits per upstream and look at the translated body; the
// per-test handler checks the rest and replies.
package relaytest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Request is one request a fake upstream received, its body decoded.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// JSON is the body decoded as a JSON object; nil when it is not one.
	JSON map[string]any
}

// Model returns the body's "model".
func (r *Request) Model() string {
	s, _ := r.JSON["model"].(string)
	return s
}

// Stream reports the body's "stream".
func (r *Request) Stream() bool {
	b, _ := r.JSON["stream"].(bool)
	return b
}

// IncludeUsage reports the body's stream_options.include_usage.
func (r *Request) IncludeUsage() bool {
	opts, _ := r.JSON["stream_options"].(map[string]any)
	b, _ := opts["include_usage"].(bool)
	return b
}

// Handler replies to one request; req is the same request already read and
// decoded (r.Body is empty).
type Handler func(w http.ResponseWriter, r *http.Request, req *Request)

// Routes maps "METHOD /path" to its handler.
type Routes map[string]Handler

// Upstream is a fake provider.
type Upstream struct {
	*httptest.Server
	// Key is the channel key the fake expects as "Authorization: Bearer <Key>".
	Key string

	tb     testing.TB
	routes Routes
	hits   atomic.Int64
	mu     sync.Mutex
	reqs   []*Request
}

// ChatPath is the route of chat completions.
const ChatPath = "POST /v1/chat/completions"

// New starts a fake upstream serving routes; it is closed when the test ends.
// Every request must carry "Authorization: Bearer <key>" and match a route;
// anything else fails the test (and gets a 404 or 401, so that the gateway
// under test sees a failure too).
func New(tb testing.TB, key string, routes Routes) *Upstream {
	tb.Helper()
	u := &Upstream{Key: key, tb: tb, routes: routes}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	tb.Cleanup(u.Server.Close)
	return u
}

// NewChat starts a fake upstream that serves chat completions only.
func NewChat(tb testing.TB, key string, h Handler) *Upstream {
	tb.Helper()
	return New(tb, key, Routes{ChatPath: h})
}

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	u.hits.Add(1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// The gateway gave up on the request while it was being sent.
		return
	}
	req := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if len(body) > 0 {
		_ = json.Unmarshal(body, &req.JSON)
	}
	u.mu.Lock()
	u.reqs = append(u.reqs, req)
	u.mu.Unlock()
	if got, want := r.Header.Get("Authorization"), "Bearer "+u.Key; got != want {
		u.tb.Errorf("upstream %s: Authorization = %q, want %q", u.URL, got, want)
		WriteError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "fake upstream: wrong key")
		return
	}
	h := u.routes[r.Method+" "+r.URL.Path]
	if h == nil {
		u.tb.Errorf("upstream %s: unexpected %s %s", u.URL, r.Method, r.URL.Path)
		WriteError(w, http.StatusNotFound, "invalid_request_error", "unknown_url", "fake upstream: no such route")
		return
	}
	h(w, r, req)
}

// Hits returns how many requests the fake received.
func (u *Upstream) Hits() int { return int(u.hits.Load()) }

// Requests returns the requests received so far.
func (u *Upstream) Requests() []*Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*Request(nil), u.reqs...)
}

// LastRequest returns the latest request, or nil.
func (u *Upstream) LastRequest() *Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.reqs) == 0 {
		return nil
	}
	return u.reqs[len(u.reqs)-1]
}

// WriteJSON writes v as a JSON answer.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

// WriteError writes OpenAI's error object.
func WriteError(w http.ResponseWriter, status int, typ, code, message string) {
	WriteJSON(w, status, map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": code}})
}

// Usage is OpenAI's usage object.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// NewUsage returns a usage with its total filled in.
func NewUsage(prompt, completion int) *Usage {
	return &Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

// Completion is a non-stream chat answer with one assistant message;
// usage nil leaves the field out.
func Completion(model, content string, usage *Usage) map[string]any {
	m := map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content},
		}},
		"system_fingerprint": "fp_fake",
	}
	if usage != nil {
		m["usage"] = usage
	}
	return m
}

// Embedding is an embeddings answer with one vector per input.
func Embedding(model string, inputs int, usage *Usage) map[string]any {
	data := make([]any, inputs)
	for i := range data {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": []float64{0.1, -0.2, 0.3}}
	}
	return map[string]any{"object": "list", "model": model, "data": data, "usage": usage}
}

// Chunk is a stream event carrying content.
func Chunk(model, content string) map[string]any {
	return map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}, "finish_reason": nil}},
	}
}

// ToolCallChunk is a stream event carrying one tool-call delta. The first
// delta of a call has its id and name; later ones only add arguments.
func ToolCallChunk(model string, index int, id, name, args string) map[string]any {
	fn := map[string]any{"arguments": args}
	call := map[string]any{"index": index, "function": fn}
	if id != "" {
		call["id"] = id
		call["type"] = "function"
		fn["name"] = name
	}
	return map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{call}}, "finish_reason": nil}},
	}
}

// FinishChunk is the event that ends the choice.
func FinishChunk(model, reason string) map[string]any {
	return map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": reason}},
	}
}

// UsageChunk is the usage-only event OpenAI sends last when asked with
// stream_options.include_usage: no choices, only usage.
func UsageChunk(model string, prompt, completion int) map[string]any {
	return map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
		"choices": []any{}, "usage": NewUsage(prompt, completion),
	}
}

// SSE writes server-sent events, flushing each.
type SSE struct {
	w http.ResponseWriter
	f http.Flusher
}

// NewSSE sends the headers of a 200 event stream.
func NewSSE(w http.ResponseWriter) *SSE {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	if f != nil {
		f.Flush()
	}
	return &SSE{w: w, f: f}
}

// Send writes one "data: <json>" event; an error means the reader is gone.
func (s *SSE) Send(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return s.raw("data: " + string(data) + "\n\n")
}

// Done writes "data: [DONE]".
func (s *SSE) Done() error { return s.raw("data: [DONE]\n\n") }

func (s *SSE) raw(text string) error {
	if _, err := io.WriteString(s.w, text); err != nil {
		return err
	}
	if s.f != nil {
		s.f.Flush()
	}
	return nil
}

// Events returns the data payloads of an SSE body in order ("[DONE]"
// included); lines other than data lines are skipped.
func Events(body []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if p, ok := strings.CutPrefix(line, "data:"); ok {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return out
}

// StreamEvent is the part of a chat stream event tests look at.
type StreamEvent struct {
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

// ParseEvent decodes one data payload.
func ParseEvent(payload string) (StreamEvent, error) {
	var ev StreamEvent
	err := json.Unmarshal([]byte(payload), &ev)
	if err != nil {
		return ev, fmt.Errorf("event %q: %w", payload, err)
	}
	return ev, nil
}
