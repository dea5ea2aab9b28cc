package relay_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/relay/tokenizer"
	"gateway/store"
)

// sdkClient is the official OpenAI Go client pointed at the gateway, without
// its own retries (they would hide the gateway's answers).
func (g *gateway) sdkClient(key string) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(g.srv.URL+"/v1/"),
		option.WithAPIKey(key),
		option.WithMaxRetries(0),
		option.WithHTTPClient(g.client),
	)
}

// The official SDK talks to the gateway as it would to OpenAI: chat, a
// stream with usage, embeddings, the model list and an error.
func TestSDK(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	const vipOnly = "vip-only-model"
	up := relaytest.New(t, "sk-sdk", relaytest.Routes{
		relaytest.ChatPath: func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			if req.Model() != ratioModel {
				t.Errorf("upstream model = %q", req.Model())
			}
			if !req.Stream() {
				relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "Hello from upstream", relaytest.NewUsage(11, 4)))
				return
			}
			if !req.IncludeUsage() {
				t.Errorf("stream without include_usage: %s", req.Body)
			}
			sse := relaytest.NewSSE(w)
			for _, w := range []string{"One", ", two", ", three"} {
				sse.Send(relaytest.Chunk(ratioModel, w))
			}
			sse.Send(relaytest.FinishChunk(ratioModel, "stop"))
			sse.Send(relaytest.UsageChunk(ratioModel, 12, 6))
			sse.Done()
		},
		"POST /v1/embeddings": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			if req.Model() != embedModel || req.JSON["input"] != "embed me" {
				t.Errorf("embeddings body = %s", req.Body)
			}
			relaytest.WriteJSON(w, 200, relaytest.Embedding(embedModel, 1, relaytest.NewUsage(300, 0)))
		},
	})
	chatCh := g.MustCreateChannel(t, up, ratioModel, nil)
	g.MustCreateChannel(t, up, embedModel, nil)
	g.MustCreateChannel(t, up, vipOnly, func(c *store.Channel) { c.Group = "vip" })
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
	client := g.sdkClient(key)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	t.Run("chat", func(t *testing.T) {
		before := g.balances(t, "alice", tok.ID, chatCh)
		resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    ratioModel,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Choices) != 1 || resp.Choices[0].Message.Content != "Hello from upstream" {
			t.Errorf("choices = %+v", resp.Choices)
		}
		if resp.Usage.PromptTokens != 11 || resp.Usage.CompletionTokens != 4 {
			t.Errorf("usage = %+v", resp.Usage)
		}
		wantMoved(t, before, g.balances(t, "alice", tok.ID, chatCh), true, chatCh.ID,
			ratioQuota(11, 4, ratioModelMR, ratioModelCR, 1), 1)
	})

	t.Run("stream with usage", func(t *testing.T) {
		before := g.balances(t, "alice", tok.ID, chatCh)
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:         ratioModel,
			Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Count")},
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		defer stream.Close()
		var acc openai.ChatCompletionAccumulator
		chunks := 0
		for stream.Next() {
			acc.AddChunk(stream.Current())
			chunks++
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != "One, two, three" {
			t.Errorf("accumulated = %+v", acc.Choices)
		}
		if acc.Usage.PromptTokens != 12 || acc.Usage.CompletionTokens != 6 || acc.Usage.TotalTokens != 18 {
			t.Errorf("usage = %+v", acc.Usage)
		}
		if chunks != 5 {
			t.Errorf("chunks = %d, want 5 (three words, finish, usage)", chunks)
		}
		wantMoved(t, before, g.balances(t, "alice", tok.ID, chatCh), true, chatCh.ID,
			ratioQuota(12, 6, ratioModelMR, ratioModelCR, 1), 1)
	})

	t.Run("embeddings", func(t *testing.T) {
		before := g.balances(t, "alice", tok.ID)
		resp, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
			Model: embedModel,
			Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("embed me")},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Data) != 1 || len(resp.Data[0].Embedding) != 3 || resp.Usage.PromptTokens != 300 {
			t.Errorf("embeddings = %+v", resp)
		}
		wantMoved(t, before, g.balances(t, "alice", tok.ID), true, 0, ratioQuota(300, 0, embedModelMR, 1, 1), 1)
	})

	t.Run("models", func(t *testing.T) {
		list := func(key string) []string {
			t.Helper()
			c := g.sdkClient(key)
			var ids []string
			iter := c.Models.ListAutoPaging(ctx)
			for iter.Next() {
				ids = append(ids, iter.Current().ID)
			}
			if err := iter.Err(); err != nil {
				t.Fatal(err)
			}
			slices.Sort(ids)
			return ids
		}
		// The default group's models, not the vip-only one.
		if got, want := list(key), []string{ratioModel, embedModel}; !slices.Equal(got, want) {
			t.Errorf("models = %v, want %v", got, want)
		}
		_, vipKey := g.MustCreateToken(t, "alice", store.Token{Group: "vip"})
		if got := list(vipKey); !slices.Contains(got, vipOnly) || len(got) != 3 {
			t.Errorf("vip token models = %v", got)
		}
		_, limited := g.MustCreateToken(t, "alice", store.Token{ModelLimitsEnabled: true, ModelLimits: embedModel})
		if got := list(limited); !slices.Equal(got, []string{embedModel}) {
			t.Errorf("limited token models = %v, want only its limit", got)
		}
		m, err := client.Models.Get(ctx, ratioModel)
		if err != nil || m.ID != ratioModel {
			t.Errorf("get model = %+v, %v", m, err)
		}
	})

	t.Run("invalid key", func(t *testing.T) {
		bad := g.sdkClient("sk-" + store.NewTokenKey())
		_, err := bad.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    ratioModel,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		})
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("err = %v (%T), want *openai.Error", err, err)
		}
		if apiErr.StatusCode != http.StatusUnauthorized || apiErr.Code != "invalid_token" || apiErr.Message == "" {
			t.Errorf("error = %d %q %q", apiErr.StatusCode, apiErr.Code, apiErr.Message)
		}
	})
}

