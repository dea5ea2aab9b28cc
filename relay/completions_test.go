package relay_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"gateway/relay/relaytest"
	"gateway/relay/tokenizer"
	"gateway/store"
)

// completionAnswer is a non-stream /v1/completions answer; usage nil
// leaves the field out.
func completionAnswer(model, text string, usage *relaytest.Usage) map[string]any {
	m := map[string]any{"id": "cmpl-fake", "object": "text_completion", "created": 1, "model": model,
		"choices": []any{map[string]any{"index": 0, "text": text, "finish_reason": "stop", "logprobs": nil}}}
	if usage != nil {
		m["usage"] = usage
	}
	return m
}

// completionChunk is one event of a /v1/completions stream.
func completionChunk(model, text string, finish any) map[string]any {
	return map[string]any{"id": "cmpl-fake", "object": "text_completion", "created": 1, "model": model,
		"choices": []any{map[string]any{"index": 0, "text": text, "finish_reason": finish, "logprobs": nil}}}
}

// Legacy completions (S §5.8): charged by the upstream's usage, or by a
// local count of the prompt and the text when it sends none; a prompt is
// required.
func TestCompletions_NonStream(t *testing.T) {
	t.Parallel()
	const prompt, text = "Write a haiku about the sea", "Waves fold into foam"
	cases := []struct {
		name           string
		usage          *relaytest.Usage
		prompt, answer int // tokens charged
	}{
		{"upstream usage", relaytest.NewUsage(7, 5), 7, 5},
		{"counted locally", nil, tokenizer.CountText(ratioModel, prompt), tokenizer.CountText(ratioModel, text)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			up := relaytest.New(t, "sk-up", relaytest.Routes{"POST /v1/completions": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				if req.Model() != ratioModel || req.JSON["prompt"] != prompt {
					t.Errorf("upstream got %s", req.Body)
				}
				relaytest.WriteJSON(w, http.StatusOK, completionAnswer(ratioModel, text, tc.usage))
			}})
			ch := g.MustCreateChannel(t, up, ratioModel, nil)
			tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
			before := g.balances(t, "alice", tok.ID, ch)

			res := g.post(t, key, "/v1/completions", map[string]any{"model": ratioModel, "prompt": prompt, "max_tokens": 20})
			if res.Status != http.StatusOK || !strings.Contains(string(res.Body), text) {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			logs := g.consumeLogs(t, "alice")
			if len(logs) != 1 || logs[0].PromptTokens != int64(tc.prompt) || logs[0].CompletionTokens != int64(tc.answer) {
				t.Fatalf("consume logs: %+v; want %d prompt and %d completion tokens", logs, tc.prompt, tc.answer)
			}
			want := ratioQuota(tc.prompt, tc.answer, ratioModelMR, ratioModelCR, 1)
			if logs[0].Quota != want {
				t.Errorf("quota = %d, want %d", logs[0].Quota, want)
			}
			wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, want, 1)
		})
	}

	t.Run("no prompt", func(t *testing.T) {
		t.Parallel()
		g := MustOpenGateway(t, gatewayConfig{})
		up := relaytest.New(t, "sk-up", relaytest.Routes{"POST /v1/completions": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			relaytest.WriteJSON(w, http.StatusOK, completionAnswer(ratioModel, text, nil))
		}})
		g.MustCreateChannel(t, up, ratioModel, nil)
		_, key := g.MustCreateToken(t, "alice", store.Token{})
		e := g.post(t, key, "/v1/completions", map[string]any{"model": ratioModel}).wantError(t, http.StatusBadRequest, "invalid_request")
		if !strings.HasPrefix(e.Error.Message, "prompt 不能为空") || up.Hits() != 0 {
			t.Errorf("message %q, upstream hits %d", e.Error.Message, up.Hits())
		}
	})
}

