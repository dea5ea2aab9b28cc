package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// MustStartServer starts a fake upstream for cfg on an httptest server.
func MustStartServer(tb testing.TB, cfg Config) (*Server, *httptest.Server) {
	tb.Helper()
	if err := cfg.Validate(); err != nil {
		tb.Fatal(err)
	}
	s := NewServer(cfg)
	ts := httptest.NewServer(s.Handler())
	tb.Cleanup(ts.Close)
	return s, ts
}

// MustPost posts body to url and returns the response with its body read.
func MustPost(tb testing.TB, url, body string) (*http.Response, []byte) {
	tb.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, b
}

var defaultConfig = Config{StreamChunks: 5, Usage: true}

// chatCompletion mirrors OpenAI's non-stream answer; pointers tell a
// missing field from a zero one.
type chatCompletion struct {
	ID      *string `json:"id"`
	Object  string  `json:"object"`
	Created int64   `json:"created"`
	Model   string  `json:"model"`
	Choices []struct {
		Index   *int `json:"index"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Delta *struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

func TestChatCompletion(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name       string
		cfg        Config
		body       string
		wantPrompt int
		wantUsage  bool
	}{
		{
			name:       "string content",
			cfg:        defaultConfig,
			body:       `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"12345678"},{"role":"user","content":"abcdefghijkl"}]}`,
			wantPrompt: 5, // 20 characters / 4
			wantUsage:  true,
		},
		{
			name:       "short prompt counts one",
			cfg:        defaultConfig,
			body:       `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			wantPrompt: 1,
			wantUsage:  true,
		},
		{
			name: "escapes and non-ASCII count as characters",
			cfg:  defaultConfig,
			// é, \n, \u00e9, 😀 as a surrogate pair, 😀 raw, and "\"" = 6, plus "ab" = 8.
			body:       `{"model":"m","messages":[{"role":"user","content":"é\n\u00e9\ud83d\ude00😀\"ab"}]}`,
			wantPrompt: 2,
			wantUsage:  true,
		},
		{
			name:       "array content sums text parts",
			cfg:        defaultConfig,
			body:       `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"abcdefgh"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"abcdefgh"}]}]}`,
			wantPrompt: 4,
			wantUsage:  true,
		},
		{
			name:      "usage off",
			cfg:       Config{StreamChunks: 5},
			body:      `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			wantUsage: false,
		},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			_, ts := MustStartServer(t, sc.cfg)
			resp, b := MustPost(t, ts.URL+"/v1/chat/completions", sc.body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			var got chatCompletion
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			if got.ID == nil || !strings.HasPrefix(*got.ID, "chatcmpl-") {
				t.Errorf("id = %v", got.ID)
			}
			if got.Object != "chat.completion" {
				t.Errorf("object = %q", got.Object)
			}
			if d := time.Since(time.Unix(got.Created, 0)); d < -time.Minute || d > time.Minute {
				t.Errorf("created = %d", got.Created)
			}
			var req struct{ Model string }
			json.Unmarshal([]byte(sc.body), &req)
			if got.Model != req.Model {
				t.Errorf("model = %q, want %q", got.Model, req.Model)
			}
			if len(got.Choices) != 1 {
				t.Fatalf("choices = %d", len(got.Choices))
			}
			ch := got.Choices[0]
			if ch.Index == nil || *ch.Index != 0 || ch.Message.Role != "assistant" || ch.Message.Content == "" {
				t.Errorf("choice = %+v", ch)
			}
			if ch.FinishReason == nil || *ch.FinishReason != "stop" {
				t.Errorf("finish_reason = %v", ch.FinishReason)
			}
			if !sc.wantUsage {
				if got.Usage != nil {
					t.Errorf("usage = %+v, want none", got.Usage)
				}
				return
			}
			if got.Usage == nil {
				t.Fatal("usage missing")
			}
			u := *got.Usage
			if u.PromptTokens != sc.wantPrompt || u.CompletionTokens != nonStreamCompletionTokens || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("usage = %+v, want prompt %d completion %d", u, sc.wantPrompt, nonStreamCompletionTokens)
			}
		})
	}
}

// readEvents reads the data lines of an event stream.
func readEvents(t *testing.T, r io.Reader) []string {
	t.Helper()
	var events []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line without data: %q", line)
		}
		events = append(events, data)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return events
}

func TestChatCompletionStream(t *testing.T) {
	t.Parallel()
	const body = `{"model":"gpt-4o-mini","stream":true%s,"messages":[{"role":"user","content":"abcdefghijklmnop"}]}`
	scenarios := []struct {
		name      string
		cfg       Config
		options   string
		wantUsage bool
	}{
		{name: "usage asked", cfg: defaultConfig, options: `,"stream_options":{"include_usage":true}`, wantUsage: true},
		{name: "usage not asked", cfg: defaultConfig, wantUsage: false},
		{name: "usage asked as false", cfg: defaultConfig, options: `,"stream_options":{"include_usage":false}`, wantUsage: false},
		{name: "usage off", cfg: Config{StreamChunks: 5}, options: `,"stream_options":{"include_usage":true}`, wantUsage: false},
		{name: "chunk interval", cfg: Config{StreamChunks: 3, ChunkInterval: time.Millisecond, Usage: true}, options: `,"stream_options":{"include_usage":true}`, wantUsage: true},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			_, ts := MustStartServer(t, sc.cfg)
			resp, b := MustPost(t, ts.URL+"/v1/chat/completions", strings.Replace(body, "%s", sc.options, 1))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type = %q", ct)
			}
			events := readEvents(t, strings.NewReader(string(b)))
			want := sc.cfg.StreamChunks + 2 // content, finish, [DONE]
			if sc.wantUsage {
				want++
			}
			if len(events) != want {
				t.Fatalf("%d events, want %d:\n%s", len(events), want, b)
			}
			if events[len(events)-1] != "[DONE]" {
				t.Errorf("last event = %q, want [DONE]", events[len(events)-1])
			}

			var chunks []chatCompletion
			for _, e := range events[:len(events)-1] {
				var c chatCompletion
				if err := json.Unmarshal([]byte(e), &c); err != nil {
					t.Fatalf("decode %s: %v", e, err)
				}
				if c.Object != "chat.completion.chunk" || c.ID == nil || c.Model != "gpt-4o-mini" {
					t.Errorf("chunk header = %s", e)
				}
				if c.ID != nil && chunks != nil && *c.ID != *chunks[0].ID {
					t.Errorf("chunk id %s differs from %s", *c.ID, *chunks[0].ID)
				}
				chunks = append(chunks, c)
			}

			var text strings.Builder
			for i, c := range chunks[:sc.cfg.StreamChunks] {
				if len(c.Choices) != 1 || c.Choices[0].Delta == nil || c.Choices[0].Delta.Content == nil {
					t.Fatalf("content chunk %d = %s", i, events[i])
				}
				if c.Choices[0].FinishReason != nil {
					t.Errorf("content chunk %d has finish_reason", i)
				}
				if (i == 0) != (c.Choices[0].Delta.Role == "assistant") {
					t.Errorf("content chunk %d role = %q", i, c.Choices[0].Delta.Role)
				}
				if c.Usage != nil {
					t.Errorf("content chunk %d has usage", i)
				}
				text.WriteString(*c.Choices[0].Delta.Content)
			}
			if got := len(strings.Fields(text.String())); got != sc.cfg.StreamChunks {
				t.Errorf("content %q has %d words, want %d", text.String(), got, sc.cfg.StreamChunks)
			}

			finish := chunks[sc.cfg.StreamChunks]
			if len(finish.Choices) != 1 || finish.Choices[0].FinishReason == nil || *finish.Choices[0].FinishReason != "stop" {
				t.Errorf("finish chunk = %s", events[sc.cfg.StreamChunks])
			}
			if sc.wantUsage != strings.Contains(string(b), `"usage":null`) {
				t.Errorf(`"usage":null present = %v, want %v`, !sc.wantUsage, sc.wantUsage)
			}
			if !sc.wantUsage {
				return
			}
			last := chunks[len(chunks)-1]
			if len(last.Choices) != 0 || last.Usage == nil {
				t.Fatalf("usage chunk = %s", events[len(events)-2])
			}
			if u := *last.Usage; u.PromptTokens != 4 || u.CompletionTokens != sc.cfg.StreamChunks || u.TotalTokens != 4+sc.cfg.StreamChunks {
				t.Errorf("usage = %+v", u)
			}
		})
	}
}

func TestEmbeddings(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name       string
		body       string
		wantItems  int
		wantDims   int
		wantBase64 bool
		wantPrompt int
	}{
		{name: "string", body: `{"model":"text-embedding-3-small","input":"abcdefgh"}`, wantItems: 1, wantDims: defaultDimensions, wantPrompt: 2},
		{name: "strings", body: `{"model":"e","input":["abcdefgh","abcd"],"dimensions":4}`, wantItems: 2, wantDims: 4, wantPrompt: 3},
		{name: "tokens", body: `{"model":"e","input":[1,2,3]}`, wantItems: 1, wantDims: defaultDimensions, wantPrompt: 3},
		{name: "token arrays", body: `{"model":"e","input":[[1,2],[3]]}`, wantItems: 2, wantDims: defaultDimensions, wantPrompt: 3},
		{name: "base64", body: `{"model":"e","input":"abcd","encoding_format":"base64","dimensions":8}`, wantItems: 1, wantDims: 8, wantBase64: true, wantPrompt: 1},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			_, ts := MustStartServer(t, defaultConfig)
			resp, b := MustPost(t, ts.URL+"/v1/embeddings", sc.body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			var got struct {
				Object string `json:"object"`
				Data   []struct {
					Object    string          `json:"object"`
					Index     int             `json:"index"`
					Embedding json.RawMessage `json:"embedding"`
				} `json:"data"`
				Usage struct {
					PromptTokens int `json:"prompt_tokens"`
					TotalTokens  int `json:"total_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			if got.Object != "list" || len(got.Data) != sc.wantItems {
				t.Fatalf("answer = %s", b)
			}
			for i, d := range got.Data {
				if d.Object != "embedding" || d.Index != i {
					t.Errorf("item %d = %+v", i, d)
				}
				var dims int
				if sc.wantBase64 {
					var s string
					if err := json.Unmarshal(d.Embedding, &s); err != nil {
						t.Fatalf("embedding %s: %v", d.Embedding, err)
					}
					dims = len(s) * 3 / 4 / 4
				} else {
					var v []float32
					if err := json.Unmarshal(d.Embedding, &v); err != nil {
						t.Fatalf("embedding %s: %v", d.Embedding, err)
					}
					dims = len(v)
				}
				if dims != sc.wantDims {
					t.Errorf("item %d has %d dimensions, want %d", i, dims, sc.wantDims)
				}
			}
			if got.Usage.PromptTokens != sc.wantPrompt || got.Usage.TotalTokens != sc.wantPrompt {
				t.Errorf("usage = %+v, want %d", got.Usage, sc.wantPrompt)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name       string
		method     string
		path       string
		body       string
		wantStatus int
	}{
		{name: "bad JSON", method: "POST", path: "/v1/chat/completions", body: `{"model":`, wantStatus: 400},
		{name: "no model", method: "POST", path: "/v1/chat/completions", body: `{"messages":[{"role":"user","content":"hi"}]}`, wantStatus: 400},
		{name: "no messages", method: "POST", path: "/v1/chat/completions", body: `{"model":"m"}`, wantStatus: 400},
		{name: "content of wrong type", method: "POST", path: "/v1/chat/completions", body: `{"model":"m","messages":[{"content":1}]}`, wantStatus: 400},
		{name: "empty embeddings input", method: "POST", path: "/v1/embeddings", body: `{"model":"e","input":[]}`, wantStatus: 400},
		{name: "unknown path", method: "POST", path: "/v1/nothing", body: `{}`, wantStatus: 404},
		{name: "wrong method", method: "GET", path: "/v1/chat/completions", wantStatus: 404},
	}
	_, ts := MustStartServer(t, defaultConfig)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			req, _ := http.NewRequest(sc.method, ts.URL+sc.path, strings.NewReader(sc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != sc.wantStatus {
				t.Errorf("status = %d, want %d", resp.StatusCode, sc.wantStatus)
			}
			var got struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || got.Error.Message == "" || got.Error.Type == "" {
				t.Errorf("error object = %+v (%v)", got, err)
			}
		})
	}
}

