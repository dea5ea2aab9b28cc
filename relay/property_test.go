package relay_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/relay/tokenizer"
)

// What a fake upstream does with one request in the property test.
type upBehaviour int

const (
	upOK         upBehaviour = iota // 200 with usage
	upNoUsage                       // 200 without usage (counted locally)
	up429                           // rate limited
	up500                           // server error
	up401                           // refused key (disables an auto-ban channel)
	upHang                          // nothing until the gateway gives up
	upCut                           // a stream cut (connection reset) after two events
	upErrorMid                      // a stream with an error event after the first
	upNotJSON                       // 200 with an HTML page
	upSlow                          // the answer in slow pieces
	upReset                         // the connection reset before any answer
	upFirstError                    // 200 whose (first) event is an error object
	up400                           // a refused request: not retried
	up504                           // a gateway timeout: not retried
	upEmpty                         // 200 with no answer: [DONE] alone, or JSON without choices
	upKeepAlive                     // comments only (keep-alives), never data
	upLateClose                     // the answer, then the connection held open after [DONE]
	upEarlyUsage                    // the prompt's usage first, the completion's at the end
	upStall                         // part of the answer, then nothing (idle or relay timeout)
	upBehaviours
)

var upNames = [...]string{"ok", "no-usage", "429", "500", "401", "hang", "cut", "error-mid", "not-json", "slow", "reset", "first-error", "400", "504", "empty", "keep-alive", "late-close", "early-usage", "stall"}

// failsAttempt reports whether an upstream behaving as b fails the attempt
// (nothing charged, the next channel may be tried) for a stream or not.
func failsAttempt(b upBehaviour, stream bool) bool {
	switch b {
	case up429, up500, up401, upHang, upNotJSON, upReset, upFirstError, up400, up504, upEmpty, upKeepAlive:
		return true
	case upCut, upStall:
		return !stream // a non-stream answer cut mid-body is no answer
	}
	return false
}

// retried reports whether a failed attempt moves to the next channel.
func retried(b upBehaviour, stream bool) bool {
	return failsAttempt(b, stream) && b != up400 && b != up504
}

// What a client does.
type clientKind int

const (
	clientNormal  clientKind = iota
	clientLeaves             // leaves a stream after its first event
	clientCancels            // gives up before any answer
)

// propCall is one call of the property test as the client saw it.
type propCall struct {
	token       int
	completions bool // /v1/completions instead of chat
	model       string
	stream      bool
	maxTok      int
	client      clientKind
	propOutcome
	complete    bool    // a stream's [DONE], or a whole 200 body
	wantUsage   bool    // stream_options.include_usage
	usageSeen   []int64 // the usage the client was shown (prompt, completion)
	usageChunks int
}

// propHit is one upstream request: which channel, what it did.
type propHit struct {
	channel   int
	behaviour upBehaviour
	// The usage the upstream reported, when it reported one.
	usage              bool
	prompt, completion int
	// cut is set when the gateway left a slow answer before its end: on a
	// loaded machine the relay's timeout may end a healthy attempt.
	cut bool
}

// A seeded random mix of upstream failures, clients that leave and tokens
// with little quota, all at once, with retries: the books must balance
// exactly (S §5.5, §5.8; docs/billing.md "Reserve, settle, refund"). The
// upstreams' behaviours and the calls follow the seed (timing and the
// choice within a tier do not); GATEWAY_PROP_SEED sets another one, or
// "random" a new one each run.
func TestMoney_PropertyUnderFailure(t *testing.T) {
	t.Parallel()
	runPropertyModes(t, 20261124, func(t *testing.T, seed uint64, m propMode) {
		runMoneyProperty(t, seed, 200, m)
	})
}

