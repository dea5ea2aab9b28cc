package relay_test

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/store"
)

// A provider that reports the prompt in an early usage chunk and only the
// completion at the end is charged both: each count is the largest
// reported.
func TestStream_PartialUsagesMerged(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-partial", rawSSE(
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":0,"total_tokens":1000}}`,
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"hello there"}}]}`,
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[],"usage":{"completion_tokens":2}}`,
		`data: [DONE]`,
	))
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hi", true))
	if l := g.oneLog(t); l.PromptTokens != 1000 || l.CompletionTokens != 2 {
		t.Fatalf("billed %d/%d, want 1000/2", l.PromptTokens, l.CompletionTokens)
	}
	// The client that asked for usage gets the figures billed.
	if !strings.Contains(string(res.Body), `"prompt_tokens":1000,"completion_tokens":2`) {
		t.Fatalf("no usage chunk with the figures billed: %s", res.Body)
	}
}

// A whole answer whose usage names the prompt but neither the completion
// nor a larger total has its completion counted, as a stream's would be.
func TestChat_PromptOnlyUsageCountsCompletion(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	up := relaytest.NewChat(t, "sk-prompt-only", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, 200, relaytest.Completion(miniModel, long, &relaytest.Usage{PromptTokens: 50, TotalTokens: 50}))
	})
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	if res := g.post(t, key, "/v1/chat/completions", chat(miniModel, "hi")); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if l := g.oneLog(t); l.PromptTokens != 50 || l.CompletionTokens < 300 {
		t.Fatalf("billed %d/%d, want 50 and the answer's ~400 tokens", l.PromptTokens, l.CompletionTokens)
	}
}

// Without usage, a refusal and a call of the legacy functions API are
// counted as completion, as content and tool calls are.
func TestStream_LocalCountRefusalAndFunctionCall(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("I cannot help with that request. ", 50)
	cases := map[string][]string{
		"refusal": {
			`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""}}]}`,
			`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"refusal":"` + long + `"}}]}`,
			`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`data: [DONE]`,
		},
		"function_call": {
			`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":null,"function_call":{"name":"get_weather","arguments":""}}}]}`,
			`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"function_call":{"arguments":"{\"location\": \"` + long + `\"}"}}}]}`,
			`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"function_call"}]}`,
			`data: [DONE]`,
		},
	}
	for name, lines := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			up := relaytest.NewChat(t, "sk-local", rawSSE(lines...))
			// A custom channel: no usage is asked for, and none comes.
			g.MustCreateChannel(t, up, miniModel, func(c *store.Channel) {
				c.Type = relay.TypeCustom
				c.BaseURL = up.URL + "/v1/chat/completions"
			})
			_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
			g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hi", false))
			if l := g.oneLog(t); l.CompletionTokens < 300 {
				t.Fatalf("completion billed %d for about 350 tokens", l.CompletionTokens)
			}
		})
	}
}

// An event with choices and usage whose members do not all decode (a
// reasoning_content that is an object, a count written as a string)
// reaches the client, and its usage is billed.
func TestStream_UsageEventWithOddMember(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-odd", rawSSE(
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"}}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}`,
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"reasoning_content":{"steps":1},"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]}}],"usage":{"prompt_tokens":10,"completion_tokens":"29","total_tokens":39}}`,
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`data: [DONE]`,
	))
	g.MustCreateChannel(t, up, miniModel, func(c *store.Channel) { c.Type = relay.TypeSiliconFlow })
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hi", false))
	n := 0
	for _, e := range relaytest.Events(res.Body) {
		if strings.Contains(e, "get_weather") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the tool call reached the client %d times, want 1: %s", n, res.Body)
	}
	if l := g.oneLog(t); l.PromptTokens != 10 || l.CompletionTokens != 29 {
		t.Fatalf("billed %d/%d, want 10/29", l.PromptTokens, l.CompletionTokens)
	}
}