// A client that asks for usage from an upstream that sends none gets the
// gateway's usage chunk as a chunk of the same completion (OpenAI's usage
// chunk shares the stream's id and created): the SDK's accumulator takes
// only chunks of one id, so a chunk under another id loses the usage.
func TestSDK_SyntheticUsageChunkJoinsTheStream(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-sdk", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		// As Azure starts: its prompt filter results, under no id.
		sse.Send(map[string]any{"id": "", "object": "", "created": 0, "model": "", "choices": []any{},
			"prompt_filter_results": []any{map[string]any{"prompt_index": 0, "content_filter_results": map[string]any{}}}})
		for _, ev := range []map[string]any{relaytest.Chunk(ratioModel, "Hello"), relaytest.Chunk(ratioModel, " there"), relaytest.FinishChunk(ratioModel, "stop")} {
			ev["id"], ev["created"], ev["system_fingerprint"] = "chatcmpl-upstream-1", 1700000000, "fp_up"
			sse.Send(ev)
		}
		sse.Done()
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := g.sdkClient(key)
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:         ratioModel,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Greet")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		if c := stream.Current(); !acc.AddChunk(c) {
			t.Errorf("the accumulator refused a chunk: %s", c.RawJSON())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 {
		t.Fatalf("consume logs = %d", len(logs))
	}
	l := logs[0]
	if acc.ID != "chatcmpl-upstream-1" || acc.Created != 1700000000 || acc.Choices[0].Message.Content != "Hello there" {
		t.Errorf("accumulated = %s", acc.RawJSON())
	}
	if acc.Usage.PromptTokens != l.PromptTokens || acc.Usage.CompletionTokens != l.CompletionTokens || acc.Usage.TotalTokens == 0 {
		t.Errorf("accumulated usage = %d+%d (total %d), billed %d+%d", acc.Usage.PromptTokens, acc.Usage.CompletionTokens, acc.Usage.TotalTokens, l.PromptTokens, l.CompletionTokens)
	}
}

// A transcript asked as plain text is charged as the same transcript asked
// as JSON: OpenAI ends a text answer with a line break, which is the
// format's, not a word of the transcript (S §5.8 STT: the tokens of the
// transcript, parsed per response_format).
func TestSDK_TextTranscriptChargedAsJSON(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	const said = "Good morning, everyone, and hello there"
	up := relaytest.New(t, "sk-sdk", relaytest.Routes{"POST /v1/audio/transcriptions": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		if bytes.Contains(req.Body, []byte("\r\n\r\ntext\r\n")) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, said+"\n")
			return
		}
		relaytest.WriteJSON(w, http.StatusOK, map[string]any{"text": said})
	}})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
	client := g.sdkClient(key)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var charged []int64
	for _, format := range []openai.AudioResponseFormat{openai.AudioResponseFormatJSON, openai.AudioResponseFormatText} {
		var raw []byte
		_, err := client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
			File:           openai.File(bytes.NewReader([]byte("RIFF....WAVEfmt ")), "talk.wav", "audio/wav"),
			Model:          ratioModel,
			ResponseFormat: format,
		}, option.WithResponseBodyInto(&raw))
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if !strings.Contains(string(raw), said) {
			t.Errorf("%s: answer %q", format, raw)
		}
		logs := g.consumeLogs(t, "alice")
		charged = append(charged, logs[0].CompletionTokens)
	}
	if want := int64(tokenizer.CountText(ratioModel, said)); charged[0] != want || charged[1] != want {
		t.Errorf("completion tokens charged: json %d, text %d; want %d for both", charged[0], charged[1], want)
	}
}

