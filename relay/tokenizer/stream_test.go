package tokenizer

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestStreamCounterText(t *testing.T) {
	deltas := []string{"The", " quick", " brown", "", " fox", " jumps over the lazy dog."}
	s := NewStreamCounter("gpt-4o")
	if got := s.Tokens(); got != 0 {
		t.Fatalf("empty: %d", got)
	}
	for _, d := range deltas {
		s.Add(d)
	}
	full := strings.Join(deltas, "")
	if s.text.String() != full {
		t.Fatalf("Text = %q", s.text.String())
	}
	want := CountText("gpt-4o", full)
	if got := s.Tokens(); got != want {
		t.Errorf("Tokens = %d, want %d", got, want)
	}
	if got := s.Tokens(); got != want {
		t.Errorf("second Tokens = %d, want %d", got, want)
	}
	s.Add(" Again and again.")
	if got, want := s.Tokens(), CountText("gpt-4o", full+" Again and again."); got != want {
		t.Errorf("after more text: %d, want %d", got, want)
	}
}

// TestStreamCounterToolCalls feeds a stream the way OpenAI sends parallel
// tool calls: names first, then argument fragments, one or two calls per
// chunk.
func TestStreamCounterToolCalls(t *testing.T) {
	chunks := []string{
		`{"content":"Let me check."}`,
		`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"get_weather","arguments":""}}]}`,
		`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}`,
		`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}},{"index":1,"id":"b","type":"function","function":{"name":"get_time","arguments":"{\"city\":\"Paris\"}"}}]}`,
		`{"tool_calls":[{"index":1,"function":{"arguments":""}}]}`,
	}
	typed := NewStreamCounter("gpt-4")
	for _, c := range chunks {
		var d struct {
			Content   string     `json:"content"`
			ToolCalls []ToolCall `json:"tool_calls"`
		}
		if err := json.Unmarshal([]byte(c), &d); err != nil {
			t.Fatal(err)
		}
		typed.Add(d.Content)
		typed.AddToolCalls(d.ToolCalls)
	}
	text := `Let me check.get_weather{"city":"Paris"}get_time{"city":"Paris"}`
	if typed.text.String() != text {
		t.Fatalf("Text = %q, want %q", typed.text.String(), text)
	}
	// Two calls in the largest chunk.
	want := CountText("gpt-4", text) + 2*StreamToolCallTokens
	if got := typed.Tokens(); got != want {
		t.Errorf("typed: Tokens = %d, want %d", got, want)
	}
}

// BenchmarkStreamCounter feeds a reply of about 2 KB word by word and counts
// it.
func BenchmarkStreamCounter(b *testing.B) {
	words := strings.Fields(strings.Repeat(prose, 4))
	b.ReportAllocs()
	for b.Loop() {
		s := NewStreamCounter("gpt-4o")
		s.Add(strconv.FormatInt(benchSeq.Add(1), 10)) // a new reply every time
		for _, w := range words {
			s.Add(" " + w)
		}
		s.Tokens()
	}
}

// A long stream is tokenized as it grows, a piece at a time: the counter
// holds little text, and the count is that of the whole text.
func TestStreamCounterFolds(t *testing.T) {
	foldBytes = 8 << 10
	t.Cleanup(func() { foldBytes = 256 << 10 })
	s := NewStreamCounter("gpt-4o")
	var full strings.Builder
	for i := 0; full.Len() < 3*foldBytes; i++ {
		d := []string{" word", " another", ", then", "\n\nnew paragraph", " 42", "."}[i%6]
		s.Add(d)
		full.WriteString(d)
		if s.text.Len() > foldBytes+64 {
			t.Fatalf("the counter holds %d bytes", s.text.Len())
		}
	}
	if got, want := s.Tokens(), CountText("gpt-4o", full.String()); got != want {
		t.Fatalf("Tokens = %d, want %d", got, want)
	}
}
