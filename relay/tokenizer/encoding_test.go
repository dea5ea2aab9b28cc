package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

func TestEncoderFor(t *testing.T) {
	scenarios := []struct {
		model string
		want  string
	}{
		{"gpt-4o", O200KBase},
		{"gpt-4o-2024-08-06", O200KBase},
		{"gpt-4o-mini", O200KBase},
		{"chatgpt-4o-latest", O200KBase},
		{"o1", O200KBase},
		{"o1-mini", O200KBase},
		{"o3", O200KBase},
		{"o3-mini-2025-01-31", O200KBase},
		{"o4-mini", O200KBase},
		{"gpt-4.1", O200KBase},
		{"gpt-4.1-nano", O200KBase},
		{"gpt-4.5-preview", O200KBase},
		{"gpt-5-mini", O200KBase},
		{"openai/gpt-4o", O200KBase},
		{"GPT-4o", O200KBase},
		{"ft:gpt-4o-mini-2024-07-18:acme::9xYz", O200KBase},
		{"ft:gpt-4o-2024-08-06:acme:bot:abc123", O200KBase},
		{"gpt-oss-120b", O200KBase},
		{"openai/gpt-oss-20b", O200KBase},
		{"gpt-audio", O200KBase},
		{"gpt-audio-mini-2025-10-06", O200KBase},
		{"gpt-realtime", O200KBase},
		{"codex-mini-latest", O200KBase},
		{"ft:gpt-4.1-2025-04-14:acme::abc", O200KBase},
		{"ft:gpt-4.1-mini-2025-04-14:acme:bot:abc123", O200KBase},
		{"ft:o4-mini-2025-04-16:acme::abc", O200KBase},
		{"openai/ft:gpt-4.1-nano-2025-04-14:acme::abc", O200KBase},
		{"ft:gpt-4-0613:acme::abc", CL100KBase},
		{"ft:gpt-3.5-turbo-0125:acme::abc", CL100KBase},
		{"gpt-4", CL100KBase},
		{"gpt-4-turbo", CL100KBase},
		{"gpt-3.5-turbo-0613", CL100KBase},
		{"claude-3-5-sonnet", CL100KBase},
		{"o100", CL100KBase},
		{"", CL100KBase},
	}
	for _, s := range scenarios {
		if got := EncoderFor(s.model); got != s.want {
			t.Errorf("EncoderFor(%q) = %q, want %q", s.model, got, s.want)
		}
	}
}

func TestCountTextKnown(t *testing.T) {
	scenarios := []struct {
		model string
		text  string
		want  int
	}{
		{"gpt-4", "", 0},
		{"gpt-4", "hello world", 2},
		{"gpt-4o", "hello world", 2},
		{"gpt-3.5-turbo", "tiktoken is great!", 6},
		{"gpt-4o", "tiktoken is great!", 6},
		// Special tokens are plain text to the counter.
		{"gpt-4", "<|endoftext|>", 7},
		// Fine-tuned gpt-4o and gpt-oss models count in o200k_base.
		{"ft:gpt-4o-mini-2024-07-18:acme::9xYz", "人工智能是计算机科学的一个分支", 10},
		{"gpt-oss-120b", "人工智能是计算机科学的一个分支", 10},
		{"gpt-audio-mini", "人工智能是计算机科学的一个分支", 10},
		{"gpt-4", "人工智能是计算机科学的一个分支", 15},
	}
	for _, s := range scenarios {
		if got := CountText(s.model, s.text); got != s.want {
			t.Errorf("CountText(%q, %q) = %d, want %d", s.model, s.text, got, s.want)
		}
	}
}

// TestEmbeddedRanks checks token ids against OpenAI's published examples, so
// that a wrong or truncated rank file cannot pass on counts alone.
func TestEmbeddedRanks(t *testing.T) {
	scenarios := []struct {
		enc    *encoder
		tokens []string
		want   []int
	}{
		{cl100k, []string{"t", "ik", "token", " is", " great", "!"}, []int{83, 1609, 5963, 374, 2294, 0}},
		{o200k, []string{"t", "ikt", "oken", " is", " great", "!"}, []int{83, 8251, 2488, 382, 2212, 0}},
		{cl100k, []string{"hello", " world"}, []int{15339, 1917}},
	}
	for _, s := range scenarios {
		b, err := s.enc.load()
		if err != nil {
			t.Fatal(err)
		}
		got := make([]int, len(s.tokens))
		for i, tok := range s.tokens {
			got[i] = b.ranks[tok]
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("%s %q = %v, want %v", s.enc.name, s.tokens, got, s.want)
		}
		text := strings.Join(s.tokens, "")
		if n := b.count(text); n != len(s.tokens) {
			t.Errorf("%s %q: %d tokens, want %d", s.enc.name, text, n, len(s.tokens))
		}
	}
}

