package store

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// likeOracle is LIKE as a regular expression: % any run, _ one character.
// Each pattern is compiled once: the differential tests ask for the same
// few patterns thousands of times.
func likeOracle(s, pattern string) bool {
	likeMu.Lock()
	re := likeRes[pattern]
	if re == nil {
		var b strings.Builder
		b.WriteString(`^(?s:`)
		for _, r := range pattern {
			switch r {
			case '%':
				b.WriteString(`.*`)
			case '_':
				b.WriteString(`.`)
			default:
				b.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		b.WriteString(`)$`)
		re = regexp.MustCompile(b.String())
		likeRes[pattern] = re
	}
	likeMu.Unlock()
	return re.MatchString(s)
}

var (
	likeMu  sync.Mutex
	likeRes = map[string]*regexp.Regexp{}
)

// likeMatch agrees with the regular expression on random names and
// patterns, multi-byte characters included (_ is one character), and on
// the patterns of many % that made a backtracking matcher take seconds.
func TestLikeMatch(t *testing.T) {
	t.Parallel()
	alphabet := []rune("ab-4o模型%_")
	rnd := rand.New(rand.NewPCG(1, 2))
	word := func(n int, wild bool) string {
		var b strings.Builder
		for range n {
			r := alphabet[rnd.IntN(len(alphabet))]
			if !wild && (r == '%' || r == '_') {
				r = 'x'
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	for range 20000 {
		s, p := word(rnd.IntN(9), false), word(rnd.IntN(7), true)
		if got, want := likeMatch(s, p), likeOracle(s, p); got != want {
			t.Fatalf("likeMatch(%q, %q) = %v, want %v", s, p, got, want)
		}
	}
	for _, tc := range []struct {
		s, p string
		want bool
	}{
		{"gemini-2.0-flash-thinking-exp-01-21", "%_%_%_%_%_%_%_%_%_%_%!", false},
		{"gemini-2.0-flash-thinking-exp-01-21", "%_%_%_%_%_%_%_%_%_%_%1", true},
		{"模型x", "模_x", true},
		{"gpt-4o-mini", "gpt-4o%", true},
		{"gpt-4o-mini", "gpt-4o", false},
		{"", "%", true},
		{"", "_", false},
	} {
		if got := likeMatch(tc.s, tc.p); got != tc.want {
			t.Errorf("likeMatch(%q, %q) = %v, want %v", tc.s, tc.p, got, tc.want)
		}
	}
}

// BenchmarkLikeMatchManyWildcards is the pattern that took 4.7 s on one
// 35-character name before the matcher became linear.
func BenchmarkLikeMatchManyWildcards(b *testing.B) {
	for b.Loop() {
		likeMatch("gemini-2.0-flash-thinking-exp-01-21", "%_%_%_%_%_%_%_%_%_%_%!")
	}
}

// A search keyword matches as LIKE 'keyword%' (S §8): the start of the
// content, its wildcards included, or the type when it is a number.
func TestKeywordMatchesLike(t *testing.T) {
	t.Parallel()
	l := &Log{Type: LogTypeConsume, Content: "模型倍率 1.25，补全倍率 4，分组倍率 1"}
	for _, tc := range []struct {
		keyword string
		want    bool
	}{
		{"模型", true}, {"%", true}, {"模型倍率 _", true}, {"模型倍率%补全", true}, {"%分组倍率 1", true},
		{"_型", true}, {"补全", false}, {"%补全倍率 5", false}, {"模型倍率 __3", false}, {"2", true}, {"1", false},
	} {
		if got, want := logMatches(l, LogFilter{Keyword: tc.keyword}), tc.want; got != want {
			t.Errorf("keyword %q: %v, want %v", tc.keyword, got, want)
		}
		if !strings.ContainsAny(tc.keyword, "0123456789") || strings.ContainsAny(tc.keyword, "%_") {
			if got, want := logMatches(l, LogFilter{Keyword: tc.keyword}), likeOracle(l.Content, tc.keyword+"%"); got != want {
				t.Errorf("keyword %q: %v, LIKE says %v", tc.keyword, got, want)
			}
		}
	}
}
