package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gateway/store"
)

// TestCrash_MixedWork runs the real binary under every kind of write at
// once — relay calls (streams and not, through API keys and the
// playground, some failing upstream), the log indexer, clears of old logs,
// backups, token creates, edits and deletes, redemption codes made, edited,
// disabled and redeemed, administrators' quota changes and channel edits —
// and kills it with SIGKILL at a random moment, three times in a row on the
// same file (each time also twice more while it starts), then stops it
// cleanly under the same load. After each stop it checks:
//
//   - the file, and the backup taken in that life, open and every index and
//     row counter agrees with a scan of the records (store.CheckFile);
//   - every call whose client saw a complete answer has exactly one consume
//     log, a call answered with an error none; logs of calls no client saw
//     complete are no more than the calls cut;
//   - the log pages' totals and sums by user, type, channel, model and
//     token name are those of the logs listed;
//   - every user's, token's and channel's used quota, and every user's
//     request count and dashboard rows, are those of their consume logs
//     since the test began (the test keeps each log it read before a
//     clear); in the backup, the users' records agree with their dashboard
//     rows;
//   - a user's quota plus used quota is what the credits the client saw
//     made it (a change the kill cut counts as either), and a limited
//     token's remaining plus used quota (an unlimited token's remaining
//     quota) is what its last answer showed;
//   - a redemption code is either used, with its quota credited and one
//     top-up log, or not, with neither.
//
// GATEWAY_CRASH_SEED=n runs seed n alone.
func TestCrash_MixedWork(t *testing.T) {
	_, bin := buildGateway(t)
	seeds := []uint64{1, 2}
	if v := os.Getenv("GATEWAY_CRASH_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seeds = []uint64{n}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { runMixedCrash(t, bin, seed, 3) })
	}
}

// mixed is the test's record of everything its clients saw.
type mixed struct {
	t    *testing.T
	dir  string
	bin  string
	data string
	gw   *gatewayProc
	root *console

	mu       sync.Mutex
	users    []*mxUser
	tokens   map[uint64]*mxToken
	codes    []*mxCode
	calls    []*mxCall
	channels map[string]uint64 // by name
	logs     map[uint64]mxLog  // every log read, cleared ones included
	httpc    *http.Client      // the relay clients'
	killed   atomic.Bool
	stopped  chan struct{}
	life     int
}

type mxUser struct {
	id   uint64
	name string
	c    *console
	// credits is what the user's quota + used quota must be: every credit
	// whose answer the client saw. pending is a credit sent when the kill
	// came (at most one administrator's change a user at a time).
	credits    int64
	pending    *int64
	pendingSet bool // the pending change sets the quota (to what, the answer would have told)
	manages    int  // administrators' changes made (type-3 logs)
	creditMu   sync.Mutex
}

type mxToken struct {
	id, user  uint64
	key       string
	name      string
	unlimited bool
	// base is remain + used of a limited token, remain of an unlimited
	// one, as the last answer showed; unsure when an edit was cut.
	base    int64
	unsure  bool
	deleted bool // the client saw it deleted
}

type mxCode struct {
	id    uint64
	key   string
	quota int64
	user  uint64
	// sent: a redeem was sent; seen: its success came back.
	sent, seen bool
}

type mxCall struct {
	stream   bool
	model    string
	token    uint64
	user     uint64
	id       string
	status   int
	complete bool // the whole answer came
	refused  bool // an error answer came whole
	msg      string
	life     int
}

type mxLog struct {
	ID        uint64 `json:"id"`
	UserID    uint64 `json:"user_id"`
	CreatedAt int64  `json:"created_at"`
	Type      int    `json:"type"`
	Content   string `json:"content"`
	TokenID   uint64 `json:"token_id"`
	TokenName string `json:"token_name"`
	ModelName string `json:"model_name"`
	Channel   uint64 `json:"channel"`
	Quota     int64  `json:"quota"`
	Other     string `json:"other"`
}

func (l mxLog) requestID() string {
	var o struct {
		RequestID string `json:"request_id"`
	}
	_ = json.Unmarshal([]byte(l.Other), &o)
	return o.RequestID
}

