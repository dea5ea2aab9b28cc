package relay_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"testing"

	"gateway/relay/relaytest"
	"gateway/relay/tokenizer"
	"gateway/store"
)

// formPart is one part of a multipart body, as sent.
type formPart struct {
	Name, FileName, ContentType string
	Data                        []byte
}

// audioForm builds a transcription body from parts, in their order; a part
// with a file name is a file with its own content type.
func audioForm(tb testing.TB, parts []formPart) (body []byte, ctype string) {
	tb.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.FileName != "" {
			h.Set("Content-Disposition", `form-data; name="`+p.Name+`"; filename="`+p.FileName+`"`)
			h.Set("Content-Type", p.ContentType)
		} else {
			h.Set("Content-Disposition", `form-data; name="`+p.Name+`"`)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(p.Data)
	}
	if err := mw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

// formParts reads a multipart body back, part by part, without decoding.
func formParts(tb testing.TB, ctype string, body []byte) []formPart {
	tb.Helper()
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil || mt != "multipart/form-data" {
		tb.Fatalf("upstream Content-Type = %q (%v)", ctype, err)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var out []formPart
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			tb.Fatalf("upstream body is not a multipart body for %q: %v", ctype, err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, formPart{Name: p.FormName(), FileName: p.FileName(), ContentType: p.Header.Get("Content-Type"), Data: data})
	}
}

// audioBytes is a fake recording: every byte value, and the line breaks
// and dashes a careless rewrite of the form would touch.
func audioBytes() []byte {
	var b bytes.Buffer
	for range 64 {
		for i := range 256 {
			b.WriteByte(byte(i))
		}
		b.WriteString("\r\n--\r\n\n--x")
	}
	return b.Bytes()
}

// model_mapping applies to the audio paths too (S §5.6): a mapped model
// reaches the upstream in the form, with every other part as the client
// sent it; without a mapping the client's bytes go upstream untouched.
func TestAudio_ModelMapping(t *testing.T) {
	t.Parallel()
	const upstreamName = "whisper-large-v3"
	clientParts := []formPart{
		{Name: "file", FileName: "meeting notes.mp3", ContentType: "audio/mpeg", Data: audioBytes()},
		{Name: "model", Data: []byte(ratioModel)},
		{Name: "language", Data: []byte("de")},
		{Name: "response_format", Data: []byte("json")},
		{Name: "prompt", Data: []byte("Zeile eins\r\nZeile zwei")},
	}
	cases := []struct {
		name    string
		path    string
		mapping string
		model   string // what the upstream must receive
	}{
		{"transcription mapped", "/v1/audio/transcriptions", `{"` + ratioModel + `":"` + upstreamName + `"}`, upstreamName},
		{"translation mapped", "/v1/audio/translations", `{"` + ratioModel + `":"` + upstreamName + `"}`, upstreamName},
		{"transcription unmapped", "/v1/audio/transcriptions", "", ratioModel},
		{"translation other model mapped", "/v1/audio/translations", `{"whisper-1":"` + upstreamName + `"}`, ratioModel},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			var mu sync.Mutex
			var got *relaytest.Request
			answer := func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				mu.Lock()
				got = req
				mu.Unlock()
				relaytest.WriteJSON(w, http.StatusOK, map[string]any{"text": "Guten Morgen"})
			}
			up := relaytest.New(t, "sk-audio", relaytest.Routes{
				"POST /v1/audio/transcriptions": answer,
				"POST /v1/audio/translations":   answer,
			})
			g.MustCreateChannel(t, up, ratioModel, func(c *store.Channel) { c.ModelMapping = tc.mapping })
			_, key := g.MustCreateToken(t, "alice", store.Token{})
			body, ctype := audioForm(t, clientParts)

			res := g.post(t, key, tc.path, string(body), "Content-Type", ctype)
			if res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			mu.Lock()
			defer mu.Unlock()
			if got == nil {
				t.Fatal("the upstream was not called")
			}
			upCtype := got.Header.Get("Content-Type")
			if tc.model == ratioModel {
				if !bytes.Equal(got.Body, body) || upCtype != ctype {
					t.Errorf("upstream got Content-Type %q and a body of %d bytes, want the client's %q and %d bytes unchanged",
						upCtype, len(got.Body), ctype, len(body))
				}
			}
			want := append([]formPart(nil), clientParts...)
			want[1].Data = []byte(tc.model)
			parts := formParts(t, upCtype, got.Body)
			if len(parts) != len(want) {
				t.Fatalf("upstream got %d parts, want %d", len(parts), len(want))
			}
			for i, p := range parts {
				w := want[i]
				if p.Name != w.Name || p.FileName != w.FileName || p.ContentType != w.ContentType || !bytes.Equal(p.Data, w.Data) {
					t.Errorf("part %d = %q file %q type %q, %d bytes %.40q; want %q file %q type %q, %d bytes %.40q",
						i, p.Name, p.FileName, p.ContentType, len(p.Data), p.Data, w.Name, w.FileName, w.ContentType, len(w.Data), w.Data)
				}
			}
			logs := g.consumeLogs(t, "alice")
			if len(logs) != 1 {
				t.Fatalf("consume logs = %d", len(logs))
			}
			wantUpstream := ""
			if tc.model != ratioModel {
				wantUpstream = tc.model
			}
			if o := other(t, logs[0]); logs[0].ModelName != ratioModel || o.UpstreamModel != wantUpstream {
				t.Errorf("log model %q, other %s; want %q and upstream_model %q", logs[0].ModelName, logs[0].Other, ratioModel, wantUpstream)
			}
		})
	}
}