// A request whose earlier assistant turn carries tool call arguments as an
// object (Ollama writes them so) is relayed as sent.
func TestChat_ObjectToolArguments(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-ollama", okChat(t, miniModel, "x", relaytest.NewUsage(1, 1)))
	g.MustCreateChannel(t, up, miniModel, func(c *store.Channel) { c.Type = relay.TypeOllama })
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},{"role":"tool","tool_call_id":"c1","content":"sunny"}]}`
	if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if got := string(up.LastRequest().Body); !strings.Contains(got, `"arguments":{"city":"Paris"}`) {
		t.Fatalf("upstream body %s", got)
	}
}

// A tool whose schema holds <, > and & is counted as the client wrote it
// when the upstream reports no usage: 50 prompt tokens, tiktoken's count of
// the framing, "user", "hi", the tool's name and its schema.
func TestChat_ToolSchemaCountedAsWritten(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-tools", okChat(t, miniModel, "ok", nil))
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"query","parameters":{"type":"object","properties":{"filter":{"type":"string","description":"rows where a < 5 && b > 2, like <tag>"}}}}}]}`
	if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if l := g.oneLog(t); l.PromptTokens != 50 {
		t.Fatalf("prompt billed %d tokens, want 50", l.PromptTokens)
	}
}

// mistralFor serves model on route from a Mistral channel whose upstream
// refuses a body holding a field refused names, as Mistral does (422
// extra_forbidden), and otherwise answers answer; alice gets an unlimited
// token, whose key it returns.
func mistralFor(t *testing.T, g *gateway, route, model string, refused func(field string) bool, answer map[string]any) (*relaytest.Upstream, string) {
	t.Helper()
	up := relaytest.New(t, "sk-mistral", relaytest.Routes{route: func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		for k := range req.JSON {
			if refused(k) {
				relaytest.WriteJSON(w, 422, map[string]any{"object": "error", "message": map[string]any{"detail": []any{map[string]any{"type": "extra_forbidden", "loc": []any{"body", k}, "msg": "Extra inputs are not permitted"}}}, "type": "invalid_request_error"})
				return
			}
		}
		relaytest.WriteJSON(w, 200, answer)
	}})
	g.MustCreateChannel(t, up, model, func(c *store.Channel) { c.Type = relay.TypeMistral })
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	return up, key
}

// Mistral refuses fields it does not know: max_completion_tokens goes to
// it as max_tokens.
func TestChat_MistralMaxCompletionTokens(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up, key := mistralFor(t, g, relaytest.ChatPath, miniModel, func(k string) bool { return k == "max_completion_tokens" },
		relaytest.Completion(miniModel, "ok", relaytest.NewUsage(5, 1)))
	body := chat(miniModel, "hi")
	body["max_completion_tokens"] = 100
	if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(up.LastRequest().Body, &sent); err != nil || string(sent["max_tokens"]) != "100" {
		t.Fatalf("upstream body %s", up.LastRequest().Body)
	}
	// With both, max_tokens is kept and the other left out.
	body["max_tokens"] = 50
	if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
		t.Fatalf("with both: status %d: %s", res.Status, res.Body)
	}
	sent = nil
	if err := json.Unmarshal(up.LastRequest().Body, &sent); err != nil || string(sent["max_tokens"]) != "50" || sent["max_completion_tokens"] != nil {
		t.Fatalf("upstream body with both %s", up.LastRequest().Body)
	}
}

// Mistral seeds an answer with random_seed and refuses OpenAI's seed (422
// extra_forbidden): the client's seed goes to it under Mistral's name.
func TestChat_MistralSeed(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up, key := mistralFor(t, g, relaytest.ChatPath, miniModel, func(k string) bool { return k == "seed" },
		relaytest.Completion(miniModel, "ok", relaytest.NewUsage(5, 1)))
	body := chat(miniModel, "hi")
	body["seed"] = 42
	body["max_completion_tokens"] = 100
	if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(up.LastRequest().Body, &sent); err != nil || string(sent["random_seed"]) != "42" || string(sent["max_tokens"]) != "100" {
		t.Fatalf("upstream body %s", up.LastRequest().Body)
	}
}

