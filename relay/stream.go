package relay

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"gateway/relay/tokenizer"
	"gateway/store"
)

var (
	dataPrefix = []byte("data:")
	doneMarker = []byte("[DONE]")
	errIdle    = errors.New("stream idle timeout")
	errDrain   = errors.New("stream drain timeout")
)

// The bytes a stream writes around events, made once: a []byte conversion
// handed to the ResponseWriter is a new allocation at every write.
var (
	dataField = []byte("data: ")
	eventEnd  = []byte("\n\n")
	doneEvent = []byte("data: [DONE]\n\n")
)

// drainWait bounds the read of what follows [DONE].
const drainWait = 100 * time.Millisecond

// streamChunk is what the relay reads from an SSE event: the usage, and
// the text to count when the upstream reports no usage.
type streamChunk struct {
	Choices []struct {
		Text  string     `json:"text"`
		Delta completion `json:"delta"`
		// Moonshot reports a stream's usage in the finishing choice.
		Usage *usage `json:"usage"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

// chunkUsage is the usage an event reports: the top-level one, else the
// last one inside a choice. top tells which.
func (ch *streamChunk) chunkUsage() (u *usage, top bool) {
	if ch.Usage != nil {
		return ch.Usage, true
	}
	for i := len(ch.Choices) - 1; i >= 0; i-- {
		if ch.Choices[i].Usage != nil {
			return ch.Choices[i].Usage, false
		}
	}
	return nil, false
}

// counted adds the event's completion text to counter: content (a string,
// or an array of text and thinking parts), reasoning, tool calls and the
// transcript of spoken audio.
func (ch *streamChunk) counted(counter *tokenizer.StreamCounter) {
	for _, choice := range ch.Choices {
		counter.Add(choice.Text)
		choice.Delta.addTo(counter)
	}
}

// completion is what a choice produced, as a stream's delta or an answer's
// message carries it.
type completion struct {
	Content          partsText            `json:"content"`
	ReasoningContent string               `json:"reasoning_content"`
	Reasoning        string               `json:"reasoning"`
	ToolCalls        []tokenizer.ToolCall `json:"tool_calls"`
	// Refusal is the text of a refusal, in place of content.
	Refusal string `json:"refusal"`
	// FunctionCall is the call of the legacy functions API.
	FunctionCall *tokenizer.FunctionCall `json:"function_call"`
	// Audio is an audio model's spoken answer: its transcript is the text
	// it said, often with no content beside it.
	Audio *struct {
		Transcript string `json:"transcript"`
	} `json:"audio"`
}

// addTo adds the text billed as completion to counter.
func (c *completion) addTo(counter *tokenizer.StreamCounter) {
	counter.Add(string(c.Content))
	counter.Add(c.ReasoningContent)
	counter.Add(c.Reasoning)
	counter.Add(c.Refusal)
	counter.AddToolCalls(c.ToolCalls)
	if c.FunctionCall != nil {
		counter.AddToolCalls([]tokenizer.ToolCall{{Function: *c.FunctionCall}})
	}
	if c.Audio != nil {
		counter.Add(c.Audio.Transcript)
	}
}

// partsText is message content as text: a string, or the text of an array
// of parts (Mistral streams {type:"text", text} and {type:"thinking",
// thinking:[...]} parts). Anything else reads as no text, never as an error
// that would lose the rest of the event.
type partsText string

func (t *partsText) UnmarshalJSON(data []byte) error {
	var v any
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	var b strings.Builder
	collectText(&b, v)
	*t = partsText(b.String())
	return nil
}

// collectText appends every string of v that is text: v itself, or the
// "text" and "thinking" members of parts, at any depth.
func collectText(b *strings.Builder, v any) {
	switch x := v.(type) {
	case string:
		b.WriteString(x)
	case []any:
		for _, e := range x {
			collectText(b, e)
		}
	case map[string]any:
		for _, k := range []string{"text", "thinking", "content"} {
			if e, ok := x[k]; ok {
				collectText(b, e)
			}
		}
	}
}

// streamReaders holds the 64 KiB read buffers of streams, so a stream does
// not allocate (and the collector does not sweep) one of its own.
var streamReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

var usageKey = []byte(`"usage"`)

// usageObject reports whether payload has a "usage" member whose value is an
// object: the only events the relay decodes while they pass. Inside a JSON
// string the quotes of "usage" would be escaped, so text cannot match.
func usageObject(p []byte) bool {
	skip := func(j int) int {
		for j < len(p) && (p[j] == ' ' || p[j] == '\t' || p[j] == '\r' || p[j] == '\n') {
			j++
		}
		return j
	}
	for {
		i := bytes.Index(p, usageKey)
		if i < 0 {
			return false
		}
		p = p[i+len(usageKey):]
		if j := skip(0); j < len(p) && p[j] == ':' {
			if j = skip(j + 1); j < len(p) && p[j] == '{' {
				return true
			}
		}
	}
}

// maxKeptBytes bounds the events a stream holds for a local count before
// it counts them.
const maxKeptBytes = 1 << 20

// keptBuffers holds the buffers in which streams keep their events until
// usage names the completion. A provider that reports usage in its last
// event (as OpenAI does) has every event of its stream kept, and a new
// buffer would grow event by event in every stream.
var keptBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledKept is the largest buffer given back to keptBuffers: a long
// stream's is left to the collector.
const maxPooledKept = 64 << 10

// addKept adds the completion of the events kept while no usage had arrived
// (payloads separated by newlines) to counter.
func addKept(counter *tokenizer.StreamCounter, kept []byte) {
	for len(kept) > 0 {
		line := kept
		if i := bytes.IndexByte(kept, '\n'); i >= 0 {
			line, kept = kept[:i], kept[i+1:]
		} else {
			kept = nil
		}
		// A member of an unexpected type leaves the others decoded: what
		// was read is counted.
		var chunk streamChunk
		_ = json.Unmarshal(line, &chunk)
		chunk.counted(counter)
	}
}

var utf8BOM = []byte("\xEF\xBB\xBF")

// errorMember marks an event that may carry an upstream's error message.
var errorMember = []byte(`"error"`)

// maxEventBytes bounds one SSE line: an upstream that sends more without a
// newline ends its stream as a read error.
const maxEventBytes = 16 << 20

var errEventTooLong = errors.New("stream event longer than 16 MiB")

// readLine reads one line of the stream. A line longer than r's buffer is
// gathered into a copy (the buffer is reused by the next read).
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	long := append([]byte(nil), line...)
	for err == bufio.ErrBufferFull {
		if len(long) > maxEventBytes {
			return nil, errEventTooLong
		}
		line, err = r.ReadSlice('\n')
		long = append(long, line...)
	}
	return long, err
}

// sseEvents reads a stream's events. SSE ends an event at a blank line and
// joins its data lines; the relay also ends one at the end of a data line
// after which its payload is complete: a JSON object, array or string that
// has closed, or a payload that does not begin one ("processing"). Only an
// object, array or string still open gathers the next data line (joined
// with a space, which leaves the JSON the same; the lines go to the client
// as they came). So an event leaves as soon as its last line is read,
// whether or not its blank line has come; how the lines arrive (together or
// apart) never changes where an event ends; and an upstream that sends no
// blank lines has each line taken as an event as long as each line's JSON
// closes (one that never closes runs to the next blank line, as in SSE).
// Each byte is scanned once.
type sseEvents struct {
	r       *bufio.Reader
	onData  func() // called for each data line as it arrives
	onWait  func() // called before a read that may wait for the upstream
	ev      []byte // the payload of an event of several lines so far
	wire    []byte // its lines so far
	done    bool   // a [DONE] line ended the event returned last
	begun   bool   // the first line was read
	open    jsonOpen
	scanned int // bytes scanned for structure (tests)
}

// feed passes a line's payload to the structure tracker.
func (s *sseEvents) feed(p []byte) bool {
	s.scanned += len(p)
	return s.open.feed(p)
}

// jsonOpen follows the nesting of JSON text fed to it piece by piece.
type jsonOpen struct {
	depth    int
	inString bool
	escaped  bool
}

// feed scans p and reports whether an object, array or string is still
// open at its end.
func (j *jsonOpen) feed(p []byte) bool {
	for _, c := range p {
		if j.inString {
			switch {
			case j.escaped:
				j.escaped = false
			case c == '\\':
				j.escaped = true
			case c == '"':
				j.inString = false
			}
			continue
		}
		switch c {
		case '"':
			j.inString = true
		case '{', '[':
			j.depth++
		case '}', ']':
			if j.depth > 0 {
				j.depth--
			}
		}
	}
	return j.inString || j.depth > 0
}

// next returns the payload of the next event and its lines as they go to
// the client; both stay valid until the next call. err is the read error
// that came with it or instead of it.
func (s *sseEvents) next() (payload, wire []byte, err error) {
	if s.done {
		s.done = false
		return doneMarker, doneEvent[: len(doneEvent)-2 : len(doneEvent)-2], nil
	}
	gathering := false
	for {
		if !lineBuffered(s.r) {
			s.onWait()
		}
		line, err := readLine(s.r)
		if !s.begun {
			// SSE skips a byte order mark at the start of a stream.
			s.begun = true
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		trimmed := bytes.TrimSpace(line)
		if bytes.HasPrefix(trimmed, dataPrefix) {
			s.onData()
			p := bytes.TrimSpace(trimmed[len(dataPrefix):])
			if !gathering {
				s.open = jsonOpen{}
				// A payload that does not begin an object, array or string
				// is whole in its line, whatever brackets it holds.
				if len(p) == 0 || (p[0] != '{' && p[0] != '[' && p[0] != '"') || !s.feed(p) {
					return p, trimmed, err
				}
				if err != nil {
					return nil, nil, cutShort(err)
				}
				s.ev = append(s.ev[:0], p...)
				s.wire = append(s.wire[:0], trimmed...)
				gathering = true
				continue
			}
			if bytes.Equal(p, doneMarker) {
				// [DONE] ends the event before it and follows it.
				s.done = err == nil
				return s.ev, s.wire, err
			}
			s.ev = append(append(s.ev, ' '), p...)
			s.wire = append(append(s.wire, '\n'), trimmed...)
			if len(s.wire) > maxEventBytes {
				return nil, nil, errEventTooLong
			}
			if !s.feed(p) {
				return s.ev, s.wire, err
			}
			if err != nil {
				return nil, nil, cutShort(err)
			}
			continue
		}
		if gathering && err != nil {
			return nil, nil, cutShort(err)
		}
		if gathering && len(trimmed) == 0 {
			return s.ev, s.wire, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

// cutShort is the read error of a stream that ended inside an event, its
// JSON still open: the event is not passed on, and an end of the body
// there (an answer delimited by the connection's close) is a stream cut
// short, not one that ended.
func cutShort(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// relayStream passes SSE events to the client as they come, holding back
// only the end: the upstream's [DONE] and its usage-only chunks (the client
// that asked for usage gets one at the end, with the figures billed). After
// the last event it charges the call, then sends [DONE], so a stream the
// client saw complete is always billed.
//
// Events pass without being decoded, except one that carries a usage
// object. Until usage arrives the payloads are kept, and decoded for a local
// count only if the stream ends without it.
func (rl *Relay) relayStream(c *call, ch *store.Channel, resp *http.Response, ctx context.Context, cancel context.CancelCauseFunc, watch *streamWatch, set *store.Settings) *Error {
	reader := streamReaders.Get().(*bufio.Reader)
	reader.Reset(resp.Body)
	defer func() {
		reader.Reset(nil)
		streamReaders.Put(reader)
	}()
	flusher, _ := c.w.(http.Flusher)
	wd := writeDeadline{w: c.w, timeout: rl.cfg.ClientWriteTimeout}
	keptBuf := keptBuffers.Get().(*[]byte)
	kept := (*keptBuf)[:0] // payloads before usage arrived, one per line
	defer func() {
		// Nothing holds kept past the stream: what addKept decodes is
		// copied out of it.
		if cap(kept) <= maxPooledKept {
			*keptBuf = kept[:0]
			keptBuffers.Put(keptBuf)
		}
	}()
	var counted *tokenizer.StreamCounter // what kept held, once it grew past maxKeptBytes
	var got *usage
	started := false
	sawDone := false
	var frt int64 = -1
	clientGone := false
	usageSent := false  // usage reached the client inside an event with choices
	var sentUsage usage // the last such usage, as written
	var held []byte     // the last usage-only chunk, for a client that asked for usage
	var heldUsage usage
	// The stream's own id, created, model and fingerprint, which a usage
	// chunk of the gateway's repeats as OpenAI's does (clients accumulate
	// the chunks of one id).
	var head struct {
		ID                string `json:"id"`
		Created           int64  `json:"created"`
		Model             string `json:"model"`
		SystemFingerprint string `json:"system_fingerprint"`
	}
	headTries := 0
	// Only data counts as the upstream answering: comments and keep-alives
	// neither restart the idle clock nor count as the first byte (S §5.8:
	// 30 s without data ends a stream).
	events := sseEvents{r: reader, onData: watch.data}
	var readErr error
	pending := false // written to the client but not flushed
	flushed := false
	flush := func() {
		if pending {
			flushed = true
			if flusher != nil {
				watch.write(true)
				flusher.Flush()
				watch.write(false)
			}
			pending = false
		}
	}
	// Events that arrived together leave together: flush once no whole line
	// is waiting in the buffer, before a read that may block, so nothing
	// received is held back. The first event leaves at once.
	events.onWait = flush
	for {
		if !flushed {
			flush()
		}
		payload, wire, err := events.next()
		if wire != nil {
			if bytes.Equal(payload, doneMarker) {
				sawDone = true
				// Read the rest (normally nothing, the end of the body is
				// already here) so the connection goes back to the pool, but
				// never wait for an upstream that keeps it open.
				drain := time.AfterFunc(drainWait, func() { cancel(errDrain) })
				io.Copy(io.Discard, io.LimitReader(reader, 64<<10))
				drain.Stop()
				break
			}
			if !started && errorIn(payload) {
				// An error as the first event: nothing was sent, so it is
				// the upstream's failure and another channel may answer.
				return rl.okButFailed(ch, payload, set)
			}
			forward := true
			if head.ID == "" && headTries < 8 && c.wantUsage {
				// The first event with an id names the stream (Azure's
				// first, its prompt filter results, has none).
				headTries++
				_ = json.Unmarshal(payload, &head)
			}
			if usageObject(payload) {
				var chunk streamChunk
				choices := 0
				var u *usage
				var top bool
				if json.Unmarshal(payload, &chunk) != nil {
					// An event whose other members do not decode still
					// counts its choices (it is no usage-only event and goes
					// to the client) and keeps its usage, at the top or in
					// the finishing choice, read leniently (counts written
					// as decimals or strings fail the first decode, which
					// leaves them 0).
					var shape looseChunk
					_ = json.Unmarshal(payload, &shape)
					choices = len(shape.Choices)
					u, top = shape.chunkUsage()
				} else {
					u, top = chunk.chunkUsage()
				}
				choices = max(choices, len(chunk.Choices))
				var reported usage // as written, which the upstream's own chunk shows
				if u != nil {
					// A count below zero is none, and a huge one bounded,
					// before counts are merged and missing ones filled in.
					reported = *u
					su := u.sane()
					u = &su
				}
				if u != nil && u.PromptTokens+u.CompletionTokens+u.TotalTokens > 0 {
					// A provider may report the prompt early and the rest at
					// the end, or a running total: each count is the largest
					// reported.
					v := *u
					if got != nil {
						v.PromptTokens = max(v.PromptTokens, got.PromptTokens)
						v.CompletionTokens = max(v.CompletionTokens, got.CompletionTokens)
						v.TotalTokens = max(v.TotalTokens, got.TotalTokens)
					}
					got = &v
					if v.CompletionTokens > 0 {
						kept, counted = kept[:0], nil
					}
				}
				if top && choices == 0 {
					// A usage-only event waits for the end, and reaches only
					// a client that asked for usage: that client gets exactly
					// one usage chunk, the one billed (a provider may report
					// the prompt early and the rest at the end).
					forward = false
					if c.wantUsage && u != nil && u.PromptTokens+u.CompletionTokens > 0 {
						held, heldUsage = append(held[:0], wire...), reported
					}
				} else if top {
					usageSent, sentUsage = true, reported
				}
			}
			// Until usage names the completion, the events are kept for a
			// local count: a provider may report the prompt first and the
			// completion only at the end, which a stream cut short never
			// reaches.
			if got == nil || got.CompletionTokens == 0 {
				kept = append(append(kept, payload...), '\n')
				if len(kept) > maxKeptBytes {
					// A long stream is counted as it goes, not held whole.
					if counted == nil {
						counted = tokenizer.NewStreamCounter(c.model)
					}
					addKept(counted, kept)
					kept = kept[:0]
				}
			}
			if forward && !clientGone {
				if !started {
					rl.startStream(c)
					started = true
					frt = time.Since(c.start).Milliseconds()
				}
				wd.extend()
				if bytes.Contains(payload, errorMember) {
					// An error event after the first (the first is the
					// upstream's failure, see above) goes to the client as
					// sent, less the channel's key should its text echo it.
					if hidden, ok := hideKeyInJSON(payload, ch.Key); ok {
						wire = append([]byte("data: "), hidden...)
					}
				}
				// A client that reads slowly holds the write back: that
				// is no idle time of the upstream's.
				watch.write(true)
				if _, werr := c.w.Write(wire); werr == nil {
					_, werr = c.w.Write(eventEnd)
					pending = werr == nil
					if werr != nil {
						clientGone = true
					}
				} else {
					clientGone = true
				}
				watch.write(false)
				if clientGone {
					// The client left: stop the upstream and bill what it produced.
					cancel(context.Canceled)
					break
				}
			}
		}
		if err != nil {
			readErr = err
			break
		}
	}
	if pending && flusher != nil {
		// What came before the end is not held back for the charge.
		watch.write(true)
		flusher.Flush()
		watch.write(false)
	}
	cause := context.Cause(ctx)
	if !started && got == nil && len(kept) == 0 && (sawDone || readErr == io.EOF) {
		// The upstream closed without a single event, or with [DONE] alone.
		return &Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "empty_stream", Message: "上游返回了空的流式响应", Retry: true}
	}
	if !started && !sawDone && readErr != nil && readErr != io.EOF {
		// Nothing reached the client: another channel may still answer.
		if errors.Is(cause, errFirstByte) {
			return &Error{Status: http.StatusGatewayTimeout, Type: "upstream_error", Code: "first_byte_timeout", Message: "上游首字超时", Retry: true}
		}
		if c.r.Context().Err() == nil {
			return &Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "read_response_failed", Message: "failed to read upstream response", Retry: true, Cause: readErr}
		}
	}
	// The local count is only needed when the upstream reported no
	// completion.
	local := func() int {
		if counted == nil {
			counted = tokenizer.NewStreamCounter(c.model)
		}
		addKept(counted, kept)
		kept = kept[:0]
		return counted.Tokens()
	}
	u := usage{PromptTokens: c.prompt}
	totalOnly := false
	if got != nil {
		u = *got
		switch {
		case u.PromptTokens == 0 && u.CompletionTokens == 0:
			// A total alone, read as in a whole answer: it holds the
			// completion, counted here, and the rest is the prompt.
			totalOnly = true
			u.PromptTokens = u.TotalTokens
			if n := local(); n > 0 && n < u.TotalTokens {
				u.PromptTokens, u.CompletionTokens, u.counted = u.TotalTokens-n, n, true
			}
		case u.CompletionTokens == 0 && u.TotalTokens > u.PromptTokens:
			// A usage without completion_tokens: the total tells it.
			u.CompletionTokens = u.TotalTokens - u.PromptTokens
		}
		u = u.promptFilled(c.prompt)
	}
	if u.CompletionTokens == 0 && !totalOnly {
		u.CompletionTokens = local()
		u.counted = true
	}
	// The usage chunk below shows what the call is charged for.
	u = c.billable(u)
	prompt, completion := u.PromptTokens, u.CompletionTokens
	if err := rl.settle(c, ch, u, frt, set); err != nil {
		if started {
			// Headers and events are sent: the connection is cut, so that
			// the client sees a broken answer, not one that merely lacks
			// [DONE] (a client may take a cleanly ended body as whole).
			slog.Error("a stream's charge failed after it started: connection aborted", "request_id", c.id, "err", err.Cause)
			panic(http.ErrAbortHandler)
		}
		return err
	}
	if clientGone || c.r.Context().Err() != nil {
		return nil
	}
	if !started {
		rl.startStream(c)
	}
	wd.extend()
	if c.wantUsage && held != nil && !u.counted && heldUsage.PromptTokens == prompt && heldUsage.CompletionTokens == completion {
		// The upstream's own usage chunk, when it holds the figures billed.
		c.w.Write(held)
		c.w.Write(eventEnd)
	} else if c.wantUsage && (held != nil || !usageSent || sentUsage.PromptTokens != prompt || sentUsage.CompletionTokens != completion) {
		// A usage that went out beside choices but does not hold the
		// figures billed (a prompt alone, the completion counted here) is
		// followed by one that does: a client reads the last usage.
		// Shaped as the endpoint's own chunks: a completions stream's
		// objects are text_completion with cmpl- ids.
		id, object := "chatcmpl-"+c.id, "chat.completion.chunk"
		if c.k == kindCompletion {
			id, object = "cmpl-"+c.id, "text_completion"
		}
		created, model := time.Now().Unix(), c.model
		if head.ID != "" {
			id = head.ID
			if head.Created != 0 {
				created = head.Created
			}
			if head.Model != "" {
				model = head.Model
			}
		}
		synthetic := map[string]any{"id": id, "object": object, "created": created,
			"model": model, "choices": []any{}, "usage": usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}}
		if head.SystemFingerprint != "" {
			synthetic["system_fingerprint"] = head.SystemFingerprint
		}
		data, _ := json.Marshal(synthetic)
		c.w.Write(dataField)
		c.w.Write(data)
		c.w.Write(eventEnd)
	}
	if sawDone || readErr == io.EOF {
		c.w.Write(doneEvent)
	} else if c.caller != nil && c.caller.Token != nil {
		// The upstream cut the stream (it stalled or broke off): an API
		// client gets what came, then a cut connection, as it would from
		// the upstream itself. A body that merely lacks [DONE] ends
		// cleanly, and OpenAI's SDKs take such a body as whole. (The
		// playground reads the missing [DONE].)
		if flusher != nil {
			flusher.Flush()
		}
		panic(http.ErrAbortHandler)
	}
	// Not flushed here: the server sends the rest with the end of the
	// chunked body as the handler returns, one write instead of two.
	return nil
}

// lineBuffered reports whether a whole line is already in r's buffer, so
// the next ReadSlice returns without waiting for the upstream.
func lineBuffered(r *bufio.Reader) bool {
	buf, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(buf, '\n') >= 0
}

// writeDeadline keeps a write deadline on a stream's connection, moved on
// at most every few seconds. It stays over the end of the body the server
// writes once the handler returns; the server then lifts it.
// A client that does not read for Config.ClientWriteTimeout counts as gone
// (the upstream call is stopped and what it produced is billed) instead of
// holding the handler and the upstream connection for ever.
type writeDeadline struct {
	w       http.ResponseWriter
	timeout time.Duration
	set     time.Time // when the deadline was last moved; zero: never
}

func (d *writeDeadline) extend() {
	now := time.Now()
	if !d.set.IsZero() && now.Sub(d.set) < d.timeout/6 {
		return
	}
	if http.NewResponseController(d.w).SetWriteDeadline(now.Add(d.timeout)) == nil {
		d.set = now
	}
}

func (rl *Relay) startStream(c *call) {
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	c.w.WriteHeader(http.StatusOK)
	c.answered = true
}