// A transcript is charged for its text only (S §5.8, STT): the cue numbers,
// timings and WebVTT header and notes of srt and vtt answers are not
// completion tokens, nor is the JSON around the text.
func TestAudio_TranscriptCounting(t *testing.T) {
	t.Parallel()
	// The text the speaker said, one cue line per line.
	lines := []string{
		"Good morning, everyone.",
		"Today we talk about token counting,",
		"and why timestamps like 00:00:01,000 are not words.",
		"Thank you.",
	}
	plain := strings.Join(lines, "\n")
	srt := "1\n00:00:00,000 --> 00:00:02,500\n" + lines[0] + "\n\n" +
		"2\n00:00:02,500 --> 00:00:05,000\n" + lines[1] + "\n" + lines[2] + "\n\n" +
		"3\n00:00:05,000 --> 00:00:06,000\n" + lines[3] + "\n"
	vtt := "WEBVTT - lecture\r\nKind: captions\r\n\r\n" +
		"NOTE produced by the upstream\r\nover two lines\r\n\r\n" +
		"00:00:00.000 --> 00:00:02.500\r\n" + lines[0] + "\r\n\r\n" +
		"intro-2\r\n00:00:02.500 --> 00:00:05.000 align:start position:10%\r\n" + lines[1] + "\r\n" + lines[2] + "\r\n\r\n" +
		"00:00:05.000 --> 00:00:06.000\r\n" + lines[3] + "\r\n"
	verbose := `{"task":"transcribe","language":"english","duration":6.0,"text":` + quote(plain) +
		`,"segments":[{"id":0,"start":0,"end":2.5,"text":` + quote(lines[0]) + `,"tokens":[1,2,3]}]}`
	cases := []struct {
		format, ctype, answer string
	}{
		{"srt", "text/plain; charset=utf-8", srt},
		{"vtt", "text/plain; charset=utf-8", vtt},
		{"verbose_json", "application/json", verbose},
		{"json", "application/json", `{"text":` + quote(plain) + `}`},
		{"text", "text/plain; charset=utf-8", plain},
		// An upstream that ignores the format asked for is charged for
		// what it sent: a JSON document, or text without cues.
		{"srt", "application/json", `{"text":` + quote(plain) + `}`},
		{"vtt", "text/plain; charset=utf-8", plain},
	}
	for _, tc := range cases {
		t.Run(tc.format+" "+tc.ctype, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			up := relaytest.New(t, "sk-stt", relaytest.Routes{
				"POST /v1/audio/transcriptions": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
					w.Header().Set("Content-Type", tc.ctype)
					io.WriteString(w, tc.answer)
				},
			})
			ch := g.MustCreateChannel(t, up, ratioModel, nil)
			tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
			before := g.balances(t, "alice", tok.ID, ch)
			body, ctype := audioForm(t, []formPart{
				{Name: "file", FileName: "talk.wav", ContentType: "audio/wav", Data: []byte("RIFF....WAVEfmt ")},
				{Name: "model", Data: []byte(ratioModel)},
				{Name: "response_format", Data: []byte(tc.format)},
			})

			res := g.post(t, key, "/v1/audio/transcriptions", string(body), "Content-Type", ctype)
			if res.Status != http.StatusOK || string(res.Body) != tc.answer {
				t.Fatalf("status %d, body %q; want 200 with the upstream's answer", res.Status, res.Body)
			}
			logs := g.consumeLogs(t, "alice")
			if len(logs) != 1 {
				t.Fatalf("consume logs = %d", len(logs))
			}
			l := logs[0]
			wantTokens := tokenizer.CountText(ratioModel, plain)
			if l.PromptTokens != 0 || l.CompletionTokens != int64(wantTokens) {
				t.Errorf("tokens = %d prompt, %d completion; want 0 and %d, the tokens of the plain text",
					l.PromptTokens, l.CompletionTokens, wantTokens)
			}
			want := ratioQuota(0, wantTokens, ratioModelMR, ratioModelCR, 1)
			if l.Quota != want {
				t.Errorf("quota = %d, want %d", l.Quota, want)
			}
			wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, want, 1)
		})
	}
}

