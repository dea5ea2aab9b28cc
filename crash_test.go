package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCrash_KillMidLoad runs the real binary under concurrent relay load
// (streams and not), kills it with SIGKILL, starts it again on the same data
// file, and checks the ledger against what the clients saw:
//
//   - every call whose client saw a complete answer has exactly one consume
//     log (matched by the X-Oneapi-Request-Id the gateway writes into
//     other.request_id);
//   - no request id is logged twice;
//   - the only logs without a completed client are calls that were in
//     flight at the kill, and there are no more of them than such calls;
//   - the user's used_quota equals the sum of the log quotas.
func TestCrash_KillMidLoad(t *testing.T) {
	dir, bin := buildGateway(t)
	up := crashUpstream(t)
	data := filepath.Join(dir, "g.db")

	gw := startGateway(t, bin, data, filepath.Join(dir, "run1.log"))
	root := gw.login(t)
	root.mustPost(t, "/api/channel/", map[string]any{
		"type": 1, "name": "fake", "key": "sk-crash-upstream", "base_url": up.URL,
		"models": "gpt-4o-mini", "group": "default",
	}, nil)
	var tok struct {
		Key string `json:"key"`
	}
	root.mustPost(t, "/api/token/", map[string]any{"name": "crash", "unlimited_quota": true, "expired_time": -1}, &tok)
	if tok.Key == "" {
		t.Fatal("token without a key")
	}
	key := "sk-" + strings.TrimPrefix(tok.Key, "sk-")

	// The load: 32 clients, each making one call after another until the
	// kill, alternating streams and plain calls.
	const clients = 32
	var (
		mu       sync.Mutex
		calls    []*crashCall
		killed   atomic.Bool
		wg       sync.WaitGroup
		complete atomic.Int64
	)
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: 30 * time.Second}
	for c := range clients {
		wg.Go(func() {
			for i := 0; !killed.Load(); i++ {
				call := &crashCall{stream: (c+i)%2 == 0}
				mu.Lock()
				calls = append(calls, call)
				mu.Unlock()
				err := call.run(httpc, gw.base, key)
				switch {
				case err == nil:
					complete.Add(1)
				case killed.Load():
					return // cut by the kill: in flight
				default:
					t.Errorf("call failed before the kill: %v", err)
					return
				}
			}
		})
	}
	// Let the load run about a second (and at least until every client
	// finished a call), then kill the process mid-flight.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) || complete.Load() < clients {
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatalf("only %d calls completed", complete.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	killed.Store(true)
	gw.kill(t)
	wg.Wait()
	httpc.CloseIdleConnections()

	// The second life, on the same file.
	gw = startGateway(t, bin, data, filepath.Join(dir, "run2.log"))
	root = gw.login(t)
	logs := root.consumeLogs(t)
	var self struct {
		UsedQuota    int64 `json:"used_quota"`
		RequestCount int64 `json:"request_count"`
	}
	root.mustGet(t, "/api/user/self", &self)

	byID := map[string]int{}
	var sum int64
	for _, l := range logs {
		var o struct {
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal([]byte(l.Other), &o); err != nil || o.RequestID == "" {
			t.Fatalf("log without a request id: %+v", l)
		}
		byID[o.RequestID]++
		sum += l.Quota
	}
	for id, n := range byID {
		if n > 1 {
			t.Errorf("request %s has %d logs", id, n)
		}
	}
	var done, inFlight, inFlightNoID int
	byCall := map[string]*crashCall{}
	for _, c := range calls {
		if c.id != "" {
			byCall[c.id] = c
		}
		if c.complete {
			done++
			if byID[c.id] != 1 {
				t.Errorf("completed call %s (stream %v) has %d logs", c.id, c.stream, byID[c.id])
			}
			continue
		}
		inFlight++
		if c.id == "" {
			inFlightNoID++ // cut before its headers came (a plain call writes them last)
		}
	}
	orphans, unknown := 0, 0
	for id := range byID {
		c := byCall[id]
		if c == nil {
			unknown++
		}
		if c == nil || !c.complete {
			orphans++
		}
	}
	// A logged call whose id no client saw can only be one cut before its
	// headers arrived.
	if unknown > inFlightNoID {
		t.Errorf("%d logs have ids no client saw, but only %d calls were cut before their headers", unknown, inFlightNoID)
	}
	t.Logf("calls %d: %d completed, %d in flight at the kill; logs %d (%d of calls not seen complete)", len(calls), done, inFlight, len(logs), orphans)
	if inFlight > clients {
		t.Errorf("%d calls in flight, more than %d clients", inFlight, clients)
	}
	if orphans > inFlight {
		t.Errorf("%d logs belong to no completed call, but only %d calls were in flight", orphans, inFlight)
	}
	if self.UsedQuota != sum {
		t.Errorf("used_quota after restart = %d, sum of logs = %d", self.UsedQuota, sum)
	}
	if self.RequestCount != int64(len(logs)) {
		t.Errorf("request_count after restart = %d, logs = %d", self.RequestCount, len(logs))
	}
	if done < clients {
		t.Errorf("only %d calls completed", done)
	}
}

// buildGateway builds the gateway binary into a temp dir, returned with
// the binary's path; a -short run skips the test.
func buildGateway(t *testing.T) (dir, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the gateway binary")
	}
	dir = t.TempDir()
	bin = filepath.Join(dir, "gw")
	build := exec.Command(goTool(t), "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir, bin
}

// goTool finds the go command that runs this test.
func goTool(t *testing.T) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Skip("no go command to build the binary")
	}
	return p
}

