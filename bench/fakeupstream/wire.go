package main

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/goccy/go-json"
)

// nonStreamCompletionTokens is the completion_tokens of every non-stream
// answer; its content is that many "hello" tokens.
const nonStreamCompletionTokens = 10

// nonStreamContent is the message content of a non-stream answer.
const nonStreamContent = "hello hello hello hello hello hello hello hello hello hello"

// promptTokens is the deterministic prompt_tokens for a prompt of chars
// characters.
func promptTokens(chars int) int {
	return max(1, chars/4)
}

// chatRequest holds the fields of a chat completion request that the fake
// reads.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// chatMessage keeps only the size of a message's content: the strings
// themselves are never needed, so they are never allocated.
type chatMessage struct {
	Content textLen `json:"content"`
}

// reset clears r for reuse, keeping the capacity of Messages.
func (r *chatRequest) reset() {
	*r = chatRequest{Messages: r.Messages[:0]}
}

func (r *chatRequest) validate() error {
	if r.Model == "" {
		return errors.New("you must provide a model parameter")
	}
	if len(r.Messages) == 0 {
		return errors.New("'messages' must contain at least one message")
	}
	return nil
}

// chars returns the characters of all message contents.
func (r *chatRequest) chars() int {
	n := 0
	for _, m := range r.Messages {
		n += int(m.Content)
	}
	return n
}

// textLen is a JSON text value decoded to its length in characters. It
// accepts a string, null, or an array of content parts whose "text" fields
// are summed.
type textLen int

// UnmarshalJSON implements json.Unmarshaler.
func (t *textLen) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) == 0:
		return errors.New("empty content")
	case b[0] == '"':
		n, err := countStringChars(b)
		*t = textLen(n)
		return err
	case b[0] == '[':
		var parts []struct {
			Text textLen `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		n := 0
		for _, p := range parts {
			n += int(p.Text)
		}
		*t = textLen(n)
		return nil
	case string(b) == "null":
		*t = 0
		return nil
	}
	return errors.New("content must be a string or an array of parts")
}

// countStringChars returns the number of Unicode code points that the
// quoted JSON string b decodes to, without decoding it.
func countStringChars(b []byte) (int, error) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return 0, errors.New("malformed string")
	}
	b = b[1 : len(b)-1]
	n := 0
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\':
			if i+1 < len(b) && b[i+1] == 'u' {
				// A surrogate pair is two escapes but one character.
				if i+12 <= len(b) && isHighSurrogate(b[i+2:i+6]) && b[i+6] == '\\' && b[i+7] == 'u' {
					i += 12
				} else {
					i += 6
				}
			} else {
				i += 2
			}
		case c < utf8.RuneSelf:
			i++
		default:
			_, size := utf8.DecodeRune(b[i:])
			i += size
		}
		n++
	}
	return n, nil
}

// isHighSurrogate reports whether the four hex digits h are in D800-DBFF.
func isHighSurrogate(h []byte) bool {
	v, err := strconv.ParseUint(string(h), 16, 16)
	return err == nil && v >= 0xD800 && v <= 0xDBFF
}

// embeddingRequest holds the fields of an embeddings request that the fake
// reads.
type embeddingRequest struct {
	Model          string         `json:"model"`
	Input          embeddingInput `json:"input"`
	Dimensions     int            `json:"dimensions"`
	EncodingFormat string         `json:"encoding_format"`
}

// defaultDimensions is the vector length when a request names none; small,
// so that the floor is the cost of HTTP and not of formatting floats.
const defaultDimensions = 16

// maxDimensions matches the largest OpenAI embedding model.
const maxDimensions = 3072

func (r *embeddingRequest) validate() error {
	switch {
	case r.Model == "":
		return errors.New("you must provide a model parameter")
	case r.Input.items == 0:
		return errors.New("'input' must not be empty")
	case r.Dimensions < 0 || r.Dimensions > maxDimensions:
		return errors.New("'dimensions' must be between 1 and 3072")
	case r.EncodingFormat != "" && r.EncodingFormat != "float" && r.EncodingFormat != "base64":
		return errors.New("'encoding_format' must be float or base64")
	}
	return nil
}

// embeddingInput is the input of an embeddings request reduced to the
// number of items and their prompt tokens.
type embeddingInput struct {
	items  int
	tokens int
}

// UnmarshalJSON implements json.Unmarshaler for a string, an array of
// strings, a token array or an array of token arrays.
func (in *embeddingInput) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		n, err := countStringChars(b)
		*in = embeddingInput{items: 1, tokens: promptTokens(n)}
		return err
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return errors.New("'input' must be a string or an array")
	}
	*in = embeddingInput{}
	if len(raw) == 0 {
		return nil
	}
	switch raw[0][0] {
	case '"':
		for _, item := range raw {
			var t textLen
			if err := t.UnmarshalJSON(item); err != nil {
				return err
			}
			in.items++
			in.tokens += promptTokens(int(t))
		}
	case '[':
		for _, item := range raw {
			var ids []int
			if err := json.Unmarshal(item, &ids); err != nil {
				return err
			}
			in.items++
			in.tokens += len(ids)
		}
	default:
		in.items = 1
		in.tokens = len(raw)
	}
	return nil
}

// completion is what a chat answer says, in whole or in chunks.
type completion struct {
	idPrefix   string // the id is idPrefix followed by seq in base 36
	seq        uint64
	created    int64
	model      string
	prompt     int
	completion int
}

// appendCompletion appends the non-stream answer for c.
func appendCompletion(b []byte, c completion, usage bool) []byte {
	b = append(b, `{"id":`...)
	b = appendID(b, c)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = strconv.AppendInt(b, c.created, 10)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, c.model)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":"`+nonStreamContent+
		`","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}]`...)
	if usage {
		b = append(b, `,"usage":`...)
		b = appendUsage(b, c)
	}
	b = append(b, `,"service_tier":"default","system_fingerprint":"fp_fake"}`...)
	return b
}

