package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"gateway/relay/relaytest"
	"gateway/store"
)

// The money tests run on a durable store (fsync on), as production does,
// with many calls at once.

const concurrentCalls = 200

// outcome counts the answers of a burst of calls by status and code.
type outcome struct {
	mu     sync.Mutex
	counts map[string]int
}

func (o *outcome) add(status int, code string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.counts == nil {
		o.counts = map[string]int{}
	}
	o.counts[strconv.Itoa(status)+" "+code]++
}

// burst makes n calls at once, each from its own goroutine, and records
// every answer. body returns the body of call i.
func (g *gateway) burst(t *testing.T, n int, key string, body func(i int) any) *outcome {
	t.Helper()
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer client.CloseIdleConnections()
	gc := *g
	gc.client = client
	var o outcome
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			res, err := gc.do(context.Background(), key, "/v1/chat/completions", body(i))
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			code := ""
			if res.Status != 200 {
				var e apiError
				if json.Unmarshal(res.Body, &e) != nil || e.Error.Message == "" {
					t.Errorf("call %d: %d %s is not an OpenAI error", i, res.Status, res.Body)
				}
				code = fmt.Sprint(e.Error.Code)
			}
			o.add(res.Status, code)
		})
	}
	close(start)
	wg.Wait()
	return &o
}

// watchBalance samples the user's live balance until stop is closed and
// reports the lowest value seen.
func (g *gateway) watchBalance(t *testing.T, user string, stop <-chan struct{}) func() int64 {
	lowest := int64(1 << 62)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			b, err := g.st.LiveBalance(fixture.IDs[user])
			if err != nil {
				t.Error(err)
				return
			}
			lowest = min(lowest, b.Quota)
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	return func() int64 { <-done; return lowest }
}

// sumQuota adds the quotas of logs.
func sumQuota(logs []*store.Log) int64 {
	var s int64
	for _, l := range logs {
		s += l.Quota
	}
	return s
}

// A user funded for exactly fifty calls of a fixed-price model makes 200
// at once through an unlimited token: exactly fifty succeed, the rest are
// refused with 403, and every balance moved by the sum of the logs. The
// balance never goes below zero.
func TestMoney_UserFundedForFifty(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Durable: true})
	up := relaytest.NewChat(t, "sk-money", okChat(t, fixedModel, "ok", relaytest.NewUsage(7, 3)))
	ch := g.MustCreateChannel(t, up, fixedModel, nil)
	tok, key := g.MustCreateToken(t, "fifty", store.Token{UnlimitedQuota: true})
	before := g.balances(t, "fifty", tok.ID, ch)
	if before.UserQuota != 50*fixedCost {
		t.Fatalf("fixture quota = %d, want %d", before.UserQuota, 50*fixedCost)
	}

	stop := make(chan struct{})
	lowest := g.watchBalance(t, "fifty", stop)
	o := g.burst(t, concurrentCalls, key, func(int) any { return chat(fixedModel, "pay me") })
	close(stop)

	want := map[string]int{"200 ": 50, "403 insufficient_user_quota": concurrentCalls - 50}
	if fmt.Sprint(o.counts) != fmt.Sprint(want) {
		t.Errorf("answers = %v, want %v", o.counts, want)
	}
	if l := lowest(); l < 0 {
		t.Errorf("live user quota went down to %d", l)
	}
	logs := g.consumeLogs(t, "fifty")
	if len(logs) != 50 || up.Hits() != 50 {
		t.Errorf("logs = %d, upstream hits = %d, want 50 each", len(logs), up.Hits())
	}
	for _, l := range logs {
		if l.Quota != fixedCost {
			t.Fatalf("a log charged %d, want the fixed %d", l.Quota, fixedCost)
		}
	}
	after := g.balances(t, "fifty", tok.ID, ch)
	wantMoved(t, before, after, false, ch.ID, sumQuota(logs), 50)
	if after.UserQuota != 0 {
		t.Errorf("user quota = %d, want 0", after.UserQuota)
	}
	g.wantCommitted(t, "fifty", tok.ID, ch)
}

// A token funded for exactly fifty calls: fifty succeed; the rest are
// refused, with 403 while the fifty are in flight and with 401 once the
// token is spent (an exhausted token no longer authenticates).
func TestMoney_TokenFundedForFifty(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Durable: true})
	up := relaytest.NewChat(t, "sk-money", okChat(t, fixedModel, "ok", relaytest.NewUsage(7, 3)))
	ch := g.MustCreateChannel(t, up, fixedModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 50 * fixedCost})
	before := g.balances(t, "alice", tok.ID, ch)

	o := g.burst(t, concurrentCalls, key, func(int) any { return chat(fixedModel, "pay me") })
	t.Logf("answers: %v", o.counts)
	ok, refused := o.counts["200 "], o.counts["403 insufficient_token_quota"]+o.counts["401 invalid_token"]
	if ok != 50 || ok+refused != concurrentCalls {
		t.Errorf("answers = %v, want 50 × 200 and the rest 403 insufficient_token_quota or 401 invalid_token", o.counts)
	}
	logs := g.consumeLogs(t, "alice")
	if len(logs) != 50 || up.Hits() != 50 {
		t.Errorf("logs = %d, upstream hits = %d, want 50 each", len(logs), up.Hits())
	}
	after := g.balances(t, "alice", tok.ID, ch)
	wantMoved(t, before, after, true, ch.ID, sumQuota(logs), 50)
	if after.TokenRemain != 0 {
		t.Errorf("token remain = %d, want 0", after.TokenRemain)
	}
	if s := tokenStatus(t, g, tok.ID); s != store.TokenStatusExhausted {
		t.Errorf("token status = %d, want 4", s)
	}
	g.wantCommitted(t, "alice", tok.ID, ch)
}