// crashUpstream is a fake provider with a small delay per call, so that a
// kill finds calls in flight.
func crashUpstream(t *testing.T) *httptest.Server {
	srv := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-crash-upstream" {
			t.Errorf("upstream got %s %s with %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
			http.Error(w, "unexpected", http.StatusNotFound)
			return
		}
		var req struct {
			Stream        bool `json:"stream"`
			StreamOptions struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("upstream body: %v", err)
		}
		pause := func(d time.Duration) bool {
			select {
			case <-r.Context().Done():
				return false
			case <-time.After(d):
				return true
			}
		}
		if !req.Stream {
			if !pause(20 * time.Millisecond) {
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"c","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hello there"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14}}`)
			return
		}
		if !req.StreamOptions.IncludeUsage {
			t.Errorf("stream without include_usage")
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for _, word := range []string{"hello", " there", " friend"} {
			if !pause(7 * time.Millisecond) {
				return
			}
			fmt.Fprintf(w, "data: {\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", word)
			f.Flush()
		}
		fmt.Fprint(w, "data: {\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"total_tokens\":15}}\n\ndata: [DONE]\n\n")
		f.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// testListener listens on a free loopback port: the kernel's choice, or
// one of the range GATEWAY_TEST_PORTS names ("57000-57999"), on machines
// where tests may use only some ports.
func testListener(t *testing.T) net.Listener {
	t.Helper()
	lo, hi, ok := strings.Cut(os.Getenv("GATEWAY_TEST_PORTS"), "-")
	if !ok {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return ln
	}
	first, err1 := strconv.Atoi(lo)
	last, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || first <= 0 || last < first {
		t.Fatalf("GATEWAY_TEST_PORTS=%q: want FIRST-LAST", os.Getenv("GATEWAY_TEST_PORTS"))
	}
	n := last - first + 1
	start := rand.IntN(n)
	for i := range n {
		if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", first+(start+i)%n)); err == nil {
			return ln
		}
	}
	t.Fatalf("no free port in %s", os.Getenv("GATEWAY_TEST_PORTS"))
	return nil
}

// newTestServer is httptest.NewServer on a testListener.
func newTestServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = testListener(t)
	srv.Start()
	return srv
}

// crashCall is one relay call of the load.
type crashCall struct {
	stream   bool
	id       string // X-Oneapi-Request-Id, once headers arrived
	complete bool   // the client saw the whole answer
}

func (c *crashCall) run(client *http.Client, base, key string) error {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(chatCallBody("gpt-4o-mini", c.stream)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	c.id = resp.Header.Get("X-Oneapi-Request-Id")
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	if c.id == "" {
		return fmt.Errorf("no request id")
	}
	if err := readChatAnswer(resp.Body, c.stream); err != nil {
		return err
	}
	c.complete = true
	return nil
}

// chatCallBody is the body of a relay call of the crash tests: "hello" to
// model.
func chatCallBody(model string, stream bool) string {
	if stream {
		return fmt.Sprintf(`{"model":%q,"stream":true,"messages":[{"role":"user","content":"hello"}]}`, model)
	}
	return fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hello"}]}`, model)
}