func runMixedCrash(t *testing.T, bin string, seed uint64, kills int) {
	dir := t.TempDir()
	m := &mixed{t: t, dir: dir, bin: bin, data: filepath.Join(dir, "g.db"), tokens: map[uint64]*mxToken{},
		channels: map[string]uint64{}, logs: map[uint64]mxLog{}}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	up := mixedUpstream(t)

	m.start()
	m.setup(up.URL)
	for life := 1; life <= kills; life++ {
		m.life = life
		m.load(rng, time.Duration(700+rng.IntN(900))*time.Millisecond, func() { m.gw.kill(t) })
		if err := store.CheckFile(m.data); err != nil {
			t.Fatalf("life %d, after the kill: %v", life, err)
		}
		m.checkBackup()
		m.killDuringStart(rng)
		m.start()
		m.check(fmt.Sprintf("after kill %d", life))
		if t.Failed() {
			return
		}
	}
	// A clean stop under the same load: the requests under way finish
	// (and are charged) before the file closes, and the free-page list is
	// written. The file must check and open as well.
	m.life++
	m.load(rng, time.Duration(700+rng.IntN(900))*time.Millisecond, func() {
		if err := m.gw.proc.Signal(os.Interrupt); err != nil {
			t.Error(err)
		}
		// The stop waits for the requests under way; a connection a
		// client opened but sent nothing on yet holds it for 5 s (Go's
		// http.Server): the clients close those.
		deadline := time.After(40 * time.Second)
		for {
			m.closeIdle()
			select {
			case <-m.gw.exited:
				return
			case <-deadline:
				t.Error("no clean stop in 40 s")
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
	if err := store.CheckFile(m.data); err != nil {
		t.Fatalf("after the clean stop: %v", err)
	}
	m.checkBackup()
	m.start()
	m.check("after the clean stop")
	m.gw.kill(t)
}

// killDuringStart starts the gateway and kills it while it opens the file,
// indexes what the last life left waiting and starts serving, twice; the
// file must check after each.
func (m *mixed) killDuringStart(rng *rand.Rand) {
	for i := range 2 {
		ln := testListener(m.t)
		addr := ln.Addr().String()
		ln.Close()
		cmd := exec.Command(m.bin, "--addr", addr, "--data", m.data, "--log-level", "warn")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			m.t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if err := store.CheckFile(m.data); err != nil {
			m.t.Fatalf("life %d, killed while starting (%d): %v\n%s", m.life, i, err, out.String())
		}
	}
}

// start starts the gateway on the data file and logs root in.
func (m *mixed) start() {
	m.t.Helper()
	m.gw = startGateway(m.t, m.bin, m.data, filepath.Join(m.dir, fmt.Sprintf("run%d.log", m.life)))
	if m.root == nil {
		m.root = m.gw.login(m.t)
	}
	// Sessions live in the file: the consoles' cookies still work.
	m.root.base = m.gw.base
	for _, u := range m.users {
		u.c.base = m.gw.base
	}
}

// setup makes the channels, users and first tokens.
func (m *mixed) setup(upstream string) {
	t := m.t
	for _, ch := range []struct{ name, models string }{{"good-a", "gpt-4o-mini"}, {"good-b", "gpt-4o-mini"}, {"flaky", "gpt-3.5-turbo"}} {
		var made []struct {
			ID   uint64 `json:"id"`
			Name string `json:"name"`
		}
		m.root.mustPost(t, "/api/channel/", map[string]any{
			"type": 1, "name": ch.name, "key": "sk-crash-upstream", "base_url": upstream,
			"models": ch.models, "group": "default",
		}, &made)
		if len(made) != 1 {
			t.Fatalf("channel create answered %v", made)
		}
		m.channels[ch.name] = made[0].ID
	}
	for i := range 3 {
		name := fmt.Sprintf("mx%d", i+1)
		var u struct {
			ID uint64 `json:"id"`
		}
		m.root.mustPost(t, "/api/user/", map[string]any{"username": name, "password": "password-123", "display_name": name}, &u)
		mu := &mxUser{id: u.ID, name: name, c: m.gw.loginAs(t, name, "password-123")}
		m.root.do(t, http.MethodPut, "/api/user/", map[string]any{"id": u.ID, "add_quota": 20_000_000}, nil)
		mu.credits, mu.manages = 20_000_000, 1
		m.users = append(m.users, mu)
		for _, tk := range []struct {
			name      string
			unlimited bool
			remain    int64
		}{{"unl", true, 0}, {"lim", false, 5_000_000}, {"tiny", false, 120}} {
			var tok mxTokenView
			mu.c.mustPost(t, "/api/token/", map[string]any{"name": tk.name, "unlimited_quota": tk.unlimited, "remain_quota": tk.remain, "expired_time": -1}, &tok)
			m.tokens[tok.ID] = tok.record(mu.id)
		}
	}
}

type mxTokenView struct {
	ID             uint64 `json:"id"`
	UserID         uint64 `json:"user_id"`
	Key            string `json:"key"`
	Name           string `json:"name"`
	RemainQuota    int64  `json:"remain_quota"`
	UsedQuota      int64  `json:"used_quota"`
	UnlimitedQuota bool   `json:"unlimited_quota"`
}

func (v mxTokenView) baseValue() int64 {
	if v.UnlimitedQuota {
		return v.RemainQuota
	}
	return v.RemainQuota + v.UsedQuota
}

func (v mxTokenView) record(user uint64) *mxToken {
	return &mxToken{id: v.ID, user: user, key: v.Key, name: v.Name, unlimited: v.UnlimitedQuota, base: v.baseValue()}
}

// load runs every worker until stop (the kill, or a clean stop), which
// comes after d.
func (m *mixed) load(rng *rand.Rand, d time.Duration, stop func()) {
	m.killed.Store(false)
	m.stopped = make(chan struct{})
	var wg sync.WaitGroup
	seeds := make([]uint64, 16)
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 30 * time.Second}
	m.httpc = httpc
	for i := range 8 {
		r := rand.New(rand.NewPCG(seeds[i], 1))
		wg.Go(func() { m.relayWorker(r, httpc) })
	}
	for i, w := range []func(*rand.Rand){m.tokenWorker, m.codeWorker, m.quotaWorker, m.channelWorker, m.clearWorker, m.backupWorker} {
		r := rand.New(rand.NewPCG(seeds[8+i], 2))
		wg.Go(func() { w(r) })
	}
	time.Sleep(d)
	m.killed.Store(true)
	close(m.stopped)
	stop()
	wg.Wait()
	httpc.CloseIdleConnections()
}

// closeIdle closes the clients' idle connections.
func (m *mixed) closeIdle() {
	m.httpc.CloseIdleConnections()
	m.root.client.CloseIdleConnections()
	for _, u := range m.users {
		u.c.client.CloseIdleConnections()
	}
}

// pause waits d, or less when the kill came.
func (m *mixed) pause(d time.Duration) bool {
	select {
	case <-m.stopped:
		return false
	case <-time.After(d):
		return true
	}
}

// failed reports an error a worker got before the kill.
func (m *mixed) failed(what string, err error) {
	if !m.killed.Load() {
		m.t.Errorf("life %d: %s: %v", m.life, what, err)
	}
}

func (m *mixed) relayWorker(r *rand.Rand, httpc *http.Client) {
	for !m.killed.Load() {
		m.mu.Lock()
		var live []*mxToken
		for _, tk := range m.tokens {
			if !tk.deleted && tk.key != "" {
				live = append(live, tk)
			}
		}
		if len(live) == 0 {
			m.mu.Unlock()
			return
		}
		tk := live[r.IntN(len(live))]
		c := &mxCall{stream: r.IntN(2) == 0, model: "gpt-4o-mini", token: tk.id, user: tk.user, life: m.life}
		if r.IntN(5) == 0 {
			c.model = "gpt-3.5-turbo"
		}
		var pg *console
		if r.IntN(10) == 0 {
			// The playground: the user's session pays, no token.
			u := m.users[r.IntN(len(m.users))]
			c.token, c.user, pg = 0, u.id, u.c
		}
		m.calls = append(m.calls, c)
		key := tk.key
		m.mu.Unlock()
		// An error is a call cut: by the kill, or by the gateway when the
		// upstream cut its stream.
		if pg != nil {
			_ = c.runPlayground(pg)
		} else {
			_ = c.run(httpc, m.gw.base, key)
		}
	}
}

func (c *mxCall) body() string { return chatCallBody(c.model, c.stream) }

// run makes the call with an API key and records what came back.
func (c *mxCall) run(client *http.Client, base, key string) error {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(c.body()))
	req.Header.Set("Authorization", "Bearer sk-"+key)
	req.Header.Set("Content-Type", "application/json")
	return c.read(client.Do(req))
}

// runPlayground makes the call in a user's playground.
func (c *mxCall) runPlayground(con *console) error {
	req, _ := http.NewRequest(http.MethodPost, con.base+"/pg/chat/completions", strings.NewReader(c.body()))
	req.Header.Set("New-Api-User", fmt.Sprint(con.userID))
	req.Header.Set("Content-Type", "application/json")
	return c.read(con.client.Do(req))
}

// read reads an answer and records what came back.
func (c *mxCall) read(resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	c.id = resp.Header.Get("X-Oneapi-Request-Id")
	c.status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			return err
		}
		c.refused = true
		c.msg = e.Error.Message
		if len(c.msg) > 40 {
			c.msg = c.msg[:40]
		}
		return nil
	}
	if err := readChatAnswer(resp.Body, c.stream); err != nil {
		return err
	}
	c.complete = true
	return nil
}

