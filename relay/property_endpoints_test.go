package relay_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/relay/tokenizer"
)

// The endpoints other than chat and completions, in the property test
// below.
type epKind int

const (
	epEmbedding epKind = iota
	epEngines          // /v1/engines/{model}/embeddings
	epModeration
	epImage
	epSpeech
	epTranscription
	epTranslation
	epRerank
	epKinds
)

var epNames = [...]string{"embeddings", "engines", "moderations", "images", "speech", "transcriptions", "translations", "rerank"}

func (k epKind) multipart() bool { return k == epTranscription || k == epTranslation }

// What a fake upstream does with one request of the endpoint property test.
type epBehaviour int

const (
	epOK       epBehaviour = iota // the answer, with usage where the kind has one
	epNoUsage                     // the answer without usage (counted locally)
	ep429                         // rate limited
	ep500                         // server error
	ep401                         // refused key
	ep400                         // a refused request: not retried
	epHang                        // no answer until the gateway gives up
	epReset                       // the connection reset before any answer
	epTrunc                       // half the answer (Content-Length says more), then a reset: speech cut midway
	epStall                       // half the answer, then nothing
	epNotJSON                     // 200 with an HTML page
	epErrorObj                    // 200 with an error object
	epEmpty                       // 200 without a result (data [], results [], no sound, no text)
	epBadJSON                     // 200 labelled JSON that is not
	epSlow                        // the answer in slow pieces
	epBehaviours
)

var epBehaviourNames = [...]string{"ok", "no-usage", "429", "500", "401", "400", "hang", "reset", "trunc", "stall", "not-json", "error-obj", "empty", "bad-json", "slow"}

// epFails reports whether an upstream behaving as b fails the attempt of a
// call of kind k in format f (nothing charged).
func epFails(b epBehaviour, k epKind, format string) bool {
	switch b {
	case epOK, epNoUsage, epSlow:
		return false
	case epEmpty:
		// An empty transcript in a text format is a transcript (silence).
		return !(k.multipart() && !jsonFormat(format))
	}
	return true
}

func epRetried(b epBehaviour, k epKind, format string) bool {
	return epFails(b, k, format) && b != ep400
}

func jsonFormat(f string) bool { return f == "" || f == "json" || f == "verbose_json" }

// epCall is one call of the endpoint property test.
type epCall struct {
	kind    epKind
	token   int
	model   string
	input   string // the text that names the call (input, prompt or query)
	size    string // images
	quality string
	n       int
	format  string // transcripts
	stream  bool   // a transcript asked with stream=true, speech as events
	file    []byte // the upload
	broken  bool   // a malformed multipart body
	body    []byte
	ctype   string
	path    string
	client  clientKind // clientLeaves: a speech download abandoned after its first bytes

	propOutcome
}

// epHit is one upstream request of the endpoint property test.
type epHit struct {
	channel   int
	behaviour epBehaviour
	usage     bool // the answer reported usage
	prompt    int  // what it reported
	text      string
	// cut is set when the gateway left a slow answer before its end: on a
	// loaded machine the relay's timeout may end a healthy attempt.
	cut bool
}

// The endpoints other than chat under the same seeded mix of failures,
// clients that leave and tokens with little quota as chat and completions
// (TestMoney_PropertyUnderFailure): each call is charged once and logged
// once when answered, refunded when not, priced as docs/billing.md says,
// and the books balance exactly. A multipart upload reaches every channel
// tried whole.
func TestMoney_PropertyEndpointsUnderFailure(t *testing.T) {
	t.Parallel()
	runPropertyModes(t, 20261201, func(t *testing.T, seed uint64, m propMode) {
		runEndpointProperty(t, seed, epCalls, m)
	})
}

// epCalls is how many calls each mode makes; GATEWAY_PROP_CALLS sets
// another number.
var epCalls = func() int {
	if n, err := strconv.Atoi(os.Getenv("GATEWAY_PROP_CALLS")); err == nil && n > 0 {
		return n
	}
	return 240
}()

const (
	ttsModel    = "tts-1"
	ttsModelMR  = 7.5
	dalle2MR    = 8.0
	dalle3Price = 0.04
)