// prose is ordinary English text with punctuation and digits.
const prose = `The quick brown fox jumps over the lazy dog. In 2024, more than 1,500 ` +
	`requests per second were relayed through a single gateway instance; each one ` +
	`needed its prompt counted before the upstream call so that quota could be ` +
	`reserved. "Why not just trust the upstream usage?" someone asked. Because ` +
	`streams get cut, providers forget to send usage, and a reservation has to ` +
	`happen before any of that is known! Tokens aren't words: "tokenization" ` +
	`splits into pieces, and numbers like 3.14159 or 65536 split into groups of ` +
	`up to three digits.
`

func TestCountTextNoCutForProse(t *testing.T) {
	text := strings.Repeat(prose, 20) // about 11 KB
	for _, enc := range []*encoder{cl100k, o200k} {
		want := len(reference(t, enc.name).EncodeOrdinary(text))
		if got := enc.count(text); got != want {
			t.Errorf("%s: count = %d, want exact %d", enc.name, got, want)
		}
	}
}

// TestCountTextChunked checks that a long text, counted in chunks, gets
// the count of the whole text encoded at once: chunks end where a word
// with its leading space begins, which no pre-token crosses, whatever the
// spacing and punctuation around.
func TestCountTextChunked(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 5*maxChunkBytes; i++ {
		b.WriteString(prose)
		b.WriteString([]string{"  double", "\n\nlines", " 3 4 5", ".dot", "\t tab", " 'quoted'", " 你好世界"}[i%7])
	}
	text := b.String()
	for _, enc := range []*encoder{cl100k, o200k} {
		want := len(reference(t, enc.name).EncodeOrdinary(text))
		if got, _ := enc.encode(text); got != want {
			t.Errorf("%s: count = %d, want exact %d", enc.name, got, want)
		}
	}
	// Chinese has no spaces: its chunks end where a run of letters does,
	// before a punctuation mark. The counts are tiktoken's (js-tiktoken
	// 1.0.21) for 100 KB of Chinese prose.
	zh := "人工智能是计算机科学的一个分支，它企图了解智能的实质。"
	zh = strings.Repeat(zh, (100_000+len(zh)-1)/len(zh))
	if got := CountText("gpt-4o", zh); got != 23_465 {
		t.Errorf("o200k: Chinese prose: count = %d, want 23465", got)
	}
	if got := CountText("gpt-4", zh); got != 37_050 {
		t.Errorf("cl100k: Chinese prose: count = %d, want 37050", got)
	}
	ja := strings.Repeat("日本語の文章は、単語の間に空白を入れずに書きます。「かぎ括弧」も使います！", 800)
	for _, enc := range []*encoder{cl100k, o200k} {
		want := len(reference(t, enc.name).EncodeOrdinary(ja))
		if got, _ := enc.encode(ja); got != want {
			t.Errorf("%s: Japanese prose: count = %d, want exact %d", enc.name, got, want)
		}
	}
	// A space after a no-break or an ideographic space (text pasted from a
	// web page: "&nbsp; &nbsp;") continues a run of white space, one
	// pre-token, and no chunk ends there.
	for _, line := range []string{"Hello,world.\u00a0 \u00a0 \n", "Hello,world.\u3000 \u3000 \n"} {
		for pad := range len(line) {
			text := strings.Repeat("a", pad) + strings.Repeat(line, maxChunkBytes/len(line)+1)
			want := len(reference(t, O200KBase).EncodeOrdinary(text))
			if got, _ := o200k.encode(text); got != want {
				t.Errorf("o200k: %q, %d bytes: count = %d, want exact %d", line, len(text), got, want)
			}
		}
	}
	// Text without a space or a letter followed by another character is
	// cut at a rune boundary, never inside a rune.
	cjk := strings.Repeat("汉字", maxChunkBytes)
	if end := chunkEnd(cjk); end > maxChunkBytes || !utf8.RuneStart(cjk[end]) {
		t.Errorf("chunkEnd = %d", end)
	}
}