// appendID appends the quoted id of c.
func appendID(b []byte, c completion) []byte {
	b = appendJSONString(b, c.idPrefix)
	b = strconv.AppendUint(b[:len(b)-1], c.seq, 36)
	return append(b, '"')
}

// appendUsage appends OpenAI's usage object for c.
func appendUsage(b []byte, c completion) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(c.prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(c.completion), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(c.prompt+c.completion), 10)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},`+
		`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,`+
		`"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`...)
	return b
}

// streamLayout holds the complete events of one stream, all slices of buf.
type streamLayout struct {
	buf    []byte
	first  []byte // first content chunk, which also carries the role
	next   []byte // every later content chunk
	finish []byte // empty delta with finish_reason "stop"
	usage  []byte // empty choices with usage; only when usage is wanted
	done   []byte // data: [DONE]
}

// buildStream appends to b every distinct event of the stream for c. As
// OpenAI does, chunks carry "usage":null when a usage chunk follows.
func buildStream(b []byte, c completion, usage bool) streamLayout {
	start := len(b)
	b = append(b, `data: {"id":`...)
	b = appendID(b, c)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, c.created, 10)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, c.model)
	b = append(b, `,"service_tier":"default","system_fingerprint":"fp_fake","choices":[`...)
	prefix := len(b) - start

	tail := "}\n\n"
	if usage {
		tail = `,"usage":null}` + "\n\n"
	}
	var ends [5]int
	event := func(i int, choices string) {
		b = append(b, b[start:start+prefix]...)
		b = append(b, choices...)
		b = append(b, tail...)
		ends[i] = len(b)
	}
	// The prefix written above is the first event's own prefix.
	b = append(b, `{"index":0,"delta":{"role":"assistant","content":"hello","refusal":null},"logprobs":null,"finish_reason":null}]`...)
	b = append(b, tail...)
	ends[0] = len(b)
	event(1, `{"index":0,"delta":{"content":" hello"},"logprobs":null,"finish_reason":null}]`)
	event(2, `{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]`)
	if usage {
		b = append(b, b[start:start+prefix]...)
		b = append(b, `],"usage":`...)
		b = appendUsage(b, c)
		b = append(b, "}\n\n"...)
	}
	ends[3] = len(b)
	b = append(b, "data: [DONE]\n\n"...)
	ends[4] = len(b)

	return streamLayout{
		buf:    b,
		first:  b[start:ends[0]],
		next:   b[ends[0]:ends[1]],
		finish: b[ends[1]:ends[2]],
		usage:  b[ends[2]:ends[3]],
		done:   b[ends[3]:ends[4]],
	}
}

// appendEmbeddings appends the answer to req: one unit vector per input,
// every component equal, so answers are deterministic.
func appendEmbeddings(b []byte, req *embeddingRequest, usage bool) []byte {
	dims := req.Dimensions
	if dims == 0 {
		dims = defaultDimensions
	}
	v := float32(1 / math.Sqrt(float64(dims)))

	// Build the vector once and copy it for every input.
	vecStart := len(b)
	if req.EncodingFormat == "base64" {
		raw := make([]byte, 4*dims)
		for i := range dims {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, raw)
		b = append(b, '"')
	} else {
		b = append(b, '[')
		for i := range dims {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, float64(v), 'g', -1, 32)
		}
		b = append(b, ']')
	}
	vec := string(b[vecStart:])
	b = b[:vecStart]

	b = append(b, `{"object":"list","data":[`...)
	for i := range req.Input.items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"embedding":`...)
		b = append(b, vec...)
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = appendJSONString(b, req.Model)
	if usage {
		b = append(b, `,"usage":{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(req.Input.tokens), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(req.Input.tokens), 10)
		b = append(b, '}')
	}
	b = append(b, '}')
	return b
}

// modelList is the body of GET /v1/models.
var modelList = []byte(`{"object":"list","data":[` +
	`{"id":"gpt-4o-mini","object":"model","created":1721172741,"owned_by":"system"},` +
	`{"id":"gpt-4o","object":"model","created":1715367049,"owned_by":"system"},` +
	`{"id":"gpt-3.5-turbo","object":"model","created":1677610602,"owned_by":"openai"},` +
	`{"id":"text-embedding-3-small","object":"model","created":1705948997,"owned_by":"system"},` +
	`{"id":"text-embedding-3-large","object":"model","created":1705953180,"owned_by":"system"}]}`)

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a quoted JSON string.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
