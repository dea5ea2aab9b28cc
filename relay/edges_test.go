package relay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/relay/tokenizer"
	"gateway/store"
)

// A 200 answer that is valid JSON but no result (null, a list, a string, a
// number, an empty object) is the upstream's failure: the next tier
// answers, and only it is charged.
func TestFailover_JSONWithoutResult(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"null", "[]", `"oops"`, "42", "{}", `{"choices":[]}`} {
		t.Run(body, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "1"}})
			bad := relaytest.NewChat(t, "sk-bad", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, body)
			})
			good := relaytest.NewChat(t, "sk-good", chatEither(ratioModel))
			c1 := g.tier(t, bad, ratioModel, 10, nil)
			c2 := g.tier(t, good, ratioModel, 0, nil)
			_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
			res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
			if res.Status != http.StatusOK || !strings.Contains(string(res.Body), "fine") {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if logs := g.consumeLogs(t, "alice"); bad.Hits() != 1 || good.Hits() != 1 || len(logs) != 1 || logs[0].ChannelID != c2.ID {
				t.Fatalf("hits %d/%d, logs %+v (failing channel %d)", bad.Hits(), good.Hits(), logs, c1.ID)
			}
		})
	}
}

// A stream that is [DONE] alone is empty: the next tier answers.
func TestFailover_DoneOnlyStream(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "1"}})
	bad := relaytest.NewChat(t, "sk-bad", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.NewSSE(w).Done()
	})
	good := relaytest.NewChat(t, "sk-good", chatEither(ratioModel))
	g.tier(t, bad, ratioModel, 10, nil)
	c2 := g.tier(t, good, ratioModel, 0, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	res := g.post(t, key, "/v1/chat/completions", streamChat(ratioModel, "hi", false))
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), "fine") {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if logs := g.consumeLogs(t, "alice"); good.Hits() != 1 || len(logs) != 1 || logs[0].ChannelID != c2.ID {
		t.Fatalf("good hits %d, logs %+v", good.Hits(), logs)
	}
}

// earlyPromptUsage sends a chunk whose usage reports the prompt only, then
// words, each flushed, pausing between them; full usage comes only at the
// end when final is set.
func earlyPromptUsage(words int, pause time.Duration, final bool) relaytest.Handler {
	return func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		first := relaytest.Chunk(ratioModel, "")
		first["usage"] = relaytest.NewUsage(10, 0)
		sse.Send(first)
		for range words {
			if sse.Send(relaytest.Chunk(ratioModel, " word")) != nil {
				return
			}
			time.Sleep(pause)
		}
		sse.Send(relaytest.FinishChunk(ratioModel, "stop"))
		if final {
			sse.Send(relaytest.UsageChunk(ratioModel, 10, words))
		}
		sse.Done()
	}
}

// A usage that reports the prompt first does not end the local count:
// without a later usage the words are counted, and a client that leaves
// before the final usage is billed what it was sent.
func TestStream_EarlyPromptOnlyUsage(t *testing.T) {
	t.Parallel()
	t.Run("no usage after it", func(t *testing.T) {
		t.Parallel()
		g := MustOpenGateway(t, gatewayConfig{})
		g.MustCreateChannel(t, relaytest.NewChat(t, "sk-x", earlyPromptUsage(50, 0, false)), ratioModel, nil)
		_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
		if res := g.post(t, key, "/v1/chat/completions", streamChat(ratioModel, "hi", false)); res.Status != http.StatusOK {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
		logs := g.consumeLogs(t, "alice")
		if len(logs) != 1 || logs[0].PromptTokens != 10 || logs[0].CompletionTokens != 50 {
			t.Fatalf("logs %+v; want the upstream's prompt (10) and the 50 words counted", logs)
		}
	})
	t.Run("client leaves before the final usage", func(t *testing.T) {
		t.Parallel()
		g := MustOpenGateway(t, gatewayConfig{})
		g.MustCreateChannel(t, relaytest.NewChat(t, "sk-x", earlyPromptUsage(400, 5*time.Millisecond, true)), ratioModel, nil)
		_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
		// The client leaves once it has read three words.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		data, _ := json.Marshal(streamChat(ratioModel, "hi", false))
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.srv.URL+"/v1/chat/completions", bytes.NewReader(data))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := g.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		sc := bufio.NewScanner(resp.Body)
		for words := 0; words < 3 && sc.Scan(); {
			if strings.Contains(sc.Text(), " word") {
				words++
			}
		}
		cancel()
		resp.Body.Close()
		eventually(t, 30*time.Second, "the charge", func() bool { return len(g.consumeLogs(t, "alice")) == 1 })
		if l := g.consumeLogs(t, "alice")[0]; l.PromptTokens != 10 || l.CompletionTokens == 0 || l.CompletionTokens >= 400 {
			t.Fatalf("billed %d prompt and %d completion tokens; want 10 and the words sent before the client left", l.PromptTokens, l.CompletionTokens)
		} else if l.CompletionTokens < 3 {
			t.Fatalf("billed %d completion tokens; the client read 3 words", l.CompletionTokens)
		}
	})
}