// OpenAI's request-tagging fields (user, store, service_tier, ...) that
// OpenAI clients send whatever the provider are not sent to Mistral, which
// refuses fields it does not know (422 extra_forbidden); the rest goes as
// the client sent it.
func TestChat_MistralDropsOpenAIOnlyFields(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	known := map[string]bool{"model": true, "messages": true, "temperature": true, "max_tokens": true, "stream": true}
	up, key := mistralFor(t, g, relaytest.ChatPath, miniModel, func(k string) bool { return !known[k] },
		relaytest.Completion(miniModel, "ok", relaytest.NewUsage(5, 1)))
	body := chat(miniModel, "hi")
	body["user"] = "end-user-7"
	body["store"] = false
	body["service_tier"] = "auto"
	body["temperature"] = 0.2
	if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(up.LastRequest().Body, &sent); err != nil || string(sent["temperature"]) != "0.2" {
		t.Fatalf("upstream body %s", up.LastRequest().Body)
	}
}

// Mistral sizes an embedding with output_dimension and refuses OpenAI's
// dimensions (422 extra_forbidden): the client's goes to it under Mistral's
// name.
func TestEmbeddings_MistralDimensions(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up, key := mistralFor(t, g, "POST /v1/embeddings", embedModel, func(k string) bool { return k == "dimensions" },
		relaytest.Embedding(embedModel, 1, relaytest.NewUsage(3, 0)))
	if res := g.post(t, key, "/v1/embeddings", map[string]any{"model": embedModel, "input": "embed me", "dimensions": 256}); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(up.LastRequest().Body, &sent); err != nil || string(sent["output_dimension"]) != "256" {
		t.Fatalf("upstream body %s", up.LastRequest().Body)
	}
}

// OpenAI's reasoning models refuse max_tokens ("use max_completion_tokens
// instead"), on OpenAI and on Azure: the bound goes to them under its new
// name, and other models get the client's field as it was.
func TestChat_ReasoningModelMaxTokens(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, upstream string // the model the channel maps the call to
		typ            int
		renamed        bool
	}{
		{"OpenAI o3-mini", "o3-mini", relay.TypeOpenAI, true},
		{"Azure o3-mini", "o3-mini", relay.TypeAzure, true},
		{"OpenAI gpt-5", "openai/gpt-5", relay.TypeOpenAI, true},
		{"OpenAI gpt-4o-mini", miniModel, relay.TypeOpenAI, false},
		{"custom o3-mini", "o3-mini", relay.TypeCustom, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			var got map[string]json.RawMessage
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				data, _ := io.ReadAll(r.Body)
				got = nil
				_ = json.Unmarshal(data, &got)
				if _, ok := got["max_tokens"]; ok && tc.renamed {
					relaytest.WriteJSON(w, 400, map[string]any{"error": map[string]any{"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}})
					return
				}
				relaytest.WriteJSON(w, 200, relaytest.Completion(tc.upstream, "ok", relaytest.NewUsage(5, 1)))
			}))
			defer srv.Close()
			g.MustCreateChannel(t, &relaytest.Upstream{Server: srv, Key: "sk-reasoning"}, miniModel, func(c *store.Channel) {
				c.Type = tc.typ
				if tc.upstream != miniModel {
					c.ModelMapping = fmt.Sprintf(`{%q:%q}`, miniModel, tc.upstream)
				}
			})
			_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
			body := chat(miniModel, "hi")
			body["max_tokens"] = 100
			if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if tc.renamed && (string(got["max_completion_tokens"]) != "100" || got["max_tokens"] != nil) {
				t.Fatalf("upstream body %v", got)
			}
			if !tc.renamed && (string(got["max_tokens"]) != "100" || got["max_completion_tokens"] != nil) {
				t.Fatalf("upstream body %v: the client's field should pass as it was", got)
			}
			if !tc.renamed {
				return
			}
			// With both, the model's own field is kept.
			body["max_completion_tokens"] = 50
			if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
				t.Fatalf("with both: status %d: %s", res.Status, res.Body)
			}
			if string(got["max_completion_tokens"]) != "50" || got["max_tokens"] != nil {
				t.Fatalf("upstream body with both %v", got)
			}
		})
	}
}