// tokenWorker creates, edits and deletes tokens of every user.
func (m *mixed) tokenWorker(r *rand.Rand) {
	for i := 0; m.pause(time.Duration(10+r.IntN(30)) * time.Millisecond); i++ {
		u := m.users[r.IntN(len(m.users))]
		m.mu.Lock()
		var own []*mxToken
		for _, tk := range m.tokens {
			if tk.user == u.id && !tk.deleted {
				own = append(own, tk)
			}
		}
		m.mu.Unlock()
		switch op := r.IntN(3); {
		case op == 0 || len(own) < 3:
			unlimited := r.IntN(2) == 0
			remain := int64(1000 + r.IntN(3_000_000))
			var v mxTokenView
			cut, err := u.c.try(http.MethodPost, "/api/token/", map[string]any{"name": fmt.Sprintf("t%d-%d", m.life, i),
				"unlimited_quota": unlimited, "remain_quota": remain, "expired_time": -1}, &v)
			if err != nil {
				if !cut {
					m.failed("token create", err)
				}
				continue // a token made unseen is found by the check
			}
			m.mu.Lock()
			m.tokens[v.ID] = v.record(u.id)
			m.mu.Unlock()
		case op == 1:
			tk := own[r.IntN(len(own))]
			name := fmt.Sprintf("e%d-%d", m.life, i)
			remain := int64(1000 + r.IntN(3_000_000))
			m.mu.Lock()
			tk.unsure = true
			m.mu.Unlock()
			var v mxTokenView
			cut, err := u.c.try(http.MethodPut, "/api/token/", map[string]any{"id": tk.id, "name": name, "remain_quota": remain,
				"unlimited_quota": tk.unlimited, "expired_time": -1}, &v)
			if err != nil {
				if !cut {
					m.failed("token edit", err)
				}
				continue
			}
			m.mu.Lock()
			tk.unsure, tk.name, tk.base = false, v.Name, v.baseValue()
			m.mu.Unlock()
		default:
			tk := own[r.IntN(len(own))]
			m.mu.Lock()
			tk.unsure = true
			m.mu.Unlock()
			cut, err := u.c.try(http.MethodDelete, fmt.Sprintf("/api/token/%d", tk.id), nil, nil)
			if err != nil {
				if !cut {
					m.failed("token delete", err)
				}
				continue
			}
			m.mu.Lock()
			tk.deleted = true
			m.mu.Unlock()
		}
	}
}