// A stream its upstream cuts (it breaks off, or stalls past the idle
// timeout) reaches the SDK as a broken stream, as a cut from OpenAI itself
// would: the chunks that came, then an error. A body that merely ends
// without [DONE] is taken by the SDK as a whole answer. What came is billed.
func TestSDK_CutStreamIsAnError(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Relay: relay.Config{StreamIdleTimeout: 500 * time.Millisecond}})
	up := relaytest.NewChat(t, "sk-sdk", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(ratioModel, "Hello"))
		sse.Send(relaytest.Chunk(ratioModel, " there"))
		if strings.Contains(string(req.Body), "break off") {
			panic(http.ErrAbortHandler)
		}
		<-r.Context().Done()
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
	client := g.sdkClient(key)
	for i, how := range []string{"break off", "stall"} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:    ratioModel,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(how)},
		})
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if stream.Err() == nil {
			t.Errorf("%s: the SDK saw a whole stream (%q), not a cut one", how, acc.Choices[0].Message.Content)
		}
		if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != "Hello there" {
			t.Errorf("%s: received %+v", how, acc.Choices)
		}
		stream.Close()
		cancel()
		if logs := g.consumeLogs(t, "alice"); len(logs) != i+1 || logs[0].CompletionTokens == 0 {
			t.Errorf("%s: %d logs, want %d billing what came", how, len(logs), i+1)
		}
	}
}

// A JSON answer the upstream sent without a JSON Content-Type (none, which
// the server would sniff as text/plain, or text/plain) reaches the client
// labelled application/json: the gateway read it as the endpoint's JSON
// document and charged it, and OpenAI's SDK refuses an answer that is not
// labelled JSON.
func TestSDK_JSONAnswerLabelledJSON(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	unlabelled := func(label, body string) relaytest.Handler {
		return func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			if label == "" {
				w.Header()["Content-Type"] = nil // no sniffing either
			} else {
				w.Header().Set("Content-Type", label)
			}
			io.WriteString(w, body)
		}
	}
	up := relaytest.New(t, "sk-label", relaytest.Routes{
		"POST /v1/embeddings":   unlabelled("", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.25]}],"model":"`+ratioModel+`","usage":{"prompt_tokens":3,"total_tokens":3}}`),
		"POST /v1/completions":  unlabelled("text/plain; charset=utf-8", `{"id":"cmpl-1","object":"text_completion","created":1,"model":"`+ratioModel+`","choices":[{"text":"hello","index":0,"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}`),
		"POST /v1/rerank":       unlabelled("", `{"results":[{"index":0,"relevance_score":0.9}],"usage":{"total_tokens":5}}`),
		"POST /v1/audio/speech": unlabelled("audio/mpeg", "ID3 sound"),
		"POST /v1/audio/transcriptions": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			if bytes.Contains(req.Body, []byte("\r\n\r\nsrt\r\n")) {
				unlabelled("", "1\n00:00:00,000 --> 00:00:01,000\nhello\n")(w, r, req)
				return
			}
			unlabelled("", `{"text":"hello"}`)(w, r, req)
		},
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	client := g.sdkClient(key)
	ctx := context.Background()

	emb, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: ratioModel, Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hi")}})
	if err != nil || len(emb.Data) != 1 || len(emb.Data[0].Embedding) != 2 {
		t.Fatalf("embeddings: %v, %+v", err, emb)
	}
	cmpl, err := client.Completions.New(ctx, openai.CompletionNewParams{Model: ratioModel, Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("say hello")}})
	if err != nil || len(cmpl.Choices) != 1 || cmpl.Choices[0].Text != "hello" {
		t.Fatalf("completions: %v, %+v", err, cmpl)
	}
	tr, err := client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
		File: openai.File(bytes.NewReader([]byte("RIFF....WAVEfmt ")), "talk.wav", "audio/wav"), Model: ratioModel})
	if err != nil || tr.Text != "hello" {
		t.Fatalf("transcription: %v, %+v", err, tr)
	}
	// A transcript asked as srt is not JSON: it keeps what it came as.
	var srt []byte
	if _, err := client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
		File: openai.File(bytes.NewReader([]byte("RIFF....WAVEfmt ")), "talk.wav", "audio/wav"), Model: ratioModel,
		ResponseFormat: openai.AudioResponseFormatSRT}, option.WithResponseBodyInto(&srt)); err != nil || !strings.Contains(string(srt), "hello") {
		t.Fatalf("srt transcription: %v, %q", err, srt)
	}
	res := g.post(t, key, "/v1/rerank", map[string]any{"model": ratioModel, "query": "q", "documents": []string{"a"}})
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("rerank: %d, Content-Type %q", res.Status, res.Header.Get("Content-Type"))
	}
	// Sound keeps the upstream's own type.
	res = g.post(t, key, "/v1/audio/speech", map[string]any{"model": ratioModel, "input": "hi", "voice": "alloy"})
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "audio/mpeg" || string(res.Body) != "ID3 sound" {
		t.Fatalf("speech: %d, Content-Type %q, %q", res.Status, res.Header.Get("Content-Type"), res.Body)
	}
	if logs := g.consumeLogs(t, "alice"); len(logs) != 6 {
		t.Fatalf("%d consume logs, want 6", len(logs))
	}
}
