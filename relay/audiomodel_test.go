package relay_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/relay/tokenizer"
	"gateway/store"
)

// The audio-model prices these tests expect, from S §5.7, so the expected
// charges are computed from the spec's numbers, not the gateway's.
const (
	audioChatModel = "gpt-4o-audio-preview"
	audioChatMR    = 1.25
	audioChatCR    = 4.0  // gpt-4o*
	audioChatAR    = 40.0 // gpt-4o-audio
	audioChatACR   = 2.0
)

// audioChatQuota is S §5.8's audio variant: round(text_in + text_out×CR) +
// round(audio_in×AR + audio_out×AR×ACR), then × model ratio × group ratio,
// at least 1.
func audioChatQuota(textIn, textOut, audioIn, audioOut int, mr, cr, ar, acr, gr float64) int64 {
	text := math.Round(float64(textIn) + float64(textOut)*cr)
	audio := math.Round(float64(audioIn)*ar + float64(audioOut)*ar*acr)
	q := math.Round((text + audio) * mr * gr)
	if q < 1 {
		q = 1
	}
	return int64(q)
}

// audioChatUsage is a usage object as OpenAI reports it for gpt-4o-audio
// models, with the audio and text tokens in the details.
func audioChatUsage(textIn, audioIn, textOut, audioOut int) map[string]any {
	return map[string]any{
		"prompt_tokens": textIn + audioIn, "completion_tokens": textOut + audioOut,
		"total_tokens": textIn + audioIn + textOut + audioOut,
		"prompt_tokens_details": map[string]any{
			"cached_tokens": 0, "audio_tokens": audioIn, "text_tokens": textIn, "image_tokens": 0,
		},
		"completion_tokens_details": map[string]any{
			"reasoning_tokens": 0, "audio_tokens": audioOut, "text_tokens": textOut,
			"accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0,
		},
	}
}

// audioChatOther is the audio part of a consume log's other field.
type audioChatOther struct {
	Audio                *bool   `json:"audio"`
	AudioInput           int     `json:"audio_input"`
	AudioOutput          int     `json:"audio_output"`
	TextInput            int     `json:"text_input"`
	TextOutput           int     `json:"text_output"`
	AudioRatio           float64 `json:"audio_ratio"`
	AudioCompletionRatio float64 `json:"audio_completion_ratio"`
	ModelRatio           float64 `json:"model_ratio"`
	CompletionRatio      float64 `json:"completion_ratio"`
	GroupRatio           float64 `json:"group_ratio"`
}