// codeWorker makes redemption codes and has users redeem them.
func (m *mixed) codeWorker(r *rand.Rand) {
	for i := 0; m.pause(time.Duration(10+r.IntN(30)) * time.Millisecond); i++ {
		name := fmt.Sprintf("c%d-%dx", m.life, i)
		quota := int64(1000 + r.IntN(100_000))
		var keys []string
		cut, err := m.root.try(http.MethodPost, "/api/redemption/", map[string]any{"name": name, "quota": quota, "count": 1}, &keys)
		if err != nil {
			if !cut {
				m.failed("redemption create", err)
			}
			continue // a code made unseen is never redeemed
		}
		var found []struct {
			ID  uint64 `json:"id"`
			Key string `json:"key"`
		}
		if cut, err := m.root.try(http.MethodGet, "/api/redemption/search?keyword="+name, nil, &found); err != nil || len(found) != 1 || found[0].Key != keys[0] {
			if !cut {
				m.failed("redemption search", fmt.Errorf("%v: %v", err, found))
			}
			continue
		}
		u := m.users[r.IntN(len(m.users))]
		code := &mxCode{id: found[0].ID, key: keys[0], quota: quota, user: u.id, sent: true}
		m.mu.Lock()
		m.codes = append(m.codes, code)
		m.mu.Unlock()
		switch r.IntN(6) {
		case 0:
			// A new quota before it is redeemed (an edit the kill cuts
			// leaves the code unredeemed).
			quota = int64(1000 + r.IntN(100_000))
			var v struct {
				Quota int64 `json:"quota"`
			}
			if cut, err := m.root.try(http.MethodPut, "/api/redemption/", map[string]any{"id": code.id, "name": name, "quota": quota}, &v); err != nil || v.Quota != quota {
				if !cut {
					m.failed("redemption edit", fmt.Errorf("%v: %d", err, v.Quota))
				}
				continue
			}
			m.mu.Lock()
			code.quota = quota
			m.mu.Unlock()
		case 1:
			// A disabled code is refused.
			if cut, err := m.root.try(http.MethodPut, "/api/redemption/?status_only=1", map[string]any{"id": code.id, "status": 2}, nil); err != nil {
				if !cut {
					m.failed("redemption disable", err)
				}
				continue
			}
			if cut, err := u.c.try(http.MethodPost, "/api/user/topup", map[string]any{"key": code.key}, nil); err == nil {
				m.t.Errorf("a disabled code was redeemed")
			} else if cut {
				continue
			}
			continue
		}
		var got int64
		u.creditMu.Lock()
		cut, err = u.c.try(http.MethodPost, "/api/user/topup", map[string]any{"key": code.key}, &got)
		u.creditMu.Unlock()
		if err != nil {
			if !cut {
				m.failed("redeem", err)
			}
			continue
		}
		if got != quota {
			m.t.Errorf("redeem of %d added %d", quota, got)
		}
		m.mu.Lock()
		code.seen = true
		u.credits += quota
		m.mu.Unlock()
	}
}

