package tokenizer

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Token costs of S §5.8.1.
const (
	// TokensPerMessage is added for every chat message.
	TokensPerMessage = 3
	// TokensPerName is added, besides the name's own tokens, for every
	// message that carries a name.
	TokensPerName = 1
	// ReplyPrimingTokens is added once per chat request for the assistant
	// turn the model is primed with.
	ReplyPrimingTokens = 3
	// ToolsTokens is added once when a request declares at least one tool.
	ToolsTokens = 8
	// LowDetailImageTokens is what an image part with detail "low" costs.
	LowDetailImageTokens = 85
	// GLM4VImageTokens is what an image part costs for glm-4v models.
	GLM4VImageTokens = 1047
	// DefaultImageTokens is what an image part costs when no ImageCounter
	// is plugged in, or when it fails (media counting off).
	DefaultImageTokens = 1000
	// InputAudioTokens is what an input_audio part costs.
	InputAudioTokens = 100
)

// Message is one chat message in the OpenAI chat-completions shape. It
// decodes directly from the request JSON.
type Message struct {
	// Role is "system", "user", "assistant", "tool" and so on.
	Role string `json:"role"`
	// Name is the optional participant name.
	Name string `json:"name,omitempty"`
	// Content is a string, a []ContentPart, or what encoding/json decodes
	// an array into ([]any of map[string]any); json.RawMessage and nil are
	// accepted too.
	Content any `json:"content,omitempty"`
	// ToolCalls are the tool calls of an earlier assistant turn.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// FunctionCall is the call of an earlier assistant turn in the
	// deprecated functions form.
	FunctionCall *FunctionCall `json:"function_call,omitempty"`
}

// ContentPart is one element of array content.
type ContentPart struct {
	// Type is "text", "image_url", "input_audio" and so on.
	Type string `json:"type"`
	// Text is the text of a "text" part.
	Text string `json:"text,omitempty"`
	// ImageURL is the image of an "image_url" part.
	ImageURL *ImageURL `json:"image_url,omitempty"`
}

// ImageURL is the image_url object of an image part. It also decodes from
// a bare URL string, which some clients send.
type ImageURL struct {
	// URL is an http(s) URL or a data: URL.
	URL string `json:"url"`
	// Detail is "low", "high", "auto" or empty.
	Detail string `json:"detail,omitempty"`
}

// UnmarshalJSON accepts both {"url": ..., "detail": ...} and "url".
func (u *ImageURL) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		*u = ImageURL{}
		return json.Unmarshal(data, &u.URL)
	}
	type plain ImageURL
	return json.Unmarshal(data, (*plain)(u))
}