// Ratio pricing, 200 calls at once (streams and not, each with its own
// usage) on a big balance: the logs add up to every balance delta, and the
// request count, the logs and the upstream hits agree.
func TestMoney_RatioBurst(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Durable: true})
	// The upstream reports usage derived from the call number in the prompt.
	up := relaytest.NewChat(t, "sk-ratio", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		msgs, _ := req.JSON["messages"].([]any)
		first, _ := msgs[0].(map[string]any)
		i, err := strconv.Atoi(fmt.Sprint(first["content"]))
		if err != nil {
			t.Errorf("prompt %v", first["content"])
		}
		p, c := 10+i%17, 1+i%13
		if !req.Stream() {
			relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "n", relaytest.NewUsage(p, c)))
			return
		}
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(ratioModel, "n"))
		sse.Send(relaytest.UsageChunk(ratioModel, p, c))
		sse.Done()
	})
	ch := g.MustCreateChannel(t, up, ratioModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 100_000_000})
	before := g.balances(t, "alice", tok.ID, ch)

	o := g.burst(t, concurrentCalls, key, func(i int) any {
		if i%2 == 0 {
			return streamChat(ratioModel, strconv.Itoa(i), i%4 == 0)
		}
		return chat(ratioModel, strconv.Itoa(i))
	})
	if o.counts["200 "] != concurrentCalls {
		t.Fatalf("answers = %v, want all 200", o.counts)
	}
	logs := g.consumeLogs(t, "alice")
	after := g.balances(t, "alice", tok.ID, ch)
	if len(logs) != concurrentCalls || up.Hits() != concurrentCalls || after.UserCount-before.UserCount != concurrentCalls {
		t.Errorf("logs = %d, upstream hits = %d, request_count delta = %d, want %d each",
			len(logs), up.Hits(), after.UserCount-before.UserCount, concurrentCalls)
	}
	var expected int64
	for i := range concurrentCalls {
		expected += ratioQuota(10+i%17, 1+i%13, ratioModelMR, ratioModelCR, 1)
	}
	if s := sumQuota(logs); s != expected {
		t.Errorf("sum of log quotas = %d, want %d from the formula", s, expected)
	}
	wantMoved(t, before, after, true, ch.ID, sumQuota(logs), concurrentCalls)
	g.wantCommitted(t, "alice", tok.ID, ch)
}

// wantCommitted reopens the data file after closing the store and checks
// that the committed balances are the live ones the store showed: nothing
// is left only in memory.
func (g *gateway) wantCommitted(t *testing.T, user string, tokenID uint64, channels ...*store.Channel) {
	t.Helper()
	live := g.balances(t, user, tokenID, channels...)
	logs := len(g.consumeLogs(t, user))
	g.srv.Close()
	path := g.st.Path()
	if err := g.st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g2 := &gateway{st: st}
	if got := g2.balances(t, user, tokenID, channels...); fmt.Sprint(got) != fmt.Sprint(live) {
		t.Errorf("committed balances %+v, live ones were %+v", got, live)
	}
	if n := len(g2.consumeLogs(t, user)); n != logs {
		t.Errorf("committed logs = %d, live %d", n, logs)
	}
}

