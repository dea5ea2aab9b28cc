package relay

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"testing"
)

// cueText keeps the spoken text of SRT and WebVTT documents and nothing of
// their structure.
func TestCueText(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"srt", "1\n00:00:00,000 --> 00:00:01,000\nHello\n\n2\n00:00:01,000 --> 00:00:02,000\nworld\nagain\n", "Hello\nworld\nagain"},
		{"srt crlf with bom", "\ufeff1\r\n00:00:00,000 --> 00:00:01,000\r\nHello\r\n\r\n", "Hello"},
		{"vtt header notes style and ids", "WEBVTT\n\nNOTE a note\n\nSTYLE\n::cue { color: red }\n\nREGION\nid:r1\n\n" +
			"c1\n00:00.000 --> 00:01.000 line:0\nHi\n\n00:01.000 --> 00:02.000\nthere\n", "Hi\nthere"},
		{"numbers inside text stay", "1\n00:00:00,000 --> 00:00:01,000\n42\n", "42"},
		{"blank lines between cues", "\n\n1\n00:00:00,000 --> 00:00:01,000\nA\n\n\n\n2\n00:00:01,000 --> 00:00:02,000\nB", "A\nB"},
		{"no cues", "WEBVTT\n\n", ""},
	}
	for _, c := range cases {
		if got := cueText(c.doc); got != c.want {
			t.Errorf("%s: cueText = %q, want %q", c.name, got, c.want)
		}
	}
}

// transcriptText reads each response_format its own way; an answer that
// should be JSON and is not, or has no text, is no transcript.
func TestTranscriptText(t *testing.T) {
	cases := []struct {
		format, ctype, data, want string
		ok                        bool
	}{
		{"", "application/json", `{"text":"hi"}`, "hi", true},
		{"json", "application/json", `{"text":"hi"}`, "hi", true},
		{"verbose_json", "application/json", `{"text":"hi","segments":[{"text":"hi","tokens":[1]}]}`, "hi", true},
		{"text", "text/plain", `{"text":"hi"}`, `{"text":"hi"}`, true},
		{"srt", "text/plain", "1\n00:00:00,000 --> 00:00:01,000\nhi\n", "hi", true},
		{"VTT", "text/vtt", "WEBVTT\n\n00:00.000 --> 00:01.000\nhi\n", "hi", true},
		{"json", "text/plain", "not json", "", false},
		{"json", "application/json", `{"message":"busy"}`, "", false},
		{"diarized", "text/plain", "raw", "raw", true},
		{"diarized", "application/json", `{"text":"hi"}`, "hi", true},
		{"json", "text/event-stream", "data: {\"type\":\"transcript.text.delta\",\"delta\":\"The\"}\n\n" +
			"data: {\"type\":\"transcript.text.delta\",\"delta\":\" quick\"}\n\n" +
			"data: {\"type\":\"transcript.text.done\",\"text\":\"The quick\",\"usage\":{\"input_tokens\":9}}\n\n", "The quick", true},
		{"text", "text/event-stream", "data: {\"type\":\"transcript.text.delta\",\"delta\":\"The\"}\r\n\r\n" +
			"data: {\"type\":\"transcript.text.delta\",\"delta\":\" quick\"}\r\n\r\n", "The quick", true},
		{"json", "text/event-stream", "data: {\"error\":\"x\"}\n\n", "", false},
	}
	for _, c := range cases {
		got, ok := transcriptText(c.format, c.ctype, []byte(c.data))
		if got != c.want || ok != c.ok {
			t.Errorf("transcriptText(%q, %q, %q) = %q, %v; want %q, %v", c.format, c.ctype, c.data, got, ok, c.want, c.ok)
		}
	}
}

// A form without a model field (the relay assumed whisper-1) gets one; a
// file part named model is data, not the field.
func TestRewriteMultipartModel(t *testing.T) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("model", "model.bin")
	fw.Write([]byte("weights"))
	mw.WriteField("language", "fr")
	mw.Close()

	body, ctype, err := rewriteMultipartModel(buf.Bytes(), mw.FormDataContentType(), "whisper-large")
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(ctype)
	if err != nil || params["boundary"] == mw.Boundary() {
		t.Fatalf("content type %q (%v): want a new boundary", ctype, err)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var got []string
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(p)
		got = append(got, p.FormName()+"|"+p.FileName()+"|"+string(data))
	}
	want := []string{"model|model.bin|weights", "language||fr", "model||whisper-large"}
	if len(got) != len(want) {
		t.Fatalf("parts = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("part %d = %q, want %q", i, got[i], want[i])
		}
	}
	if _, _, err := rewriteMultipartModel([]byte("{}"), "application/json", "m"); err == nil {
		t.Error("a JSON body was rewritten as a form")
	}
}