// A model whose name holds a slash (SiliconCloud's Qwen/...) can be looked
// up by name.
func TestModels_RetrieveNameWithSlash(t *testing.T) {
	t.Parallel()
	const model = "Qwen/Qwen2.5-7B-Instruct"
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-slash", okChat(t, model, "x", relaytest.NewUsage(1, 1)))
	g.MustCreateChannel(t, up, model, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	req, _ := http.NewRequest("GET", g.srv.URL+"/v1/models/"+model, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"id":"`+model+`"`) {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
}

// Azure reads stream_options from API version 2024-09-01-preview on: on
// such a version the gateway asks for usage and bills what Azure reports
// (reasoning included); on an older one, the client's own version
// included, the option is left out, as Azure refuses it.
func TestStream_AzureUsageByAPIVersion(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, other, query string
		asked              bool
	}{
		{"recent", "2024-12-01-preview", "", true},
		{"GA", "2024-10-21", "", true},
		{"old", "2024-02-01", "", false},
		{"default", "", "", false},
		{"client's old version", "2024-12-01-preview", "?api-version=2024-06-01", false},
		{"client's recent version", "2024-02-01", "?api-version=2025-01-01-preview", true},
		{"not a date", "latest", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			var got map[string]any
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				data, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(data, &got)
				sse := relaytest.NewSSE(w)
				// Azure's first chunk: prompt filter results, no choices.
				sse.Send(map[string]any{"choices": []any{}, "created": 0, "id": "", "model": "", "object": "", "prompt_filter_results": []any{map[string]any{"prompt_index": 0, "content_filter_results": map[string]any{}}}})
				sse.Send(relaytest.Chunk("o3-mini", "Yes."))
				sse.Send(relaytest.FinishChunk("o3-mini", "stop"))
				if opts, _ := got["stream_options"].(map[string]any); opts["include_usage"] == true {
					sse.Send(map[string]any{"id": "x", "object": "chat.completion.chunk", "model": "o3-mini", "choices": []any{},
						"usage": map[string]any{"prompt_tokens": 20, "completion_tokens": 1501, "total_tokens": 1521,
							"completion_tokens_details": map[string]any{"reasoning_tokens": 1500}}})
				}
				sse.Done()
			}))
			defer srv.Close()
			g.MustCreateChannel(t, &relaytest.Upstream{Server: srv, Key: "azure-key"}, miniModel, func(c *store.Channel) {
				c.Type = relay.TypeAzure
				c.Other = tc.other
			})
			_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
			res := g.post(t, key, "/v1/chat/completions"+tc.query, streamChat(miniModel, "Is the sky blue?", true))
			if res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			_, sent := got["stream_options"]
			if sent != tc.asked {
				t.Fatalf("stream_options sent upstream: %v, want %v", got["stream_options"], tc.asked)
			}
			l := g.oneLog(t)
			if tc.asked && (l.PromptTokens != 20 || l.CompletionTokens != 1501) {
				t.Fatalf("billed %d/%d, want Azure's 20/1501", l.PromptTokens, l.CompletionTokens)
			}
			if !tc.asked && l.CompletionTokens == 0 {
				t.Fatalf("billed %d/%d: the completion was not counted", l.PromptTokens, l.CompletionTokens)
			}
		})
	}
}

// A byte order mark before a stream's first line does not cost its first
// event.
func TestStream_ByteOrderMark(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	c1 := `{"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello"}}]}`
	u := `{"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}`
	up := relaytest.NewChat(t, "sk-bom", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "\ufeffdata: "+c1+"\n\ndata: "+u+"\n\ndata: [DONE]\n\n")
	})
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hi", false))
	if !strings.Contains(string(res.Body), `"content":"Hello"`) {
		t.Fatalf("first event lost: %s", res.Body)
	}
	if l := g.oneLog(t); l.PromptTokens != 7 || l.CompletionTokens != 2 {
		t.Fatalf("billed %d/%d, want 7/2", l.PromptTokens, l.CompletionTokens)
	}
}