// gpt-4o-audio models are billed by S §5.8's audio variant, from the
// upstream's usage details, in a non-stream body and in a stream's usage
// chunk alike; the log's other carries audio:true, the token split and the
// audio ratios. A text model with the same usage shape keeps the text
// formula and no audio fields.
func TestChat_AudioModel(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ModelRatio": `{"gpt-4o-audio-preview":1.25,"gpt-4o-mini":0.075}`,
	}})
	const textIn, audioIn, textOut, audioOut = 17, 230, 38, 143
	up := relaytest.NewChat(t, "sk-audio", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		model := req.Model()
		if !req.Stream() {
			answer := relaytest.Completion(model, "Hello!", nil)
			answer["usage"] = audioChatUsage(textIn, audioIn, textOut, audioOut)
			relaytest.WriteJSON(w, http.StatusOK, answer)
			return
		}
		if !req.IncludeUsage() {
			t.Errorf("stream request without include_usage: %s", req.Body)
		}
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(model, "Hel"))
		sse.Send(relaytest.Chunk(model, "lo!"))
		sse.Send(relaytest.FinishChunk(model, "stop"))
		usageChunk := relaytest.Chunk(model, "")
		usageChunk["choices"] = []any{}
		usageChunk["usage"] = audioChatUsage(textIn, audioIn, textOut, audioOut)
		sse.Send(usageChunk)
		sse.Done()
	})
	ch := g.MustCreateChannel(t, up, audioChatModel+","+miniModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 100_000_000, Group: "vip"})

	audioWant := audioChatQuota(textIn, textOut, audioIn, audioOut, audioChatMR, audioChatCR, audioChatAR, audioChatACR, vipGroupRatio)
	if text := ratioQuota(textIn+audioIn, textOut+audioOut, audioChatMR, audioChatCR, vipGroupRatio); text == audioWant {
		t.Fatalf("the audio and the text formula agree (%d): the test would prove nothing", text)
	}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		stream bool
		audio  bool
		want   int64
	}{
		{"audio non-stream", chat(audioChatModel, "Say hello"), false, true, audioWant},
		{"audio stream with usage chunk", streamChat(audioChatModel, "Say hello", false), true, true, audioWant},
		{"text model unchanged", chat(miniModel, "Say hello"), false, false,
			ratioQuota(textIn+audioIn, textOut+audioOut, miniModelMR, miniModelCR, vipGroupRatio)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := g.balances(t, "alice", tok.ID, ch)
			res := g.post(t, key, "/v1/chat/completions", tc.body)
			if res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if tc.stream {
				events := relaytest.Events(res.Body)
				wantDoneLast(t, events)
				if got := contentOf(t, events); got != "Hello!" {
					t.Errorf("client content = %q", got)
				}
				if len(usageEvents(t, events)) != 0 {
					t.Errorf("the usage chunk reached a client that did not ask: %q", events)
				}
			}
			logs := g.consumeLogs(t, "alice")
			if len(logs) == 0 {
				t.Fatal("no consume log")
			}
			l := logs[0]
			if l.Quota != tc.want {
				t.Errorf("log quota = %d, want %d", l.Quota, tc.want)
			}
			if l.PromptTokens != textIn+audioIn || l.CompletionTokens != textOut+audioOut || l.IsStream != tc.stream {
				t.Errorf("log tokens = %d/%d stream %v, want the totals %d/%d", l.PromptTokens, l.CompletionTokens, l.IsStream,
					textIn+audioIn, textOut+audioOut)
			}
			var o audioChatOther
			if err := json.Unmarshal([]byte(l.Other), &o); err != nil {
				t.Fatalf("other %q: %v", l.Other, err)
			}
			if !tc.audio {
				if o.Audio != nil || strings.Contains(l.Other, "audio_ratio") {
					t.Errorf("a text model's other has audio fields: %s", l.Other)
				}
			} else {
				if o.Audio == nil || !*o.Audio || o.AudioInput != audioIn || o.AudioOutput != audioOut ||
					o.TextInput != textIn || o.TextOutput != textOut ||
					o.AudioRatio != audioChatAR || o.AudioCompletionRatio != audioChatACR ||
					o.ModelRatio != audioChatMR || o.CompletionRatio != audioChatCR || o.GroupRatio != vipGroupRatio {
					t.Errorf("other = %s", l.Other)
				}
			}
			wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, l.Quota, 1)
		})
	}
}

// An audio model's max_tokens are reserved at the audio output rate
// (AR × ACR), not the text completion ratio: with max_tokens set a call
// costs at most what it reserved, even when every output token is audio.
// fifty's 25 000 covers 300 tokens at the text rate (300 × 4 × 1.25) but not
// at the audio rate (300 × 80 × 1.25 = 30 000).
func TestChat_AudioModelReservesAudioOutput(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ModelRatio": `{"gpt-4o-audio-preview":1.25}`,
	}})
	up := relaytest.NewChat(t, "sk-audio", okChat(t, audioChatModel, "ok", relaytest.NewUsage(5, 5)))
	g.MustCreateChannel(t, up, audioChatModel, nil)
	_, key := g.MustCreateToken(t, "fifty", store.Token{UnlimitedQuota: true})

	const maxTokens = 300
	if float64(maxTokens)*audioChatAR*audioChatACR*audioChatMR <= float64(fiftyQuota) {
		t.Fatal("fifty's quota covers the audio reservation: the test would prove nothing")
	}
	body := chat(audioChatModel, "Say hello")
	body["max_tokens"] = maxTokens
	res := g.post(t, key, "/v1/chat/completions", body)
	if res.Status == http.StatusOK {
		t.Fatalf("a call whose audio output fifty cannot cover was let through: %s", res.Body)
	}
	res.wantError(t, res.Status, "insufficient_user_quota")
	if up.Hits() != 0 {
		t.Errorf("upstream hits = %d, want 0", up.Hits())
	}
	// Within reach at the audio rate the call goes through.
	body["max_tokens"] = 100
	if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
}

