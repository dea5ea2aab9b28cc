package relay

import (
	"slices"
	"sync"
	"sync/atomic"

	"gateway/store"
)

// wordMatcher finds which of a list of words occur in a text in one pass
// over it, however long the list (Aho-Corasick over bytes): checking each
// word in turn cost the list's length times the text's, ten seconds for
// 20 000 words against a 1 MB prompt.
type wordMatcher struct {
	words []string
	next  map[uint64]int32 // (node<<8 | byte) -> node
	fail  []int32          // the longest proper suffix of a node that is a node
	word  []int32          // the first word (in list order) ending at a node, -1 for none
	dict  []int32          // the nearest node along the fail links that ends a word, -1 for none
}

func newWordMatcher(words []string) *wordMatcher {
	m := &wordMatcher{words: words, next: map[uint64]int32{}, fail: []int32{0}, word: []int32{-1}, dict: []int32{-1}}
	for i, w := range words {
		n := int32(0)
		for j := 0; j < len(w); j++ {
			k := uint64(n)<<8 | uint64(w[j])
			child, ok := m.next[k]
			if !ok {
				child = int32(len(m.fail))
				m.next[k] = child
				m.fail = append(m.fail, 0)
				m.word = append(m.word, -1)
				m.dict = append(m.dict, -1)
			}
			n = child
		}
		if len(w) > 0 && m.word[n] < 0 {
			m.word[n] = int32(i)
		}
	}
	// Breadth first, so a node's fail link is set before its children's.
	children := make([][]struct {
		b    byte
		node int32
	}, len(m.fail))
	for k, child := range m.next {
		parent := int32(k >> 8)
		children[parent] = append(children[parent], struct {
			b    byte
			node int32
		}{byte(k), child})
	}
	queue := []int32{}
	for _, c := range children[0] {
		queue = append(queue, c.node) // fail 0
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if f := m.fail[n]; m.word[f] >= 0 {
			m.dict[n] = f
		} else {
			m.dict[n] = m.dict[f]
		}
		for _, c := range children[n] {
			f := m.fail[n]
			for {
				if to, ok := m.next[uint64(f)<<8|uint64(c.b)]; ok {
					m.fail[c.node] = to
					break
				}
				if f == 0 {
					m.fail[c.node] = 0
					break
				}
				f = m.fail[f]
			}
			queue = append(queue, c.node)
		}
	}
	return m
}

// first returns the word earliest in the list that occurs in text, or "".
func (m *wordMatcher) first(text string) string {
	best := int32(-1)
	n := int32(0)
	for i := 0; i < len(text); i++ {
		b := uint64(text[i])
		for {
			if to, ok := m.next[uint64(n)<<8|b]; ok {
				n = to
				break
			}
			if n == 0 {
				break
			}
			n = m.fail[n]
		}
		for d := n; d > 0; d = m.dict[d] {
			if w := m.word[d]; w >= 0 && (best < 0 || w < best) {
				best = w
				if best == 0 {
					return m.words[0]
				}
			}
		}
	}
	if best < 0 {
		return ""
	}
	return m.words[best]
}

// sensitiveWords keeps the matcher of the settings it was built from.
type sensitiveWords struct {
	mu    sync.Mutex // held while a matcher is built
	cache atomic.Pointer[struct {
		set *store.Settings
		m   *wordMatcher
	}]
}

// matcher returns the matcher of set's word list. It is built once per
// list: settings saved with the same words (any other option saved) keep
// it, and the calls that arrive while a new list's matcher is built wait
// for that one instead of each building its own.
func (s *sensitiveWords) matcher(set *store.Settings) *wordMatcher {
	if c := s.cache.Load(); c != nil && c.set == set {
		return c.m
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cache.Load()
	if old != nil && old.set == set {
		return old.m
	}
	var m *wordMatcher
	if old != nil && slices.Equal(old.m.words, set.SensitiveWords) {
		m = old.m
	} else {
		m = newWordMatcher(set.SensitiveWords)
	}
	s.cache.Store(&struct {
		set *store.Settings
		m   *wordMatcher
	}{set, m})
	return m
}
