package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/store"
)

// What the two seeded property tests of the books (chat and completions in
// property_test.go, the other endpoints in property_endpoints_test.go)
// share: the seed, the store's modes, the tokens and channels, the clients'
// loop and the checks of the books.

// propMode is how the store commits: without fsync, with it, or every
// few milliseconds (--sync).
type propMode struct {
	name    string
	durable bool
	sync    time.Duration
}

// runPropertyModes runs a property test in each mode of the store, in
// parallel, under the seed def, or the one GATEWAY_PROP_SEED names
// ("random": a new one each run).
func runPropertyModes(t *testing.T, def uint64, run func(t *testing.T, seed uint64, m propMode)) {
	t.Helper()
	seed := def
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
			run(t, seed, m)
		})
	}
}

// propUsers are the accounts the property tests' tokens belong to.
var propUsers = []string{"alice", "fifty"}

// propToken is one of the property tests' tokens.
type propToken struct {
	user    string
	tok     *store.Token
	key     string
	limited bool
}

// propTokens makes the property tests' tokens: alice's unlimited, limited
// with little quota, limited to one model; fifty's (an account with little
// quota).
func propTokens(t *testing.T, g *gateway, little int64) []propToken {
	t.Helper()
	mk := func(user string, tk store.Token) propToken {
		tok, key := g.MustCreateToken(t, user, tk)
		return propToken{user: user, tok: tok, key: key, limited: !tok.UnlimitedQuota}
	}
	return []propToken{
		mk("alice", store.Token{Name: "unlimited", UnlimitedQuota: true}),
		mk("alice", store.Token{Name: "little", RemainQuota: little}),
		mk("alice", store.Token{Name: "limits", RemainQuota: 5_000_000, ModelLimitsEnabled: true, ModelLimits: ratioModel}),
		mk("fifty", store.Token{Name: "poor", UnlimitedQuota: true}),
	}
}

// propPrio are the priorities of the property tests' five channels: three
// tiers.
var propPrio = [...]int64{10, 10, 5, 5, 0}

// propChannels makes the property tests' five channels in three tiers
// (propPrio), each with its upstream serving routes(i); only the first
// disables itself on a 401. The third has the model mapping mapping, the
// fourth is a custom channel (its base URL the whole endpoint). Names and
// keys start with name.
func propChannels(t *testing.T, g *gateway, name, models, mapping string, routes func(i int) relaytest.Routes) (channels []*store.Channel, upstreams []*relaytest.Upstream, chIndex map[uint64]int) {
	t.Helper()
	channels = make([]*store.Channel, len(propPrio))
	upstreams = make([]*relaytest.Upstream, len(propPrio))
	chIndex = map[uint64]int{}
	for i := range propPrio {
		up := relaytest.New(t, "sk-"+name+"-"+strconv.Itoa(i), routes(i))
		upstreams[i] = up
		channels[i] = g.MustCreateChannel(t, up, models, func(c *store.Channel) {
			c.Name = name + "-" + strconv.Itoa(i)
			c.Priority = propPrio[i]
			c.AutoBan = 0
			switch i {
			case 0:
				c.AutoBan = 1
			case 2:
				c.ModelMapping = mapping
			case 3:
				c.Type = relay.TypeCustom
				c.BaseURL = up.URL + "/custom"
			}
		})
		chIndex[channels[i].ID] = i
	}
	return channels, upstreams, chIndex
}

// awaitGatewayGone holds an upstream's answer to call i until the gateway
// gives up on it; what names the answer when the gateway waits too long.
func awaitGatewayGone(t *testing.T, r *http.Request, i int, what string) {
	select {
	case <-r.Context().Done():
	case <-time.After(timeSlack * 3 * time.Second):
		t.Errorf("call %d: the gateway waited %v for %s", i, timeSlack*3*time.Second, what)
	}
}