// A client that leaves after its request reached the upstream, before the
// answer's headers, is billed its prompt once, streamed or not: the
// provider processed it.
func TestClientLeavesBeforeHeaders(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream %v", stream), func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			received := make(chan struct{})
			up := relaytest.NewChat(t, "sk-slow", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				close(received)
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
			})
			g.MustCreateChannel(t, up, ratioModel, nil)
			_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-received; cancel() }()
			body := chat(ratioModel, "hello there")
			body["stream"] = stream
			if _, err := g.do(ctx, key, "/v1/chat/completions", body); err == nil {
				t.Fatal("the call finished although its client left")
			}
			eventually(t, 5*time.Second, "the charge", func() bool { return len(g.consumeLogs(t, "alice")) == 1 })
			time.Sleep(50 * time.Millisecond) // nothing else may follow
			if logs := g.consumeLogs(t, "alice"); len(logs) != 1 || logs[0].PromptTokens == 0 || logs[0].CompletionTokens != 0 {
				t.Fatalf("logs %+v; want one charge of the prompt", logs)
			}
		})
	}
	// A transcription has no prompt to count, and the provider transcribes
	// the upload it received: it is charged what was reserved for it, the
	// PreConsumedQuota estimate.
	for _, path := range []string{"/v1/audio/transcriptions", "/v1/audio/translations"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			received := make(chan struct{})
			slow := func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				close(received)
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
			}
			up := relaytest.New(t, "sk-slow", relaytest.Routes{"POST " + path: slow})
			g.MustCreateChannel(t, up, ratioModel, nil)
			_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-received; cancel() }()
			body, ctype := audioForm(t, []formPart{{Name: "file", FileName: "a.mp3", ContentType: "audio/mpeg", Data: audioBytes()}, {Name: "model", Data: []byte(ratioModel)}})
			if _, err := g.do(ctx, key, path, string(body), "Content-Type", ctype); err == nil {
				t.Fatal("the call finished although its client left")
			}
			eventually(t, 5*time.Second, "the charge", func() bool { return len(g.consumeLogs(t, "alice")) == 1 })
			time.Sleep(50 * time.Millisecond)
			want := ratioQuota(500, 0, ratioModelMR, ratioModelCR, 1)
			if logs := g.consumeLogs(t, "alice"); len(logs) != 1 || logs[0].Quota != want {
				t.Fatalf("logs %+v; want one charge of %d, the reservation", logs, want)
			}
		})
	}
}

// Speech is priced by the characters of its input: an input that is not a
// string is refused rather than spoken for free.
func TestSpeech_InputMustBeText(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelRatio": `{"tts-1":7.5}`}})
	up := relaytest.New(t, "sk-tts", relaytest.Routes{"POST /v1/audio/speech": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "audio/mpeg")
		w.Write([]byte("ID3 sound"))
	}})
	g.MustCreateChannel(t, up, "tts-1", nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	e := g.post(t, key, "/v1/audio/speech", map[string]any{"model": "tts-1", "input": []string{"long text"}, "voice": "alloy"}).
		wantError(t, http.StatusBadRequest, "invalid_request")
	if !strings.HasPrefix(e.Error.Message, "input 必须是字符串") || up.Hits() != 0 {
		t.Fatalf("message %q, upstream hits %d", e.Error.Message, up.Hits())
	}
}

