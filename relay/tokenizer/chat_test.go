package tokenizer

import (
	"encoding/json"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
)

// cookbookMessages is the example conversation of OpenAI's cookbook notebook
// "How to count tokens with tiktoken", for which the API reports 129 prompt
// tokens on gpt-3.5-turbo-0613 and gpt-4-0613.
var cookbookMessages = []Message{
	{Role: "system", Content: "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
	{Role: "system", Name: "example_user", Content: "New synergies will help drive top-line growth."},
	{Role: "system", Name: "example_assistant", Content: "Things working well together will increase revenue."},
	{Role: "system", Name: "example_user", Content: "Let's circle back when we have more time to touch base on opportunities for increased leverage."},
	{Role: "system", Name: "example_assistant", Content: "Let's talk later when we're less busy about how to do better."},
	{Role: "user", Content: "This late pivot means we don't have time to boil the ocean for the client deliverable."},
}

func TestCountChatCookbook(t *testing.T) {
	scenarios := []struct {
		model string
		want  int
	}{
		{"gpt-3.5-turbo-0613", 129},
		{"gpt-4-0613", 129},
		// The notebook reports 124 for gpt-4o and gpt-4o-mini.
		{"gpt-4o", 124},
		{"gpt-4o-mini", 124},
	}
	for _, s := range scenarios {
		if got := CountChat(s.model, cookbookMessages, nil); got != s.want {
			t.Errorf("CountChat(%s) = %d, want %d", s.model, got, s.want)
		}
	}
}

// TestCountChatShapes decodes one request two ways (typed JSON, hand-built)
// and expects one count.
func TestCountChatShapes(t *testing.T) {
	const body = `{
		"model": "gpt-4o",
		"messages": [
			{"role": "system", "content": "You are terse."},
			{"role": "user", "name": "ann", "content": [
				{"type": "text", "text": "What is in this picture?"},
				{"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}},
				{"type": "image_url", "image_url": "https://example.com/b.png"},
				{"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
			]},
			{"role": "assistant", "content": null, "tool_calls": [
				{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"cat\"}"}}
			]},
			{"role": "tool", "tool_call_id": "c1", "content": "A cat."}
		],
		"tools": [
			{"type": "function", "function": {"name": "lookup", "description": "Look a thing up.",
				"parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
		]
	}`
	var typed struct {
		Model    string    `json:"model"`
		Messages []Message `json:"messages"`
		Tools    []Tool    `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &typed); err != nil {
		t.Fatal(err)
	}
	built := []Message{
		{Role: "system", Content: "You are terse."},
		{Role: "user", Name: "ann", Content: []ContentPart{
			{Type: "text", Text: "What is in this picture?"},
			{Type: "image_url", ImageURL: &ImageURL{URL: "https://example.com/a.png", Detail: "low"}},
			{Type: "image_url", ImageURL: &ImageURL{URL: "https://example.com/b.png"}},
			{Type: "input_audio"},
		}},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Type: "function", Function: FunctionCall{Name: "lookup", Arguments: `{"q":"cat"}`}}}},
		{Role: "tool", Content: "A cat."},
	}
	builtTools := []Tool{{Type: "function", Function: Function{
		Name: "lookup", Description: "Look a thing up.",
		Parameters: json.RawMessage(`{"type": "object", "properties": {"q": {"type": "string"}}}`),
	}}}

	const m = "gpt-4o"
	tok := func(s string) int { return CountText(m, s) }
	want := 4*TokensPerMessage + ReplyPrimingTokens +
		tok("system") + tok("You are terse.") +
		tok("user") + TokensPerName + tok("ann") + tok("What is in this picture?") +
		LowDetailImageTokens + DefaultImageTokens + InputAudioTokens +
		tok("assistant") + tok("lookup") + tok(`{"q":"cat"}`) +
		tok("tool") + tok("A cat.") +
		ToolsTokens + tok("lookup") + tok("Look a thing up.") +
		tok(`{"properties":{"q":{"type":"string"}},"type":"object"}`)

	got := map[string]int{
		"typed": CountChat(m, typed.Messages, typed.Tools),
		"built": CountChat(m, built, builtTools),
	}
	for name, n := range got {
		if n != want {
			t.Errorf("%s: CountChat = %d, want %d", name, n, want)
		}
	}
}

func TestCountChatImages(t *testing.T) {
	msg := func(detail string) []Message {
		return []Message{{Role: "user", Content: []ContentPart{
			{Type: "image_url", ImageURL: &ImageURL{URL: "https://example.com/x.png", Detail: detail}},
		}}}
	}
	// Everything but the image: 3 per message + "user" + 3 at the end.
	base := CountChat("gpt-4o", []Message{{Role: "user"}}, nil)
	errDownload := errors.New("download failed")

	scenarios := []struct {
		name    string
		model   string
		detail  string
		images  ImageCounter
		want    int
		wantErr error
	}{
		{"default", "gpt-4o", "", nil, DefaultImageTokens, nil},
		{"default high", "gpt-4o", "high", nil, DefaultImageTokens, nil},
		{"low", "gpt-4o", "low", nil, LowDetailImageTokens, nil},
		{"low skips counter", "gpt-4o", "low", func(string, string) (int, error) { return 9999, nil }, LowDetailImageTokens, nil},
		{"glm-4v", "glm-4v", "", func(string, string) (int, error) { return 9999, nil }, GLM4VImageTokens, nil},
		{"counter", "gpt-4o", "high", func(url, detail string) (int, error) {
			if url != "https://example.com/x.png" || detail != "high" {
				return 0, errors.New("wrong arguments " + url + " " + detail)
			}
			return ImageTokens(1024, 1024, detail, "gpt-4o"), nil
		}, 765, nil},
		{"counter error", "gpt-4o", "", func(string, string) (int, error) { return 0, errDownload }, DefaultImageTokens, errDownload},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			got, err := Counter{Images: s.images}.CountChat(s.model, msg(s.detail), nil)
			if !errors.Is(err, s.wantErr) {
				t.Fatalf("err = %v, want %v", err, s.wantErr)
			}
			// glm-4v uses cl100k_base, where "user" is one token as well.
			if got-base != s.want {
				t.Errorf("image tokens = %d, want %d", got-base, s.want)
			}
		})
	}
}

// TestCountChatAllTools checks that every tool is counted, not only the
// last one as in the reference implementation.
func TestCountChatAllTools(t *testing.T) {
	const m = "gpt-4"
	msgs := []Message{{Role: "user", Content: "What's the weather in Paris?"}}
	weather := Tool{Type: "function", Function: Function{
		Name:        "get_weather",
		Description: "Get the current weather for a city.",
		Parameters: map[string]any{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required":   []any{"city"},
		},
	}}
	clock := Tool{Type: "function", Function: Function{
		Name:        "get_time",
		Description: "Get the local time for a city.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`),
	}}
	bare := Tool{Type: "function", Function: Function{Name: "ping"}}
	toolTokens := func(tl Tool) int {
		return CountText(m, tl.Function.Name) + CountText(m, tl.Function.Description) +
			CountText(m, jsonText(tl.Function.Parameters))
	}

	none := CountChat(m, msgs, nil)
	if got := CountChat(m, msgs, []Tool{}); got != none {
		t.Errorf("empty tools: %d, want %d", got, none)
	}
	all := []Tool{weather, clock, bare}
	want := none + ToolsTokens + toolTokens(weather) + toolTokens(clock) + toolTokens(bare)
	if got := CountChat(m, msgs, all); got != want {
		t.Errorf("three tools: %d, want %d", got, want)
	}
	if last := none + ToolsTokens + toolTokens(bare); want == last {
		t.Fatal("test is not telling all tools from the last one")
	}
	if n := CountText(m, jsonText(weather.Function.Parameters)); n < 10 {
		t.Errorf("parameters JSON counts %d tokens, want the schema counted", n)
	}
}