// quotaWorker has the administrator add to and take from users' quota.
func (m *mixed) quotaWorker(r *rand.Rand) {
	for m.pause(time.Duration(10+r.IntN(30)) * time.Millisecond) {
		u := m.users[r.IntN(len(m.users))]
		body := map[string]any{"id": u.id}
		// Mostly an addition; sometimes the quota is set, which the
		// answer shows (the user's credits are held meanwhile, so that it
		// shows this change alone).
		set := r.IntN(3) == 0
		var add int64
		if set {
			body["quota"] = int64(1_000_000 + r.IntN(30_000_000))
		} else {
			add = int64(r.IntN(2_000_000) - 500_000)
			if add == 0 {
				add = 1
			}
			body["add_quota"] = add
		}
		u.creditMu.Lock()
		m.mu.Lock()
		u.pending, u.pendingSet = &add, set
		m.mu.Unlock()
		var v struct {
			Quota     int64 `json:"quota"`
			UsedQuota int64 `json:"used_quota"`
		}
		cut, err := m.root.try(http.MethodPut, "/api/user/", body, &v)
		u.creditMu.Unlock()
		if err != nil {
			if cut {
				return // the kill: the change stays pending
			}
			m.failed("quota change", err)
			m.mu.Lock()
			u.pending = nil
			m.mu.Unlock()
			continue
		}
		m.mu.Lock()
		u.pending = nil
		if set {
			u.credits = v.Quota + v.UsedQuota
		} else {
			u.credits += add
		}
		u.manages++
		m.mu.Unlock()
	}
}

// channelWorker edits the channels: weights, priorities, names, models and
// the second channel's status.
func (m *mixed) channelWorker(r *rand.Rand) {
	for i := 0; m.pause(time.Duration(20+r.IntN(40)) * time.Millisecond); i++ {
		body := map[string]any{"weight": r.IntN(10), "priority": 0}
		switch r.IntN(3) {
		case 0:
			body["id"] = m.channels["good-a"]
			body["name"] = fmt.Sprintf("good-a-%d", i)
		case 1:
			body["id"] = m.channels["good-b"]
			body["status"] = 1 + r.IntN(2)
			if r.IntN(2) == 0 {
				body["models"] = "gpt-4o-mini,extra-model"
			} else {
				body["models"] = "gpt-4o-mini"
			}
		default:
			body["id"] = m.channels["flaky"]
			body["weight"] = r.IntN(5)
		}
		if cut, err := m.root.try(http.MethodPut, "/api/channel/", body, nil); err != nil && !cut {
			m.failed("channel edit", err)
		}
	}
}

// clearWorker clears the logs older than two seconds, having read them
// first (the test keeps what it read).
func (m *mixed) clearWorker(r *rand.Rand) {
	var last int64
	for m.pause(time.Duration(200+r.IntN(300)) * time.Millisecond) {
		target := time.Now().Unix() - 2
		if target <= last {
			continue
		}
		logs, err := m.readLogs(m.root, target-1)
		if err != nil {
			m.failed("logs before a clear", err)
			return
		}
		m.mu.Lock()
		for _, l := range logs {
			m.logs[l.ID] = l
		}
		m.mu.Unlock()
		if cut, err := m.root.try(http.MethodDelete, fmt.Sprintf("/api/log/?target_timestamp=%d", target), nil, nil); err != nil {
			if !cut {
				m.failed("log clear", err)
			}
			return
		}
		last = target
	}
}

// backupWorker downloads a backup once in the life, at a random moment.
func (m *mixed) backupWorker(r *rand.Rand) {
	if !m.pause(time.Duration(r.IntN(600)) * time.Millisecond) {
		return
	}
	req, _ := http.NewRequest(http.MethodGet, m.root.base+"/api/backup", nil)
	req.Header.Set("New-Api-User", fmt.Sprint(m.root.userID))
	resp, err := m.root.client.Do(req)
	if err != nil {
		m.failed("backup", err)
		return
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		m.failed("backup", fmt.Errorf("%d, %v", resp.StatusCode, err))
		return
	}
	if err := os.WriteFile(m.backupPath(), data, 0o600); err != nil {
		m.t.Error(err)
	}
}

func (m *mixed) backupPath() string { return filepath.Join(m.dir, fmt.Sprintf("backup%d.db", m.life)) }