// An error event in the middle of a stream reaches the client without the
// channel's key, should the upstream echo it.
func TestStream_MidStreamErrorHidesKey(t *testing.T) {
	t.Parallel()
	const secret = "sk-LongSecretKey0123456789abcdef"
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, secret, rawSSE(
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"}}]}`,
		`data: {"error":{"message":"upstream rejected key `+secret+` midway","type":"server_error"}}`,
	))
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	res := g.post(t, key, "/v1/chat/completions", streamChat(miniModel, "hi", false))
	body := string(res.Body)
	if strings.Contains(body, secret) || strings.Contains(body, "LongSecretKey") || !strings.Contains(body, "upstream rejected key [key hidden] midway") {
		t.Fatalf("stream sent: %s", body)
	}
}

// A usage that names a completion but no prompt is charged the total's
// remainder as the prompt, else the local count of the prompt.
func TestUsageWithoutPrompt(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		stream bool
		usage  string
		prompt int64 // 0: the local count
	}{
		"whole, with total":  {false, `{"completion_tokens":7,"total_tokens":19}`, 12},
		"whole, no total":    {false, `{"completion_tokens":7}`, 0},
		"stream, with total": {true, `{"completion_tokens":2,"total_tokens":1002}`, 1000},
		"stream, no total":   {true, `{"completion_tokens":2}`, 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			up := relaytest.NewChat(t, "sk-noprompt", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				if tc.stream {
					rawSSE(
						`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}]}`,
						`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[],"usage":`+tc.usage+`}`,
						`data: [DONE]`,
					)(w, r, req)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],"usage":`+tc.usage+`}`)
			})
			g.MustCreateChannel(t, up, miniModel, nil)
			_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
			body := chat(miniModel, "a prompt of several words to count")
			if tc.stream {
				body = streamChat(miniModel, "a prompt of several words to count", true)
			}
			if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			l := g.oneLog(t)
			if tc.prompt != 0 && l.PromptTokens != tc.prompt || tc.prompt == 0 && l.PromptTokens < 5 {
				t.Fatalf("billed a prompt of %d, want %d (0: the local count)", l.PromptTokens, tc.prompt)
			}
		})
	}
}

// A whole answer whose usage holds only a total is charged that total once:
// the completion counted here, the rest as the prompt.
func TestChat_TotalOnlyUsage(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	up := relaytest.NewChat(t, "sk-total-only", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, 200, relaytest.Completion(miniModel, long, &relaytest.Usage{TotalTokens: 420}))
	})
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	if res := g.post(t, key, "/v1/chat/completions", chat(miniModel, "hi")); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if l := g.oneLog(t); l.PromptTokens+l.CompletionTokens != 420 || l.CompletionTokens < 300 {
		t.Fatalf("billed %d/%d, want 420 in all, most of it the completion", l.PromptTokens, l.CompletionTokens)
	}
}

// OpenAI's Node and Python SDKs ask embeddings as base64 by default and
// decode the answer as base64 float32s: a provider that ignores
// encoding_format and answers numbers gets them re-encoded as asked, and a
// call that asked floats, or no format, gets them as they came.
func TestEmbeddings_Base64AsAsked(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	vec := []float64{0.125, -0.5, 0.25, 1}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		relaytest.WriteJSON(w, 200, map[string]any{"object": "list", "model": embedModel,
			"data":  []any{map[string]any{"object": "embedding", "index": 0, "embedding": vec}},
			"usage": map[string]any{"prompt_tokens": 2, "total_tokens": 2}})
	}))
	defer srv.Close()
	g.MustCreateChannel(t, &relaytest.Upstream{Server: srv, Key: "sk-floats"}, embedModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	embedding := func(format string) json.RawMessage {
		t.Helper()
		body := map[string]any{"model": embedModel, "input": "embed me"}
		if format != "" {
			body["encoding_format"] = format
		}
		res := g.post(t, key, "/v1/embeddings", body)
		if res.Status != http.StatusOK {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
		var out struct {
			Data []struct {
				Object    string          `json:"object"`
				Index     int             `json:"index"`
				Embedding json.RawMessage `json:"embedding"`
			} `json:"data"`
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(res.Body, &out); err != nil || len(out.Data) != 1 || out.Data[0].Object != "embedding" || out.Usage.PromptTokens != 2 {
			t.Fatalf("answer %s", res.Body)
		}
		return out.Data[0].Embedding
	}
	if got := string(embedding("base64")); got != `"AAAAPgAAAL8AAIA+AACAPw=="` {
		t.Fatalf("base64 asked, numbers answered: got %s, want the float32s in base64", got)
	}
	if got := string(embedding("float")); got != "[0.125,-0.5,0.25,1]" {
		t.Fatalf("floats asked: got %s", got)
	}
	if got := string(embedding("")); got != "[0.125,-0.5,0.25,1]" {
		t.Fatalf("no format asked: got %s", got)
	}
}

// An upstream that compresses its answers (some proxies do, asked or not)
// is relayed and billed on the gateway's inline path as through
// http.Transport: a stream and a whole answer arrive decoded (they were
// passed on as gzip bytes, found empty and failed with 502).
func TestRelay_GzipAnswersDecoded(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			up := relaytest.NewChat(t, "sk-gzip", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				defer zw.Close()
				if !req.Stream() {
					w.Header().Set("Content-Type", "application/json")
					json.NewEncoder(zw).Encode(relaytest.Completion(miniModel, "hello there", relaytest.NewUsage(7, 3)))
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				for _, v := range []any{relaytest.Chunk(miniModel, "hello there"), relaytest.UsageChunk(miniModel, 7, 3)} {
					b, _ := json.Marshal(v)
					fmt.Fprintf(zw, "data: %s\n\n", b)
					zw.Flush()
					w.(http.Flusher).Flush()
				}
				io.WriteString(zw, "data: [DONE]\n\n")
			})
			g.MustCreateChannel(t, up, miniModel, nil)
			_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
			body := chat(miniModel, "hi")
			if stream {
				body = streamChat(miniModel, "hi", true)
			}
			res := g.post(t, key, "/v1/chat/completions", body)
			if res.Status != http.StatusOK || !strings.Contains(string(res.Body), "hello there") {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if l := g.oneLog(t); l.PromptTokens != 7 || l.CompletionTokens != 3 {
				t.Fatalf("billed %d/%d, want 7/3", l.PromptTokens, l.CompletionTokens)
			}
		})
	}
}

// The deprecated functions form counts as the tools it stands for: the
// request's functions as tools, an earlier turn's function_call as a tool
// call (they were not counted at all when the upstream reported no usage).
func TestChat_FunctionsCountedAsTools(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-functions", okChat(t, miniModel, "ok", nil))
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	const fn = `{"name":"get_weather","description":"The weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}`
	const call = `{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}`
	for _, tc := range []struct{ tools, functions string }{
		{
			`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":` + fn + `}]}`,
			`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"weather?"}],"functions":[` + fn + `]}`,
		},
		{
			`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":` + call + `}]},{"role":"tool","content":"sunny"}]}`,
			`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":null,"function_call":` + call + `},{"role":"tool","content":"sunny"}]}`,
		},
	} {
		var counts [2]int64
		for i, body := range []string{tc.tools, tc.functions} {
			if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			counts[i] = g.consumeLogs(t, "alice")[0].PromptTokens
		}
		if counts[0] != counts[1] {
			t.Errorf("prompt of the functions form %d tokens, of the tools form %d", counts[1], counts[0])
		}
	}
}
