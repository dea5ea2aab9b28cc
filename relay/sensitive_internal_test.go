package relay

import "testing"

// Sensitive words match within one text, case-insensitively, and never
// across the boundary of two fields (S §12).
func TestSensitiveHitBoundaries(t *testing.T) {
	words := []string{"test_sensitive"}
	for _, tc := range []struct {
		name          string
		prompt, input any
		want          string
	}{
		{"InPrompt", "say TEST_Sensitive now", nil, "test_sensitive"},
		{"InInputList", nil, []any{"fine", "a test_sensitive b"}, "test_sensitive"},
		{"SplitAcrossFields", "prefix test_sens", "itive suffix", ""},
		{"SplitAcrossListItems", nil, []any{"test_sens", "itive"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &call{parsed: chatRequest{Prompt: tc.prompt, Input: tc.input}}
			if got := sensitiveHit(words, c); got != tc.want {
				t.Fatalf("hit %q, want %q", got, tc.want)
			}
		})
	}
}