// checkBackup checks the life's backup, when one came whole: its indexes
// and counters agree with its records, the gateway opens it, and its
// users' used quota and request counts are those of their dashboard rows,
// which every charge writes with them.
func (m *mixed) checkBackup() {
	t := m.t
	path := m.backupPath()
	if _, err := os.Stat(path); err != nil {
		t.Logf("life %d: no backup", m.life)
		return
	}
	if err := store.CheckFile(path); err != nil {
		t.Errorf("backup of life %d: %v", m.life, err)
		return
	}
	gw := startGateway(t, m.bin, path, filepath.Join(m.dir, fmt.Sprintf("backup%d.log", m.life)))
	defer gw.kill(t)
	root := gw.login(t)
	for _, u := range m.users {
		var v struct {
			UsedQuota    int64 `json:"used_quota"`
			RequestCount int64 `json:"request_count"`
		}
		root.do(t, http.MethodGet, fmt.Sprintf("/api/user/%d", u.id), nil, &v)
		var rows []struct {
			Count int64 `json:"count"`
			Quota int64 `json:"quota"`
		}
		root.do(t, http.MethodGet, fmt.Sprintf("/api/data/?username=%s&start_timestamp=1&end_timestamp=%d", u.name, time.Now().Unix()+7200), nil, &rows)
		var dq, dc int64
		for _, r := range rows {
			dq, dc = dq+r.Quota, dc+r.Count
		}
		if dq != v.UsedQuota || dc != v.RequestCount {
			t.Errorf("backup of life %d: user %s: dashboard rows count %d calls for %d, the user record %d for %d", m.life, u.name, dc, dq, v.RequestCount, v.UsedQuota)
		}
	}
}