// Each prompt of a completions list gets its own choices: with max_tokens
// set, the reservation covers them all and the token never goes below zero.
func TestCompletions_PromptListReserved(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	const prompts, maxTok = 50, 10
	up := relaytest.New(t, "sk-c", relaytest.Routes{"POST /v1/completions": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		choices := []any{}
		for i := range prompts {
			choices = append(choices, map[string]any{"index": i, "text": strings.Repeat(" hi", maxTok), "finish_reason": "length"})
		}
		relaytest.WriteJSON(w, http.StatusOK, map[string]any{"id": "cmpl-1", "object": "text_completion", "model": ratioModel,
			"choices": choices, "usage": relaytest.NewUsage(prompts, prompts*maxTok)})
	}})
	g.MustCreateChannel(t, up, ratioModel, nil)
	ps := make([]string, prompts)
	for i := range ps {
		ps[i] = "hi"
	}
	body := map[string]any{"model": ratioModel, "prompt": ps, "max_tokens": maxTok}
	full := ratioQuota(prompts, prompts*maxTok, ratioModelMR, ratioModelCR, 1)

	// Too little for fifty prompts' answers: refused before the upstream.
	_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: full / 2})
	if res := g.post(t, key, "/v1/completions", body); res.Status == http.StatusOK || up.Hits() != 0 {
		t.Fatalf("status %d, upstream hits %d; want a refusal", res.Status, up.Hits())
	}
	// Enough: charged in full, never below zero.
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: full + 1000})
	if res := g.post(t, key, "/v1/completions", body); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if after := g.balances(t, "alice", tok.ID); after.TokenRemain != 1000 {
		t.Fatalf("token remain %d, want 1000", after.TokenRemain)
	}
}