func runMoneyProperty(t *testing.T, seed uint64, calls int, mode propMode) {
	const retryTimes = 2
	g := MustOpenGateway(t, gatewayConfig{
		Durable: mode.durable,
		Options: map[string]string{"RetryTimes": strconv.Itoa(retryTimes), "AutomaticDisableChannelEnabled": "true"},
		Relay: relay.Config{FirstByteTimeout: timeSlack * 250 * time.Millisecond, StreamIdleTimeout: timeSlack * 400 * time.Millisecond,
			RelayTimeout: timeSlack * 600 * time.Millisecond, ClientWriteTimeout: timeSlack * time.Second},
	})
	if mode.sync > 0 {
		g.st.SetSyncInterval(mode.sync)
	}

	var hitsMu sync.Mutex
	hits := map[int][]propHit{} // by call
	callOf := func(req *relaytest.Request) int {
		s, _ := req.JSON["prompt"].(string)
		if msgs, _ := req.JSON["messages"].([]any); len(msgs) > 0 {
			first, _ := msgs[0].(map[string]any)
			s, _ = first["content"].(string)
		}
		i, err := strconv.Atoi(strings.TrimPrefix(s, "call-"))
		if err != nil {
			return -1
		}
		return i
	}
	// Each upstream's behaviour for a call is drawn from the seed, the call
	// and the channel: the same seed replays the same upstreams.
	handler := func(chIdx int) relaytest.Handler {
		return func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			i := callOf(req)
			if i < 0 {
				t.Errorf("upstream %d: request without a call number", chIdx)
				return
			}
			rng := rand.New(rand.NewPCG(seed, uint64(i)<<8|uint64(chIdx)))
			b := upBehaviour(rng.IntN(int(upBehaviours)))
			if rng.IntN(3) == 0 {
				b = upOK // answers outnumber failures
			}
			prompt, completion := 10+rng.IntN(20), 1+rng.IntN(5)
			model := req.Model()
			stream := req.Stream()
			reports := b != upNoUsage && b != upCut && b != upStall && (!stream || req.IncludeUsage())
			hitsMu.Lock()
			hits[i] = append(hits[i], propHit{channel: chIdx, behaviour: b, usage: reports, prompt: prompt, completion: completion})
			idx := len(hits[i]) - 1
			hitsMu.Unlock()
			cut := func() {
				hitsMu.Lock()
				hits[i][idx].cut = true
				hitsMu.Unlock()
			}
			_, isChat := req.JSON["messages"]
			answer := func(text string, u *relaytest.Usage) map[string]any {
				if isChat {
					return relaytest.Completion(model, text, u)
				}
				return completionAnswer(model, text, u)
			}
			chunk := func(text string) map[string]any {
				if isChat {
					return relaytest.Chunk(model, text)
				}
				return completionChunk(model, text, nil)
			}
			finish := func() map[string]any {
				if isChat {
					return relaytest.FinishChunk(model, "stop")
				}
				return completionChunk(model, "", "stop")
			}
			switch b {
			case up429:
				relaytest.WriteError(w, 429, "rate_limit_error", "rate_limit_exceeded", "slow down")
				return
			case up500:
				relaytest.WriteError(w, 500, "server_error", "", "boom")
				return
			case up401:
				relaytest.WriteError(w, 401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided")
				return
			case up400:
				relaytest.WriteError(w, 400, "invalid_request_error", "", "bad request")
				return
			case up504:
				relaytest.WriteError(w, 504, "server_error", "", "gateway timeout")
				return
			case upReset:
				panic(http.ErrAbortHandler)
			case upNotJSON:
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(200)
				io.WriteString(w, "<html><body>not an API</body></html>")
				return
			case upHang:
				if stream {
					// Headers at once, then nothing.
					relaytest.NewSSE(w)
				}
				awaitGatewayGone(t, r, i, "a hanging upstream")
				return
			case upKeepAlive:
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(200)
				for {
					io.WriteString(w, ": keep-alive\n\n")
					w.(http.Flusher).Flush()
					select {
					case <-r.Context().Done():
						return
					case <-time.After(50 * time.Millisecond):
					}
				}
			case upEmpty:
				if stream {
					relaytest.NewSSE(w).Done()
					return
				}
				relaytest.WriteJSON(w, 200, map[string]any{"id": "x", "object": "chat.completion", "choices": []any{}})
				return
			case upFirstError:
				if stream {
					sse := relaytest.NewSSE(w)
					sse.Send(map[string]any{"error": map[string]any{"message": "overloaded", "type": "server_error"}})
					sse.Done()
					return
				}
				relaytest.WriteJSON(w, 200, map[string]any{"error": map[string]any{"message": "overloaded", "type": "server_error"}})
				return
			}
			if !stream {
				var u *relaytest.Usage
				if b != upNoUsage {
					u = relaytest.NewUsage(prompt, completion)
				}
				data, _ := json.Marshal(answer(strings.Repeat("word ", completion), u))
				switch b {
				case upCut:
					writeHalfThenReset(w, "application/json", data)
				case upStall:
					writeHalfThenStall(t, w, r, "application/json", data, i)
				case upSlow:
					writeSlowly(w, r, "application/json", data, 40, cut)
				default:
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(200)
					w.Write(data)
				}
				return
			}
			sse := relaytest.NewSSE(w)
			if b == upEarlyUsage && reports {
				sse.Send(map[string]any{"id": "x", "object": "chat.completion.chunk", "choices": []any{},
					"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": 0, "total_tokens": prompt}})
			}
			for n := range completion {
				if b == upErrorMid && n == 1 {
					sse.Send(map[string]any{"error": map[string]any{"message": "something broke", "type": "server_error"}})
				}
				if sse.Send(chunk(" word")) != nil {
					return
				}
				if b == upCut && n == 1 {
					panic(http.ErrAbortHandler)
				}
				if b == upStall {
					awaitGatewayGone(t, r, i, "a stalled stream")
					return
				}
				if b == upSlow {
					select {
					case <-r.Context().Done():
						cut()
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
			if b == upCut {
				panic(http.ErrAbortHandler)
			}
			sse.Send(finish())
			if reports {
				sse.Send(relaytest.UsageChunk(model, prompt, completion))
			}
			sse.Done()
			if b == upLateClose {
				select {
				case <-r.Context().Done():
				case <-time.After(time.Second):
				}
			}
		}
	}

	// The channels (propChannels): the third maps the models to other
	// names; the fourth, custom, is asked no stream usage.
	prio := propPrio
	channels, upstreams, chIndex := propChannels(t, g, "prop", ratioModel+","+miniModel,
		fmt.Sprintf(`{%q:"up-a",%q:"up-b"}`, ratioModel, miniModel), func(i int) relaytest.Routes {
			h := handler(i)
			return relaytest.Routes{relaytest.ChatPath: h, "POST /v1/completions": h, "POST /custom": h}
		})
	tokens := propTokens(t, g, 3_000)
	before := readPropBooks(t, g.st, tokens, channels)

	// The calls, drawn from the seed.
	rng := rand.New(rand.NewPCG(seed, 1<<62))
	plan := make([]propCall, calls)
	for i := range plan {
		p := &plan[i]
		p.token = rng.IntN(len(tokens))
		p.model = ratioModel
		if rng.IntN(4) == 0 {
			p.model = miniModel // refused to the model-limited token
		}
		p.stream = rng.IntN(2) == 0
		p.completions = rng.IntN(4) == 0
		switch rng.IntN(6) {
		case 0, 1, 2:
			p.maxTok = 5 + rng.IntN(20)
		case 3:
			// A reservation that the poor account covers only a few at once.
			p.maxTok = 4000 + rng.IntN(4000)
		}
		switch n := rng.IntN(10); {
		case n == 0:
			p.client = clientCancels
		case n <= 2 && p.stream:
			p.client = clientLeaves
		}
	}
	cancelAfter := make([]time.Duration, calls)
	for i := range cancelAfter {
		cancelAfter[i] = time.Duration(rng.IntN(300)) * time.Millisecond
	}

	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	run := func(i int) {
		p := &plan[i]
		body := chat(p.model, "call-"+strconv.Itoa(i))
		path := "/v1/chat/completions"
		if p.completions {
			body = map[string]any{"model": p.model, "prompt": "call-" + strconv.Itoa(i)}
			path = "/v1/completions"
		}
		if p.stream {
			body["stream"] = true
			if i%2 == 0 {
				body["stream_options"] = map[string]any{"include_usage": true}
				p.wantUsage = true
			}
		}
		if p.maxTok > 0 {
			body["max_tokens"] = p.maxTok
		}
		data, _ := json.Marshal(body)
		req := propRequest{path: path, key: tokens[p.token].key, ctype: "application/json", body: data,
			cancels: p.client == clientCancels, cancelAfter: cancelAfter[i]}
		if p.client == clientLeaves {
			// Leaves a stream after its first event.
			req.leave = func(r io.Reader) {
				sc := bufio.NewScanner(r)
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "data:") {
						break
					}
				}
			}
		}
		b, ok := p.send(t, g, client, i, req)
		if !ok {
			return
		}
		p.complete = !p.stream || bytes.Contains(b, []byte("data: [DONE]"))
		var shown []string
		if p.stream {
			shown = relaytest.Events(b)
		} else {
			shown = []string{string(b)}
		}
		for _, ev := range shown {
			var v struct {
				Usage *relaytest.Usage `json:"usage"`
			}
			if json.Unmarshal([]byte(ev), &v) == nil && v.Usage != nil {
				p.usageSeen = []int64{int64(v.Usage.PromptTokens), int64(v.Usage.CompletionTokens)}
				p.usageChunks++
			}
		}
		if p.stream && !p.wantUsage && p.usageChunks > 0 {
			t.Errorf("call %d: a usage chunk the client did not ask for", i)
		}
		if p.usageChunks > 1 {
			t.Errorf("call %d: %d usage chunks", i, p.usageChunks)
		}
	}
	runPropCalls(len(plan), run)
	stopProp(g, upstreams, mode)
	hitsMu.Lock()
	defer hitsMu.Unlock()

	// The logs, by request id.
	logsByReq, allLogs := propLogs(t, g)
	describe := func(i int) string {
		p := plan[i]
		var hs []string
		for _, h := range hits[i] {
			hs = append(hs, fmt.Sprintf("ch%d:%s", h.channel, upNames[h.behaviour]))
		}
		return fmt.Sprintf("call %d (token %s, %s, stream %v, max_tokens %d, client %d; answered %d %s, complete %v, err %v; upstream %v)",
			i, tokens[p.token].tok.Name, p.model, p.stream, p.maxTok, p.client, p.status, p.code, p.complete, p.err, hs)
	}
	for i, p := range plan {
		hs := hits[i]
		logs := logsByReq[p.reqID]
		// Retry rules: at most RetryTimes+1 upstream requests, never the
		// same channel twice.
		if len(hs) > retryTimes+1 {
			t.Errorf("%s: %d upstream requests, at most %d allowed", describe(i), len(hs), retryTimes+1)
		}
		seen := map[int]bool{}
		for _, h := range hs {
			if seen[h.channel] {
				t.Errorf("%s: channel %d asked twice", describe(i), h.channel)
			}
			seen[h.channel] = true
		}
		// Attempt k asks the k-th tier (S §5.5): each tier keeps a channel
		// the call has not tried.
		for k, h := range hs {
			if want := prio[min(k, 2)*2]; k < 3 && prio[h.channel] != want {
				t.Errorf("%s: attempt %d asked channel %d of priority %d, want the tier of priority %d", describe(i), k, h.channel, prio[h.channel], want)
			}
		}
		for k, h := range hs {
			if k < len(hs)-1 && !retried(h.behaviour, p.stream) && !h.cut {
				t.Errorf("%s: attempt %d (%s) answered, yet another channel was asked", describe(i), k, upNames[h.behaviour])
			}
		}
		if p.client != clientNormal {
			// A client that left may be billed (it reached the upstream) or
			// not; never twice.
			if len(logs) > 1 {
				t.Errorf("%s: %d logs", describe(i), len(logs))
			}
			if len(logs) == 1 && len(hs) == 0 {
				t.Errorf("%s: billed without reaching an upstream", describe(i))
			}
			continue
		}
		if p.err != nil {
			t.Errorf("%s: the client failed", describe(i))
			continue
		}
		switch {
		case p.status == 200:
			if len(logs) != 1 {
				t.Errorf("%s: answered 200 with %d logs", describe(i), len(logs))
			}
			if len(hs) == 0 {
				t.Errorf("%s: answered 200 without an upstream", describe(i))
			} else if last := hs[len(hs)-1]; failsAttempt(last.behaviour, p.stream) {
				t.Errorf("%s: answered 200 from a failed attempt", describe(i))
			}
			if !p.complete {
				// Only a stream cut by its upstream ends without [DONE].
				if len(hs) == 0 || (hs[len(hs)-1].behaviour != upCut && hs[len(hs)-1].behaviour != upStall) {
					t.Errorf("%s: a 200 stream without [DONE]", describe(i))
				}
			}
			if len(logs) == 1 {
				l := logs[0]
				var used []int
				for _, id := range other(t, l).AdminInfo.UseChannel {
					used = append(used, chIndex[id])
				}
				var asked []int
				for _, h := range hs {
					asked = append(asked, h.channel)
				}
				if !slices.Equal(used, asked) {
					t.Errorf("%s: log names channels %v, the upstreams were asked on %v", describe(i), used, asked)
				}
				if len(hs) > 0 && chIndex[l.ChannelID] != hs[len(hs)-1].channel {
					t.Errorf("%s: log charged channel %d", describe(i), chIndex[l.ChannelID])
				}
				if l.TokenID != tokens[p.token].tok.ID {
					t.Errorf("%s: log names token %d", describe(i), l.TokenID)
				}
				if last := hs[len(hs)-1]; last.usage && p.complete {
					if l.PromptTokens != int64(last.prompt) || l.CompletionTokens != int64(last.completion) {
						t.Errorf("%s: log has %d+%d tokens, the upstream reported %d+%d", describe(i), l.PromptTokens, l.CompletionTokens, last.prompt, last.completion)
					}
				}
				// Without usage from the upstream, what it sent is counted:
				// the prompt as the request has it, the words that came
				// (two before a cut).
				if last := hs[len(hs)-1]; !last.usage {
					words := last.completion
					if last.behaviour == upCut {
						words = min(words, 2)
					}
					if last.behaviour == upStall {
						words = 1
					}
					prompt := countChat(p.model, []tokenizer.Message{{Role: "user", Content: "call-" + strconv.Itoa(i)}})
					if p.completions {
						prompt = tokenizer.CountText(p.model, "call-"+strconv.Itoa(i))
					}
					text := strings.Repeat(" word", words)
					if !p.stream {
						text = strings.Repeat("word ", words)
					}
					want := tokenizer.CountText(p.model, text)
					if p.maxTok > 0 {
						// A local count is held at max_tokens (docs/billing.md).
						want = min(want, p.maxTok)
					}
					if l.PromptTokens != int64(prompt) || l.CompletionTokens != int64(want) {
						t.Errorf("%s: log has %d+%d tokens, counted here %d+%d", describe(i), l.PromptTokens, l.CompletionTokens, prompt, want)
					}
				}
				mr, cr := ratioModelMR, ratioModelCR
				if p.model == miniModel {
					mr, cr = miniModelMR, miniModelCR
				}
				if want := ratioQuota(int(l.PromptTokens), int(l.CompletionTokens), mr, cr, 1); l.Quota != want {
					t.Errorf("%s: log quota %d for %d+%d tokens, want %d", describe(i), l.Quota, l.PromptTokens, l.CompletionTokens, want)
				}
				if p.usageSeen != nil && (p.usageSeen[0] != l.PromptTokens || p.usageSeen[1] != l.CompletionTokens) {
					t.Errorf("%s: the client's usage chunk says %v, the log %d+%d", describe(i), p.usageSeen, l.PromptTokens, l.CompletionTokens)
				}
				if p.stream && p.wantUsage && p.complete && p.usageSeen == nil {
					t.Errorf("%s: asked for usage, got no usage chunk", describe(i))
				}
			}
		default:
			if len(logs) != 0 {
				t.Errorf("%s: answered %d with %d logs", describe(i), p.status, len(logs))
			}
			if len(hs) > 0 && (hs[len(hs)-1].behaviour == up400 || hs[len(hs)-1].behaviour == up504) {
				if want := map[upBehaviour]int{up400: 400, up504: 504}[hs[len(hs)-1].behaviour]; p.status != want {
					t.Errorf("%s: the last upstream answered %d, the client got %d", describe(i), want, p.status)
				}
			}
			if len(hs) > 0 && len(hs) < retryTimes+1 && retried(hs[len(hs)-1].behaviour, p.stream) {
				// Four channels at least stay enabled (only one disables
				// itself): a retryable failure is retried.
				last := hs[len(hs)-1].behaviour
				if last != upHang || p.stream { // a non-stream hang ends at RelayTimeout, as do_request_failed
					t.Errorf("%s: failed after %d attempts of %d", describe(i), len(hs), retryTimes+1)
				}
			}
			if p.model == miniModel && tokens[p.token].tok.ModelLimitsEnabled && len(hs) != 0 {
				t.Errorf("%s: a model the token may not use reached an upstream", describe(i))
			}
		}
	}

	// What happened, for the record of a seed.
	var tally propTally
	for _, p := range plan {
		tally.add(p.propOutcome)
	}
	t.Logf("%s, %d logs; %v", &tally, len(allLogs), tally.codes)

	// The books: logs add up to every balance's movement.
	checkPropBooks(t, g, tokens, channels, before, allLogs)
}