// A completions stream is relayed event by event; without usage from the
// upstream it is counted locally, and a client that asked for usage gets
// one usage chunk shaped like the stream's own (text_completion, cmpl-).
func TestCompletions_Stream(t *testing.T) {
	t.Parallel()
	const prompt = "Count to three"
	pieces := []string{"one", ", two", ", three"}
	for _, upstreamUsage := range []bool{true, false} {
		t.Run(fmt.Sprintf("upstream usage %v", upstreamUsage), func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			up := relaytest.New(t, "sk-up", relaytest.Routes{"POST /v1/completions": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				if !req.Stream() || !req.IncludeUsage() {
					t.Errorf("upstream got %s; want a stream asking for usage", req.Body)
				}
				sse := relaytest.NewSSE(w)
				for _, p := range pieces {
					sse.Send(completionChunk(ratioModel, p, nil))
				}
				sse.Send(completionChunk(ratioModel, "", "stop"))
				if upstreamUsage {
					sse.Send(map[string]any{"id": "cmpl-fake", "object": "text_completion", "created": 1, "model": ratioModel,
						"choices": []any{}, "usage": relaytest.NewUsage(4, 6)})
				}
				sse.Done()
			}})
			ch := g.MustCreateChannel(t, up, ratioModel, nil)
			tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
			before := g.balances(t, "alice", tok.ID, ch)

			body := map[string]any{"model": ratioModel, "prompt": prompt, "stream": true, "stream_options": map[string]any{"include_usage": true}}
			res := g.post(t, key, "/v1/completions", body)
			if res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			events := relaytest.Events(res.Body)
			if len(events) != len(pieces)+3 || events[len(events)-1] != "[DONE]" {
				t.Fatalf("events = %q; want the pieces, the finish, one usage chunk and [DONE]", events)
			}
			usageEvent := events[len(events)-2]
			var u struct {
				ID, Object string
				Choices    []any
				Usage      *relaytest.Usage
			}
			if err := json.Unmarshal([]byte(usageEvent), &u); err != nil || u.Usage == nil || len(u.Choices) != 0 {
				t.Fatalf("usage event %s: %v", usageEvent, err)
			}
			if u.Object != "text_completion" || !strings.HasPrefix(u.ID, "cmpl-") {
				t.Errorf("usage event %s: want a text_completion object with a cmpl- id", usageEvent)
			}
			wantPrompt, wantCompletion := 4, 6
			if !upstreamUsage {
				wantPrompt, wantCompletion = tokenizer.CountText(ratioModel, prompt), tokenizer.CountText(ratioModel, strings.Join(pieces, ""))
			}
			if u.Usage.PromptTokens != wantPrompt || u.Usage.CompletionTokens != wantCompletion {
				t.Errorf("client usage %+v, want %d and %d", *u.Usage, wantPrompt, wantCompletion)
			}
			logs := g.consumeLogs(t, "alice")
			if len(logs) != 1 || logs[0].PromptTokens != int64(wantPrompt) || logs[0].CompletionTokens != int64(wantCompletion) {
				t.Fatalf("consume logs: %+v", logs)
			}
			want := ratioQuota(wantPrompt, wantCompletion, ratioModelMR, ratioModelCR, 1)
			if logs[0].Quota != want {
				t.Errorf("quota = %d, want %d", logs[0].Quota, want)
			}
			wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, want, 1)
		})
	}
}

// Moderations (S §5.8): a body without a model is routed, priced and sent
// as omni-moderation-latest, OpenAI's own default; the input is counted
// locally as the prompt; an input is required.
func TestModerations(t *testing.T) {
	t.Parallel()
	const defaultModel, input = "omni-moderation-latest", "I want to hug everyone"
	const mr = 0.5
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelRatio": fmt.Sprintf(`{%q:%v,%q:%v}`, defaultModel, mr, ratioModel, ratioModelMR)}})
	var models []string
	up := relaytest.New(t, "sk-up", relaytest.Routes{"POST /v1/moderations": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		models = append(models, req.Model())
		relaytest.WriteJSON(w, http.StatusOK, map[string]any{"id": "modr-1", "model": req.Model(),
			"results": []any{map[string]any{"flagged": false, "categories": map[string]any{}, "category_scores": map[string]any{}}}})
	}})
	ch := g.MustCreateChannel(t, up, defaultModel+","+ratioModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})

	for _, tc := range []struct {
		name  string
		body  map[string]any
		model string
		mr    float64
	}{
		{"default model", map[string]any{"input": input}, defaultModel, mr},
		{"named model", map[string]any{"input": []any{input, input}, "model": ratioModel}, ratioModel, ratioModelMR},
	} {
		before := g.balances(t, "alice", tok.ID, ch)
		res := g.post(t, key, "/v1/moderations", tc.body)
		if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"flagged":false`) {
			t.Fatalf("%s: status %d: %s", tc.name, res.Status, res.Body)
		}
		l := g.consumeLogs(t, "alice")[0]
		prompt := tokenizer.Counter{}.CountInput(tc.model, tc.body["input"])
		if l.ModelName != tc.model || l.PromptTokens != int64(prompt) || l.CompletionTokens != 0 {
			t.Errorf("%s: log model %q, tokens %d/%d; want %q, %d/0", tc.name, l.ModelName, l.PromptTokens, l.CompletionTokens, tc.model, prompt)
		}
		want := ratioQuota(prompt, 0, tc.mr, 1, 1)
		if l.Quota != want {
			t.Errorf("%s: quota = %d, want %d", tc.name, l.Quota, want)
		}
		wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, want, 1)
	}
	if len(models) != 2 || models[0] != defaultModel || models[1] != ratioModel {
		t.Errorf("upstream got models %q", models)
	}
	e := g.post(t, key, "/v1/moderations", map[string]any{"model": ratioModel}).wantError(t, http.StatusBadRequest, "invalid_request")
	if !strings.HasPrefix(e.Error.Message, "input 不能为空") || len(models) != 2 {
		t.Errorf("message %q, upstream calls %d", e.Error.Message, len(models))
	}
	for _, input := range []any{map[string]any{"a": 1}, true, 123} {
		e := g.post(t, key, "/v1/moderations", map[string]any{"model": ratioModel, "input": input}).wantError(t, http.StatusBadRequest, "invalid_request")
		if !strings.HasPrefix(e.Error.Message, "input 必须是字符串或数组") || len(models) != 2 {
			t.Errorf("input %v: message %q, upstream calls %d", input, e.Error.Message, len(models))
		}
	}
}