// writeHalfThenReset sends half of data (Content-Length says all), then
// resets the connection.
func writeHalfThenReset(w http.ResponseWriter, ctype string, data []byte) {
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(200)
	w.Write(data[:len(data)/2])
	w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

// writeHalfThenStall sends half of data, then nothing until the gateway
// gives up on call i.
func writeHalfThenStall(t *testing.T, w http.ResponseWriter, r *http.Request, ctype string, data []byte, i int) {
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(200)
	w.Write(data[:len(data)/2])
	w.(http.Flusher).Flush()
	awaitGatewayGone(t, r, i, "a stalled answer")
}

// writeSlowly sends data in pieces 5ms apart; cut is called when the
// gateway leaves before the end.
func writeSlowly(w http.ResponseWriter, r *http.Request, ctype string, data []byte, piece int, cut func()) {
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(200)
	for len(data) > 0 {
		n := min(len(data), piece)
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
}

// propOutcome is how a call of a property test ended, as its client saw it.
type propOutcome struct {
	status int
	reqID  string
	code   string // the error code of a failed call
	err    error
}

// propRequest is what the client of a property test's call sends.
type propRequest struct {
	path, key, ctype string
	body             []byte
	// cancels: the client gives up after cancelAfter.
	cancels     bool
	cancelAfter time.Duration
	// leave, when set, is what a client that leaves a 200 answer reads of
	// it before it goes.
	leave func(io.Reader)
}

// send makes call i's request as its client and records how it ended. It
// returns the body of a 200 answer read whole, ok false when there is none
// (the call failed, or the client left).
func (o *propOutcome) send(t *testing.T, g *gateway, client *http.Client, i int, r propRequest) (body []byte, ok bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if r.cancels {
		time.AfterFunc(r.cancelAfter, cancel)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.srv.URL+r.path, bytes.NewReader(r.body))
	req.Header.Set("Authorization", "Bearer "+r.key)
	req.Header.Set("Content-Type", r.ctype)
	res, err := client.Do(req)
	if err != nil {
		o.err = err
		return nil, false
	}
	defer res.Body.Close()
	o.status, o.reqID = res.StatusCode, res.Header.Get("X-Oneapi-Request-Id")
	if r.leave != nil && res.StatusCode == 200 {
		r.leave(res.Body)
		cancel()
		return nil, false
	}
	b, err := io.ReadAll(res.Body)
	if err != nil && !(errors.Is(err, io.ErrUnexpectedEOF) && res.StatusCode == 200 && strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream")) {
		o.err = err
		return nil, false
	}
	// A stream whose connection was cut (its upstream's was) is what came
	// before the cut: it lacks [DONE].
	if res.StatusCode != 200 {
		var e apiError
		if json.Unmarshal(b, &e) != nil {
			t.Errorf("call %d: %d %s is not an OpenAI error", i, res.StatusCode, b)
		}
		o.code = fmt.Sprint(e.Error.Code)
		return nil, false
	}
	return b, true
}

// runPropCalls runs calls 0 to n-1, 24 at once.
func runPropCalls(n int, run func(i int)) {
	var wg sync.WaitGroup
	work := make(chan int)
	for range 24 {
		wg.Go(func() {
			for i := range work {
				run(i)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

// stopProp closes the gateway's server, then the upstreams: handlers of
// calls whose clients left end before the server closes; the upstreams'
// handlers of attempts the gateway gave up on, before theirs. Under --sync
// it waits for the last charges to reach the file at the next tick.
func stopProp(g *gateway, upstreams []*relaytest.Upstream, mode propMode) {
	g.srv.Close()
	for _, up := range upstreams {
		up.Close()
	}
	if mode.sync > 0 {
		time.Sleep(10 * mode.sync)
	}
}

// propLogs are the consume logs of the property tests' users, all and by
// request id.
func propLogs(t *testing.T, g *gateway) (byReq map[string][]*store.Log, all []*store.Log) {
	t.Helper()
	byReq = map[string][]*store.Log{}
	for _, name := range propUsers {
		for _, l := range g.consumeLogs(t, name) {
			byReq[other(t, l).RequestID] = append(byReq[other(t, l).RequestID], l)
			all = append(all, l)
		}
	}
	return byReq, all
}

// propBooks are the balances a property test follows: the users' quota,
// used quota and request count, the tokens' remain and used quota (in the
// order of the tokens), the channels' used quota (in their order).
type propBooks struct {
	users    map[string][3]int64
	tokens   [][2]int64
	channels []int64
}

func readPropBooks(t *testing.T, st *store.Store, tokens []propToken, channels []*store.Channel) propBooks {
	t.Helper()
	b := propBooks{users: map[string][3]int64{}}
	for _, name := range propUsers {
		u, err := st.User(fixture.IDs[name])
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
		b.tokens = append(b.tokens, [2]int64{cur.RemainQuota, cur.UsedQuota})
	}
	for _, c := range channels {
		cur, err := st.Channel(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		b.channels = append(b.channels, cur.UsedQuota)
	}
	return b
}

// checkPropBooks checks the books after a property test's calls (S §5.5,
// §5.8; docs/billing.md "Reserve, settle, refund"): the logs add up to
// every balance's movement since before, nothing is held, the dashboard's
// rows count the same calls, and the file holds what memory showed
// (nothing is left only in memory). It closes the gateway's store.
func checkPropBooks(t *testing.T, g *gateway, tokens []propToken, channels []*store.Channel, before propBooks, allLogs []*store.Log) {
	t.Helper()
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
	for _, name := range propUsers {
		uid := fixture.IDs[name]
		u, err := g.st.User(uid)
		if err != nil {
			t.Fatal(err)
		}
		b := before.users[name]
		if d := b[0] - u.Quota; d != byUser[uid] {
			t.Errorf("%s: quota moved by %d, the logs say %d", name, d, byUser[uid])
		}
		if d := u.UsedQuota - b[1]; d != byUser[uid] {
			t.Errorf("%s: used quota moved by %d, the logs say %d", name, d, byUser[uid])
		}
		if d := u.RequestCount - b[2]; d != countByUser[uid] {
			t.Errorf("%s: request count moved by %d, %d logs", name, d, countByUser[uid])
		}
		if u.Quota < 0 {
			t.Errorf("%s: quota %d below zero (no call used more than it reserved)", name, u.Quota)
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
		b := before.tokens[i]
		if d := cur.UsedQuota - b[1]; d != byToken[tk.tok.ID] {
			t.Errorf("token %s: used moved by %d, the logs say %d", tk.tok.Name, d, byToken[tk.tok.ID])
		}
		if tk.limited {
			if d := b[0] - cur.RemainQuota; d != byToken[tk.tok.ID] {
				t.Errorf("token %s: remain moved by %d, the logs say %d", tk.tok.Name, d, byToken[tk.tok.ID])
			}
			if cur.RemainQuota < 0 {
				t.Errorf("token %s: remain %d below zero", tk.tok.Name, cur.RemainQuota)
			}
			// Nothing is still held on the token: all it shows can be
			// reserved (alice can cover it).
			if cur.RemainQuota > 0 && tk.user == "alice" {
				r, err := g.st.Reserve(fixture.IDs["alice"], tk.tok.ID, cur.RemainQuota)
				if err != nil {
					t.Errorf("token %s: its remain %d cannot be reserved: %v (a hold was left)", tk.tok.Name, cur.RemainQuota, err)
				} else {
					g.st.Refund(r)
				}
			}
		}
	}
	var sum, total int64
	for i, c := range channels {
		cur, err := g.st.Channel(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cur.UsedQuota - before.channels[i]; d != byChannel[c.ID] {
			t.Errorf("channel %d: used moved by %d, the logs say %d", i, d, byChannel[c.ID])
		}
		sum += byChannel[c.ID]
	}
	for _, v := range byUser {
		total += v
	}
	if sum != total {
		t.Errorf("logs on the channels sum to %d, on the users %d", sum, total)
	}

	// The file holds what memory showed: nothing is left only in memory.
	live := readPropBooks(t, g.st, tokens, channels)
	path := g.st.Path()
	if err := g.st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if file := readPropBooks(t, st, tokens, channels); fmt.Sprint(file) != fmt.Sprint(live) {
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

// propTally counts how a property test's calls ended, for the record of a
// seed.
type propTally struct {
	ok, failed, refused int
	codes               map[string]int
}

func (c *propTally) add(o propOutcome) {
	if c.codes == nil {
		c.codes = map[string]int{}
	}
	c.codes[strconv.Itoa(o.status)+" "+o.code]++
	switch {
	case o.status == 200:
		c.ok++
	case o.code == "insufficient_user_quota" || o.code == "insufficient_token_quota" || o.code == "invalid_token":
		c.refused++
	case o.status != 0:
		c.failed++
	}
}

func (c *propTally) String() string {
	return fmt.Sprintf("%d answered, %d failed, %d refused for quota", c.ok, c.failed, c.refused)
}
