package relay_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"gateway/relay/relaytest"
	"gateway/relay/tokenizer"
	"gateway/store"
)

// upstreamRefusal is the error object of the 200 answers below.
var upstreamRefusal = map[string]any{"message": "Your request was rejected by the safety system", "type": "invalid_request_error", "code": "content_policy_violation"}

// The other endpoints follow the chat rule: a 200 answer that carries an
// error and no result (the result member missing, null or empty), an image
// answer without images, sound that is a web page or an error document, a
// transcript that is a web page or an error is the upstream's failure. The
// next tier answers, and only it is charged, once.
func TestFailover_OKButFailedEndpoints(t *testing.T) {
	t.Parallel()
	json := func(v any) relaytest.Handler {
		return func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			relaytest.WriteJSON(w, http.StatusOK, v)
		}
	}
	html := func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><body>Welcome to nginx!</body></html>")
	}
	sttForm, sttType := audioForm(t, []formPart{
		{Name: "file", FileName: "talk.wav", ContentType: "audio/wav", Data: []byte("RIFF....WAVEfmt ")},
		{Name: "model", Data: []byte(ratioModel)},
	})
	type endpoint struct {
		path   string
		body   any
		header []string
		good   relaytest.Handler
	}
	images := endpoint{"/v1/images/generations", map[string]any{"model": "dall-e-2", "prompt": "a cat", "size": "256x256"}, nil,
		json(map[string]any{"created": 1, "data": []any{map[string]any{"url": "https://images.example/fine.png"}}})}
	embeddings := endpoint{"/v1/embeddings", map[string]any{"model": embedModel, "input": "embed me"}, nil,
		json(relaytest.Embedding(embedModel, 1, relaytest.NewUsage(3, 0)))}
	completions := endpoint{"/v1/completions", map[string]any{"model": ratioModel, "prompt": "say fine"}, nil,
		json(map[string]any{"id": "cmpl-1", "object": "text_completion", "model": ratioModel,
			"choices": []any{map[string]any{"index": 0, "text": "fine", "finish_reason": "stop"}}, "usage": relaytest.NewUsage(3, 1)})}
	speech := endpoint{"/v1/audio/speech", map[string]any{"model": ratioModel, "input": "say fine", "voice": "alloy"}, nil,
		func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			w.Header().Set("Content-Type", "audio/mpeg")
			w.Write([]byte("ID3\x04\x00fine-sound"))
		}}
	transcription := endpoint{"/v1/audio/transcriptions", string(sttForm), []string{"Content-Type", sttType},
		json(map[string]any{"text": "fine"})}

	cases := []struct {
		name string
		endpoint
		bad relaytest.Handler
	}{
		{"image refused with data null", images, json(map[string]any{"created": 0, "data": nil, "error": upstreamRefusal})},
		{"image refused with data empty", images, json(map[string]any{"created": 0, "data": []any{}, "error": upstreamRefusal})},
		{"image answer without images", images, json(map[string]any{"created": 0, "data": []any{}})},
		{"embedding error with data null", embeddings, json(map[string]any{"object": "list", "data": nil, "error": upstreamRefusal})},
		{"completion error with choices null", completions, json(map[string]any{"choices": nil, "usage": nil, "error": upstreamRefusal})},
		{"speech answered with a web page", speech, html},
		{"speech answered with an error", speech, json(map[string]any{"error": upstreamRefusal})},
		// Speech asked as server-sent events (stream_format "sse") whose
		// first event is an error, or that sends no event at all.
		{"speech stream whose first event is an error", speech, func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"type\":\"error\",\"error\":{\"message\":\"Your request was rejected by the safety system\",\"type\":\"invalid_request_error\"}}\n\n")
		}},
		{"speech stream without events", speech, func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": keep-alive\n\n: keep-alive\n\n")
		}},
		{"transcript answered with a web page", transcription, html},
		{"transcript answered with an error", transcription, json(map[string]any{"error": upstreamRefusal})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "1", "ModelRatio": fmt.Sprintf(
				`{%q:%v,%q:%v,"dall-e-2":8}`, ratioModel, ratioModelMR, embedModel, embedModelMR)}})
			route := "POST " + tc.path
			bad := relaytest.New(t, "sk-bad", relaytest.Routes{route: tc.bad})
			good := relaytest.New(t, "sk-good", relaytest.Routes{route: tc.good})
			models := ratioModel + "," + embedModel + ",dall-e-2"
			c1 := g.tier(t, bad, models, 10, nil)
			c2 := g.tier(t, good, models, 0, nil)
			tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 100_000_000})
			before := g.balances(t, "alice", tok.ID, c1, c2)

			res := g.post(t, key, tc.path, tc.body, tc.header...)
			if res.Status != http.StatusOK || strings.Contains(string(res.Body), "rejected") || strings.Contains(string(res.Body), "nginx") {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if bad.Hits() != 1 || good.Hits() != 1 {
				t.Fatalf("hits: failing %d, answering %d", bad.Hits(), good.Hits())
			}
			logs := g.consumeLogs(t, "alice")
			if len(logs) != 1 || logs[0].ChannelID != c2.ID || logs[0].Quota <= 0 {
				t.Fatalf("consume logs: %+v", logs)
			}
			after := g.balances(t, "alice", tok.ID, c1, c2)
			wantMoved(t, before, after, true, c2.ID, logs[0].Quota, 1)
			if after.Channels[c1.ID] != before.Channels[c1.ID] {
				t.Errorf("the failing channel was charged")
			}
		})
	}
}