// A rerank reserves its prompt only (S §5.8 step 4), not PreConsumedQuota
// on top: fifty's 25 000 covers the prompt at ratio 50 but not prompt + 500
// tokens, and the call goes through and is charged the upstream's usage.
func TestRerank_ReservesPromptOnly(t *testing.T) {
	t.Parallel()
	const rerankModel, rerankMR, upTokens = "test-reranker", 50.0, 12
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ModelRatio":       `{"test-reranker":50}`,
		"PreConsumedQuota": "500",
	}})
	up := relaytest.New(t, "sk-rerank", relaytest.Routes{"POST /v1/rerank": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		if req.Model() != rerankModel {
			t.Errorf("upstream model = %q", req.Model())
		}
		relaytest.WriteJSON(w, http.StatusOK, map[string]any{
			"model":   rerankModel,
			"results": []any{map[string]any{"index": 0, "relevance_score": 0.93}, map[string]any{"index": 1, "relevance_score": 0.02}},
			"usage":   map[string]any{"total_tokens": upTokens},
		})
	}})
	ch := g.MustCreateChannel(t, up, rerankModel, nil)
	tok, key := g.MustCreateToken(t, "fifty", store.Token{UnlimitedQuota: true})
	before := g.balances(t, "fifty", tok.ID, ch)
	// The prompt has at least one token.
	if float64(1+500)*rerankMR <= float64(before.UserQuota) {
		t.Fatalf("fifty's quota %d covers PreConsumedQuota: the test would prove nothing", before.UserQuota)
	}

	res := g.post(t, key, "/v1/rerank", map[string]any{
		"model": rerankModel, "query": "Which one is a fruit?", "documents": []string{"apple", "car"},
	})
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	logs := g.consumeLogs(t, "fifty")
	if len(logs) != 1 {
		t.Fatalf("consume logs = %d, want 1", len(logs))
	}
	if want := int64(upTokens * rerankMR); logs[0].Quota != want {
		t.Errorf("log quota = %d, want %d", logs[0].Quota, want)
	}
	wantMoved(t, before, g.balances(t, "fifty", tok.ID, ch), false, ch.ID, logs[0].Quota, 1)
}

// Every choice may produce max_tokens: a call asking for n choices (or
// best_of candidates) reserves n × max_tokens, so with max_tokens set its
// completion stays within what it reserved. fifty's 25 000 covers 400
// tokens at ratio 10 but not 8 × 400.
func TestChat_ReservesEveryChoice(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ModelRatio":      `{"n-model":10}`,
		"CompletionRatio": `{"n-model":1}`,
	}})
	up := relaytest.NewChat(t, "sk-n", okChat(t, "n-model", "ok", relaytest.NewUsage(5, 5)))
	g.MustCreateChannel(t, up, "n-model", nil)
	_, key := g.MustCreateToken(t, "fifty", store.Token{UnlimitedQuota: true})

	for _, field := range []string{"n", "best_of"} {
		body := chat("n-model", "Say hello")
		body["max_tokens"] = 400
		body[field] = 8
		res := g.post(t, key, "/v1/chat/completions", body)
		res.wantError(t, http.StatusBadRequest, "insufficient_user_quota")
	}
	if up.Hits() != 0 {
		t.Errorf("upstream hits = %d, want 0", up.Hits())
	}
	body := chat("n-model", "Say hello")
	body["max_tokens"] = 400
	body["n"] = 1
	if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
		t.Fatalf("one choice: status %d: %s", res.Status, res.Body)
	}
	body["n"] = 129
	if e := g.post(t, key, "/v1/chat/completions", body).wantError(t, http.StatusBadRequest, "invalid_request"); !strings.Contains(e.Error.Message, "n 和 best_of 不能大于 128") {
		t.Fatalf("n above 128: %s", e.Error.Message)
	}
}

