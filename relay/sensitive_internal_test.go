package relay

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"gateway/store"
)

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
		// omni-moderation takes text and image parts.
		{"InInputParts", nil, []any{map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/a.png"}}, map[string]any{"type": "text", "text": "a TEST_SENSITIVE b"}}, "test_sensitive"},
		{"SplitAcrossInputParts", nil, []any{map[string]any{"type": "text", "text": "test_sens"}, map[string]any{"type": "text", "text": "itive"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &call{parsed: chatRequest{Prompt: tc.prompt, Input: tc.input}}
			if got := sensitiveHit(newWordMatcher(words), c); got != tc.want {
				t.Fatalf("hit %q, want %q", got, tc.want)
			}
		})
	}
}

// The matcher finds what checking each word in turn finds: the word
// earliest in the list among those in the text, overlapping words, words
// inside words and words that share prefixes and suffixes included.
func TestWordMatcher(t *testing.T) {
	words := []string{"she", "he", "hers", "his", "is", "ushe", "abcd", "bc", "c", "敏感", "感词"}
	naive := func(words []string, text string) string {
		for _, w := range words {
			if strings.Contains(text, w) {
				return w
			}
		}
		return ""
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "c", "d", "e", "h", "i", "r", "s", "u", "x", "敏", "感", "词"}
	for i := 0; i < 3000; i++ {
		// A random list order and a random text.
		ws := slices.Clone(words)
		rng.Shuffle(len(ws), func(a, b int) { ws[a], ws[b] = ws[b], ws[a] })
		ws = ws[:1+rng.IntN(len(ws))]
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		text := b.String()
		if got, want := newWordMatcher(ws).first(text), naive(ws, text); got != want {
			t.Fatalf("words %q, text %q: %q, want %q", ws, text, got, want)
		}
	}
	if got := newWordMatcher(nil).first("anything"); got != "" {
		t.Fatalf("no words found %q", got)
	}
}

// BenchmarkWordMatcher: 20 000 words of eight letters against a 1 MB
// prompt that holds none of them.
func BenchmarkWordMatcher(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	letters := "abcdefghijklmnopqrstuvwxyz"
	word := func(n int) string {
		w := make([]byte, n)
		for i := range w {
			w[i] = letters[rng.IntN(len(letters))]
		}
		return string(w)
	}
	words := make([]string, 20000)
	for i := range words {
		words[i] = "q" + word(7) // no text below holds a q
	}
	var t strings.Builder
	for t.Len() < 1<<20 {
		t.WriteString(strings.ReplaceAll(word(1+rng.IntN(9)), "q", "z"))
		t.WriteByte(' ')
	}
	text := t.String()
	m := newWordMatcher(words)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if m.first(text) != "" {
			b.Fatal("a word was found")
		}
	}
}

// Settings saved with the same word list (another option changed) keep the
// matcher, and the calls that meet a new list together share one build.
func TestSensitiveMatcherBuiltOncePerList(t *testing.T) {
	var sw sensitiveWords
	first := sw.matcher(&store.Settings{SensitiveWords: []string{"alpha", "beta"}})
	if again := sw.matcher(&store.Settings{SensitiveWords: []string{"alpha", "beta"}}); again != first {
		t.Fatal("settings with the same words built a new matcher")
	}
	next := &store.Settings{SensitiveWords: []string{"alpha", "gamma"}}
	got := make([]*wordMatcher, 32)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = sw.matcher(next)
		}()
	}
	wg.Wait()
	for _, m := range got {
		if m == first || m != got[0] {
			t.Fatal("calls meeting a new word list did not share one new matcher")
		}
	}
	if got[0].first("x gamma") != "gamma" {
		t.Fatal("the new matcher does not find the new word")
	}
}
