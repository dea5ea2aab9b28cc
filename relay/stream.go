package relay

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
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
)

// streamChunk is what the relay reads from an SSE event: the usage, and
// the text to count when the upstream reports no usage.
type streamChunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content   string               `json:"content"`
			ToolCalls []tokenizer.ToolCall `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
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

// countKept counts the completion of the events kept while no usage had
// arrived (payloads separated by newlines).
func countKept(counter *tokenizer.StreamCounter, kept []byte) int {
	for len(kept) > 0 {
		line := kept
		if i := bytes.IndexByte(kept, '\n'); i >= 0 {
			line, kept = kept[:i], kept[i+1:]
		} else {
			kept = nil
		}
		var chunk streamChunk
		if json.Unmarshal(line, &chunk) != nil {
			continue
		}
		for _, choice := range chunk.Choices {
			counter.Add(choice.Text)
			counter.Add(choice.Delta.Content)
			counter.AddToolCalls(choice.Delta.ToolCalls)
		}
	}
	return counter.Tokens()
}

// relayStream passes SSE events to the client as they come, holding back
// only the end: the upstream's [DONE] (and a usage chunk the client did not
// ask for). After the last event it charges the call, then sends [DONE], so a
// stream the client saw complete is always billed.
//
// Events pass without being decoded, except one that carries a usage
// object. Until usage arrives the payloads are kept, and decoded for a local
// count only if the stream ends without it.
func (rl *Relay) relayStream(c *call, ch *store.Channel, resp *http.Response, ctx context.Context, cancel context.CancelCauseFunc, fbTimer *time.Timer, set *store.Settings) *Error {
	reader := streamReaders.Get().(*bufio.Reader)
	reader.Reset(resp.Body)
	defer func() {
		reader.Reset(nil)
		streamReaders.Put(reader)
	}()
	flusher, _ := c.w.(http.Flusher)
	var kept []byte // payloads before usage arrived, one per line
	var got *usage
	started := false
	sawDone := false
	var frt int64 = -1
	idle := time.AfterFunc(rl.cfg.StreamIdleTimeout, func() { cancel(errIdle) })
	defer idle.Stop()
	clientGone := false
	var readErr error
	pending := false // written to the client but not flushed
	flushed := false
	for {
		// Events that arrived together leave together: flush once no whole
		// line is waiting in the buffer, before a read that may block, so
		// nothing received is held back. The first event leaves at once.
		if pending && (!flushed || !lineBuffered(reader)) {
			flushed = true
			if flusher != nil {
				flusher.Flush()
			}
			pending = false
		}
		line, err := reader.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// An event longer than the buffer: gather it whole.
			rest, rerr := reader.ReadBytes('\n')
			line = append(append([]byte(nil), line...), rest...)
			err = rerr
		}
		if len(line) > 0 {
			idle.Reset(rl.cfg.StreamIdleTimeout)
			if !started {
				if fbTimer != nil {
					fbTimer.Stop()
				}
			}
		}
		trimmed := bytes.TrimSpace(line)
		if bytes.HasPrefix(trimmed, dataPrefix) {
			payload := bytes.TrimSpace(trimmed[len(dataPrefix):])
			if bytes.Equal(payload, doneMarker) {
				sawDone = true
				// Read the rest (normally nothing) so the connection goes back
				// to the pool instead of being closed.
				io.Copy(io.Discard, io.LimitReader(reader, 64<<10))
				break
			}
			forward := true
			if usageObject(payload) {
				var chunk streamChunk
				if json.Unmarshal(payload, &chunk) == nil && chunk.Usage != nil && chunk.Usage.PromptTokens+chunk.Usage.CompletionTokens > 0 {
					u := *chunk.Usage
					got = &u
					kept = nil
					if len(chunk.Choices) == 0 && !c.wantUsage {
						forward = false
					}
				}
			}
			if got == nil {
				kept = append(append(kept, payload...), '\n')
			}
			if !started && errorIn(payload) {
				// An error as the first event: nothing was sent, so it is
				// the upstream's failure and another channel may answer.
				return rl.okButFailed(ch, payload, set)
			}
			if forward && !clientGone {
				if !started {
					rl.startStream(c)
					started = true
					frt = time.Since(c.start).Milliseconds()
				}
				if _, werr := c.w.Write(trimmed); werr == nil {
					_, werr = c.w.Write([]byte("\n\n"))
					pending = werr == nil
					if werr != nil {
						clientGone = true
					}
				} else {
					clientGone = true
				}
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
		flusher.Flush()
	}
	cause := context.Cause(ctx)
	if !started && !sawDone && readErr == io.EOF && got == nil && len(kept) == 0 {
		// The upstream closed without a single event.
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
	// The local count is only needed when the upstream reported no usage.
	u := usage{PromptTokens: c.prompt}
	if got != nil {
		u = *got
	} else {
		u.CompletionTokens = countKept(tokenizer.NewStreamCounter(c.model), kept)
	}
	prompt, completion := u.PromptTokens, u.CompletionTokens
	if err := rl.settle(c, ch, u, frt, set); err != nil {
		if started {
			// Headers are sent: end the stream without [DONE].
			return nil
		}
		return err
	}
	if clientGone || c.r.Context().Err() != nil {
		return nil
	}
	if !started {
		rl.startStream(c)
	}
	if c.wantUsage && got == nil {
		synthetic := map[string]any{"id": "chatcmpl-" + c.id, "object": "chat.completion.chunk", "created": time.Now().Unix(),
			"model": c.model, "choices": []any{}, "usage": usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}}
		data, _ := json.Marshal(synthetic)
		c.w.Write([]byte("data: "))
		c.w.Write(data)
		c.w.Write([]byte("\n\n"))
	}
	if sawDone || readErr == io.EOF {
		c.w.Write([]byte("data: [DONE]\n\n"))
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

func (rl *Relay) startStream(c *call) {
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	c.w.WriteHeader(http.StatusOK)
}