// randomText returns about n bytes of text mixing the scripts, symbols,
// digits and white space of many languages with contractions, emoji
// sequences, combining marks and invalid UTF-8; with spaces false, it has
// no ASCII space, so that chunks end elsewhere than before a word.
func randomText(rng *rand.Rand, n int, spaces bool) string {
	ranges := [][2]rune{
		{'a', 'z'}, {'A', 'Z'}, {'0', '9'}, {'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'},
		{0xc0, 0x24f}, {0x300, 0x36f}, {0x370, 0x3ff}, {0x400, 0x4ff}, {0x590, 0x5ff}, {0x600, 0x6ff},
		{0x900, 0x97f}, {0xe00, 0xe7f}, {0x1100, 0x11ff}, {0x3040, 0x30ff}, {0x4e00, 0x9fff},
		{0xac00, 0xd7a3}, {0x1f300, 0x1faff}, {0x2000, 0x206f}, {0xff00, 0xffef}, {0x10000, 0x1007f},
	}
	blanks := []string{" ", " ", "  ", "\t", "\n", "\r\n", "\n\n", "\u00a0", "\u3000", "\v", "\f", "\u2028", "\u0085"}
	extras := []string{"'s", "'S", "'ll", "'re", "'", "\u200d", "👍🏽", "👨‍👩‍👧", "e\u0301", "<|endoftext|>"}
	var b strings.Builder
	for b.Len() < n {
		switch rng.IntN(10) {
		case 0:
			b.WriteString(blanks[rng.IntN(len(blanks))])
		case 1:
			for k := rng.IntN(4); k >= 0; k-- {
				b.WriteByte(byte(rng.IntN(256)))
			}
		case 2:
			b.WriteString(extras[rng.IntN(len(extras))])
		default:
			r := ranges[rng.IntN(len(ranges))]
			for k := rng.IntN(12); k >= 0; k-- {
				b.WriteRune(r[0] + rune(rng.IntN(int(r[1]-r[0]+1))))
			}
		}
	}
	if !spaces {
		return strings.ReplaceAll(b.String(), " ", "")
	}
	return b.String()
}

// TestCountTextRandom checks counts against tiktoken-go's over random
// texts of up to 40 KB, counted in chunks.
func TestCountTextRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 60
	if testing.Short() {
		n = 10
	}
	for i := range n {
		size := rng.IntN(40 << 10)
		if i%3 == 0 {
			size = rng.IntN(300)
		}
		text := randomText(rng, size, i%2 == 0)
		for _, enc := range []*encoder{cl100k, o200k} {
			want := len(reference(t, enc.name).EncodeOrdinary(text))
			if got, _ := enc.encode(text); got != want {
				t.Errorf("%s: text %d (%d bytes): count = %d, want %d", enc.name, i, len(text), got, want)
			}
		}
	}
}

// TestCountTextBeyondExact checks that text past maxExactBytes is
// estimated at four bytes a token, after an exact count of the rest.
func TestCountTextBeyondExact(t *testing.T) {
	maxExactBytes = 4 * maxChunkBytes
	t.Cleanup(func() { maxExactBytes = 4 << 20 })
	word := "lorem "
	text := strings.Repeat(word, (maxExactBytes+3*maxChunkBytes)/len(word))
	end := strings.LastIndex(text[:maxExactBytes+1], "m ") + 1 // before the last space within the limit
	want := len(reference(t, CL100KBase).EncodeOrdinary(text[:end])) + (len(text)-end+3)/4
	if got, _ := cl100k.encode(text); got != want {
		t.Errorf("count = %d, want %d", got, want)
	}
}