// An answer with a member of an unexpected type (a usage that is text,
// before the choices) is still an answer: its choices are read and counted
// locally, not taken for a missing result.
func TestBody_UnexpectedShapeStillAnswers(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-odd", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","usage":"n/a","choices":[{"index":0,"message":{"role":"assistant","content":"fine 12345"}}]}`)
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	if res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi")); res.Status != http.StatusOK || !strings.Contains(string(res.Body), "12345") {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if logs := g.consumeLogs(t, "alice"); len(logs) != 1 || logs[0].PromptTokens == 0 {
		t.Fatalf("logs %+v", logs)
	}
}

// Names are matched exactly, and whatever a provider could read otherwise
// is refused rather than guessed at: a member named twice at any depth,
// and a member whose name differs only in letter case from one the relay
// reads (OpenAI ignores "Model" beside "model"; an upstream decoding as
// Go's encoding/json, Ollama's, serves it).
func TestBody_NamesMatchExactly(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	answer := func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion(fmt.Sprint(req.JSON["model"]), "ok", relaytest.NewUsage(10, 20)))
	}
	dear := relaytest.NewChat(t, "sk-dear", answer)
	cheap := relaytest.NewChat(t, "sk-cheap", answer)
	g.MustCreateChannel(t, dear, ratioModel, nil)
	g.MustCreateChannel(t, cheap, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})

	body := `{"model":"` + ratioModel + `","messages":[{"role":"user","content":"hi"}],"Temperature":1}`
	if res := g.post(t, key, "/v1/chat/completions", body); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if dear.Hits() != 1 || cheap.Hits() != 0 || dear.LastRequest().JSON["model"] != ratioModel {
		t.Fatalf("upstream hits: dear %d, cheap %d", dear.Hits(), cheap.Hits())
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 || logs[0].ModelName != ratioModel || logs[0].Quota != ratioQuota(10, 20, ratioModelMR, ratioModelCR, 1) {
		t.Fatalf("logs %+v, want one of %s at %d", logs, ratioModel, ratioQuota(10, 20, ratioModelMR, ratioModelCR, 1))
	}

	for _, c := range []struct{ name, body, param, message string }{
		{"top level", `{"model":"` + ratioModel + `","model":"` + miniModel + `","messages":[{"role":"user","content":"hi"}]}`,
			"model", "字段 model 出现了不止一次"},
		{"nested", `{"model":"` + miniModel + `","messages":[{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}]}`,
			"messages", "字段 messages/0/content/0/text 出现了不止一次"},
		{"invalid UTF-8", "{\"model\":\"" + miniModel + "\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}", "", "UTF-8"},
		{"case variant", `{"model":"` + ratioModel + `","messages":[{"role":"user","content":"hi"}],"Model":"` + miniModel + `"}`,
			"Model", "字段 Model 应写作 model"},
		{"case variant alone", `{"Model":"` + miniModel + `","messages":[{"role":"user","content":"hi"}]}`,
			"Model", "字段 Model 应写作 model"},
		{"case variant in a message", `{"model":"` + miniModel + `","messages":[{"role":"user","content":"hi","Content":"test_sensitive"}]}`,
			"Content", "字段 Content 应写作 content"},
	} {
		e := g.post(t, key, "/v1/chat/completions", c.body).wantError(t, http.StatusBadRequest, "invalid_request")
		if !strings.Contains(e.Error.Message, c.message) || fmt.Sprint(e.Error.Param) != c.param && c.param != "" {
			t.Errorf("%s: message %q param %v", c.name, e.Error.Message, e.Error.Param)
		}
	}
	if dear.Hits()+cheap.Hits() != 1 {
		t.Fatalf("a refused body reached an upstream: %d calls", dear.Hits()+cheap.Hits())
	}
}

// A GPT gizmo is priced and logged under its family's name, with its own
// name in the log's content (S §5.7, §5.8), and counted in rpm under it.
func TestGizmo_LoggedUnderItsFamily(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelPrice": `{"gpt-4-gizmo-*":0.1}`}})
	up := relaytest.NewChat(t, "sk-gizmo", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion(fmt.Sprint(req.JSON["model"]), "ok", relaytest.NewUsage(10, 20)))
	})
	g.MustCreateChannel(t, up, "gpt-4-gizmo-*", nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	if res := g.post(t, key, "/v1/chat/completions", chat("gpt-4-gizmo-g-abc", "hi")); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 || logs[0].ModelName != "gpt-4-gizmo-*" || !strings.HasSuffix(logs[0].Content, "，模型 gpt-4-gizmo-g-abc") ||
		logs[0].Quota != int64(0.1*quotaPerUnit) {
		t.Fatalf("logs %+v", logs)
	}
	if got := up.LastRequest().JSON["model"]; got != "gpt-4-gizmo-g-abc" {
		t.Fatalf("upstream model %v", got)
	}
	// The stat's rpm for the name the log list shows (and filters by)
	// counts the call that row records.
	m := url.QueryEscape("gpt-4-gizmo-*")
	list := g.rootGet(t, "/api/log/?model_name="+m)["data"].(map[string]any)
	stat := g.rootGet(t, "/api/log/stat?model_name="+m)["data"].(map[string]any)
	if list["total"].(float64) != 1 || stat["rpm"].(float64) != 1 {
		t.Fatalf("rows listed %v, rpm %v: want 1 and 1", list["total"], stat["rpm"])
	}
}

// S §5.8: a tts* model's prompt is its input's characters, behind a
// provider's prefix too; another speech model (gpt-4o-mini-tts) is priced by
// its input's tokens.
func TestSpeech_PromptByModel(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelRatio": `{"tts-1":7.5,"openai/tts-1":7.5,"gpt-4o-mini-tts":0.3}`}})
	up := relaytest.New(t, "sk-tts", relaytest.Routes{"POST /v1/audio/speech": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		w.Header().Set("Content-Type", "audio/mpeg")
		w.Write([]byte("ID3 sound"))
	}})
	g.MustCreateChannel(t, up, "tts-1,openai/tts-1,gpt-4o-mini-tts", nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	input := strings.Repeat("Hello there, how are you doing today? ", 10)
	for _, model := range []string{"tts-1", "openai/tts-1", "gpt-4o-mini-tts"} {
		if res := g.post(t, key, "/v1/audio/speech", map[string]any{"model": model, "input": input, "voice": "alloy"}); res.Status != http.StatusOK {
			t.Fatalf("%s: status %d %s", model, res.Status, res.Body)
		}
	}
	want := map[string]int64{"tts-1": 380, "openai/tts-1": 380, "gpt-4o-mini-tts": int64(tokenizer.CountText("gpt-4o-mini-tts", input))}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != len(want) {
		t.Fatalf("%d consume logs, want %d", len(logs), len(want))
	}
	for _, l := range logs {
		if l.PromptTokens != want[l.ModelName] {
			t.Errorf("%s: prompt %d, want %d", l.ModelName, l.PromptTokens, want[l.ModelName])
		}
	}
}

// A member name that Go's encoding/json takes for one the relay reads by
// Unicode case folding, not only by ASCII case ("ſ", U+017F, folds to "s";
// the Kelvin sign to "k"), is refused like "Size" is: an upstream that
// decodes so (Ollama, another gateway behind a custom channel) would make
// the 1024x1024 image the "ſize" asks for while the relay priced the
// 256x256 one.
func TestBody_NamesFoldedBeyondASCII(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelRatio": `{"dall-e-2":8,"test-model":1.5}`}})
	up := relaytest.New(t, "sk-up", relaytest.Routes{"POST /v1/images/generations": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, 200, map[string]any{"created": 1, "data": []any{map[string]any{"url": "https://images.example/1.png"}}})
	}})
	g.MustCreateChannel(t, up, "dall-e-2", func(c *store.Channel) { c.Type = relay.TypeCustom; c.BaseURL = up.URL + "/v1/images/generations" })
	chatUp := relaytest.NewChat(t, "sk-chat", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion(ratioModel, "ok", relaytest.NewUsage(10, 20)))
	})
	g.MustCreateChannel(t, chatUp, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})

	for _, c := range []struct{ path, body, param string }{
		{"/v1/images/generations", `{"model":"dall-e-2","prompt":"a cat","size":"256x256","ſize":"1024x1024"}`, "ſize"},
		{"/v1/chat/completions", `{"model":"` + ratioModel + `","messages":[{"role":"user","content":"hi"}],"max_to` + "\u212a" + `ens":5}`, "max_to\u212aens"},
		{"/v1/chat/completions", `{"model":"` + ratioModel + `","meſſages":[{"role":"user","content":"hi"}],"messages":[{"role":"user","content":"hi"}]}`, "meſſages"},
	} {
		res := g.post(t, key, c.path, c.body)
		if res.Status == http.StatusOK {
			var seen struct {
				Size string `json:"size"`
			}
			if reqs := up.Requests(); len(reqs) > 0 && c.path == "/v1/images/generations" {
				_ = json.Unmarshal(reqs[len(reqs)-1].Body, &seen) // as a Go upstream reads it
			}
			t.Errorf("%s %s: answered 200 (upstream read size %q); want 400 naming %s", c.path, c.body, seen.Size, c.param)
			continue
		}
		e := res.wantError(t, http.StatusBadRequest, "invalid_request")
		if e.Error.Param != c.param {
			t.Errorf("%s: param %q, want %q (%s)", c.body, e.Error.Param, c.param, e.Error.Message)
		}
	}
}

// A fixed price is charged as the decimal amount it is written as: US$0.0157
// at 500 000 quota per dollar is 7 850 quota, what the pricing page shows,
// not the one unit less that truncating the float product (7849.999…) gives.
func TestFixedPrice_ChargedAsWritten(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ModelPrice": `{"odd-price":0.0157}`,
	}})
	up := relaytest.NewChat(t, "sk-odd", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion(fmt.Sprint(req.JSON["model"]), "ok", relaytest.NewUsage(10, 20)))
	})
	g.MustCreateChannel(t, up, "odd-price", nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	if res := g.post(t, key, "/v1/chat/completions", chat("odd-price", "hi")); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 1 || logs[0].Quota != 7850 {
		t.Fatalf("US$0.0157 charged %d quota (%d logs), want 7850", sumQuota(logs), len(logs))
	}
}

// A fixed-price log keeps the QuotaPerUnit its price was turned into quota
// at, so its billing process can end on the quota charged after the rate
// changed; a ratio-priced log, whose quota does not depend on it, has none.
func TestFixedPrice_LogKeepsQuotaPerUnit(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ModelPrice":   `{"odd-price":0.0157}`,
		"QuotaPerUnit": "1000",
	}})
	up := relaytest.NewChat(t, "sk-odd", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion(fmt.Sprint(req.JSON["model"]), "ok", relaytest.NewUsage(10, 20)))
	})
	g.MustCreateChannel(t, up, "odd-price,"+ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	for _, model := range []string{"odd-price", ratioModel} {
		if res := g.post(t, key, "/v1/chat/completions", chat(model, "hi")); res.Status != http.StatusOK {
			t.Fatalf("%s: status %d: %s", model, res.Status, res.Body)
		}
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 2 {
		t.Fatalf("%d logs, want 2", len(logs))
	}
	for _, l := range logs {
		var o struct {
			QuotaPerUnit *float64 `json:"quota_per_unit"`
		}
		if err := json.Unmarshal([]byte(l.Other), &o); err != nil {
			t.Fatalf("log other %q: %v", l.Other, err)
		}
		switch {
		case l.ModelName == "odd-price" && (o.QuotaPerUnit == nil || *o.QuotaPerUnit != 1000 || l.Quota != 15):
			t.Errorf("fixed price: quota %d, other %s; want 15 (US$0.0157 at 1000 per dollar, truncated) and quota_per_unit 1000", l.Quota, l.Other)
		case l.ModelName == ratioModel && o.QuotaPerUnit != nil:
			t.Errorf("ratio price: other %s carries quota_per_unit", l.Other)
		}
	}
}
