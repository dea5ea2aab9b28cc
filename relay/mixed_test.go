package relay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/relay/relaytest"
	"gateway/store"
)

// Mixed traffic on one account at once, durable: answers plain and
// streamed, with and without usage, failures the next channel recovers,
// failures no channel recovers, clients that leave mid-stream, while
// redemption codes top the account up and the channels are edited. Every
// call that answered 200 (left or not) has exactly one log and no other
// call has one; the logs add up to every balance's movement; the top-ups
// all arrive; and the file holds the same balances after a restart.
func TestMoney_MixedTraffic(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Durable: true, Options: map[string]string{"RetryTimes": "2"}})
	const (
		calls    = 240
		codes    = 24
		codeSize = int64(70_000)
	)
	// What call i does, from its prompt: i%6 picks the kind.
	kind := func(req *relaytest.Request) (int, int) {
		msgs, _ := req.JSON["messages"].([]any)
		first, _ := msgs[0].(map[string]any)
		i, err := strconv.Atoi(fmt.Sprint(first["content"]))
		if err != nil {
			t.Errorf("prompt %v", first["content"])
		}
		return i, i % 6
	}
	handler := func(failsOnThree bool) relaytest.Handler {
		return func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			i, k := kind(req)
			p, c := 10+i%7, 1+i%5
			switch {
			case k == 4, k == 3 && failsOnThree:
				relaytest.WriteError(w, http.StatusInternalServerError, "server_error", "boom", "upstream failed")
			case k == 5:
				// Streams until the client leaves.
				sse := relaytest.NewSSE(w)
				for range 500 {
					if sse.Send(relaytest.Chunk(ratioModel, " hello")) != nil {
						return
					}
					select {
					case <-r.Context().Done():
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
				t.Errorf("call %d: the upstream streamed to the end", i)
			case !req.Stream():
				relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion(ratioModel, "hello there", relaytest.NewUsage(p, c)))
			default:
				sse := relaytest.NewSSE(w)
				sse.Send(relaytest.Chunk(ratioModel, "hello"))
				sse.Send(relaytest.Chunk(ratioModel, " there"))
				sse.Send(relaytest.FinishChunk(ratioModel, "stop"))
				if k == 1 {
					sse.Send(relaytest.UsageChunk(ratioModel, p, c))
				}
				sse.Done()
			}
		}
	}
	upA := relaytest.NewChat(t, "sk-mixed-a", handler(true))
	upB := relaytest.NewChat(t, "sk-mixed-b", handler(false))
	chA := g.MustCreateChannel(t, upA, ratioModel, func(c *store.Channel) { c.Name = "a" })
	chB := g.MustCreateChannel(t, upB, ratioModel, func(c *store.Channel) { c.Name = "b" })
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 500_000_000})
	before := g.balances(t, "alice", tok.ID, chA, chB)
	root := fixture.IDs["root"]
	reds, err := g.st.CreateRedemptions(root, "mixed", codeSize, codes)
	if err != nil {
		t.Fatal(err)
	}

	type answer struct {
		status int
		reqID  string
	}
	answers := make([]answer, calls)
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	call := func(i int) {
		body := chat(ratioModel, strconv.Itoa(i))
		if k := i % 6; k == 1 || k == 2 || k == 5 {
			body["stream"] = true
			if k == 1 {
				body["stream_options"] = map[string]any{"include_usage": true}
			}
		}
		data, _ := json.Marshal(body)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.srv.URL+"/v1/chat/completions", bytes.NewReader(data))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			t.Errorf("call %d: %v", i, err)
			return
		}
		defer res.Body.Close()
		answers[i] = answer{res.StatusCode, res.Header.Get("X-Oneapi-Request-Id")}
		if i%6 == 5 && res.StatusCode == http.StatusOK {
			// Leave after the third event.
			sc := bufio.NewScanner(res.Body)
			for n := 0; n < 3 && sc.Scan(); {
				if strings.HasPrefix(sc.Text(), "data:") {
					n++
				}
			}
			cancel()
			return
		}
		io.Copy(io.Discard, res.Body)
	}

	var wg sync.WaitGroup
	work := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range work {
				call(i)
			}
		})
	}
	var redeemed sync.WaitGroup
	var redeemedQuota int64
	var redeemMu sync.Mutex
	for _, r := range reds {
		redeemed.Go(func() {
			q, err := g.st.Redeem(fixture.IDs["alice"], r.Key)
			if err != nil {
				t.Errorf("redeem: %v", err)
				return
			}
			redeemMu.Lock()
			redeemedQuota += q
			redeemMu.Unlock()
		})
	}
	// Channel edits while calls route: the weight changes, both channels
	// stay in the one tier the calls use.
	redeemed.Go(func() {
		for n := range 20 {
			w := int64(n % 5)
			if _, err := g.st.UpdateChannel(chA.ID, store.ChannelUpdate{Weight: &w}); err != nil {
				t.Errorf("edit channel: %v", err)
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	for i := range calls {
		work <- i
	}
	close(work)
	wg.Wait()
	redeemed.Wait()
	// Calls whose clients left are billed by their handlers: closing the
	// server waits for them.
	g.srv.Close()

	if redeemedQuota != codes*codeSize {
		t.Fatalf("redeemed %d, want %d", redeemedQuota, codes*codeSize)
	}
	logs := g.consumeLogs(t, "alice")
	byReq := map[string]int{}
	onChannel := map[uint64]int64{}
	for _, l := range logs {
		byReq[other(t, l).RequestID]++
		onChannel[l.ChannelID] += l.Quota
	}
	ok := 0
	for i, a := range answers {
		switch {
		case a.status == http.StatusOK:
			ok++
			if byReq[a.reqID] != 1 {
				t.Errorf("call %d (kind %d) answered 200 and has %d logs", i, i%6, byReq[a.reqID])
			}
		case i%6 != 4:
			t.Errorf("call %d (kind %d) answered %d", i, i%6, a.status)
		case a.reqID == "" || byReq[a.reqID] != 0:
			t.Errorf("call %d failed everywhere and has %d logs (request id %q)", i, byReq[a.reqID], a.reqID)
		}
	}
	if want := calls - calls/6; ok != want || len(logs) != ok {
		t.Errorf("200 answers = %d (want %d), logs = %d", ok, want, len(logs))
	}

	after := g.balances(t, "alice", tok.ID, chA, chB)
	sum := sumQuota(logs)
	if d := before.UserQuota + redeemedQuota - after.UserQuota; d != sum {
		t.Errorf("user quota moved by %d besides the top-ups, want the logs' %d", d, sum)
	}
	if d := after.UserUsed - before.UserUsed; d != sum {
		t.Errorf("user used_quota moved by %d, want %d", d, sum)
	}
	if d := after.UserCount - before.UserCount; d != int64(len(logs)) {
		t.Errorf("user request_count moved by %d, want %d", d, len(logs))
	}
	if d := before.TokenRemain - after.TokenRemain; d != sum {
		t.Errorf("token remain moved by %d, want %d", d, sum)
	}
	if d := after.TokenUsed - before.TokenUsed; d != sum {
		t.Errorf("token used moved by %d, want %d", d, sum)
	}
	for _, c := range []*store.Channel{chA, chB} {
		if d := after.Channels[c.ID] - before.Channels[c.ID]; d != onChannel[c.ID] {
			t.Errorf("channel %s used moved by %d, its logs say %d", c.Name, d, onChannel[c.ID])
		}
	}
	if onChannel[chA.ID]+onChannel[chB.ID] != sum {
		t.Errorf("logs name other channels: %v", onChannel)
	}

	// The file holds what memory showed.
	g.wantCommitted(t, "alice", tok.ID, chA, chB)
}