// No upstream produces more than max_tokens for each choice, so a local
// count above it (the text of a model with another tokenizer) is charged
// at max_tokens; usage the upstream reports is what it bills (reasoning
// may count beyond max_tokens on some providers) and is charged as is.
func TestChat_CompletionChargedAtMostMaxTokens(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ModelRatio":      `{"cap-model":1}`,
		"CompletionRatio": `{"cap-model":1}`,
	}})
	text := strings.Repeat("⼈", 10) // one token each for the upstream, 2-3 each for cl100k
	up := relaytest.NewChat(t, "sk-cap", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		switch {
		case req.Stream():
			sse := relaytest.NewSSE(w)
			for _, ch := range text {
				sse.Send(relaytest.Chunk("cap-model", string(ch)))
			}
			sse.Send(relaytest.FinishChunk("cap-model", "length"))
			sse.Done()
		case strings.Contains(string(req.Body), "reported"):
			relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion("cap-model", text, relaytest.NewUsage(5, 100000)))
		default:
			relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion("cap-model", text, nil))
		}
	})
	g.MustCreateChannel(t, up, "cap-model", nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})

	for _, tc := range []struct {
		name    string
		body    map[string]any
		choices int
	}{
		{"counted locally", chat("cap-model", "local"), 1},
		{"counted locally, streamed", streamChat("cap-model", "local", false), 1},
		{"counted locally, two choices", chat("cap-model", "local"), 2},
		{"reported by the upstream", chat("cap-model", "reported"), 0},
	} {
		tc.body["max_tokens"] = 10
		if tc.choices > 1 {
			tc.body["n"] = tc.choices
		}
		res := g.post(t, key, "/v1/chat/completions", tc.body)
		if res.Status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", tc.name, res.Status, res.Body)
		}
		l := g.consumeLogs(t, "alice")[0]
		want := int64(10 * tc.choices)
		if tc.choices == 0 {
			want = 100000
		}
		if l.CompletionTokens != want || l.Quota != l.PromptTokens+want {
			t.Errorf("%s: completion %d, quota %d (prompt %d); want completion %d, quota prompt + %d", tc.name, l.CompletionTokens, l.Quota, l.PromptTokens, want, want)
		}
	}
}

// A rerank is billed the tokens its provider counted, wherever the
// provider puts them: usage, Cohere's and Jina's meta.tokens, or
// SiliconCloud's tokens at the top of the answer, however the counts are
// written.
func TestRerank_TokensWhereProvidersPutThem(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelRatio": `{"test-reranker":1}`}})
	shapes := map[string]map[string]any{
		"usage": {"usage": map[string]any{"total_tokens": 40}},
		"meta":  {"meta": map[string]any{"tokens": map[string]any{"input_tokens": 40}}},
		"top":   {"tokens": map[string]any{"input_tokens": 40, "output_tokens": 0}},
		// Counts written as strings or decimals, read as a usage's are.
		"meta as strings": {"meta": map[string]any{"tokens": map[string]any{"input_tokens": "40"}}},
		"top as decimals": {"tokens": json.RawMessage(`{"input_tokens":39.5,"output_tokens":"0"}`)},
	}
	up := relaytest.New(t, "sk-rerank", relaytest.Routes{"POST /v1/rerank": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		var body struct {
			Query string `json:"query"`
		}
		json.Unmarshal(req.Body, &body)
		answer := map[string]any{"id": "r", "results": []any{map[string]any{"index": 0, "relevance_score": 0.9}}}
		for k, v := range shapes[body.Query] {
			answer[k] = v
		}
		relaytest.WriteJSON(w, http.StatusOK, answer)
	}})
	g.MustCreateChannel(t, up, "test-reranker", nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	for shape := range shapes {
		res := g.post(t, key, "/v1/rerank", map[string]any{"model": "test-reranker", "query": shape, "documents": []string{"apple", "car"}})
		if res.Status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", shape, res.Status, res.Body)
		}
		if l := g.consumeLogs(t, "alice")[0]; l.PromptTokens != 40 || l.Quota != 40 {
			t.Errorf("%s: prompt %d, quota %d; want 40 and 40", shape, l.PromptTokens, l.Quota)
		}
	}
}