// A streamed transcription (stream=true: an event stream of transcript
// deltas and a final text) is charged for its transcript, not for the
// event stream around it, and reaches the client as the upstream sent it.
func TestAudio_StreamedTranscript(t *testing.T) {
	t.Parallel()
	const text = "The quick brown fox jumps over the lazy dog."
	words := strings.SplitAfter(text, " ")
	var events strings.Builder
	for _, w := range words {
		fmt.Fprintf(&events, "data: {\"type\":\"transcript.text.delta\",\"delta\":%s,\"logprobs\":[]}\n\n", quote(w))
	}
	fmt.Fprintf(&events, "data: {\"type\":\"transcript.text.done\",\"text\":%s,\"usage\":{\"type\":\"tokens\",\"input_tokens\":14,\"output_tokens\":11,\"total_tokens\":25}}\n\n", quote(text))
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.New(t, "sk-stt", relaytest.Routes{
		"POST /v1/audio/transcriptions": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, events.String())
		},
	})
	ch := g.MustCreateChannel(t, up, ratioModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
	before := g.balances(t, "alice", tok.ID, ch)
	body, ctype := audioForm(t, []formPart{
		{Name: "file", FileName: "talk.wav", ContentType: "audio/wav", Data: []byte("RIFF....WAVEfmt ")},
		{Name: "model", Data: []byte(ratioModel)},
		{Name: "stream", Data: []byte("true")},
	})

	res := g.post(t, key, "/v1/audio/transcriptions", string(body), "Content-Type", ctype)
	if res.Status != http.StatusOK || string(res.Body) != events.String() || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, type %q, body %q; want 200 with the upstream's events", res.Status, res.Header.Get("Content-Type"), res.Body)
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 {
		t.Fatalf("consume logs = %d", len(logs))
	}
	wantTokens := tokenizer.CountText(ratioModel, text)
	if logs[0].CompletionTokens != int64(wantTokens) {
		t.Errorf("completion tokens = %d, want %d, the tokens of the transcript", logs[0].CompletionTokens, wantTokens)
	}
	want := ratioQuota(0, wantTokens, ratioModelMR, ratioModelCR, 1)
	if logs[0].Quota != want {
		t.Errorf("quota = %d, want %d", logs[0].Quota, want)
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, want, 1)
}