// readLogs reads every log (up to end, when it is not 0), page by page.
func (m *mixed) readLogs(c *console, end int64) ([]mxLog, error) {
	var all []mxLog
	q := ""
	if end > 0 {
		q = fmt.Sprintf("&end_timestamp=%d", end)
	}
	for p := 1; ; p++ {
		var page struct {
			Items []mxLog `json:"items"`
			Total int     `json:"total"`
		}
		if _, err := c.try(http.MethodGet, fmt.Sprintf("/api/log/?p=%d&page_size=1000%s", p, q), nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if len(page.Items) == 0 || len(all) >= page.Total {
			return all, nil
		}
	}
}

// check compares what the restarted gateway shows with what the clients saw.
func (m *mixed) check(state string) {
	t := m.t
	t.Helper()
	errorf := func(format string, a ...any) { t.Errorf(state+": "+format, a...) }
	logs, err := m.readLogs(m.root, 0)
	if err != nil {
		t.Fatalf("%s: %v", state, err)
	}
	for _, l := range logs {
		m.logs[l.ID] = l
	}

	// Calls.
	byReq := map[string]int{}
	usedBy := map[string]int64{} // "u"/"t"/"c" + id
	countBy := map[uint64]int64{}
	manages := map[uint64]int{}
	topups := map[string][]mxLog{} // by code id
	for _, l := range m.logs {
		switch l.Type {
		case 2:
			byReq[l.requestID()]++
			usedBy[fmt.Sprint("u", l.UserID)] += l.Quota
			usedBy[fmt.Sprint("t", l.TokenID)] += l.Quota
			usedBy[fmt.Sprint("c", l.Channel)] += l.Quota
			countBy[l.UserID]++
		case 3:
			manages[l.UserID]++
		case 1:
			if _, id, ok := strings.Cut(l.Content, "兑换码ID "); ok {
				topups[id] = append(topups[id], l)
			}
		}
	}
	for id, n := range byReq {
		if n > 1 {
			errorf("request %s has %d consume logs", id, n)
		}
	}
	byCall := map[string]*mxCall{}
	var cut, cutNoID, complete, refused int
	statuses := map[string]int{}
	for _, c := range m.calls {
		if c.id != "" {
			byCall[c.id] = c
		}
		switch {
		case c.complete:
			complete++
			if byReq[c.id] != 1 {
				errorf("completed call %s (stream %v, %s, life %d) has %d consume logs", c.id, c.stream, c.model, c.life, byReq[c.id])
			}
		case c.refused:
			refused++
			statuses[fmt.Sprintf("%d %s %s", c.status, c.model, c.msg)]++
			if byReq[c.id] != 0 {
				errorf("call %s answered %d (%s, life %d) has %d consume logs", c.id, c.status, c.model, c.life, byReq[c.id])
			}
		default:
			cut++
			if c.id == "" {
				cutNoID++
			}
		}
	}
	orphans, unknown := 0, 0
	for id := range byReq {
		c := byCall[id]
		if c == nil {
			unknown++
		}
		if c == nil || !c.complete {
			orphans++
		}
	}
	if unknown > cutNoID {
		errorf("%d consume logs have request ids no client saw, but only %d calls were cut before their headers", unknown, cutNoID)
	}
	if orphans > cut {
		errorf("%d consume logs belong to no completed call, but only %d calls were cut", orphans, cut)
	}
	if complete == 0 {
		errorf("no call completed")
	}

	m.checkFilters(errorf, logs)

	// Users.
	for _, u := range m.users {
		var v struct {
			Quota        int64 `json:"quota"`
			UsedQuota    int64 `json:"used_quota"`
			RequestCount int64 `json:"request_count"`
		}
		m.root.do(t, http.MethodGet, fmt.Sprintf("/api/user/%d", u.id), nil, &v)
		if want := usedBy[fmt.Sprint("u", u.id)]; v.UsedQuota != want {
			errorf("user %s: used_quota %d, its consume logs sum to %d", u.name, v.UsedQuota, want)
		}
		if v.RequestCount != countBy[u.id] {
			errorf("user %s: request_count %d, consume logs %d", u.name, v.RequestCount, countBy[u.id])
		}
		var rows []struct {
			Count int64 `json:"count"`
			Quota int64 `json:"quota"`
		}
		m.root.do(t, http.MethodGet, fmt.Sprintf("/api/data/?username=%s&start_timestamp=1&end_timestamp=%d", u.name, time.Now().Unix()+7200), nil, &rows)
		var dq, dc int64
		for _, r := range rows {
			dq, dc = dq+r.Quota, dc+r.Count
		}
		if dq != v.UsedQuota || dc != v.RequestCount {
			errorf("user %s: dashboard rows count %d calls for %d, the user record %d for %d", u.name, dc, dq, v.RequestCount, v.UsedQuota)
		}
		// Credits: the codes sent to the user, and a cut administrator's
		// change, count if the file has them.
		want := u.credits
		for _, c := range m.codes {
			if c.user != u.id {
				continue
			}
			var rd struct {
				Status     int    `json:"status"`
				UsedUserID uint64 `json:"used_user_id"`
			}
			m.root.do(t, http.MethodGet, fmt.Sprintf("/api/redemption/%d", c.id), nil, &rd)
			n := len(topups[fmt.Sprint(c.id)])
			switch {
			case rd.Status == 3:
				if rd.UsedUserID != u.id || n != 1 {
					errorf("code %d used by %d with %d top-up logs (redeemed by %d)", c.id, rd.UsedUserID, n, u.id)
				}
				if !c.seen {
					want += c.quota // cut by the kill after its commit
					c.seen = true
				}
			case rd.Status == 1 || rd.Status == 2:
				if c.seen || n != 0 {
					errorf("code %d unused (status %d, its redeem seen: %v) with %d top-up logs", c.id, rd.Status, c.seen, n)
				}
				c.sent = false
			default:
				errorf("code %d has status %d", c.id, rd.Status)
			}
		}
		got := v.Quota + v.UsedQuota
		wantManages := u.manages
		switch {
		case u.pending != nil && u.pendingSet && manages[u.id] == wantManages+1:
			// A quota set that the file has: it shows what it set.
			want = got
			wantManages++
		case u.pending != nil && !u.pendingSet && got == want+*u.pending:
			want += *u.pending
			wantManages++
		}
		if got != want {
			pend := "none"
			if u.pending != nil {
				pend = fmt.Sprint(*u.pending)
			}
			errorf("user %s: quota %d + used %d = %d, the credits seen make %d (a change cut by the kill: %s)", u.name, v.Quota, v.UsedQuota, got, want, pend)
		}
		if manages[u.id] != wantManages {
			errorf("user %s: %d administrator's change logs, %d changes made", u.name, manages[u.id], wantManages)
		}
		u.credits, u.manages, u.pending = got, manages[u.id], nil

		// Tokens.
		var list []mxTokenView
		u.c.do(t, http.MethodGet, "/api/token/?p=0&size=100", nil, &list)
		listed := map[uint64]bool{}
		for _, v := range list {
			listed[v.ID] = true
			tk := m.tokens[v.ID]
			if tk == nil {
				// Made by a create the kill cut.
				tk = v.record(u.id)
				m.tokens[v.ID] = tk
			}
			if tk.deleted {
				errorf("token %d was deleted but is listed", v.ID)
			}
			if want := usedBy[fmt.Sprint("t", v.ID)]; v.UsedQuota != want {
				errorf("token %d (%s): used_quota %d, its consume logs sum to %d", v.ID, v.Name, v.UsedQuota, want)
			}
			if !tk.unsure && v.baseValue() != tk.base {
				errorf("token %d (%s, unlimited %v): remain %d used %d, the last answer made it %d", v.ID, v.Name, v.UnlimitedQuota, v.RemainQuota, v.UsedQuota, tk.base)
			}
			if !tk.unsure && v.Name != tk.name {
				errorf("token %d: name %q, the last answer %q", v.ID, v.Name, tk.name)
			}
			tk.unsure, tk.base, tk.name = false, v.baseValue(), v.Name
		}
		for _, tk := range m.tokens {
			if tk.user == u.id && !listed[tk.id] && !tk.deleted {
				if !tk.unsure {
					errorf("token %d is gone", tk.id)
				}
				tk.deleted = true // a delete the kill cut
			}
		}
	}

	// Channels.
	for name, id := range m.channels {
		var ch struct {
			UsedQuota int64 `json:"used_quota"`
		}
		m.root.do(t, http.MethodGet, fmt.Sprintf("/api/channel/%d", id), nil, &ch)
		if want := usedBy[fmt.Sprint("c", id)]; ch.UsedQuota != want {
			errorf("channel %s: used_quota %d, its consume logs sum to %d", name, ch.UsedQuota, want)
		}
	}
	t.Logf("%s: %d calls (%d complete, %d refused, %d cut), %d logs read (%d listed now), %d codes, %d tokens; refusals %v",
		state, len(m.calls), complete, refused, cut, len(m.logs), len(logs), len(m.codes), len(m.tokens), statuses)
}

// checkFilters compares the log pages' totals and quota sums for each
// user, token name, channel, model and type, which the gateway reads from
// its indexes and row counters, with the logs listed now.
func (m *mixed) checkFilters(errorf func(string, ...any), logs []mxLog) {
	type want struct {
		n     int
		quota int64
	}
	wants := map[string]*want{"": {}}
	add := func(q string, l mxLog) {
		w := wants[q]
		if w == nil {
			w = &want{}
			wants[q] = w
		}
		w.n++
		if l.Type == 2 {
			w.quota += l.Quota
		}
	}
	names := map[uint64]string{}
	for _, u := range m.users {
		names[u.id] = u.name
	}
	for _, l := range logs {
		add("", l)
		add(fmt.Sprintf("type=%d", l.Type), l)
		if n := names[l.UserID]; n != "" {
			add("username="+n, l)
			add(fmt.Sprintf("username=%s&type=%d", n, l.Type), l)
		}
		if l.Channel != 0 {
			add(fmt.Sprintf("channel=%d", l.Channel), l)
		}
		if l.ModelName != "" {
			add("model_name="+l.ModelName, l)
		}
		if l.TokenName != "" {
			add("token_name="+url.QueryEscape(l.TokenName), l)
		}
	}
	for q, w := range wants {
		var page struct {
			Total int `json:"total"`
		}
		if _, err := m.root.try(http.MethodGet, "/api/log/?p=1&page_size=1&"+q, nil, &page); err != nil {
			errorf("%v", err)
			continue
		}
		if page.Total != w.n {
			errorf("logs with %q: total %d, %d listed", q, page.Total, w.n)
		}
		var stat struct {
			Quota int64 `json:"quota"`
		}
		if _, err := m.root.try(http.MethodGet, "/api/log/stat?"+q, nil, &stat); err != nil {
			errorf("%v", err)
			continue
		}
		// The stat ignores the type (S §8): it sums consume logs.
		sq := q
		if i := strings.Index(sq, "type="); i >= 0 {
			sq = strings.TrimSuffix(sq[:i], "&")
		}
		if stat.Quota != wants[sq].quota {
			errorf("logs with %q: stat quota %d, the consume logs listed sum to %d", q, stat.Quota, wants[sq].quota)
		}
	}
}

// mixedUpstream is a fake provider: gpt-4o-mini answers; gpt-3.5-turbo
// (the flaky channel's model) fails every third call with a 500 and cuts
// every third stream after its first event.
func mixedUpstream(t *testing.T) *httptest.Server {
	var n atomic.Int64
	srv := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-crash-upstream" {
			http.Error(w, "unexpected", http.StatusNotFound)
			return
		}
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		k := n.Add(1)
		flaky := req.Model == "gpt-3.5-turbo"
		pause := func(d time.Duration) bool {
			select {
			case <-r.Context().Done():
				return false
			case <-time.After(d):
				return true
			}
		}
		if flaky && k%3 == 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"error":{"message":"upstream broke","type":"server_error"}}`)
			return
		}
		if !req.Stream {
			if !pause(15 * time.Millisecond) {
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"c","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"hello there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14}}`, req.Model)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for i, word := range []string{"hello", " there", " friend"} {
			if !pause(5 * time.Millisecond) {
				return
			}
			fmt.Fprintf(w, "data: {\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", req.Model, word)
			f.Flush()
			if flaky && k%3 == 1 && i == 0 {
				// Cut the stream: the connection closes mid-answer.
				if hj, ok := w.(http.Hijacker); ok {
					if conn, _, err := hj.Hijack(); err == nil {
						conn.Close()
					}
				}
				return
			}
		}
		fmt.Fprintf(w, "data: {\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"total_tokens\":15}}\n\ndata: [DONE]\n\n", req.Model)
		f.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv
}
