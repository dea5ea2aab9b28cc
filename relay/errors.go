package relay

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	json "github.com/goccy/go-json"
)

// Error is a relay failure with what the client is told.
type Error struct {
	Status  int    // HTTP status for the client
	Type    string // OpenAI error type
	Code    any    // OpenAI error code
	Param   string
	Message string
	// Local errors come from the request or the gateway itself: they are
	// never retried on another channel and never disable a channel.
	Local bool
	// Retry marks a channel failure worth another channel.
	Retry bool
	// Cause is logged, never sent.
	Cause error
	// RetryAfter holds the upstream's Retry-After and retry-after-ms
	// headers on a 429 or 503, passed on so the client waits as long as
	// the provider asked (OpenAI's SDKs read them).
	RetryAfter http.Header
}

func (e *Error) Error() string { return e.Message }

func localError(status int, code, message string) *Error {
	return &Error{Status: status, Type: "new_api_error", Code: code, Message: message, Local: true}
}

func badRequest(message string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "invalid_request", Message: message, Local: true}
}

type errorBody struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   string `json:"param"`
		Code    any    `json:"code"`
	} `json:"error"`
}

// writeError writes OpenAI's error object; the message ends with the
// request id so a user can quote it.
func writeError(w http.ResponseWriter, requestID string, e *Error) {
	var b errorBody
	b.Error.Message = e.Message + " (request id: " + requestID + ")"
	b.Error.Type = e.Type
	b.Error.Param = e.Param
	b.Error.Code = e.Code
	if b.Error.Type == "" {
		b.Error.Type = "new_api_error"
	}
	data, _ := json.Marshal(b)
	status := e.Status
	if status < 300 || status == http.StatusNotModified {
		// A failure under a success status (an upstream's 201 or 204, a
		// mapping to one) would read as the answer, and 1xx, 204 and 304
		// carry no body: the client gets the error object as a 502, the
		// upstream's status staying in param.
		status = http.StatusBadGateway
	}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		for k, v := range e.RetryAfter {
			w.Header()[k] = v
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	w.Write(data)
}

// upstreamMessage digs the human message out of a provider's error body,
// with the channel's key hidden: a provider that echoes the credential it
// refused ("Incorrect API key provided: sk-...") must not hand it to the
// caller, in full or in part.
func upstreamMessage(body []byte, key string) string {
	return hideKey(rawUpstreamMessage(body), key)
}

// hideKey replaces in msg the key and every word that looks like a part of
// it: a run of key-like characters that is a masked form (three asterisks
// or more among at least 8 characters, as OpenAI's own echo of a refused
// key, "sk-proj-****...abcd"), or, for a key that is one word, at least 8
// characters of it, or a form shortened with "..." that shows 10
// characters of it or more ("sk-proj-Ab...6789"). A key of several words
// (Vertex's JSON credential) is hidden where it appears whole: its words are
// common ones ("service_account"). A key shorter than 8 characters is hidden
// where it is a whole word (from 4 characters on: shorter ones are no
// secret worth the name, "x" for an Ollama without keys). A key of parts
// joined by "|" (AWS, Baidu, Xunfei: ak|sk|region, appid|secret|key) is
// hidden whole and part by part, as a provider echoes the part it refuses;
// a part shorter than 12 characters (a region, an app id) is no secret.
func hideKey(msg, key string) string {
	key = strings.TrimSpace(key)
	if len(key) < 4 {
		return msg
	}
	if parts := strings.Split(key, "|"); len(parts) > 1 && !strings.HasPrefix(key, "{") {
		msg = strings.ReplaceAll(msg, key, "[key hidden]")
		for _, p := range parts {
			if len(strings.TrimSpace(p)) >= 12 {
				msg = hideKey(msg, p)
			}
		}
		return msg
	}
	if len(key) < 8 {
		if strings.IndexFunc(key, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 {
			// Letters alone ("ollama", "none"): a placeholder, not a
			// secret, and a word of the message as much as a key.
			return msg
		}
		return hideWords(msg, func(w string) bool { return w == key })
	}
	msg = strings.ReplaceAll(msg, key, "[key hidden]")
	oneWord := strings.IndexFunc(key, func(r rune) bool { return r >= 0x80 || !keyChar(byte(r)) }) < 0
	return hideWords(msg, func(w string) bool {
		return len(w) >= 8 && (strings.Contains(w, "***") || oneWord && (strings.Contains(key, w) || shortened(w, key)))
	})
}

// hideWords replaces every word of msg (a run of key characters, less a
// sentence's full stop) that hide picks.
func hideWords(msg string, hide func(w string) bool) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(msg); {
		if !keyChar(msg[i]) {
			i++
			continue
		}
		j := i
		for j < len(msg) && keyChar(msg[j]) {
			j++
		}
		end := j
		for end > i && msg[end-1] == '.' {
			end-- // a sentence's full stop
		}
		if hide(msg[i:end]) {
			b.WriteString(msg[last:i])
			b.WriteString("[key hidden]")
			last = end
		}
		i = j
	}
	if last == 0 {
		return msg
	}
	b.WriteString(msg[last:])
	return b.String()
}

// hideKeyInJSON applies hideKey to every string of the JSON document doc
// (the text, not the syntax: a short key may be a member name, "type").
// It returns the document written again, and true, only when a string
// changed.
func hideKeyInJSON(doc []byte, key string) ([]byte, bool) {
	if len(strings.TrimSpace(key)) < 4 || !json.Valid(doc) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber() // numbers written back as they came
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if h := hideKey(x, key); h != x {
				changed = true
				return h
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}

// shortened reports whether w is key shortened with "...", showing 10 of
// its characters or more: a start of key, the dots, an end of it.
func shortened(w, key string) bool {
	i := strings.Index(w, "...")
	if i < 0 {
		return false
	}
	head, tail := w[:i], strings.TrimLeft(w[i:], ".")
	if !strings.HasPrefix(key, head) || !strings.HasSuffix(key, tail) {
		return false
	}
	return len(head)+len(tail) >= 10
}

// keyChar reports whether c may be part of an API key as providers write
// them, masked or not: letters, digits, "-", "_", "." and "*".
func keyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '*' || c == '.'
}

func rawUpstreamMessage(body []byte) string {
	// Each member is read on its own: one of another shape than expected
	// (an "err" object, a "header" string) must not hide the message
	// beside it, which the disable rules also read. Names match in any
	// case, as a decode into a struct matches them ({"Message": ...}, as
	// AWS API Gateway answers).
	var v map[string]json.RawMessage
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if raw := member(v, "error"); len(raw) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	text := func(raw json.RawMessage) string {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	nested := func(raw json.RawMessage, path ...string) string {
		for _, name := range path {
			var obj map[string]json.RawMessage
			if json.Unmarshal(raw, &obj) != nil {
				return ""
			}
			raw = member(obj, name)
		}
		return text(raw)
	}
	for _, m := range []string{describeDetail(member(v, "message")), text(member(v, "msg")), text(member(v, "err")), text(member(v, "error_msg")),
		nested(member(v, "header"), "message"), nested(member(v, "response"), "error", "message"), describeDetail(member(v, "detail"))} {
		if m != "" {
			return m
		}
	}
	return ""
}

// member returns the member of obj named name, matched exactly, else in
// any case.
func member(obj map[string]json.RawMessage, name string) json.RawMessage {
	if raw, ok := obj[name]; ok {
		return raw
	}
	for k, raw := range obj {
		if strings.EqualFold(k, name) {
			return raw
		}
	}
	return nil
}

// describeDetail reads a message that is not always a string: Mistral's
// {"message": {"detail": [...]}} and the {"detail": ...} of FastAPI
// servers, whose validation errors are lists of {loc, msg}.
func describeDetail(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Detail  json.RawMessage `json:"detail"`
		Message json.RawMessage `json:"message"`
	}
	if raw[0] == '{' && json.Unmarshal(raw, &obj) == nil {
		if m := describeDetail(obj.Detail); m != "" {
			return m
		}
		return describeDetail(obj.Message)
	}
	var list []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(raw, &list) != nil {
		return ""
	}
	var parts []string
	for _, e := range list {
		if e.Msg == "" {
			continue
		}
		loc := make([]string, len(e.Loc))
		for i, l := range e.Loc {
			loc[i] = fmt.Sprint(l)
		}
		if len(loc) > 0 {
			parts = append(parts, strings.Join(loc, ".")+": "+e.Msg)
		} else {
			parts = append(parts, e.Msg)
		}
	}
	return strings.Join(parts, "; ")
}

// upstreamErrorFields reads error.type and error.code for the auto-disable rules.
func upstreamErrorFields(body []byte) (typ, code string) {
	var v struct {
		Error struct {
			Type string `json:"type"`
			Code any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil {
		typ = v.Error.Type
		if s, ok := v.Error.Code.(string); ok {
			code = s
		}
	}
	return
}

// retryAfter copies the waiting time an upstream's answer asks for:
// Retry-After in seconds or as an HTTP date, and retry-after-ms (Azure
// OpenAI and OpenAI send it beside). Anything else in them is dropped.
func retryAfter(h http.Header) http.Header {
	var out http.Header
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if n, err := strconv.ParseUint(v, 10, 32); err == nil {
			out = http.Header{"Retry-After": {strconv.FormatUint(n, 10)}}
		} else if _, err := http.ParseTime(v); err == nil {
			out = http.Header{"Retry-After": {v}}
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1<<31 {
			if out == nil {
				out = http.Header{}
			}
			out["Retry-After-Ms"] = []string{strconv.FormatFloat(ms, 'f', -1, 64)}
		}
	}
	return out
}

// shouldRetry applies the retry table to an upstream status.
func shouldRetry(status int) bool {
	switch {
	case status == http.StatusTooManyRequests, status == http.StatusTemporaryRedirect:
		return true
	case status == 504, status == 524:
		return false
	case status >= 500:
		return true
	case status == http.StatusBadRequest, status == http.StatusRequestTimeout:
		return false
	case status >= 200 && status < 300:
		return false
	}
	return true
}