// A token switched between limited and unlimited while one of its calls is
// in flight: whatever the switch, the quota the call held on the token is
// released exactly once and the charge follows the token's setting at
// settlement, so the live remaining quota stays equal to the committed one.
func TestMoney_UnlimitedToggledMidCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                 string
		startUnlimited, fail bool
	}{
		{"limited to unlimited", false, false},
		{"unlimited to limited", true, false},
		{"unlimited to limited, call fails", true, true},
		{"limited to unlimited, call fails", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			release := make(chan struct{})
			up := relaytest.NewChat(t, "sk-slow", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				<-release
				if tc.fail {
					relaytest.WriteError(w, 500, "server_error", "", "boom")
					return
				}
				relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "ok", relaytest.NewUsage(10, 10)))
			})
			ch := g.MustCreateChannel(t, up, ratioModel, nil)
			const remain = 1_000_000
			tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: remain, UnlimitedQuota: tc.startUnlimited})
			done := make(chan result, 1)
			go func() {
				res, err := g.do(context.Background(), key, "/v1/chat/completions", chat(ratioModel, "hi"))
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			eventually(t, 10*time.Second, "the call to reach the upstream", func() bool { return up.Hits() == 1 })
			flip := !tc.startUnlimited
			if _, err := g.st.UpdateToken(fixture.IDs["alice"], tok.ID, store.TokenUpdate{UnlimitedQuota: &flip}); err != nil {
				t.Fatal(err)
			}
			close(release)
			res := <-done
			if wantStatus := map[bool]int{false: 200, true: 500}[tc.fail]; res.Status != wantStatus {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			// Back to limited, to read the remaining quota the ledger keeps.
			limited := false
			if _, err := g.st.UpdateToken(fixture.IDs["alice"], tok.ID, store.TokenUpdate{UnlimitedQuota: &limited}); err != nil {
				t.Fatal(err)
			}
			want := int64(remain)
			if !tc.fail && tc.startUnlimited {
				// Settled while limited: charged.
				want -= ratioQuota(10, 10, ratioModelMR, ratioModelCR, 1)
			}
			if live := g.balances(t, "alice", tok.ID, ch); live.TokenRemain != want {
				t.Errorf("live token remain = %d, want %d", live.TokenRemain, want)
			}
			g.wantCommitted(t, "alice", tok.ID, ch)
		})
	}
}

// With a sync interval (--sync) a charge reaches the file after the answer:
// a token switched to unlimited in between still pays from its remaining
// quota in the file exactly as it did in memory.
func TestMoney_UnlimitedToggledBeforeCommit(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	g.st.SetSyncInterval(500 * time.Millisecond)
	up := relaytest.NewChat(t, "sk-up", okChat(t, ratioModel, "ok", relaytest.NewUsage(10, 10)))
	ch := g.MustCreateChannel(t, up, ratioModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000})
	if res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi")); res.Status != 200 {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	unlimited := true
	if _, err := g.st.UpdateToken(fixture.IDs["alice"], tok.ID, store.TokenUpdate{UnlimitedQuota: &unlimited}); err != nil {
		t.Fatal(err)
	}
	want := 1_000_000 - ratioQuota(10, 10, ratioModelMR, ratioModelCR, 1)
	if live := g.balances(t, "alice", tok.ID, ch); live.TokenRemain != want {
		t.Errorf("live token remain = %d, want %d", live.TokenRemain, want)
	}
	eventually(t, 10*time.Second, "the interval commit", func() bool { return len(g.consumeLogs(t, "alice")) == 1 })
	g.wantCommitted(t, "alice", tok.ID, ch)
}

// While the data file refuses writes (a full disk; here a file size limit
// below the file's pages), a call's charge cannot be written: the first
// call that meets it answers billing_failed, and the calls after it are
// refused with 503 before any upstream is asked, instead of each being
// paid to the upstream and answered billing_failed. Once the file takes
// writes again, calls go through.
func TestMoney_AFileThatRefusesWritesRefusesCallsBeforeTheUpstream(t *testing.T) {
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-money", okChat(t, fixedModel, "ok", relaytest.NewUsage(7, 3)))
	g.MustCreateChannel(t, up, fixedModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	if res := g.post(t, key, "/v1/chat/completions", chat(fixedModel, "warm up")); res.Status != http.StatusOK {
		t.Fatalf("a call before the disk filled: %d %s", res.Status, res.Body)
	}

	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	// Past the two meta pages every write fails, as on a full disk (Go's
	// runtime ignores the SIGXFSZ that comes with it).
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 8 << 10, Max: old.Max}); err != nil {
		t.Skip(err)
	}
	lift := sync.OnceFunc(func() { syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) })
	t.Cleanup(lift)
	hits := up.Hits()
	// The first call meets the full disk (unless the log indexer met it
	// first): billing_failed. The others are refused.
	answers := map[string]int{}
	for range 6 {
		res := g.post(t, key, "/v1/chat/completions", chat(fixedModel, "while the disk is full"))
		answers[fmt.Sprint(res.Status, " ", res.err(t).Error.Code)]++
	}
	if answers["503 billing_unavailable"] < 5 || answers["503 billing_unavailable"]+answers["500 billing_failed"] != 6 {
		t.Fatalf("answers while the file refused writes: %v", answers)
	}
	if got := up.Hits() - hits; got > 1 {
		t.Fatalf("the upstream was asked %d times while the file refused writes", got)
	}

	lift()
	// Any write that goes through (here an administrator's) tells the file
	// takes writes again.
	if err := g.st.UpdateOptions([]store.Option{{Key: "Notice", Value: "room again"}}); err != nil {
		t.Fatal(err)
	}
	if res := g.post(t, key, "/v1/chat/completions", chat(fixedModel, "room again")); res.Status != http.StatusOK {
		t.Fatalf("a call once the file takes writes again: %d %s", res.Status, res.Body)
	}
}