// quote writes s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A form is read as strictly as a JSON body: a field given twice (the
// gateway would price one value, the upstream might serve the other) and a
// form without its file are refused before any upstream is asked; list
// fields repeat as OpenAI documents them.
func TestAudio_FormRefusedBeforeTheUpstream(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.New(t, "sk-audio", relaytest.Routes{
		"POST /v1/audio/transcriptions": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			relaytest.WriteJSON(w, http.StatusOK, map[string]any{"text": "ok"})
		},
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	file := formPart{Name: "file", FileName: "a.mp3", ContentType: "audio/mpeg", Data: audioBytes()}
	for _, tc := range []struct {
		name  string
		parts []formPart
		want  string
	}{
		{"model twice", []formPart{file, {Name: "model", Data: []byte(ratioModel)}, {Name: "model", Data: []byte("whisper-1")}}, "字段 model 出现了不止一次"},
		{"model as a file too", []formPart{file, {Name: "model", Data: []byte(ratioModel)}, {Name: "model", FileName: "m", ContentType: "text/plain", Data: []byte(ratioModel)}}, "字段 model 出现了不止一次"},
		{"two files", []formPart{file, file, {Name: "model", Data: []byte(ratioModel)}}, "字段 file 出现了不止一次"},
		{"no file", []formPart{{Name: "model", Data: []byte(ratioModel)}}, "file 不能为空"},
		{"model not UTF-8", []formPart{file, {Name: "model", Data: []byte("whisper\xff")}}, "字符串中有不合法的 UTF-8 字节"},
		{"model too long", []formPart{file, {Name: "model", Data: []byte(strings.Repeat("m", 256))}}, "model 过长：最多 255 字节"},
	} {
		body, ctype := audioForm(t, tc.parts)
		e := g.post(t, key, "/v1/audio/transcriptions", string(body), "Content-Type", ctype).wantError(t, http.StatusBadRequest, "invalid_request")
		if !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, e.Error.Message, tc.want)
		}
	}
	if up.Hits() != 0 {
		t.Fatalf("the upstream was asked %d times", up.Hits())
	}
	body, ctype := audioForm(t, []formPart{file, {Name: "model", Data: []byte(ratioModel)},
		{Name: "timestamp_granularities[]", Data: []byte("word")}, {Name: "timestamp_granularities[]", Data: []byte("segment")}})
	if res := g.post(t, key, "/v1/audio/transcriptions", string(body), "Content-Type", ctype); res.Status != http.StatusOK || up.Hits() != 1 {
		t.Fatalf("list field repeated: %d %s (hits %d)", res.Status, res.Body, up.Hits())
	}
}

// A recording without speech has a transcript without cues: WebVTT's
// answer is its header alone ("WEBVTT" and a blank line, as OpenAI sends
// it), which is a WebVTT document, not text sent in place of one. It is
// charged for the text of its cues, none (docs/billing.md: a srt or vtt
// answer for the text of its cues), not for its header, notes and timings.
func TestAudio_SilentVTTChargedItsCues(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, answer string }{
		{"header alone", "WEBVTT\n\n"},
		{"header with a title and a note", "\ufeffWEBVTT - silence\r\nKind: captions\r\n\r\nNOTE nothing was said\r\n\r\n"},
		{"cues without text", "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			up := relaytest.New(t, "sk-stt", relaytest.Routes{
				"POST /v1/audio/transcriptions": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
					w.Header().Set("Content-Type", "text/vtt; charset=utf-8")
					io.WriteString(w, tc.answer)
				},
			})
			ch := g.MustCreateChannel(t, up, ratioModel, nil)
			tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
			before := g.balances(t, "alice", tok.ID, ch)
			body, ctype := audioForm(t, []formPart{
				{Name: "file", FileName: "silence.wav", ContentType: "audio/wav", Data: []byte("RIFF....WAVEfmt ")},
				{Name: "model", Data: []byte(ratioModel)},
				{Name: "response_format", Data: []byte("vtt")},
			})

			res := g.post(t, key, "/v1/audio/transcriptions", string(body), "Content-Type", ctype)
			if res.Status != http.StatusOK || string(res.Body) != tc.answer {
				t.Fatalf("status %d, body %q; want 200 with the upstream's answer", res.Status, res.Body)
			}
			logs := g.consumeLogs(t, "alice")
			if len(logs) != 1 {
				t.Fatalf("consume logs = %d", len(logs))
			}
			if l := logs[0]; l.PromptTokens != 0 || l.CompletionTokens != 0 || l.Quota != 0 {
				t.Errorf("log has %d+%d tokens for %d; want 0+0 for 0: the document has no spoken text", l.PromptTokens, l.CompletionTokens, l.Quota)
			}
			wantMoved(t, before, g.balances(t, "alice", tok.ID, ch), true, ch.ID, 0, 1)
		})
	}
}
