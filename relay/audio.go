package relay

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"

	json "github.com/goccy/go-json"
)

// rewriteMultipartModel returns a speech-to-text body whose "model" field
// is model, with the content type that names its new boundary (S §5.6:
// model_mapping also applies to the audio paths). Every other part is
// copied as the client sent it, in the same order, with its headers
// (filename, content type) and its bytes: raw parts are read, so not even
// a Content-Transfer-Encoding is undone. A body without a model field (the
// relay then assumed whisper-1) gets one at the end.
func rewriteMultipartModel(body []byte, ctype, model string) ([]byte, string, error) {
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return nil, "", err
	}
	if !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return nil, "", errors.New("not a multipart body")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var out bytes.Buffer
	out.Grow(len(body) + len(model) + 64)
	mw := multipart.NewWriter(&out)
	found := false
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", err
		}
		w, err := mw.CreatePart(p.Header)
		if err != nil {
			return nil, "", err
		}
		// Only a plain field named model is replaced; a file part that
		// happens to be called so is data.
		if p.FormName() == "model" && p.FileName() == "" {
			found = true
			_, err = io.WriteString(w, model)
		} else {
			_, err = io.Copy(w, p)
		}
		if err != nil {
			return nil, "", err
		}
	}
	if !found {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="model"`)
		w, err := mw.CreatePart(h)
		if err != nil {
			return nil, "", err
		}
		io.WriteString(w, model)
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	params["boundary"] = mw.Boundary()
	ct := mime.FormatMediaType(mt, params)
	if ct == "" {
		// A parameter of the client's that cannot be written back.
		ct = mw.FormDataContentType()
	}
	return out.Bytes(), ct, nil
}

// transcriptText is the text of a speech-to-text answer, the part that is
// counted as completion (S §5.8, STT): "text" is the body itself, "srt"
// and "vtt" the cue text without numbers, timings or WebVTT header and
// notes, and "json" (the default) and "verbose_json" the text field. An
// unknown format is read as JSON only when the answer says it is JSON, and
// a streamed answer (`stream=true`, an event stream) as its events. ok is
// false when an answer that must be JSON is not, or has no text.
func transcriptText(format, ctype string, data []byte) (text string, ok bool) {
	if strings.HasPrefix(ctype, "text/event-stream") {
		return streamedTranscript(data)
	}
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "text":
		// The line break that ends the answer is the format's, not the
		// transcript's (the same words asked as JSON hold none).
		return strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r"), true
	case "srt", "vtt":
		// An upstream that answered otherwise (a JSON document, plain text)
		// is charged for what it sent, not for the cues it did not.
		if !strings.Contains(ctype, "json") {
			// A document of cues is charged their text, none when nothing
			// was said (WebVTT's header alone); only text that is no such
			// document is charged as sent.
			if t := cueText(string(data)); strings.TrimSpace(t) != "" || cueDocument(string(data)) {
				return t, true
			}
			return string(data), true
		}
	case "", "json", "verbose_json":
	default:
		if !strings.Contains(ctype, "json") {
			return string(data), true
		}
	}
	var v struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(data, &v) != nil || v.Text == nil {
		return "", false
	}
	return *v.Text, true
}

// streamedTranscript reads a streamed transcription: the text of its
// "transcript.text.done" event, or, when the stream ended without one, the
// deltas of its "transcript.text.delta" events. ok is false when it holds
// neither.
func streamedTranscript(data []byte) (text string, ok bool) {
	var deltas strings.Builder
	seen := false
	for line := range strings.SplitSeq(string(data), "\n") {
		payload, found := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:")
		if !found {
			continue
		}
		var ev struct {
			Type  string  `json:"type"`
			Delta string  `json:"delta"`
			Text  *string `json:"text"`
		}
		if json.Unmarshal([]byte(strings.TrimSpace(payload)), &ev) != nil {
			continue
		}
		switch ev.Type {
		case "transcript.text.done":
			if ev.Text != nil {
				return *ev.Text, true
			}
		case "transcript.text.delta":
			seen = true
			deltas.WriteString(ev.Delta)
		}
	}
	return deltas.String(), seen
}

// cueDocument reports whether doc is an SRT or WebVTT document, with or
// without cues: it begins with WebVTT's signature or has a timing line.
func cueDocument(doc string) bool {
	doc = strings.TrimLeft(strings.TrimPrefix(doc, "\ufeff"), " \t\r\n")
	return strings.HasPrefix(doc, "WEBVTT") || strings.Contains(doc, "-->")
}

// cueText returns the text lines of an SRT or WebVTT document, one per
// line. Both are blocks separated by blank lines; a cue is a block with a
// timing line ("00:00:01,000 --> 00:00:02,500"), whose text is what follows
// that line. Whatever comes before it (an SRT number, a WebVTT cue id) and
// blocks without timing (the WEBVTT header, NOTE, STYLE, REGION) are left
// out.
func cueText(doc string) string {
	doc = strings.TrimPrefix(doc, "\ufeff")
	doc = strings.ReplaceAll(doc, "\r\n", "\n")
	doc = strings.ReplaceAll(doc, "\r", "\n")
	var b strings.Builder
	inCue := false
	for line := range strings.SplitSeq(doc, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
			inCue = false
		case inCue:
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(line)
		case strings.Contains(line, "-->"):
			inCue = true
		}
	}
	return b.String()
}
