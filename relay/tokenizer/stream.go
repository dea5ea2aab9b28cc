package tokenizer

import "strings"

// StreamToolCallTokens is added per tool call, counted over the chunk that
// carried the most tool calls, when a streamed reply is estimated locally.
const StreamToolCallTokens = 7

// StreamCounter estimates the completion tokens of a streamed reply whose
// upstream sent no usage (S §5.8.1): the tokens of all delta text and tool
// call names and arguments, plus StreamToolCallTokens times the largest
// number of tool calls seen in one chunk.
//
// Feeding it appends to a buffer, tokenized by Tokens; a buffer past
// foldBytes is tokenized up to its last word start and emptied, so a long
// stream is held a piece at a time, and only its first maxExactBytes are
// tokenized (the rest counts a token per four bytes). The zero value is not
// usable: create one with NewStreamCounter. A StreamCounter is meant for
// the one goroutine reading a stream and is not safe for concurrent use.
type StreamCounter struct {
	m        *meter
	text     strings.Builder
	folded   int // tokens of the text already tokenized and dropped
	maxCalls int
	tokens   int
	counted  bool
}

// foldBytes is how much text a StreamCounter holds before it tokenizes it.
var foldBytes = 256 << 10 // a variable for the tests only

// NewStreamCounter returns a StreamCounter for model's encoding.
func NewStreamCounter(model string) *StreamCounter {
	return &StreamCounter{m: newMeter(model, maxExactBytes)}
}

// fold tokenizes the held text up to its last word start and keeps the rest.
func (s *StreamCounter) fold() {
	if s.text.Len() <= foldBytes {
		return
	}
	text := s.text.String()
	end := cutBefore(text, len(text)-1)
	s.folded += s.m.count(text[:end])
	s.text.Reset()
	s.text.WriteString(text[end:])
}

// Add appends delta text (content, or any other text the relay bills as
// completion, such as reasoning content).
func (s *StreamCounter) Add(delta string) {
	if delta == "" {
		return
	}
	s.text.WriteString(delta)
	s.counted = false
	s.fold()
}

// AddToolCalls records the tool calls of one chunk's delta: their function
// name and argument fragments are appended to the text, and their number is
// compared with the largest seen so far.
func (s *StreamCounter) AddToolCalls(calls []ToolCall) {
	if len(calls) == 0 {
		return
	}
	s.maxCalls = max(s.maxCalls, len(calls))
	for i := range calls {
		s.text.WriteString(calls[i].Function.Name)
		s.text.WriteString(calls[i].Function.Arguments)
	}
	s.counted = false
	s.fold()
}

// Tokens returns the completion estimate for everything added so far. The
// text is tokenized on the first call after an Add, and the result reused
// until the next Add.
func (s *StreamCounter) Tokens() int {
	if !s.counted {
		// The held text is counted on a copy of the meter: counting again
		// after more text arrives must not spend its budget twice.
		m := *s.m
		s.tokens = s.folded + m.count(s.text.String())
		s.counted = true
	}
	return s.tokens + StreamToolCallTokens*s.maxCalls
}