func TestModels(t *testing.T) {
	t.Parallel()
	_, ts := MustStartServer(t, defaultConfig)
	resp, err := http.Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Object != "list" || len(got.Data) == 0 || got.Data[0].Object != "model" || got.Data[0].ID == "" {
		t.Errorf("models = %+v", got)
	}
}

// MustGetStats reads GET /__stats.
func MustGetStats(tb testing.TB, base string) Stats {
	tb.Helper()
	resp, err := http.Get(base + "/__stats")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var s Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestStats(t *testing.T) {
	t.Parallel()
	_, ts := MustStartServer(t, defaultConfig)
	const (
		chat   = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
		stream = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	)

	post := func(path, body string) {
		resp, err := http.Post(ts.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			post("/v1/chat/completions", chat)
			post("/v1/chat/completions", stream)
			post("/v1/embeddings", `{"model":"e","input":"x"}`)
			post("/v1/chat/completions", `{`) // a bad request is still served
		})
	}
	wg.Wait()
	MustGetStats(t, ts.URL) // control calls are not counted
	if got, want := MustGetStats(t, ts.URL), (Stats{Requests: 40, Chat: 30, Stream: 10}); got != want {
		t.Errorf("stats = %+v, want %+v", got, want)
	}

	resp, _ := MustPost(t, ts.URL+"/__reset", "")
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("reset status = %d", resp.StatusCode)
	}
	if got := MustGetStats(t, ts.URL); got != (Stats{}) {
		t.Errorf("stats after reset = %+v", got)
	}
}

func TestLatency(t *testing.T) {
	t.Parallel()
	_, ts := MustStartServer(t, Config{Latency: 30 * time.Millisecond, StreamChunks: 1, Usage: true})
	start := time.Now()
	resp, _ := MustPost(t, ts.URL+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d", resp.StatusCode)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("answered after %v, want at least 30ms", d)
	}
}

func BenchmarkChat(b *testing.B) {
	for _, bm := range []struct {
		name string
		body string
	}{
		{"plain", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("x", 64) + `"}]}`},
		{"stream", `{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"` + strings.Repeat("x", 64) + `"}]}`},
	} {
		b.Run(bm.name, func(b *testing.B) {
			h := NewServer(Config{StreamChunks: 20, Usage: true}).Handler()
			w := &discardWriter{h: http.Header{}}
			body := strings.NewReader(bm.body)
			r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
			r.Body = io.NopCloser(body)
			b.ReportAllocs()
			for b.Loop() {
				body.Reset(bm.body)
				clear(w.h)
				h.ServeHTTP(w, r)
			}
		})
	}
}

// discardWriter is a ResponseWriter that drops what it is given, so that a
// benchmark measures the handler alone.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Flush()                      {}