// TestCountTextLongRun checks that a long run of one character class, a
// single pre-token that makes tiktoken's byte-pair merge quadratic, keeps
// its exact count: the counts are tiktoken's (js-tiktoken 1.0.21), and
// counting 100 KB of one letter stays fast (BenchmarkCountTextLongRun64KB).
func TestCountTextLongRun(t *testing.T) {
	scenarios := []struct {
		name        string
		text        string
		o200k, cl1k int
	}{
		{"chinese", strings.Repeat("人工智能", 30), 60, 150},
		{"korean", strings.Repeat("한국어", 50), 100, 200},
		{"thai", strings.Repeat("ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ", 4), 44, 120},
		{"chinese and japanese", strings.Repeat("中文", 200) + "。" + strings.Repeat("日本", 200), 401, 801},
		{"exclamation marks", strings.Repeat("!", 257), 18, 33},
		{"dots", strings.Repeat(".", 257), 6, 6},
		{"equals signs", strings.Repeat("=", 300), 5, 6},
		{"dashes", strings.Repeat("-", 300), 5, 5},
		{"replacement characters", strings.Repeat("\ufffd", 300), 38, 75},
		{"indentation", "x\n" + strings.Repeat(" ", 1000) + "y", 12, 12},
		{"blank lines", strings.Repeat("\r\n", 129), 32, 33},
		{"tabs", strings.Repeat("\t", 257), 16, 16},
	}
	for _, s := range scenarios {
		if got := CountText("gpt-4o", s.text); got != s.o200k {
			t.Errorf("%s: o200k count = %d, want %d", s.name, got, s.o200k)
		}
		if got := CountText("gpt-4", s.text); got != s.cl1k {
			t.Errorf("%s: cl100k count = %d, want %d", s.name, got, s.cl1k)
		}
	}
	// Runs of a few KB, against tiktoken-go itself.
	for _, text := range []string{
		strings.Repeat("a", 5000), strings.Repeat("Ab", 2000), strings.Repeat("汉字测试", 500),
		strings.Repeat("=", 5000), "x" + strings.Repeat(" ", 5000) + "x", strings.Repeat("é", 3000),
		strings.Repeat("\u0301", 2000), strings.Repeat("😀👍🏽", 500),
	} {
		for _, enc := range []*encoder{cl100k, o200k} {
			want := len(reference(t, enc.name).EncodeOrdinary(text))
			if got, _ := enc.encode(text); got != want {
				t.Errorf("%s: %.12q…: count = %d, want %d", enc.name, text, got, want)
			}
		}
	}
	start := time.Now()
	for _, text := range []string{strings.Repeat("a", 100_000), strings.Repeat("=", 100_000), "x" + strings.Repeat(" ", 100_000) + "x", strings.Repeat("汉字测试", 10_000)} {
		CountText("gpt-4o", text)
		CountText("gpt-4", text)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("counting 8 long runs took %v", d)
	}
}

func TestCountTextLongRunExactForLetters(t *testing.T) {
	// "a"*8 is one token in both vocabularies.
	if got := CountText("gpt-4", strings.Repeat("a", 100_000)); got != 12_500 {
		t.Errorf("count = %d, want 12500", got)
	}
}

// TestMergeLongIsMergeShort checks the heap merge against tiktoken's scan
// on pre-tokens of every length up to a few hundred bytes.
func TestMergeLongIsMergeShort(t *testing.T) {
	pieces := []string{"abcdefghijklmnopqrstuvwxyz", " tokenization", "aaaaaaaaaaa", "汉字测试", "😀👍🏽", "=-=-=-", "\ufffd"}
	for _, enc := range []*encoder{cl100k, o200k} {
		b, err := enc.load()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pieces {
			for k := 1; k*len(p) <= 400; k++ {
				text := strings.Repeat(p, k)
				if len(text) <= shortPiece {
					if long, short := b.mergeLong(text), b.mergeShort(text); long != short {
						t.Errorf("%s %q: heap %d, scan %d", enc.name, text, long, short)
					}
				}
				want := len(reference(t, enc.name).EncodeOrdinary(text))
				if got := b.count(text); got != want {
					t.Errorf("%s %q: count = %d, want %d", enc.name, text, got, want)
				}
			}
		}
	}
}

func TestCountTextConcurrent(t *testing.T) {
	texts := []string{"hello world", prose, strings.Repeat(prose, 3), "汉字 テスト 한국어"}
	models := []string{"gpt-4", "gpt-4o"}
	want := map[string]int{}
	for _, m := range models {
		for _, s := range texts {
			want[m+s] = CountText(m, s)
		}
	}
	t.Run("group", func(t *testing.T) {
		for i := range 8 {
			t.Run("", func(t *testing.T) {
				t.Parallel()
				for j := range 20 {
					m := models[(i+j)%2]
					s := texts[j%len(texts)]
					if got := CountText(m, s); got != want[m+s] {
						t.Errorf("CountText(%s) = %d, want %d", m, got, want[m+s])
					}
				}
			})
		}
	})
}

