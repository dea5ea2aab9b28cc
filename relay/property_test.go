package relay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/relay/tokenizer"
	"gateway/store"
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
	status      int
	reqID       string
	complete    bool    // a stream's [DONE], or a whole 200 body
	wantUsage   bool    // stream_options.include_usage
	usageSeen   []int64 // the usage the client was shown (prompt, completion)
	usageChunks int
	code        string // the error code of a failed call
	err         error
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
	seed := uint64(20261124)
	switch s := os.Getenv("GATEWAY_PROP_SEED"); s {
	case "":
	case "random":
		seed = uint64(time.Now().UnixNano())
	default:
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	t.Logf("seed %d (GATEWAY_PROP_SEED=%d replays it)", seed, seed)
	for _, m := range []propMode{{name: "memory"}, {name: "durable", durable: true}, {name: "sync 5ms", sync: 5 * time.Millisecond}} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			runMoneyProperty(t, seed, 200, m)
		})
	}
}

// propMode is how the store commits: without fsync, with it, or every
// few milliseconds (--sync).
type propMode struct {
	name    string
	durable bool
	sync    time.Duration
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
				select {
				case <-r.Context().Done():
				case <-time.After(timeSlack * 3 * time.Second):
					t.Errorf("call %d: the gateway waited %v for a hanging upstream", i, timeSlack*3*time.Second)
				}
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
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Content-Length", strconv.Itoa(len(data)))
					w.WriteHeader(200)
					w.Write(data[:len(data)/2])
					w.(http.Flusher).Flush()
					panic(http.ErrAbortHandler)
				case upStall:
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(200)
					w.Write(data[:len(data)/2])
					w.(http.Flusher).Flush()
					select {
					case <-r.Context().Done():
					case <-time.After(timeSlack * 3 * time.Second):
						t.Errorf("call %d: the gateway waited %v for a stalled answer", i, timeSlack*3*time.Second)
					}
				case upSlow:
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(200)
					for len(data) > 0 {
						n := min(len(data), 40)
						if _, err := w.Write(data[:n]); err != nil {
							cut()
							return
						}
						w.(http.Flusher).Flush()
						data = data[n:]
						select {
						case <-r.Context().Done():
							cut()
							return
						case <-time.After(5 * time.Millisecond):
						}
					}
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
					select {
					case <-r.Context().Done():
					case <-time.After(timeSlack * 3 * time.Second):
						t.Errorf("call %d: the gateway waited %v for a stalled stream", i, timeSlack*3*time.Second)
					}
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

	// Five channels in three tiers; only the first disables itself on a
	// 401. The third maps the models to other names, the fourth is a custom
	// channel (its base URL the whole endpoint; no stream usage asked for).
	const nChannels = 5
	prio := [nChannels]int64{10, 10, 5, 5, 0}
	channels := make([]*store.Channel, nChannels)
	upstreams := make([]*relaytest.Upstream, nChannels)
	chIndex := map[uint64]int{}
	models := ratioModel + "," + miniModel
	for i := range nChannels {
		h := handler(i)
		up := relaytest.New(t, "sk-prop-"+strconv.Itoa(i), relaytest.Routes{relaytest.ChatPath: h, "POST /v1/completions": h, "POST /custom": h})
		upstreams[i] = up
		channels[i] = g.MustCreateChannel(t, up, models, func(c *store.Channel) {
			c.Name = "prop-" + strconv.Itoa(i)
			c.Priority = prio[i]
			c.AutoBan = 0
			switch i {
			case 0:
				c.AutoBan = 1
			case 2:
				c.ModelMapping = fmt.Sprintf(`{%q:"up-a",%q:"up-b"}`, ratioModel, miniModel)
			case 3:
				c.Type = relay.TypeCustom
				c.BaseURL = up.URL + "/custom"
			}
		})
		chIndex[channels[i].ID] = i
	}

	// Tokens: alice's unlimited, limited with little quota, limited to one
	// model; fifty's (an account with little quota).
	type propToken struct {
		user    string
		tok     *store.Token
		key     string
		limited bool
	}
	mk := func(user string, tk store.Token) propToken {
		tok, key := g.MustCreateToken(t, user, tk)
		return propToken{user: user, tok: tok, key: key, limited: !tok.UnlimitedQuota}
	}
	tokens := []propToken{
		mk("alice", store.Token{Name: "unlimited", UnlimitedQuota: true}),
		mk("alice", store.Token{Name: "little", RemainQuota: 3_000}),
		mk("alice", store.Token{Name: "limits", RemainQuota: 5_000_000, ModelLimitsEnabled: true, ModelLimits: ratioModel}),
		mk("fifty", store.Token{Name: "poor", UnlimitedQuota: true}),
	}
	users := []string{"alice", "fifty"}
	type userBooks struct{ quota, used, count int64 }
	userBefore := map[string]userBooks{}
	for _, name := range users {
		u, err := g.st.User(fixture.ids[name])
		if err != nil {
			t.Fatal(err)
		}
		userBefore[name] = userBooks{u.Quota, u.UsedQuota, u.RequestCount}
	}
	type tokenBooks struct{ remain, used int64 }
	tokenBefore := make([]tokenBooks, len(tokens))
	for i, tk := range tokens {
		cur, err := g.st.Token(0, tk.tok.ID)
		if err != nil {
			t.Fatal(err)
		}
		tokenBefore[i] = tokenBooks{cur.RemainQuota, cur.UsedQuota}
	}

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
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if p.client == clientCancels {
			time.AfterFunc(cancelAfter[i], cancel)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.srv.URL+path, bytes.NewReader(data))
		req.Header.Set("Authorization", "Bearer "+tokens[p.token].key)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			p.err = err
			return
		}
		defer res.Body.Close()
		p.status, p.reqID = res.StatusCode, res.Header.Get("X-Oneapi-Request-Id")
		if p.client == clientLeaves && res.StatusCode == 200 {
			sc := bufio.NewScanner(res.Body)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "data:") {
					break
				}
			}
			cancel()
			return
		}
		b, err := io.ReadAll(res.Body)
		if err != nil {
			p.err = err
			return
		}
		if res.StatusCode != 200 {
			var e apiError
			if json.Unmarshal(b, &e) != nil {
				t.Errorf("call %d: %d %s is not an OpenAI error", i, res.StatusCode, b)
			}
			p.code = fmt.Sprint(e.Error.Code)
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
	var wg sync.WaitGroup
	work := make(chan int)
	for range 24 {
		wg.Go(func() {
			for i := range work {
				run(i)
			}
		})
	}
	for i := range plan {
		work <- i
	}
	close(work)
	wg.Wait()
	// Handlers of calls whose clients left end before the server closes;
	// the upstreams' handlers of attempts the gateway gave up on, before
	// theirs.
	g.srv.Close()
	for _, up := range upstreams {
		up.Close()
	}
	hitsMu.Lock()
	defer hitsMu.Unlock()
	if mode.sync > 0 {
		// The last charges reach the file at the next tick.
		time.Sleep(10 * mode.sync)
	}

	// The logs, by request id.
	logsByReq := map[string][]*store.Log{}
	var allLogs []*store.Log
	for _, name := range users {
		for _, l := range g.consumeLogs(t, name) {
			logsByReq[other(t, l).RequestID] = append(logsByReq[other(t, l).RequestID], l)
			allLogs = append(allLogs, l)
		}
	}
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
					prompt := tokenizer.CountChat(p.model, []tokenizer.Message{{Role: "user", Content: "call-" + strconv.Itoa(i)}}, nil)
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

	// The books: logs add up to every balance's movement.
	byToken := map[uint64]int64{}
	byUser := map[uint64]int64{}
	countByUser := map[uint64]int64{}
	byChannel := map[uint64]int64{}
	for _, l := range allLogs {
		byToken[l.TokenID] += l.Quota
		byUser[l.UserID] += l.Quota
		countByUser[l.UserID]++
		byChannel[l.ChannelID] += l.Quota
	}
	for _, name := range users {
		uid := fixture.ids[name]
		u, err := g.st.User(uid)
		if err != nil {
			t.Fatal(err)
		}
		b := userBefore[name]
		if d := b.quota - u.Quota; d != byUser[uid] {
			t.Errorf("%s: quota moved by %d, the logs say %d", name, d, byUser[uid])
		}
		if d := u.UsedQuota - b.used; d != byUser[uid] {
			t.Errorf("%s: used quota moved by %d, the logs say %d", name, d, byUser[uid])
		}
		if d := u.RequestCount - b.count; d != countByUser[uid] {
			t.Errorf("%s: request count moved by %d, %d logs", name, d, countByUser[uid])
		}
		// The dashboard's hourly rows count the same calls.
		rows, err := g.st.QuotaData(0, 0, uid)
		if err != nil {
			t.Fatal(err)
		}
		var rowQuota, rowCount, rowTokens, logTokens int64
		for _, r := range rows {
			rowQuota, rowCount, rowTokens = rowQuota+r.Quota, rowCount+r.Count, rowTokens+r.TokenUsed
		}
		for _, l := range allLogs {
			if l.UserID == uid {
				logTokens += l.PromptTokens + l.CompletionTokens
			}
		}
		if rowQuota != byUser[uid] || rowCount != countByUser[uid] || rowTokens != logTokens {
			t.Errorf("%s: dashboard rows hold %d quota, %d calls, %d tokens; the logs %d, %d, %d", name, rowQuota, rowCount, rowTokens, byUser[uid], countByUser[uid], logTokens)
		}
		if u.Quota < 0 {
			t.Errorf("%s: quota %d below zero (no call used more than it reserved)", name, u.Quota)
		}
		live, err := g.st.LiveBalance(uid)
		if err != nil {
			t.Fatal(err)
		}
		if live.Quota != u.Quota {
			t.Errorf("%s: live quota %d, shown %d: %d still held", name, live.Quota, u.Quota, u.Quota-live.Quota)
		}
	}
	for i, tk := range tokens {
		cur, err := g.st.Token(0, tk.tok.ID)
		if err != nil {
			t.Fatal(err)
		}
		b := tokenBefore[i]
		if d := cur.UsedQuota - b.used; d != byToken[tk.tok.ID] {
			t.Errorf("token %s: used moved by %d, the logs say %d", tk.tok.Name, d, byToken[tk.tok.ID])
		}
		if tk.limited {
			if d := b.remain - cur.RemainQuota; d != byToken[tk.tok.ID] {
				t.Errorf("token %s: remain moved by %d, the logs say %d", tk.tok.Name, d, byToken[tk.tok.ID])
			}
			if cur.RemainQuota < 0 {
				t.Errorf("token %s: remain %d below zero", tk.tok.Name, cur.RemainQuota)
			}
			// Nothing is still held on the token: all it shows can be
			// reserved (alice can cover it).
			if cur.RemainQuota > 0 && tk.user == "alice" {
				r, err := g.st.Reserve(fixture.ids["alice"], tk.tok.ID, cur.RemainQuota)
				if err != nil {
					t.Errorf("token %s: its remain %d cannot be reserved: %v (a hold was left)", tk.tok.Name, cur.RemainQuota, err)
				} else {
					g.st.Refund(r)
				}
			}
		}
	}
	var sum int64
	for i, c := range channels {
		cur, err := g.st.Channel(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cur.UsedQuota - c.UsedQuota; d != byChannel[c.ID] {
			t.Errorf("channel %d: used moved by %d, the logs say %d", i, d, byChannel[c.ID])
		}
		sum += byChannel[c.ID]
	}
	var total int64
	for _, v := range byUser {
		total += v
	}
	if sum != total {
		t.Errorf("logs on the channels sum to %d, on the users %d", sum, total)
	}

	// What happened, for the record of a seed.
	var ok, failed, refused int
	codes := map[string]int{}
	for _, p := range plan {
		codes[strconv.Itoa(p.status)+" "+p.code]++
		switch {
		case p.status == 200:
			ok++
		case p.code == "insufficient_user_quota" || p.code == "insufficient_token_quota" || p.code == "invalid_token":
			refused++
		case p.status != 0:
			failed++
		}
	}
	t.Logf("%d answered, %d failed, %d refused for quota, %d logs; %v", ok, failed, refused, len(allLogs), codes)

	// The file holds what memory showed: nothing is left only in memory.
	type books struct {
		users    map[string][3]int64
		tokens   map[uint64][2]int64
		channels map[uint64]int64
	}
	read := func(st *store.Store) books {
		b := books{users: map[string][3]int64{}, tokens: map[uint64][2]int64{}, channels: map[uint64]int64{}}
		for _, name := range users {
			u, err := st.User(fixture.ids[name])
			if err != nil {
				t.Fatal(err)
			}
			b.users[name] = [3]int64{u.Quota, u.UsedQuota, u.RequestCount}
		}
		for _, tk := range tokens {
			cur, err := st.Token(0, tk.tok.ID)
			if err != nil {
				t.Fatal(err)
			}
			b.tokens[tk.tok.ID] = [2]int64{cur.RemainQuota, cur.UsedQuota}
		}
		for _, c := range channels {
			cur, err := st.Channel(c.ID)
			if err != nil {
				t.Fatal(err)
			}
			b.channels[c.ID] = cur.UsedQuota
		}
		return b
	}
	live := read(g.st)
	path := g.st.Path()
	if err := g.st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if file := read(st); fmt.Sprint(file) != fmt.Sprint(live) {
		t.Errorf("the file holds %+v, memory showed %+v", file, live)
	}
	page, err := st.Logs(store.LogFilter{Type: store.LogTypeConsume}, 1, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(page.Items); n != len(allLogs) {
		t.Errorf("the file holds %d consume logs, %d were shown", n, len(allLogs))
	}
}