// epPriced is the price of a model in the endpoint property test.
func epPriced(model string) (mr, cr float64) {
	switch model {
	case ratioModel:
		return ratioModelMR, ratioModelCR
	case embedModel:
		return embedModelMR, 1
	case ttsModel:
		return ttsModelMR, 1
	}
	panic("no price for " + model)
}

// epImageQuota is an image call's price (docs/billing.md).
func epImageQuota(p *epCall) int64 {
	per := dalle3Price
	if p.model == "dall-e-2" {
		per = 0.0025 * dalle2MR
	}
	factor := map[string]float64{"256x256": 0.4, "512x512": 0.45, "1024x1024": 1, "1024x1792": 2, "1792x1024": 2}[p.size]
	quality := 1.0
	if p.model == "dall-e-3" && p.quality == "hd" {
		quality = 2
		if p.size != "1024x1024" {
			quality = 1.5
		}
	}
	return int64(per * factor * quality * float64(p.n) * quotaPerUnit)
}

// epFile is the upload of call i: every byte value, and the line breaks
// and dashes a careless copy of the form would touch.
func epFile(i, size int) []byte {
	b := make([]byte, size)
	pat := []byte("\r\n--\r\n\n--x")
	for j := range b {
		if j%300 < len(pat) {
			b[j] = pat[j%300]
		} else {
			b[j] = byte(j*7 + i)
		}
	}
	return b
}

// epSound is the speech answer of call i.
func epSound(i, size int) []byte {
	b := make([]byte, size)
	copy(b, "ID3\x04\x00")
	for j := 5; j < size; j++ {
		b[j] = byte(j*13 + i)
	}
	return b
}