// TestLazyLoadConcurrent builds a fresh encoder from many goroutines at once:
// exactly one build must happen and every caller must see it.
func TestLazyLoadConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an extra encoding")
	}
	e := &encoder{name: CL100KBase}
	var wg sync.WaitGroup
	got := make([]int, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = e.count("hello world")
		}()
	}
	wg.Wait()
	for i, n := range got {
		if n != 2 {
			t.Errorf("goroutine %d: count = %d, want 2", i, n)
		}
	}
}

// BenchmarkCountText1KB measures counting 1 KB of English prose: "cold"
// tokenizes every time (a text seen for the first time), "cached" is a text
// counted before (resent conversation history).
func BenchmarkCountText1KB(b *testing.B) {
	text := strings.Repeat(prose, 3)[:1024]
	for _, model := range []string{"gpt-4", "gpt-4o"} {
		enc := encoderFor(model)
		enc.count(text)
		b.Run("cold/"+enc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				enc.encode(text)
			}
		})
		b.Run("cached/"+enc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				CountText(model, text)
			}
		})
	}
}

func BenchmarkCountText1KBParallel(b *testing.B) {
	text := strings.Repeat(prose, 3)[:1024]
	enc := encoderFor("gpt-4o")
	enc.count(text)
	b.SetBytes(int64(len(text)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			enc.encode(text)
		}
	})
}

// BenchmarkCountTextLongRun64KB measures the worst case of tiktoken's
// merge: 64 KB of one letter, a single pre-token per chunk.
func BenchmarkCountTextLongRun64KB(b *testing.B) {
	text := strings.Repeat("a", 64<<10)
	enc := encoderFor("gpt-4o")
	enc.count("warm up")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		enc.encode(text)
	}
}

// FuzzCount checks that counting never hangs or panics and that a text
// keeps its exact count.
func FuzzCount(f *testing.F) {
	for _, s := range []string{"", "hello world", prose, "\xff\xfe\x00", strings.Repeat("é", 300), strings.Repeat(" \n", 200), "<|endoftext|>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, enc := range []*encoder{cl100k, o200k} {
			n, _ := enc.encode(text)
			if n < 0 || (text != "" && n == 0) {
				t.Fatalf("%s: %d tokens for %q", enc.name, n, text)
			}
			if len(text) <= 4096 {
				if exact := len(reference(t, enc.name).EncodeOrdinary(text)); n != exact {
					t.Fatalf("%s: %d tokens, want exact %d", enc.name, n, exact)
				}
			}
		}
	})
}

// A meter tokenizes texts exactly until its budget of bytes is spent,
// cutting the text that spends it where a word begins, and estimates
// everything after, whatever the number of texts.
func TestMeterBudget(t *testing.T) {
	a := strings.Repeat(prose, 12)[:6000]
	b := strings.Repeat(prose, 12)[:6000]
	c := strings.Repeat(prose, 12)[:3000]
	m := newMeter("gpt-4", 10000)
	got := m.count(a) + m.count(b) + m.count(c)
	cut := cutBefore(b, 4000)
	want := cl100k.count(a) + cl100k.count(b[:cut]) + estimate(b[cut:]) + estimate(c)
	if got != want || cut > 4000 || cut < 4000-maxChunkBytes/2 {
		t.Fatalf("count = %d, want %d (cut at %d)", got, want, cut)
	}
	if unlimited := newMeter("gpt-4", 0); unlimited.count(a)+unlimited.count(b) != cl100k.count(a)+cl100k.count(b) {
		t.Fatal("a meter without a budget is not exact")
	}
	// Counter.ExactBytes bounds a whole chat, not each of its messages.
	msgs := []Message{{Role: "user", Content: a}, {Role: "user", Content: b}}
	n, _ := Counter{ExactBytes: 100}.CountChat("gpt-4", msgs, nil)
	if exact := CountChat("gpt-4", msgs, nil); n == exact {
		t.Fatalf("a budget of 100 bytes counted %d, the exact count", n)
	}
}