// A rerank's token counts are made safe before they are read: a negative
// input beside an output is a missing input, counted locally as an answer
// without counts is.
func TestRerank_NegativeInputIsCountedLocally(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelRatio": `{"test-reranker":1}`}})
	var calls atomic.Int32
	up := relaytest.New(t, "sk-rerank", relaytest.Routes{"POST /v1/rerank": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		answer := map[string]any{"id": "r", "results": []any{map[string]any{"index": 0, "relevance_score": 0.9}}}
		if calls.Add(1) == 2 {
			answer["meta"] = map[string]any{"tokens": map[string]any{"input_tokens": -40, "output_tokens": 3}}
		}
		relaytest.WriteJSON(w, http.StatusOK, answer)
	}})
	g.MustCreateChannel(t, up, "test-reranker", nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	for range 2 {
		res := g.post(t, key, "/v1/rerank", map[string]any{"model": "test-reranker", "query": "which fruit", "documents": []string{"apple", "car"}})
		if res.Status != http.StatusOK {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
	}
	logs := g.consumeLogs(t, "alice") // newest first
	if len(logs) != 2 || logs[1].PromptTokens == 0 {
		t.Fatalf("logs %+v: want two, the first counted locally", logs)
	}
	if logs[0].PromptTokens != logs[1].PromptTokens || logs[0].CompletionTokens != 3 {
		t.Fatalf("a negative input beside 3 output tokens: prompt %d, completion %d; want the local count %d and 3",
			logs[0].PromptTokens, logs[0].CompletionTokens, logs[1].PromptTokens)
	}
}

// Speech is charged its prompt alone (the input's characters, or its tokens
// for a model not named tts*), known before the call: it reserves that,
// not PreConsumedQuota on top, so an account that can pay for the speech
// is not refused for a hold it would never spend. fifty's 25 000 covers
// 400 characters at ratio 50 but not 400 + 500.
func TestSpeech_ReservesPromptOnly(t *testing.T) {
	t.Parallel()
	const model, mr = "tts-1", 50.0
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ModelRatio":       `{"tts-1":50}`,
		"PreConsumedQuota": "500",
	}})
	ch, tok, key := speechFor(t, g, model)
	before := g.balances(t, "fifty", tok.ID, ch)
	input := strings.Repeat("abcd ", 80)
	if chars := len(input); float64(chars)*mr > float64(before.UserQuota) || float64(chars+500)*mr <= float64(before.UserQuota) {
		t.Fatalf("fifty's quota %d must cover %d characters but not 500 more: the test would prove nothing", before.UserQuota, chars)
	}
	res := g.post(t, key, "/v1/audio/speech", map[string]any{"model": model, "input": input, "voice": "alloy"})
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	logs := g.consumeLogs(t, "fifty")
	if len(logs) != 1 || logs[0].Quota != int64(float64(len(input))*mr) {
		t.Fatalf("logs %+v, want one of %d", logs, int64(float64(len(input))*mr))
	}
	wantMoved(t, before, g.balances(t, "fifty", tok.ID, ch), false, ch.ID, logs[0].Quota, 1)
}

// Speech's charge is known before the call: the reservation is that charge,
// rounded as the charge is, not rounded up. fifty's 25 000 pays exactly for
// 400 characters at ratio 62.501 (25 000.4, charged 25 000); a hold of
// 25 001 would refuse the call for a unit it never spends.
func TestSpeech_ReservesTheChargeExactly(t *testing.T) {
	t.Parallel()
	const model, mr = "tts-1", 62.501
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ModelRatio": `{"tts-1":62.501}`,
	}})
	ch, tok, key := speechFor(t, g, model)
	before := g.balances(t, "fifty", tok.ID, ch)
	input := strings.Repeat("abcd ", 80)
	charge := int64(math.Round(float64(len(input)) * mr))
	if charge != before.UserQuota || float64(len(input))*mr <= float64(before.UserQuota) {
		t.Fatalf("fifty's quota %d must be exactly the charge %d of %.2f: the test would prove nothing", before.UserQuota, charge, float64(len(input))*mr)
	}
	res := g.post(t, key, "/v1/audio/speech", map[string]any{"model": model, "input": input, "voice": "alloy"})
	if res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	logs := g.consumeLogs(t, "fifty")
	if len(logs) != 1 || logs[0].Quota != charge {
		t.Fatalf("logs %+v, want one of %d", logs, charge)
	}
	wantMoved(t, before, g.balances(t, "fifty", tok.ID, ch), false, ch.ID, charge, 1)
}

// speechFor serves model from an upstream that answers every speech request
// with a few bytes of sound, and gives fifty an unlimited token.
func speechFor(t *testing.T, g *gateway, model string) (*store.Channel, *store.Token, string) {
	t.Helper()
	up := relaytest.New(t, "sk-tts", relaytest.Routes{"POST /v1/audio/speech": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "audio/mpeg")
		w.Write([]byte("ID3 sound"))
	}})
	ch := g.MustCreateChannel(t, up, model, nil)
	tok, key := g.MustCreateToken(t, "fifty", store.Token{UnlimitedQuota: true})
	return ch, tok, key
}

