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
// Feeding it only appends to a buffer; the text is tokenized once, by
// Tokens. The zero value is not usable: create one with NewStreamCounter. A
// StreamCounter is meant for the one goroutine reading a stream and is not
// safe for concurrent use.
type StreamCounter struct {
	enc      *encoder
	text     strings.Builder
	maxCalls int
	tokens   int
	counted  bool
}

// NewStreamCounter returns a StreamCounter for model's encoding.
func NewStreamCounter(model string) *StreamCounter {
	return &StreamCounter{enc: encoderFor(model)}
}

// Add appends delta text (content, or any other text the relay bills as
// completion, such as reasoning content).
func (s *StreamCounter) Add(delta string) {
	if delta == "" {
		return
	}
	s.text.WriteString(delta)
	s.counted = false
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
}

// Text returns the text accumulated so far.
func (s *StreamCounter) Text() string {
	return s.text.String()
}

// Tokens returns the completion estimate for everything added so far. The
// text is tokenized on the first call after an Add, and the result reused
// until the next Add.
func (s *StreamCounter) Tokens() int {
	if !s.counted {
		s.tokens = s.enc.count(s.text.String())
		s.counted = true
	}
	return s.tokens + StreamToolCallTokens*s.maxCalls
}