// readChatAnswer reads a 200 answer of a chat call to its end; nil when it
// is complete: one choice, or a stream's [DONE].
func readChatAnswer(r io.Reader, stream bool) error {
	if !stream {
		var v struct {
			Choices []any `json:"choices"`
		}
		if err := json.NewDecoder(r).Decode(&v); err != nil {
			return err
		}
		if len(v.Choices) != 1 {
			return errors.New("answer without choices")
		}
		return nil
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "data: [DONE]" {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// gatewayProc is one life of the gateway binary.
type gatewayProc struct {
	proc   *os.Process
	exited chan struct{}
	base   string
	// state is how the process ended, set before exited closes.
	state *os.ProcessState
}

// kill ends the process with SIGKILL: no shutdown of any kind.
func (g *gatewayProc) kill(t *testing.T) {
	t.Helper()
	if err := g.proc.Kill(); err != nil {
		t.Fatal(err)
	}
	<-g.exited
}

func startGateway(t *testing.T, bin, data, logPath string) *gatewayProc {
	t.Helper()
	ln := testListener(t)
	addr := ln.Addr().String()
	ln.Close()
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	cmd := exec.Command(bin, "--addr", addr, "--data", data, "--allow-private-upstreams", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "GATEWAY_API_RATE_LIMIT=0", "GATEWAY_CRITICAL_RATE_LIMIT=0")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &gatewayProc{proc: cmd.Process, exited: make(chan struct{}), base: "http://" + addr}
	go func() { cmd.Wait(); g.state = cmd.ProcessState; close(g.exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-g.exited
	})
	// The binary is up once /api/status answers.
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-g.exited:
			out, _ := os.ReadFile(logPath)
			t.Fatalf("gateway exited at start:\n%s", out)
		default:
		}
		resp, err := http.Get(g.base + "/api/status")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway not ready after 20s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// console is a logged-in session on the console API.
type console struct {
	base   string
	userID uint64
	client *http.Client
}

// login logs root in.
func (g *gatewayProc) login(t *testing.T) *console {
	t.Helper()
	return g.loginAs(t, "root", "123456")
}

// loginAs logs a user in with its password.
func (g *gatewayProc) loginAs(t *testing.T, name, password string) *console {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &console{base: g.base, client: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	var u struct {
		ID uint64 `json:"id"`
	}
	c.mustPost(t, "/api/user/login", map[string]string{"username": name, "password": password}, &u)
	if u.ID == 0 {
		t.Fatal("login returned no user id")
	}
	c.userID = u.ID
	return c
}

// do is a console call that ends the test when it fails.
func (c *console) do(t *testing.T, method, path string, body, out any) {
	t.Helper()
	if cut, err := c.try(method, path, body, out); cut {
		t.Fatalf("%s %s: %v", method, path, err)
	} else if err != nil {
		t.Fatal(err)
	}
}

// try is a console call that reports failure instead of ending the test;
// cut tells that no answer came (the process died under it).
func (c *console) try(method, path string, body, out any) (cut bool, err error) {
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if c.userID != 0 {
		req.Header.Set("New-Api-User", fmt.Sprint(c.userID))
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return true, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return true, err
	}
	var env struct {
		Success bool            `json:"success"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &env) != nil || !env.Success {
		return false, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return false, fmt.Errorf("%s %s: data %s: %v", method, path, env.Data, err)
		}
	}
	return false, nil
}

func (c *console) mustPost(t *testing.T, path string, body, out any) {
	t.Helper()
	c.do(t, http.MethodPost, path, body, out)
}

func (c *console) mustGet(t *testing.T, path string, out any) {
	t.Helper()
	c.do(t, http.MethodGet, path, nil, out)
}

// crashLog is the part of a consume log the test reads.
type crashLog struct {
	Quota int64  `json:"quota"`
	Other string `json:"other"`
}

// consumeLogs reads every consume log, page by page.
func (c *console) consumeLogs(t *testing.T) []crashLog {
	t.Helper()
	var all []crashLog
	for p := 1; ; p++ {
		var page struct {
			Items []crashLog `json:"items"`
			Total int        `json:"total"`
		}
		c.mustGet(t, fmt.Sprintf("/api/log/?p=%d&page_size=1000&type=2", p), &page)
		all = append(all, page.Items...)
		if len(page.Items) == 0 || len(all) >= page.Total {
			return all
		}
	}
}
