package tokenizer

import (
	"encoding/json"
	"testing"
)

func TestCountInput(t *testing.T) {
	const m = "text-embedding-3-small"
	hello := CountText(m, "hello world")
	if hello != 2 {
		t.Fatalf("hello world = %d", hello)
	}
	decode := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	scenarios := []struct {
		name  string
		input any
		want  int
	}{
		{"nil", nil, 0},
		{"string", "hello world", 2},
		{"strings", []string{"hello world", "hello world", ""}, 4},
		{"any strings", decode(`["hello world","hello world"]`), 4},
		{"tokens", []int{1, 2, 3, 4, 5}, 5},
		{"any tokens", decode(`[15339, 1917, 0]`), 3},
		{"token arrays", [][]int{{1, 2}, {3}}, 3},
		{"any token arrays", decode(`[[1,2,3],[4]]`), 4},
		{"raw", json.RawMessage(`["hello world",[1,2]]`), 4},
		{"raw invalid", json.RawMessage(`[`), 0},
		{"moderation parts", decode(`[{"type":"text","text":"hello world"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]`), 2 + DefaultImageTokens},
		{"typed parts", []ContentPart{{Type: "text", Text: "hello world"}}, 2},
		{"unsupported", struct{}{}, 0},
	}
	for _, s := range scenarios {
		if got := CountInput(m, s.input); got != s.want {
			t.Errorf("%s: CountInput = %d, want %d", s.name, got, s.want)
		}
	}
}