// A non-stream answer longer than the relay reads whole fails the call with
// 502 and charges nothing: cut at the bound, a sound file (not checked as a
// document is) was charged and sent as if it were whole. One at the bound
// goes through.
func TestSpeech_AnswerOverTheBoundIsNotCharged(t *testing.T) {
	t.Parallel()
	const bound = 4096
	g := MustOpenGateway(t, gatewayConfig{Relay: relay.Config{MaxAnswerBytes: bound}, Options: map[string]string{"ModelRatio": `{"tts-1":15}`}})
	size := bound + 1
	up := relaytest.New(t, "sk-tts", relaytest.Routes{"POST /v1/audio/speech": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "audio/mpeg")
		w.Write(bytes.Repeat([]byte{0xff}, size))
	}})
	ch := g.MustCreateChannel(t, up, "tts-1", nil)
	tok, key := g.MustCreateToken(t, "fifty", store.Token{UnlimitedQuota: true})
	before := g.balances(t, "fifty", tok.ID, ch)
	res := g.post(t, key, "/v1/audio/speech", map[string]any{"model": "tts-1", "input": "hello", "voice": "alloy"})
	if res.Status != http.StatusBadGateway || !strings.Contains(string(res.Body), "response_too_large") {
		t.Fatalf("status %d (%d bytes): %.200s", res.Status, len(res.Body), res.Body)
	}
	if logs := g.consumeLogs(t, "fifty"); len(logs) != 0 {
		t.Fatalf("%d consume logs for a failed call", len(logs))
	}
	wantMoved(t, before, g.balances(t, "fifty", tok.ID, ch), false, ch.ID, 0, 0)

	size = bound
	if res := g.post(t, key, "/v1/audio/speech", map[string]any{"model": "tts-1", "input": "hello", "voice": "alloy"}); res.Status != http.StatusOK || len(res.Body) != bound {
		t.Fatalf("status %d, %d bytes; want the whole %d", res.Status, len(res.Body), bound)
	}
}

// An audio model's audio counts are parts of the prompt and completion
// they detail: a detail above its total (an upstream that reports 10 prompt
// tokens of which 1 000 are audio) is billed as the whole total in audio,
// never as more audio than the call used.
func TestChat_AudioModelDetailsWithinTheirTotals(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelRatio": `{"gpt-4o-audio-preview":1.25}`}})
	up := relaytest.NewChat(t, "sk-audio", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		answer := relaytest.Completion(req.Model(), "Hello!", nil)
		answer["usage"] = map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
			"prompt_tokens_details":     map[string]any{"audio_tokens": 1000},
			"completion_tokens_details": map[string]any{"audio_tokens": 500}}
		relaytest.WriteJSON(w, http.StatusOK, answer)
	})
	ch := g.MustCreateChannel(t, up, audioChatModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	before := g.balances(t, "alice", tok.ID, ch)
	if res := g.post(t, key, "/v1/chat/completions", chat(audioChatModel, "Say hello")); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	l := g.oneLog(t)
	want := audioChatQuota(0, 0, 10, 5, audioChatMR, audioChatCR, audioChatAR, audioChatACR, 1)
	if l.Quota != want {
		t.Errorf("log quota = %d, want %d (10 prompt and 5 completion tokens, all audio)", l.Quota, want)
	}
	var o audioChatOther
	if err := json.Unmarshal([]byte(l.Other), &o); err != nil {
		t.Fatalf("other %q: %v", l.Other, err)
	}
	if o.AudioInput != 10 || o.AudioOutput != 5 || o.TextInput != 0 || o.TextOutput != 0 {
		t.Errorf("other = %s, want audio 10/5 and text 0/0", l.Other)
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), false, ch.ID, want, 1)
}

