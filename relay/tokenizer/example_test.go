package tokenizer_test

import (
	"fmt"
	"strings"

	"gateway/relay/tokenizer"
)

func ExampleCounter_CountChat() {
	msgs := []tokenizer.Message{
		{Role: "system", Content: "You are a helpful assistant."},
		{Role: "user", Content: "hello world"},
	}
	n, _ := tokenizer.Counter{}.CountChat("gpt-4o", msgs, nil)
	fmt.Println(n)
	// Output: 19
}

// A relay counts data: URLs from their header and leaves remote images at
// the flat default; a real one would download those through its guarded
// HTTP client instead.
func ExampleCounter() {
	const model = "gpt-4o"
	c := tokenizer.Counter{Images: func(url, detail string) (int, error) {
		if strings.HasPrefix(url, "data:") {
			return tokenizer.ImageTokensFromDataURL(url, detail, model)
		}
		return tokenizer.DefaultImageTokens, nil
	}}
	// A 1×1 transparent PNG.
	const dot = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
	msgs := []tokenizer.Message{{Role: "user", Content: []tokenizer.ContentPart{
		{Type: "text", Text: "What is this?"},
		{Type: "image_url", ImageURL: &tokenizer.ImageURL{URL: dot}},
	}}}
	n, err := c.CountChat(model, msgs, nil)
	fmt.Println(n, err)
	// Output: 266 <nil>
}

func ExampleStreamCounter() {
	s := tokenizer.NewStreamCounter("gpt-4o")
	for _, delta := range []string{"Hello", ",", " world", "!"} {
		s.Add(delta)
	}
	s.AddToolCalls([]tokenizer.ToolCall{{Function: tokenizer.FunctionCall{Name: "get_time", Arguments: "{}"}}})
	fmt.Println(s.Tokens())
	// Output: 14
}

func ExampleImageTokens() {
	fmt.Println(tokenizer.ImageTokens(1024, 1024, "high", "gpt-4o"))
	fmt.Println(tokenizer.ImageTokens(2048, 4096, "high", "gpt-4o"))
	fmt.Println(tokenizer.ImageTokens(1024, 1024, "low", "gpt-4o"))
	// Output:
	// 765
	// 1105
	// 85
}