func runEndpointProperty(t *testing.T, seed uint64, calls int, mode propMode) {
	const retryTimes = 2
	g := MustOpenGateway(t, gatewayConfig{
		Durable: mode.durable,
		Options: map[string]string{"RetryTimes": strconv.Itoa(retryTimes), "AutomaticDisableChannelEnabled": "true",
			"ModelRatio": fmt.Sprintf(`{%q:%v,%q:%v,%q:%v,%q:%v}`, ratioModel, ratioModelMR, embedModel, embedModelMR, ttsModel, ttsModelMR, "dall-e-2", dalle2MR),
			"ModelPrice": fmt.Sprintf(`{%q:%v}`, "dall-e-3", dalle3Price)},
		Relay: relay.Config{FirstByteTimeout: timeSlack * 250 * time.Millisecond, StreamIdleTimeout: timeSlack * 400 * time.Millisecond,
			RelayTimeout: timeSlack * time.Second, ClientWriteTimeout: timeSlack * time.Second},
	})
	if mode.sync > 0 {
		g.st.SetSyncInterval(mode.sync)
	}

	// Tokens as in the chat test.
	tokens := propTokens(t, g, 6_000)

	// The calls, drawn from the seed.
	rng := rand.New(rand.NewPCG(seed, 1<<62))
	plan := make([]epCall, calls)
	for i := range plan {
		p := &plan[i]
		p.kind = epKind(rng.IntN(int(epKinds)))
		p.token = rng.IntN(len(tokens))
		p.input = "call-" + strconv.Itoa(i)
		p.model = ratioModel
		switch n := rng.IntN(10); {
		case n == 0:
			p.client = clientCancels
		case n <= 2 && p.kind == epSpeech:
			p.client = clientLeaves
		}
		var body map[string]any
		switch p.kind {
		case epEmbedding, epEngines:
			if rng.IntN(3) == 0 {
				p.model = embedModel
			}
			body = map[string]any{"model": p.model, "input": p.input}
			p.path = "/v1/embeddings"
			if p.kind == epEngines {
				delete(body, "model")
				p.path = "/v1/engines/" + p.model + "/embeddings"
			}
		case epModeration:
			body = map[string]any{"model": p.model, "input": p.input}
			p.path = "/v1/moderations"
		case epRerank:
			body = map[string]any{"model": p.model, "query": p.input,
				"documents": []string{"the first document of the call, about foxes and dogs", "the second one, about cats", "a third, short"}}
			p.path = "/v1/rerank"
		case epImage:
			p.model, p.n, p.size = "dall-e-2", 1+rng.IntN(3), [...]string{"256x256", "512x512", "1024x1024"}[rng.IntN(3)]
			if rng.IntN(2) == 0 {
				p.model, p.size = "dall-e-3", [...]string{"1024x1024", "1024x1792", "1792x1024"}[rng.IntN(3)]
				p.n = 1
				if rng.IntN(2) == 0 {
					p.quality = "hd"
				}
			}
			body = map[string]any{"model": p.model, "prompt": p.input, "n": p.n, "size": p.size}
			if p.quality != "" {
				body["quality"] = p.quality
			}
			p.path = "/v1/images/generations"
		case epSpeech:
			if rng.IntN(2) == 0 {
				p.model = ttsModel
			}
			p.input += strings.Repeat(" and some more words to say", rng.IntN(8))
			body = map[string]any{"model": p.model, "input": p.input, "voice": "alloy"}
			if rng.IntN(3) == 0 {
				// The sound as server-sent events.
				p.stream = true
				body["stream_format"] = "sse"
			}
			p.path = "/v1/audio/speech"
		case epTranscription, epTranslation:
			p.format = [...]string{"", "json", "text", "srt", "vtt", "verbose_json"}[rng.IntN(6)]
			size := 200 + rng.IntN(4000)
			if rng.IntN(8) == 0 {
				size = 128<<10 + rng.IntN(512<<10) // a large upload
			}
			p.file = epFile(i, size)
			parts := []formPart{
				{Name: "file", FileName: "talk-" + strconv.Itoa(i) + ".mp3", ContentType: "audio/mpeg", Data: p.file},
				{Name: "model", Data: []byte(p.model)},
				{Name: "prompt", Data: []byte(p.input)},
			}
			if p.format != "" {
				parts = append(parts, formPart{Name: "response_format", Data: []byte(p.format)})
			}
			if jsonFormat(p.format) && p.format != "verbose_json" && rng.IntN(3) == 0 {
				p.stream = true
				parts = append(parts, formPart{Name: "stream", Data: []byte("true")})
			}
			p.body, p.ctype = audioForm(t, parts)
			if rng.IntN(12) == 0 {
				// Malformed: cut before its closing boundary, or no boundary.
				p.broken = true
				if rng.IntN(2) == 0 {
					p.body = p.body[:len(p.body)-20]
				} else {
					p.ctype = "multipart/form-data"
				}
			}
			p.path = "/v1/audio/" + epNames[p.kind]
		}
		if body != nil {
			p.body, _ = json.Marshal(body)
			p.ctype = "application/json"
		}
	}
	cancelAfter := make([]time.Duration, calls)
	for i := range cancelAfter {
		cancelAfter[i] = time.Duration(rng.IntN(400)) * time.Millisecond
	}

	var hitsMu sync.Mutex
	hits := map[int][]epHit{}
	callOf := func(r *http.Request, req *relaytest.Request) int {
		var s string
		for _, k := range []string{"input", "prompt", "query"} {
			if v, ok := req.JSON[k].(string); ok {
				s = v
				break
			}
		}
		if req.JSON == nil {
			// The form's prompt field, found without parsing the upload.
			const field = "name=\"prompt\"\r\n\r\n"
			if _, rest, ok := bytes.Cut(req.Body, []byte(field)); ok {
				s, _, _ = strings.Cut(string(rest[:min(len(rest), 32)]), "\r")
			}
		}
		s, _, _ = strings.Cut(s, " ")
		i, err := strconv.Atoi(strings.TrimPrefix(s, "call-"))
		if err != nil || i < 0 || i >= len(plan) {
			return -1
		}
		return i
	}

	handler := func(chIdx int) relaytest.Handler {
		return func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			i := callOf(r, req)
			if i < 0 {
				t.Errorf("upstream %d: request without a call number", chIdx)
				return
			}
			p := &plan[i]
			rng := rand.New(rand.NewPCG(seed, uint64(i)<<8|uint64(chIdx)))
			b := epBehaviour(rng.IntN(int(epBehaviours)))
			if rng.IntN(3) == 0 {
				b = epOK
			}
			if b == epBadJSON && p.kind.multipart() && !jsonFormat(p.format) {
				b = epErrorObj // a text transcript has no JSON to break
			}
			h := epHit{channel: chIdx, behaviour: b, usage: b != epNoUsage, prompt: 10 + rng.IntN(20)}
			if p.kind == epRerank {
				// Reported within the local count: a rerank reserves its
				// prompt only.
				h.prompt = 5 + rng.IntN(10)
			}
			upModel := p.model
			if chIdx == 2 {
				upModel = "up-" + p.model
			}
			// The upload reaches every channel whole: the client's bytes,
			// or, on the mapping channel, the same parts with the model
			// renamed.
			if p.kind.multipart() {
				if chIdx != 2 && !bytes.Equal(req.Body, p.body) {
					t.Errorf("call %d: channel %d got a body of %d bytes, the client sent %d (not the same bytes)", i, chIdx, len(req.Body), len(p.body))
				}
				got := formParts(t, r.Header.Get("Content-Type"), req.Body)
				var file []byte
				var model string
				for _, part := range got {
					switch part.Name {
					case "file":
						file = part.Data
					case "model":
						model = string(part.Data)
					}
				}
				if !bytes.Equal(file, p.file) {
					t.Errorf("call %d: channel %d got a file of %d bytes, the client sent %d", i, chIdx, len(file), len(p.file))
				}
				if model != upModel {
					t.Errorf("call %d: channel %d got model %q, want %q", i, chIdx, model, upModel)
				}
			} else if m := req.Model(); m != upModel {
				t.Errorf("call %d: channel %d got model %q, want %q", i, chIdx, m, upModel)
			}

			// The good answer of the kind.
			var data []byte
			ctype := "application/json"
			var usage any
			if h.usage {
				usage = relaytest.NewUsage(h.prompt, 0)
			}
			words := 1 + rng.IntN(30)
			switch p.kind {
			case epEmbedding, epEngines:
				data, _ = json.Marshal(relaytest.Embedding(upModel, 1, func() *relaytest.Usage {
					if h.usage {
						return relaytest.NewUsage(h.prompt, 0)
					}
					return nil
				}()))
			case epModeration:
				v := map[string]any{"id": "modr-1", "model": upModel, "results": []any{map[string]any{"flagged": false, "categories": map[string]any{}}}}
				if h.usage {
					v["usage"] = usage
				}
				data, _ = json.Marshal(v)
			case epRerank:
				v := map[string]any{"results": []any{map[string]any{"index": 0, "relevance_score": 0.9}}}
				if h.usage {
					if rng.IntN(2) == 0 {
						v["meta"] = map[string]any{"tokens": map[string]any{"input_tokens": h.prompt}}
					} else {
						v["usage"] = map[string]any{"prompt_tokens": h.prompt, "total_tokens": h.prompt}
					}
				}
				data, _ = json.Marshal(v)
			case epImage:
				h.usage = false
				var imgs []any
				for range p.n {
					imgs = append(imgs, map[string]any{"url": "https://images.example/" + strconv.Itoa(i) + ".png"})
				}
				data, _ = json.Marshal(map[string]any{"created": 1, "data": imgs})
			case epSpeech:
				h.usage = false
				size := 1 + rng.IntN(64<<10)
				if rng.IntN(4) == 0 {
					size = 256<<10 + rng.IntN(256<<10)
				}
				data, ctype = epSound(i, size), "audio/mpeg"
				if p.stream {
					var sb strings.Builder
					for chunk := range slices.Chunk(data, 4<<10) {
						fmt.Fprintf(&sb, "data: {\"type\":\"speech.audio.delta\",\"audio\":%q}\n\n", base64.StdEncoding.EncodeToString(chunk))
					}
					sb.WriteString("data: {\"type\":\"speech.audio.done\",\"usage\":{\"input_tokens\":5,\"output_tokens\":50,\"total_tokens\":55}}\n\n")
					data, ctype = []byte(sb.String()), "text/event-stream"
				}
			case epTranscription, epTranslation:
				h.usage = false
				text := strings.TrimSpace(strings.Repeat("word ", words))
				if b == epEmpty && !jsonFormat(p.format) {
					text = ""
				}
				h.text = text
				switch {
				case p.stream:
					// Deltas, and (mostly) the final text.
					var sb strings.Builder
					for w := range strings.SplitAfterSeq(text, " ") {
						fmt.Fprintf(&sb, "data: {\"type\":\"transcript.text.delta\",\"delta\":%s}\n\n", quote(w))
					}
					if rng.IntN(4) != 0 {
						fmt.Fprintf(&sb, "data: {\"type\":\"transcript.text.done\",\"text\":%s}\n\n", quote(text))
					}
					data, ctype = []byte(sb.String()), "text/event-stream"
				case p.format == "text":
					data, ctype = []byte(text), "text/plain; charset=utf-8"
				case p.format == "srt":
					data, ctype = []byte("1\n00:00:00,000 --> 00:00:01,000\n"+text+"\n\n"), "text/plain; charset=utf-8"
					if text == "" {
						data = nil
					}
				case p.format == "vtt":
					data, ctype = []byte("WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n"+text+"\n\n"), "text/vtt; charset=utf-8"
					if text == "" {
						data = []byte("WEBVTT\n\n") // nothing said
					}
				case p.format == "verbose_json":
					data, _ = json.Marshal(map[string]any{"task": "transcribe", "language": "english", "duration": 1.5, "text": text,
						"segments": []any{map[string]any{"id": 0, "start": 0, "end": 1.5, "text": text}}})
				default:
					data, _ = json.Marshal(map[string]any{"text": text})
				}
			}
			hitsMu.Lock()
			hits[i] = append(hits[i], h)
			idx := len(hits[i]) - 1
			hitsMu.Unlock()
			cut := func() {
				hitsMu.Lock()
				hits[i][idx].cut = true
				hitsMu.Unlock()
			}

			switch b {
			case ep429:
				relaytest.WriteError(w, 429, "rate_limit_error", "rate_limit_exceeded", "slow down")
			case ep500:
				relaytest.WriteError(w, 500, "server_error", "", "boom")
			case ep401:
				relaytest.WriteError(w, 401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided")
			case ep400:
				relaytest.WriteError(w, 400, "invalid_request_error", "", "bad request")
			case epReset:
				panic(http.ErrAbortHandler)
			case epHang:
				awaitGatewayGone(t, r, i, "a hanging upstream")
			case epNotJSON:
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, "<html><body>not an API</body></html>")
			case epErrorObj:
				if p.stream && p.kind == epSpeech {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, "data: {\"type\":\"error\",\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n")
					return
				}
				relaytest.WriteJSON(w, 200, map[string]any{"error": map[string]any{"message": "overloaded", "type": "server_error"}})
			case epBadJSON:
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"data": [`)
			case epEmpty:
				switch p.kind {
				case epSpeech:
					if p.stream {
						w.Header().Set("Content-Type", "text/event-stream")
						io.WriteString(w, ": keep-alive\n\n")
						return
					}
					w.Header().Set("Content-Type", "audio/mpeg")
					w.WriteHeader(200)
				case epImage, epEmbedding, epEngines:
					relaytest.WriteJSON(w, 200, map[string]any{"created": 1, "object": "list", "data": []any{}})
				case epModeration, epRerank:
					relaytest.WriteJSON(w, 200, map[string]any{"id": "x", "results": []any{}})
				default:
					if jsonFormat(p.format) {
						relaytest.WriteJSON(w, 200, map[string]any{"task": "transcribe"})
					} else {
						w.Header().Set("Content-Type", ctype)
						w.Write(data)
					}
				}
			case epTrunc:
				writeHalfThenReset(w, ctype, data)
			case epStall:
				writeHalfThenStall(t, w, r, ctype, data, i)
			case epSlow:
				writeSlowly(w, r, ctype, data, max(len(data)/8, 1), cut)
			default:
				w.Header().Set("Content-Type", ctype)
				w.Write(data)
			}
		}
	}

	// The channels (propChannels): the third maps every model to "up-"
	// and its name.
	models := strings.Join([]string{ratioModel, embedModel, ttsModel, "dall-e-2", "dall-e-3"}, ",")
	var mapping []string
	for _, name := range strings.Split(models, ",") {
		mapping = append(mapping, fmt.Sprintf("%q:%q", name, "up-"+name))
	}
	channels, upstreams, chIndex := propChannels(t, g, "ep", models, "{"+strings.Join(mapping, ",")+"}", func(i int) relaytest.Routes {
		h := handler(i)
		routes := relaytest.Routes{"POST /custom": h}
		for k := range epKinds {
			if k != epEngines {
				routes["POST /v1/"+map[epKind]string{epEmbedding: "embeddings", epModeration: "moderations", epImage: "images/generations",
					epSpeech: "audio/speech", epTranscription: "audio/transcriptions", epTranslation: "audio/translations", epRerank: "rerank"}[k]] = h
			}
		}
		return routes
	})
	before := readPropBooks(t, g.st, tokens, channels)

	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	run := func(i int) {
		p := &plan[i]
		req := propRequest{path: p.path, key: tokens[p.token].key, ctype: p.ctype, body: p.body,
			cancels: p.client == clientCancels, cancelAfter: cancelAfter[i]}
		if p.client == clientLeaves {
			// A download abandoned after its first bytes.
			req.leave = func(r io.Reader) { io.ReadFull(r, make([]byte, 100)) }
		}
		p.send(t, g, client, i, req)
	}
	runPropCalls(len(plan), run)
	stopProp(g, upstreams, mode)
	hitsMu.Lock()
	defer hitsMu.Unlock()

	logsByReq, allLogs := propLogs(t, g)
	describe := func(i int) string {
		p := plan[i]
		var hs []string
		for _, h := range hits[i] {
			hs = append(hs, fmt.Sprintf("ch%d:%s", h.channel, epBehaviourNames[h.behaviour]))
		}
		return fmt.Sprintf("call %d (%s, token %s, %s, format %q, stream %v, %d-byte upload, broken %v, client %d; answered %d %s, err %v; upstream %v)",
			i, epNames[p.kind], tokens[p.token].tok.Name, p.model, p.format, p.stream, len(p.file), p.broken, p.client, p.status, p.code, p.err, hs)
	}
	for i, p := range plan {
		hs := hits[i]
		logs := logsByReq[p.reqID]
		if len(hs) > retryTimes+1 {
			t.Errorf("%s: %d upstream requests, at most %d allowed", describe(i), len(hs), retryTimes+1)
		}
		seen := map[int]bool{}
		for k, h := range hs {
			if seen[h.channel] {
				t.Errorf("%s: channel %d asked twice", describe(i), h.channel)
			}
			seen[h.channel] = true
			if k < len(hs)-1 && !epRetried(h.behaviour, p.kind, p.format) && !h.cut {
				t.Errorf("%s: attempt %d (%s) answered, yet another channel was asked", describe(i), k, epBehaviourNames[h.behaviour])
			}
		}
		if p.broken && (len(hs) > 0 || (p.client == clientNormal && p.status != 400)) {
			t.Errorf("%s: a malformed form must be refused with 400 before any upstream", describe(i))
		}
		if p.client != clientNormal {
			if len(logs) > 1 {
				t.Errorf("%s: %d logs", describe(i), len(logs))
			}
			if len(logs) == 1 && len(hs) == 0 {
				t.Errorf("%s: billed without reaching an upstream", describe(i))
			}
			if len(logs) == 1 && len(hs) > 0 {
				// Billed what the answer costs, or what a call whose client
				// left before its answer costs (docs/billing.md).
				l, last := logs[0], hs[len(hs)-1]
				gp, gc, gq := epGonePrice(&p)
				ap, ac, aq := epPrice(&p, &last)
				gone := l.Quota == gq && l.PromptTokens == int64(gp) && l.CompletionTokens == int64(gc)
				answered := !epFails(last.behaviour, p.kind, p.format) && l.Quota == aq && l.PromptTokens == int64(ap) && l.CompletionTokens == int64(ac)
				if !gone && !answered {
					t.Errorf("%s: a client that left was billed %d+%d tokens for %d; its answer costs %d+%d for %d, leaving before it %d+%d for %d",
						describe(i), l.PromptTokens, l.CompletionTokens, l.Quota, ap, ac, aq, gp, gc, gq)
				}
			}
			continue
		}
		if p.err != nil {
			t.Errorf("%s: the client failed", describe(i))
			continue
		}
		if p.status != 200 {
			if len(logs) != 0 {
				t.Errorf("%s: answered %d with %d logs", describe(i), p.status, len(logs))
			}
			if len(hs) > 0 && hs[len(hs)-1].behaviour == ep400 && p.status != 400 {
				t.Errorf("%s: the last upstream answered 400, the client got %d", describe(i), p.status)
			}
			if len(hs) > 0 && len(hs) < retryTimes+1 && epRetried(hs[len(hs)-1].behaviour, p.kind, p.format) {
				t.Errorf("%s: failed after %d attempts of %d", describe(i), len(hs), retryTimes+1)
			}
			continue
		}
		if len(logs) != 1 {
			t.Errorf("%s: answered 200 with %d logs", describe(i), len(logs))
			continue
		}
		if len(hs) == 0 {
			t.Errorf("%s: answered 200 without an upstream", describe(i))
			continue
		}
		last := hs[len(hs)-1]
		if epFails(last.behaviour, p.kind, p.format) {
			t.Errorf("%s: answered 200 from a failed attempt", describe(i))
			continue
		}
		l := logs[0]
		if chIndex[l.ChannelID] != last.channel {
			t.Errorf("%s: log charged channel %d", describe(i), chIndex[l.ChannelID])
		}
		if l.TokenID != tokens[p.token].tok.ID {
			t.Errorf("%s: log names token %d", describe(i), l.TokenID)
		}
		if prompt, completion, want := epPrice(&p, &last); l.Quota != want || l.PromptTokens != int64(prompt) || l.CompletionTokens != int64(completion) {
			t.Errorf("%s: log has %d+%d tokens for %d, want %d+%d for %d", describe(i), l.PromptTokens, l.CompletionTokens, l.Quota, prompt, completion, want)
		}
	}

	var tally propTally
	var goneBilled int
	for _, p := range plan {
		if p.client != clientNormal && len(logsByReq[p.reqID]) > 0 {
			goneBilled++
		}
		tally.add(p.propOutcome)
	}
	t.Logf("%s, %d logs (%d of clients that left); %v", &tally, len(allLogs), goneBilled, tally.codes)

	// The books: logs add up to every balance's movement, nothing is held.
	checkPropBooks(t, g, tokens, channels, before, allLogs)
}

// epLocalPrompt is a call's prompt counted here.
func epLocalPrompt(p *epCall) int {
	switch p.kind {
	case epEmbedding, epEngines, epModeration:
		return tokenizer.Counter{}.CountInput(p.model, p.input)
	case epRerank:
		return tokenizer.CountText(p.model, p.input) + tokenizer.Counter{}.CountInput(p.model, []any{"the first document of the call, about foxes and dogs", "the second one, about cats", "a third, short"})
	case epSpeech:
		if p.model == ttsModel {
			return len([]rune(p.input))
		}
		return tokenizer.CountText(p.model, p.input)
	}
	return 0
}

// epPrice is what the answer h costs call p (docs/billing.md): tokens and
// quota.
func epPrice(p *epCall, h *epHit) (prompt, completion int, quota int64) {
	if p.kind == epImage {
		return 0, 0, epImageQuota(p)
	}
	prompt = epLocalPrompt(p)
	if p.kind.multipart() {
		completion = tokenizer.CountText(p.model, h.text)
	}
	if h.usage {
		prompt = h.prompt
	}
	mr, cr := epPriced(p.model)
	return prompt, completion, ratioQuota(prompt, completion, mr, cr, 1)
}

// epGonePrice is what call p costs when its client left after the request
// reached the upstream, before the answer: the prompt counted here, an
// image in full, a transcript PreConsumedQuota (500) tokens.
func epGonePrice(p *epCall) (prompt, completion int, quota int64) {
	if p.kind == epImage {
		return 0, 0, epImageQuota(p)
	}
	prompt = epLocalPrompt(p)
	if p.kind.multipart() {
		prompt = 500
	}
	mr, cr := epPriced(p.model)
	return prompt, 0, ratioQuota(prompt, 0, mr, cr, 1)
}