// An audio model's answer says what it spoke in its audio's transcript
// (message.audio.transcript, a stream's delta.audio.transcript), with no
// text content beside it. When the upstream reports no usage, that
// transcript is the completion counted locally as text: the spoken answer
// is not charged as if nothing had been produced.
func TestChat_AudioTranscriptCountedWithoutUsage(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ModelRatio": `{"gpt-4o-audio-preview":1.25}`,
	}})
	const transcript = "Hello there! The weather in Paris is sunny and twenty-two degrees today."
	up := relaytest.NewChat(t, "sk-audio", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		model := req.Model()
		if !req.Stream() {
			answer := relaytest.Completion(model, "", nil)
			answer["choices"] = []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": nil, "refusal": nil,
					"audio": map[string]any{"id": "audio_1", "expires_at": 1729018505, "data": "UklGRiQAAABXQVZF", "transcript": transcript}}}}
			relaytest.WriteJSON(w, http.StatusOK, answer)
			return
		}
		// An upstream that sends no usage chunk, asked or not.
		sse := relaytest.NewSSE(w)
		first := relaytest.Chunk(model, "")
		first["choices"] = []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": nil,
			"audio": map[string]any{"id": "audio_1", "transcript": ""}}, "finish_reason": nil}}
		sse.Send(first)
		for _, part := range []string{"Hello there! ", "The weather in Paris ", "is sunny and twenty-two degrees today."} {
			ev := relaytest.Chunk(model, "")
			ev["choices"] = []any{map[string]any{"index": 0, "delta": map[string]any{
				"audio": map[string]any{"transcript": part}}, "finish_reason": nil}}
			sse.Send(ev)
			ev = relaytest.Chunk(model, "")
			ev["choices"] = []any{map[string]any{"index": 0, "delta": map[string]any{
				"audio": map[string]any{"data": "UklGRiQAAABXQVZFZm10IBAAAAABAAEA"}}, "finish_reason": nil}}
			sse.Send(ev)
		}
		sse.Send(relaytest.FinishChunk(model, "stop"))
		sse.Done()
	})
	g.MustCreateChannel(t, up, audioChatModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})

	want := int64(tokenizer.CountText(audioChatModel, transcript))
	for _, stream := range []bool{false, true} {
		body := chat(audioChatModel, "What is the weather in Paris?")
		body["modalities"] = []string{"text", "audio"}
		body["audio"] = map[string]any{"voice": "alloy", "format": "pcm16"}
		if stream {
			body["stream"] = true
		}
		res := g.post(t, key, "/v1/chat/completions", body)
		if res.Status != http.StatusOK {
			t.Fatalf("stream %v: status %d: %s", stream, res.Status, res.Body)
		}
		l := g.consumeLogs(t, "alice")[0]
		if l.CompletionTokens != want {
			t.Errorf("stream %v: completion tokens = %d, want the transcript's %d", stream, l.CompletionTokens, want)
		}
	}
}

// OpenAI's later audio chat models (gpt-4o-mini-audio*, gpt-audio*) report
// their audio tokens as gpt-4o-audio does and are billed by the same
// variant: billed as text, their audio cost a fortieth of its price.
func TestChat_LaterAudioModels(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ModelRatio":      `{"gpt-4o-mini-audio-preview":0.075,"gpt-audio-mini":0.3}`,
		"CompletionRatio": `{"gpt-4o-mini-audio-preview":4,"gpt-audio-mini":4}`,
	}})
	const textIn, audioIn, textOut, audioOut = 12, 300, 20, 150
	up := relaytest.NewChat(t, "sk-audio", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		answer := relaytest.Completion(req.Model(), "Hello!", nil)
		answer["usage"] = audioChatUsage(textIn, audioIn, textOut, audioOut)
		relaytest.WriteJSON(w, http.StatusOK, answer)
	})
	ch := g.MustCreateChannel(t, up, "gpt-4o-mini-audio-preview,gpt-audio-mini", nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 100_000_000, Group: "vip"})
	for _, tc := range []struct {
		model string
		mr    float64
	}{{"gpt-4o-mini-audio-preview", 0.075}, {"gpt-audio-mini", 0.3}} {
		t.Run(tc.model, func(t *testing.T) {
			before := g.balances(t, "alice", tok.ID, ch)
			res := g.post(t, key, "/v1/chat/completions", chat(tc.model, "Say hello"))
			if res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			l := g.consumeLogs(t, "alice")[0]
			want := audioChatQuota(textIn, textOut, audioIn, audioOut, tc.mr, 4, audioChatAR, audioChatACR, vipGroupRatio)
			if l.Quota != want {
				t.Errorf("log quota = %d, want the audio variant's %d (as text: %d)", l.Quota, want,
					ratioQuota(textIn+audioIn, textOut+audioOut, tc.mr, 4, vipGroupRatio))
			}
			var o audioChatOther
			if err := json.Unmarshal([]byte(l.Other), &o); err != nil {
				t.Fatalf("other %q: %v", l.Other, err)
			}
			if o.Audio == nil || !*o.Audio || o.AudioInput != audioIn || o.AudioOutput != audioOut {
				t.Errorf("other = %s", l.Other)
			}
			wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, l.Quota, 1)
		})
	}
}