// ToolCall is a tool call made by the assistant, in a message or in one
// chunk of a stream.
type ToolCall struct {
	// ID identifies the call.
	ID string `json:"id,omitempty"`
	// Type is "function".
	Type string `json:"type,omitempty"`
	// Function is the called function and its JSON arguments (a fragment
	// of them in a stream chunk).
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function part of a ToolCall.
type FunctionCall struct {
	// Name is the function's name.
	Name string `json:"name,omitempty"`
	// Arguments is the JSON text of the arguments.
	Arguments string `json:"arguments,omitempty"`
}

// UnmarshalJSON reads arguments written as a string, as OpenAI writes them,
// or as a JSON value (some OpenAI-compatible servers, Ollama among them,
// write an object), which is kept as its JSON text.
func (f *FunctionCall) UnmarshalJSON(data []byte) error {
	var raw struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*f = FunctionCall{Name: raw.Name, Arguments: rawArguments(raw.Arguments)}
	return nil
}

// rawArguments is the text of arguments: the string, or the JSON text of
// another value; null or nothing is "".
func rawArguments(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// Tool is a tool declared in a chat request.
type Tool struct {
	// Type is "function".
	Type string `json:"type,omitempty"`
	// Function describes the function.
	Function Function `json:"function"`
}

// Function describes a callable function.
type Function struct {
	// Name is the function's name.
	Name string `json:"name"`
	// Description tells the model what the function does.
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments: a json.RawMessage,
	// or any value encoding/json can marshal (map[string]any after a
	// generic decode).
	Parameters any `json:"parameters,omitempty"`
}

// ImageCounter returns the tokens of one image part whose detail is not
// "low". url is an http(s) URL or a data: URL. A relay implements it by
// reading the image (ImageTokensFromDataURL for data: URLs, a download
// through its guarded HTTP client otherwise) and calling
// ImageTokensFromReader or ImageTokens. It must be safe for concurrent use if
// the Counter holding it is shared.
type ImageCounter func(url, detail string) (int, error)

// Counter counts chat requests. The zero value counts every image part that
// is not low-detail as DefaultImageTokens.
type Counter struct {
	// Images counts image parts. When nil, or when it returns an error,
	// the part counts DefaultImageTokens.
	Images ImageCounter
	// ExactBytes bounds the text one count tokenizes; the rest counts a
	// token per four bytes. 0: no bound (each text is still bounded by
	// maxExactBytes).
	ExactBytes int
}

// CountChat returns the prompt tokens of a chat request (S §5.8.1):
//
//	3 per message + role + content (+ 1 + name when named)
//	+ the function names and arguments of earlier tool calls (and of
//	  function_call, their deprecated form)
//	+ 3 at the end
//	+ 8 + name, description and JSON parameters of every tool, if any
//	  (the request's deprecated functions are passed here as tools)
//
// Text parts count as text, input_audio parts as InputAudioTokens, and
// image parts as LowDetailImageTokens for detail "low", GLM4VImageTokens for
// glm-4v models, and otherwise what c.Images returns.
//
// The only error is the first one returned by c.Images. The count is still
// complete then, with DefaultImageTokens for each image that failed, so a
// caller may log the error and use the count.
func (c Counter) CountChat(model string, messages []Message, tools []Tool) (int, error) {
	enc := newMeter(model, c.ExactBytes)
	var firstErr error
	n := 0
	for i := range messages {
		m := &messages[i]
		n += TokensPerMessage + enc.count(m.Role)
		k, err := c.content(enc, model, m.Content)
		n += k
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if m.Name != "" {
			n += TokensPerName + enc.count(m.Name)
		}
		for j := range m.ToolCalls {
			f := &m.ToolCalls[j].Function
			n += enc.count(f.Name) + enc.count(f.Arguments)
		}
		if f := m.FunctionCall; f != nil {
			n += enc.count(f.Name) + enc.count(f.Arguments)
		}
	}
	n += ReplyPrimingTokens
	n += countTools(enc, tools)
	return n, firstErr
}

// countTools counts the tool declarations. The reference implementation
// overwrote its buffer on every tool and so counted only the last one; every
// tool is counted here.
func countTools(enc *meter, tools []Tool) int {
	if len(tools) == 0 {
		return 0
	}
	n := ToolsTokens
	for i := range tools {
		f := &tools[i].Function
		n += enc.count(f.Name) + enc.count(f.Description)
		if p := jsonText(f.Parameters); p != "" {
			n += enc.count(p)
		}
	}
	return n
}

// jsonText renders v as compact JSON, or "" for nothing. Characters are
// written as themselves: encoding/json's escapes of <, > and & (\u003c) are
// several tokens each, which the schema the client sent does not hold.
func jsonText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.RawMessage:
		var b bytes.Buffer
		if json.Compact(&b, v) != nil {
			return string(v)
		}
		return b.String()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// content counts a message's content in any of the shapes Message.Content
// documents.
func (c Counter) content(enc *meter, model string, content any) (int, error) {
	switch v := content.(type) {
	case nil:
		return 0, nil
	case string:
		return enc.count(v), nil
	case []ContentPart:
		var firstErr error
		n := 0
		for i := range v {
			k, err := c.part(enc, model, &v[i])
			n += k
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}
		return n, firstErr
	case []any:
		var firstErr error
		n := 0
		for _, e := range v {
			var k int
			var err error
			switch e := e.(type) {
			case string:
				k = enc.count(e)
			case map[string]any:
				p := partFromMap(e)
				k, err = c.part(enc, model, &p)
			case ContentPart:
				k, err = c.part(enc, model, &e)
			case *ContentPart:
				if e != nil {
					k, err = c.part(enc, model, e)
				}
			}
			n += k
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}
		return n, firstErr
	case []map[string]any:
		var firstErr error
		n := 0
		for _, e := range v {
			p := partFromMap(e)
			k, err := c.part(enc, model, &p)
			n += k
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}
		return n, firstErr
	case json.RawMessage:
		var decoded any
		if err := json.Unmarshal(v, &decoded); err != nil {
			return enc.count(string(v)), nil
		}
		return c.content(enc, model, decoded)
	}
	return enc.count(jsonText(content)), nil
}

// part counts one content part.
func (c Counter) part(enc *meter, model string, p *ContentPart) (int, error) {
	switch p.Type {
	case "image_url":
		if p.ImageURL == nil {
			return 0, nil
		}
		return c.image(model, p.ImageURL)
	case "input_audio":
		return InputAudioTokens, nil
	}
	return enc.count(p.Text), nil
}

// image applies the image rows of S §5.8.1 in order.
func (c Counter) image(model string, img *ImageURL) (int, error) {
	if img.Detail == "low" {
		return LowDetailImageTokens, nil
	}
	if strings.HasPrefix(normalizeModel(model), "glm-4v") {
		return GLM4VImageTokens, nil
	}
	if c.Images == nil {
		return DefaultImageTokens, nil
	}
	n, err := c.Images(img.URL, img.Detail)
	if err != nil {
		return DefaultImageTokens, err
	}
	return n, nil
}

// partFromMap converts a generically decoded content part.
func partFromMap(m map[string]any) ContentPart {
	p := ContentPart{}
	p.Type, _ = m["type"].(string)
	p.Text, _ = m["text"].(string)
	switch u := m["image_url"].(type) {
	case string:
		p.ImageURL = &ImageURL{URL: u}
	case map[string]any:
		img := &ImageURL{}
		img.URL, _ = u["url"].(string)
		img.Detail, _ = u["detail"].(string)
		p.ImageURL = img
	}
	return p
}