// A tool's parameters decoded from a request (a map) count as the JSON
// text the client sent, its <, > and & as themselves: 50 tokens, the count
// of tiktoken (js-tiktoken 1.0.21) for the framing, "user", "hi", "query"
// and the schema.
func TestCountChatToolSchemaUnescaped(t *testing.T) {
	var params any
	schema := `{"type":"object","properties":{"filter":{"type":"string","description":"rows where a < 5 && b > 2, like <tag>"}}}`
	if err := json.Unmarshal([]byte(schema), &params); err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{Role: "user", Content: "hi"}}
	for _, p := range []any{params, json.RawMessage(schema)} {
		tools := []Tool{{Type: "function", Function: Function{Name: "query", Parameters: p}}}
		if got := CountChat("gpt-4o", msgs, tools); got != 50 {
			t.Errorf("parameters %T: %d tokens, want 50", p, got)
		}
	}
}

func TestCountChatEmpty(t *testing.T) {
	if got := CountChat("gpt-4o", nil, nil); got != ReplyPrimingTokens {
		t.Errorf("no messages: %d, want %d", got, ReplyPrimingTokens)
	}
}

func TestImageURLUnmarshal(t *testing.T) {
	var p ContentPart
	if err := json.Unmarshal([]byte(`{"type":"image_url","image_url":"https://x/y.png"}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.ImageURL == nil || p.ImageURL.URL != "https://x/y.png" {
		t.Fatalf("string form: %#v", p.ImageURL)
	}
	if err := json.Unmarshal([]byte(`{"type":"image_url","image_url":{"url":"u","detail":"low"}}`), &p); err != nil {
		t.Fatal(err)
	}
	if *p.ImageURL != (ImageURL{URL: "u", Detail: "low"}) {
		t.Fatalf("object form: %#v", p.ImageURL)
	}
}

// benchSeq makes texts unique across benchmark runs, so that "new" texts
// are never found in the count cache.
var benchSeq atomic.Int64

// BenchmarkCountChat counts the cookbook conversation plus an image part and
// a tool. "new" makes every text a first sighting (roles aside), "resent"
// counts the same request again, as a client resending its history does.
func BenchmarkCountChat(b *testing.B) {
	request := func(suffix string) []Message {
		msgs := make([]Message, 0, len(cookbookMessages)+1)
		for _, m := range cookbookMessages {
			m.Content = m.Content.(string) + suffix
			msgs = append(msgs, m)
		}
		return append(msgs, Message{Role: "user", Content: []ContentPart{
			{Type: "text", Text: "And what does this chart say about next quarter?" + suffix},
			{Type: "image_url", ImageURL: &ImageURL{URL: "https://example.com/chart.png"}},
		}})
	}
	tools := []Tool{{Type: "function", Function: Function{
		Name: "get_weather", Description: "Get the current weather for a city.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}}}
	for _, model := range []string{"gpt-4", "gpt-4o"} {
		msgs := request("")
		CountChat(model, msgs, tools)
		b.Run("new/"+EncoderFor(model), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				CountChat(model, request(" #"+strconv.FormatInt(benchSeq.Add(1), 10)), tools)
			}
		})
		b.Run("resent/"+EncoderFor(model), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				CountChat(model, msgs, tools)
			}
		})
	}
}
