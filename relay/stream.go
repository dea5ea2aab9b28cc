package relay

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
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

// streamChunk is what the relay reads from each SSE event.
type streamChunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Content   string               `json:"content"`
			ToolCalls []tokenizer.ToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

// relayStream passes SSE events to the client as they come, holding back
// only the end: the upstream's [DONE] (and a usage chunk the client did not
// ask for). After the last event it charges the call, then sends [DONE], so a
// stream the client saw complete is always billed.
func (rl *Relay) relayStream(c *call, ch *store.Channel, resp *http.Response, ctx context.Context, cancel context.CancelCauseFunc, fbTimer *time.Timer, set *store.Settings) *Error {
	reader := bufio.NewReaderSize(resp.Body, 64<<10)
	flusher, _ := c.w.(http.Flusher)
	counter := tokenizer.NewStreamCounter(c.model)
	var got *usage
	started := false
	sawDone := false
	var frt int64 = -1
	idle := time.AfterFunc(rl.cfg.StreamIdleTimeout, func() { cancel(errIdle) })
	defer idle.Stop()
	clientGone := false
	var readErr error
	pending := false // written to the client but not flushed
	for {
		// Events that arrived together leave together: flush once no whole
		// line is waiting in the buffer, before a read that may block, so
		// nothing received is held back.
		if pending && !lineBuffered(reader) {
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
			var chunk streamChunk
			if json.Unmarshal(payload, &chunk) == nil {
				for _, choice := range chunk.Choices {
					counter.Add(choice.Text)
					counter.Add(choice.Delta.Content)
					counter.AddToolCalls(choice.Delta.ToolCalls)
				}
				if chunk.Usage != nil && chunk.Usage.PromptTokens+chunk.Usage.CompletionTokens > 0 {
					u := *chunk.Usage
					got = &u
					if len(chunk.Choices) == 0 && !c.wantUsage {
						forward = false
					}
				}
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
	prompt, completion := c.prompt, 0
	if got != nil {
		prompt, completion = got.PromptTokens, got.CompletionTokens
	} else {
		completion = counter.Tokens()
	}
	if err := rl.settle(c, ch, prompt, completion, frt, set); err != nil {
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
	if flusher != nil {
		flusher.Flush()
	}
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
