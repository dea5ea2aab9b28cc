package tokenizer

import (
	"errors"
	"math"

	"github.com/dlclark/regexp2"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// bpe is one byte-pair encoding: the pattern that splits text into
// pre-tokens and the ranks of its tokens. It counts what tiktoken's
// encode_ordinary would return, without building the token list.
//
// tiktoken merges a pre-token by scanning all its pairs for the best one on
// every merge, which is quadratic in the pre-token's length, and a pre-token
// is a run of letters, of punctuation or of white space, which a client
// controls: 100 KB of "a" would take minutes. The merge here keeps the pairs
// in a heap, so a run of any length costs n log n and keeps its exact count.
type bpe struct {
	ranks map[string]int
	split *regexp2.Regexp
}

// encodingFiles are the rank files, by encoding, that
// github.com/pkoukk/tiktoken-go-loader embeds; it looks them up by the
// last element of these (OpenAI's) addresses and never downloads them.
var encodingFiles = map[string]string{
	O200KBase:  "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
	CL100KBase: "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}

// splitPatterns are tiktoken's pre-token patterns of the encodings.
var splitPatterns = map[string]string{
	O200KBase: `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	CL100KBase: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
}

func newBPE(name string) (*bpe, error) {
	file, ok := encodingFiles[name]
	if !ok {
		return nil, errors.New("tokenizer: no encoding " + name)
	}
	ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(file)
	if err != nil {
		return nil, err
	}
	if len(ranks) == 0 {
		return nil, errors.New("tokenizer: no ranks for " + name)
	}
	split, err := regexp2.Compile(splitPatterns[name], regexp2.None)
	if err != nil {
		return nil, err
	}
	return &bpe{ranks: ranks, split: split}, nil
}

// count returns the number of tokens of text, special tokens counted as
// ordinary text. Invalid UTF-8 is read as U+FFFD, as tiktoken-go reads it.
func (b *bpe) count(text string) int {
	n := 0
	m, _ := b.split.FindStringMatch(text)
	for m != nil {
		n += b.pieceTokens(m.String())
		m, _ = b.split.FindNextMatch(m)
	}
	return n
}

// pieceTokens returns the number of tokens one pre-token merges into.
func (b *bpe) pieceTokens(piece string) int {
	if _, ok := b.ranks[piece]; ok {
		return 1
	}
	if len(piece) <= shortPiece {
		return b.mergeShort(piece)
	}
	return b.mergeLong(piece)
}

// shortPiece is the longest pre-token merged by scanning, as tiktoken does;
// longer ones go through the heap.
const shortPiece = 64

const noRank = math.MaxInt

// mergeShort is tiktoken's merge: repeatedly join the adjacent pair of
// lowest rank, the leftmost of equals.
func (b *bpe) mergeShort(piece string) int {
	type part struct{ start, rank int }
	var buf [shortPiece + 1]part
	parts := buf[:0]
	for i := 0; i <= len(piece); i++ {
		parts = append(parts, part{i, noRank})
	}
	// rank is the rank of parts i and i+1 joined.
	rank := func(i int) int {
		if i+2 < len(parts) {
			if r, ok := b.ranks[piece[parts[i].start:parts[i+2].start]]; ok {
				return r
			}
		}
		return noRank
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = rank(i)
	}
	for len(parts) > 2 {
		best, at := noRank, -1
		for i := 0; i+1 < len(parts); i++ {
			if parts[i].rank < best {
				best, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		parts = append(parts[:at+1], parts[at+2:]...)
		parts[at].rank = rank(at)
		if at > 0 {
			parts[at-1].rank = rank(at - 1)
		}
	}
	return len(parts) - 1
}

// mergeLong makes the merges mergeShort makes, in the same order: the
// candidate pairs wait in a heap ordered by rank, then position, and a pair
// whose parts changed since it was pushed is skipped when it comes up.
func (b *bpe) mergeLong(piece string) int {
	n := len(piece)
	next := make([]int32, n) // the start of the part after the part starting at i
	prev := make([]int32, n) // the start of the part before, or -1
	rank := make([]int, n)   // the rank of the part starting at i joined with the next; -1: merged away
	for i := range n {
		next[i], prev[i] = int32(i+1), int32(i-1)
	}
	pairRank := func(i int32) int {
		j := next[i]
		if int(j) >= n {
			return noRank
		}
		end := n
		if int(next[j]) < n {
			end = int(next[j])
		}
		if r, ok := b.ranks[piece[i:end]]; ok {
			return r
		}
		return noRank
	}
	var h pairHeap
	for i := range int32(n) {
		rank[i] = pairRank(i)
		if rank[i] != noRank {
			h = append(h, pair{rank[i], i})
		}
	}
	h.init()
	tokens := n
	for len(h) > 0 {
		p := h.pop()
		i := p.start
		if rank[i] != p.rank {
			continue // stale: i was merged away or its pair changed
		}
		j := next[i]
		next[i] = next[j]
		if int(next[j]) < n {
			prev[next[j]] = i
		}
		rank[j] = -1
		tokens--
		if rank[i] = pairRank(i); rank[i] != noRank {
			h.push(pair{rank[i], i})
		}
		if q := prev[i]; q >= 0 {
			if rank[q] = pairRank(q); rank[q] != noRank {
				h.push(pair{rank[q], q})
			}
		}
	}
	return tokens
}

// pair is a candidate merge: the part starting at start with the next one.
type pair struct {
	rank  int
	start int32
}

func (p pair) less(q pair) bool {
	return p.rank < q.rank || p.rank == q.rank && p.start < q.start
}

// pairHeap is a binary min-heap of pairs.
type pairHeap []pair

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(p pair) {
	*h = append(*h, p)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s[i].less(s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *pairHeap) pop() pair {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	h.down(0)
	return top
}

func (h pairHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		least := l
		if r := l + 1; r < len(h) && h[r].less(h[l]) {
			least = r
		}
		if !h[least].less(h[i]) {
			return
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
}
