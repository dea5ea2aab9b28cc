package tokenizer

import (
	"errors"
	"hash/maphash"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Encoding names returned by EncoderFor.
const (
	// O200KBase is the encoding of the gpt-4o family and its successors.
	O200KBase = "o200k_base"
	// CL100KBase is the encoding of gpt-3.5-turbo and gpt-4, and the
	// fallback for every model this package does not recognise.
	CL100KBase = "cl100k_base"
)

// encoder is one lazily built encoding. Building one parses a rank file of a
// few MB, so it happens once per process.
type encoder struct {
	name  string
	once  sync.Once
	bpe   *bpe
	err   error
	cache countCache
}

var (
	o200k  = &encoder{name: O200KBase}
	cl100k = &encoder{name: CL100KBase}
)

func (e *encoder) load() (*bpe, error) {
	e.once.Do(func() {
		e.bpe, e.err = newBPE(e.name)
		if e.err == nil && e.bpe == nil {
			e.err = errors.New("tokenizer: no encoding " + e.name)
		}
	})
	return e.bpe, e.err
}

// Preload builds both encodings now instead of on first use, so that the
// first request does not pay for it, and reports whether they could be
// built. It is safe to call more than once and concurrently with counting.
func Preload() error {
	var wg sync.WaitGroup
	for _, e := range []*encoder{o200k, cl100k} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.load()
		}()
	}
	wg.Wait()
	_, err1 := o200k.load()
	_, err2 := cl100k.load()
	return errors.Join(err1, err2)
}

// o200kPrefixes are the model families tokenized with o200k_base. S §5.8.1
// names only gpt-4o* and chatgpt-4o*; the o-series reasoning models, gpt-4.1,
// gpt-4.5, gpt-5, the open-weight gpt-oss models (whose o200k_harmony adds
// only special tokens) and the gpt-4o generation's audio, realtime and codex
// models (gpt-audio, gpt-realtime, codex-mini) use the same vocabulary, and
// counting them with cl100k_base would misestimate their prompts, so they
// are included. A fine-tuned model ("ft:gpt-4o-mini-…", "ft:gpt-4.1-…",
// "ft:o4-mini-…") counts as its base model. Entries ending in "-" also match
// the bare family name ("o1", "o3").
var o200kPrefixes = []string{
	"gpt-4o",
	"chatgpt-4o",
	"gpt-oss-",
	"gpt-audio",
	"gpt-realtime",
	"codex-mini",
	"gpt-4.1",
	"gpt-4.5",
	"gpt-5",
	"o1-",
	"o3-",
	"o4-",
}

// EncoderFor returns the name of the encoding used to count tokens for
// model: O200KBase for names starting with gpt-4o, chatgpt-4o, gpt-4.1,
// gpt-4.5, gpt-5, gpt-oss, gpt-audio, gpt-realtime, codex-mini, o1, o3 or
// o4, also after "ft:" (a fine-tuned model), and CL100KBase for everything
// else. The comparison ignores case and any provider prefix up to the last
// "/" (as in "openai/gpt-4o").
func EncoderFor(model string) string {
	if useO200K(normalizeModel(model)) {
		return O200KBase
	}
	return CL100KBase
}

func useO200K(m string) bool {
	m = strings.TrimPrefix(m, "ft:")
	for _, p := range o200kPrefixes {
		if strings.HasPrefix(m, p) {
			return true
		}
		if p[len(p)-1] == '-' && m == p[:len(p)-1] {
			return true
		}
	}
	return false
}

// normalizeModel lower-cases model and drops a provider prefix. It does not
// allocate for the usual already-lower-case names.
func normalizeModel(model string) string {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	return strings.ToLower(model)
}

func encoderFor(model string) *encoder {
	if EncoderFor(model) == O200KBase {
		return o200k
	}
	return cl100k
}

// CountText returns the number of tokens of text in model's encoding.
// Special tokens such as <|endoftext|> are counted as ordinary text. It is
// safe for concurrent use. Counts of recently seen texts are remembered,
// so resent conversation history is not tokenized again.
//
// Should the embedded encoding fail to build (which would be a broken
// binary, and Preload reports it), it returns an estimate of one token per
// four bytes rather than failing the request.
func CountText(model, text string) int {
	return encoderFor(model).count(text)
}

func (e *encoder) count(text string) int {
	if text == "" {
		return 0
	}
	h := maphash.String(cacheSeed, text)
	if n, ok := e.cache.get(h); ok {
		return n
	}
	n, exact := e.encode(text)
	if exact {
		e.cache.put(h, n)
	}
	return n
}

// encode counts text without the cache. exact is false when the encoding
// could not be built and n is only an estimate.
func (e *encoder) encode(text string) (n int, exact bool) {
	b, err := e.load()
	if err != nil {
		return (len(text) + 3) / 4, false
	}
	if len(text) > maxExactBytes {
		// Beyond any model's context: the rest is estimated, so that one
		// request of a few dozen MB cannot hold a CPU for seconds.
		end := cutBefore(text, maxExactBytes)
		n = estimate(text[end:])
		text = text[:end]
	}
	for len(text) > 0 {
		end := chunkEnd(text)
		n += b.count(text[:end])
		text = text[end:]
	}
	return n, true
}

// maxExactBytes is how much of one text is tokenized, at about 0.45 µs a
// byte: 4 MiB is a million tokens or more, the largest context windows. The
// rest of a longer text counts one token per four bytes.
var maxExactBytes = 4 << 20 // a variable for the tests only

// maxChunkBytes bounds the text handed to the encoder at once. The split
// pattern reads its input as runes, four bytes a character, and a prompt
// of 20 MB once took gigabytes. Text is therefore counted in chunks, cut
// where a pre-token starts anyway.
const maxChunkBytes = 16 << 10

// chunkEnd returns where to end the first chunk of text.
func chunkEnd(text string) int { return cutBefore(text, maxChunkBytes) }

// cutBefore returns where to cut text at most limit bytes in: len(text)
// when it is that short, else the last place within limit where a space
// follows a character that is not white space (where a word with its
// leading space begins, which no pre-token crosses), looking
// back at most maxChunkBytes/2; else, in the same stretch, the last place
// where a letter is followed by a character that is neither a letter, a
// combining mark nor an apostrophe (where a run of letters ends, as in
// Chinese or Japanese text, which has no spaces: no pre-token crosses that
// either); else the last rune boundary within limit.
func cutBefore(text string, limit int) int {
	if len(text) <= limit {
		return len(text)
	}
	stop := max(limit-maxChunkBytes/2, 0)
	for i := limit; i > stop; i-- {
		if text[i] == ' ' && !endsInSpace(text[:i]) {
			return i
		}
	}
	i := limit
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	for j := i; j > stop; {
		before, size := utf8.DecodeLastRuneInString(text[:j])
		if after, _ := utf8.DecodeRuneInString(text[j:]); unicode.IsLetter(before) &&
			!unicode.IsLetter(after) && !unicode.IsMark(after) && after != '\'' {
			return j
		}
		j -= size
	}
	return i
}

// endsInSpace reports whether text ends in white space as the split
// patterns' \s reads it: besides ASCII's, a no-break space, an ideographic
// space, a vertical tab and the like, which a run of white space (one
// pre-token) continues through.
func endsInSpace(text string) bool {
	if c := text[len(text)-1]; c < utf8.RuneSelf {
		return c == ' ' || '\t' <= c && c <= '\r'
	}
	r, _ := utf8.DecodeLastRuneInString(text)
	return unicode.IsSpace(r)
}

// estimate is the count of text not tokenized: a token per four bytes.
func estimate(text string) int { return (len(text) + 3) / 4 }

// meter counts the texts of one request: exactly while its budget of
// bytes lasts, then estimated, so that a request of many large texts costs
// no more tokenizing than one.
type meter struct {
	enc  *encoder
	left int // bytes still tokenized exactly; negative: no limit
}

func newMeter(model string, exactBytes int) *meter {
	if exactBytes <= 0 {
		exactBytes = -1
	}
	return &meter{enc: encoderFor(model), left: exactBytes}
}

func (m *meter) count(text string) int {
	if m.left < 0 || len(text) <= m.left {
		if m.left >= 0 {
			m.left -= len(text)
		}
		return m.enc.count(text)
	}
	end := cutBefore(text, m.left)
	m.left = 0
	return m.enc.count(text[:end]) + estimate(text[end:])
}

// Tokenizing costs about 0.3 µs per byte, plus about a microsecond per call,
// and chat clients resend the whole conversation (system prompt, history,
// tool results) on every turn, so the same texts, and always the same roles,
// are counted again and again. Each encoding therefore remembers the counts
// of the texts it has seen recently, keyed by a 64-bit hash with a
// per-process random seed (a collision is improbable and cannot be provoked
// by a client); a hit costs about 0.1 µs per KB. Memory stays bounded at
// cacheShards × cacheShardEntries entries of about 20 bytes, some 1.3 MB per
// encoding when full.
const (
	cacheShards       = 32
	cacheShardEntries = 2048
)

var cacheSeed = maphash.MakeSeed()

// countCache maps text hashes to token counts. It is sharded so that
// concurrent requests rarely contend on one mutex.
type countCache struct {
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	mu sync.Mutex
	m  map[uint64]int
}

func (c *countCache) get(h uint64) (int, bool) {
	s := &c.shards[h%cacheShards]
	s.mu.Lock()
	n, ok := s.m[h]
	s.mu.Unlock()
	return n, ok
}

func (c *countCache) put(h uint64, n int) {
	s := &c.shards[h%cacheShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[uint64]int, cacheShardEntries)
	}
	if len(s.m) >= cacheShardEntries {
		// Evict an arbitrary entry: map iteration starts at a random
		// place, which is as good as LRU for a cache this size and needs
		// no bookkeeping on the read path.
		for k := range s.m {
			delete(s.m, k)
			break
		}
	}
	s.m[h] = n
}
