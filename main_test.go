package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	bolt "go.etcd.io/bbolt"

	"gateway/store"
	"gateway/ws"
)

// MustRunMain boots the program on a free port with its data in a temp dir
// (wtf's cmd/wtfd/main_test.go).
func MustRunMain(tb testing.TB) *Main {
	tb.Helper()
	m := &Main{Config: Config{
		Addr:            "127.0.0.1:0",
		Data:            filepath.Join(tb.TempDir(), "data", "gateway.db"),
		LogLevel:        "error",
		ShutdownTimeout: 5 * time.Second,
		NoSync:          true,
	}}
	if err := m.Run(context.Background()); err != nil {
		m.Close()
		tb.Fatalf("Run: %v", err)
	}
	return m
}

type envelope struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func TestMain_Boot(t *testing.T) {
	m := MustRunMain(t)
	base := "http://" + m.Addr()
	client := &http.Client{Timeout: time.Minute}
	do := func(req *http.Request) (*http.Response, []byte) {
		t.Helper()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}

	req, _ := http.NewRequest("GET", base+"/api/status", nil)
	resp, body := do(req)
	var e envelope
	if resp.StatusCode != 200 || json.Unmarshal(body, &e) != nil || !e.Success || !strings.Contains(string(e.Data), `"system_name"`) {
		t.Fatalf("status: %d %s", resp.StatusCode, body)
	}

	// The first start created root / 123456.
	req, _ = http.NewRequest("POST", base+"/api/user/login", strings.NewReader(`{"username":"root","password":"123456"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, body = do(req)
	if resp.StatusCode != 200 || json.Unmarshal(body, &e) != nil || !e.Success {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	var user struct {
		ID   uint64 `json:"id"`
		Role int    `json:"role"`
	}
	if err := json.Unmarshal(e.Data, &user); err != nil || user.Role != store.RoleRoot {
		t.Fatalf("login data: %s", e.Data)
	}
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "session" {
			session = c
		}
	}
	if session == nil {
		t.Fatal("login set no session cookie")
	}

	req, _ = http.NewRequest("GET", base+"/api/backup", nil)
	req.AddCookie(session)
	req.Header.Set("New-Api-User", strconv.FormatUint(user.ID, 10))
	resp, body = do(req)
	if resp.StatusCode != 200 || len(body) == 0 || resp.ContentLength != int64(len(body)) {
		t.Fatalf("backup: %d, %d bytes, Content-Length %d", resp.StatusCode, len(body), resp.ContentLength)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(backup, body, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(backup, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("backup does not open: %v", err)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("users")) == nil {
			t.Error("backup has no users bucket")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Close returns, stops serving and releases the data file.
	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close did not return")
	}
	if _, err := client.Get(base + "/api/status"); err == nil {
		t.Error("still serving after Close")
	}
	st, err := store.Open(m.Config.Data, store.Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("reopen data file: %v", err)
	}
	defer st.Close()
	root, err := st.UserByUsername("root")
	if err != nil || root.Quota != 100_000_000 {
		t.Fatalf("root after restart = %+v, %v", root, err)
	}
	// A second start on the same file does not create another root.
	if created, err := st.EnsureRoot(); err != nil || created {
		t.Fatalf("EnsureRoot on reopen = %v, %v", created, err)
	}
}

func TestParsePrefixes(t *testing.T) {
	t.Parallel()
	got, err := parsePrefixes(" 10.0.0.0/8, 127.0.0.1 ,::1, 192.168.1.7/24,")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "127.0.0.1/32", "::1/128", "192.168.1.0/24"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("prefix %d = %s, want %s", i, got[i], want[i])
		}
	}
	if _, err := parsePrefixes("10.0.0.0/8,not-an-ip"); err == nil {
		t.Fatal("a bad entry was accepted")
	}
}

// Pooled upstream connections are dropped when EgressAllowedHosts changes,
// and only then: every option save calls the hook.
func TestWatchedOption(t *testing.T) {
	t.Parallel()
	calls := 0
	w := &watchedOption{value: "ollama.lan", onChange: func() { calls++ }}
	w.changed("ollama.lan")
	if calls != 0 {
		t.Fatalf("called %d times for an unchanged value", calls)
	}
	w.changed("")
	w.changed("")
	if calls != 1 {
		t.Fatalf("called %d times for one change", calls)
	}
}

// A stream still running when the shutdown timeout runs out is ended as if
// its client had left: it is charged and logged for what it produced, before
// the store closes, so a restart finds the charge.
func TestShutdownChargesRunningStreams(t *testing.T) {
	t.Parallel()
	upstreamDone := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hello there"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		select { // a long answer: longer than the shutdown timeout
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
		close(upstreamDone)
	}))
	defer up.Close()
	m := &Main{Config: Config{
		Addr: "127.0.0.1:0", Data: filepath.Join(t.TempDir(), "data", "gateway.db"), LogLevel: "error",
		ShutdownTimeout: 300 * time.Millisecond, AllowPrivateUpstreams: true,
		StreamIdleTimeout: 30 * time.Second, FirstByteTimeout: 10 * time.Second,
	}}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	root, err := m.store.UserByUsername("root")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := m.store.CreateToken(&store.Token{UserID: root.ID, Name: "t", UnlimitedQuota: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.store.CreateChannels([]*store.Channel{{Type: 1, Key: "sk-up", Name: "up", BaseURL: up.URL, Models: "gpt-4o-mini", Group: "default"}}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+m.Addr()+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer sk-"+tok.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, "hello there") {
		t.Fatalf("first event %q, %v", line, err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	select {
	case <-upstreamDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream request was not ended")
	}
	st, err := store.Open(m.Config.Data, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	after, err := st.UserByUsername("root")
	if err != nil {
		t.Fatal(err)
	}
	if after.RequestCount != root.RequestCount+1 || after.UsedQuota <= root.UsedQuota {
		t.Fatalf("root after restart: %d requests, used %d (before %d, %d): the stream was not charged",
			after.RequestCount, after.UsedQuota, root.RequestCount, root.UsedQuota)
	}
	logs, err := st.Logs(store.LogFilter{UserID: root.ID, Type: store.LogTypeConsume}, 1, 10)
	if err != nil || len(logs.Items) != 1 {
		t.Fatalf("consume logs %+v, %v", logs, err)
	}
}

// The configured public address lets its own origin open the live socket,
// as a browser writes it (no default port), and no other scheme.
func TestPublicOriginOpensTheLiveSocket(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		address, origin string
		ok              bool
	}{
		{"https://gw.example.com:443", "https://gw.example.com", true},
		{"http://gw.example.com:80", "http://gw.example.com", true},
		{"https://gw.example.com", "https://gw.example.com", true},
		{"https://gw.example.com", "http://gw.example.com", false},
		{"https://gw.example.com:8443", "https://gw.example.com:8443", true},
		{"https://gw.example.com:8443", "https://gw.example.com", false},
		{"http://[::1]:8080", "http://[::1]:8080", true},
		{"http://[::1]:8080", "http://1:8080", false},
		{"", "https://gw.example.com", false},
	} {
		t.Run(tc.address+" "+tc.origin, func(t *testing.T) {
			t.Parallel()
			hub := ws.NewHub()
			hub.Origins = func() []string { return publicOrigin(tc.address) }
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = hub.Serve(w, r, ws.Identity{UserID: 1, Role: 1}, nil)
			}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			c, resp, _ := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {tc.origin}}})
			if c != nil {
				c.CloseNow()
			}
			if got := resp != nil && resp.StatusCode == http.StatusSwitchingProtocols; got != tc.ok {
				t.Fatalf("accepted %v, want %v (patterns %q)", got, tc.ok, publicOrigin(tc.address))
			}
		})
	}
}

// rootAccessToken gives root an access token, for the live socket.
func rootAccessToken(t *testing.T, m *Main) string {
	t.Helper()
	root, err := m.store.UserByUsername("root")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := m.store.ResetAccessToken(root.ID)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// A shutdown tells every live socket it is going away (1001) before it
// ends the requests: the sockets were closed beside the rest of the
// shutdown, and those it overtook ended with 1000 or no close frame.
func TestShutdownClosesLiveSocketsWithGoingAway(t *testing.T) {
	t.Parallel()
	m := MustRunMain(t)
	tok := rootAccessToken(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var conns []*websocket.Conn
	for range 16 {
		c, _, err := websocket.Dial(ctx, "ws://"+m.Addr()+"/api/ws", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {tok}}})
		if err != nil {
			m.Close()
			t.Fatal(err)
		}
		defer c.CloseNow()
		if _, _, err := c.Read(ctx); err != nil {
			m.Close()
			t.Fatalf("first message: %v", err)
		}
		conns = append(conns, c)
	}
	codes := make(chan websocket.StatusCode, len(conns))
	for _, c := range conns {
		go func() {
			for {
				if _, _, err := c.Read(ctx); err != nil {
					codes <- websocket.CloseStatus(err)
					return
				}
			}
		}()
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for range conns {
		if code := <-codes; code != websocket.StatusGoingAway {
			t.Errorf("a live socket ended with %v at shutdown, want %v", code, websocket.StatusGoingAway)
		}
	}
}

// A shutdown stops taking requests at once, while it waits for the live
// sockets' answers to their 1001: a client that never answers (a script
// that does not read) kept the listener open, and new calls taken, for the
// sockets' whole write timeout.
func TestShutdownStopsAcceptingWhileSocketsClose(t *testing.T) {
	t.Parallel()
	m := MustRunMain(t)
	tok := rootAccessToken(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// Never read again: its close frame is never answered.
	c, _, err := websocket.Dial(ctx, "ws://"+m.Addr()+"/api/ws", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {tok}}})
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	defer c.CloseNow()
	addr := m.Addr()
	// The socket never answers its 1001: the sockets are closed only once
	// their write timeout has passed. A listener kept open till then is
	// seen refusing no sooner; one closed at once is seen well before.
	within := m.hub.WriteTimeout
	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for {
		resp, err := client.Get("http://" + addr + "/api/status")
		if err != nil {
			if d := time.Since(start); d >= within {
				t.Errorf("the listener was closed only %v into the shutdown, want before the sockets' write timeout (%v)", d, within)
			}
			break
		}
		resp.Body.Close()
		time.Sleep(10 * time.Millisecond)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// README's first steps: `make run`, which creates root / 123456, then, on
// a shared network, "start it with --root-password". A root that still has
// the well-known password takes the one given; a password root chose is
// never replaced by the flag.
func TestRootPasswordReplacesTheDefaultOne(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data", "gateway.db")
	start := func(password string) *Main {
		t.Helper()
		m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: data, LogLevel: "error", ShutdownTimeout: time.Second, NoSync: true,
			RootPassword: password}}
		if err := m.Run(context.Background()); err != nil {
			m.Close()
			t.Fatal(err)
		}
		return m
	}
	login := func(m *Main, password string) bool {
		t.Helper()
		resp, err := http.Post("http://"+m.Addr()+"/api/user/login", "application/json",
			strings.NewReader(`{"username":"root","password":"`+password+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e envelope
		return json.NewDecoder(resp.Body).Decode(&e) == nil && e.Success
	}
	m := start("")
	if !login(m, "123456") {
		t.Fatal("the first start's root does not log in with 123456")
	}
	m.Close()

	m = start("a-good-password")
	if !login(m, "a-good-password") || login(m, "123456") {
		t.Fatal("--root-password did not replace root's default password")
	}
	m.Close()

	m = start("another-password")
	defer m.Close()
	if login(m, "another-password") || !login(m, "a-good-password") {
		t.Fatal("--root-password replaced a password that was not the default one")
	}
}

// README: GATEWAY_PPROF is a setting like the flags' twins, and "a value
// that does not parse ... stops the start with a message naming it". An
// address the profiler cannot listen on must not leave the gateway running
// without it, with only an info line that says "pprof listening".
func TestPprofAddressThatCannotListenStopsTheStart(t *testing.T) {
	t.Setenv("GATEWAY_PPROF", "not-an-address")
	m := &Main{Config: Config{Addr: "127.0.0.1:0", Data: filepath.Join(t.TempDir(), "data", "gateway.db"), LogLevel: "error",
		ShutdownTimeout: time.Second, NoSync: true}}
	err := m.Run(context.Background())
	m.Close()
	if err == nil || !strings.Contains(err.Error(), "GATEWAY_PPROF") {
		t.Fatalf("Run with GATEWAY_PPROF=not-an-address: %v, want an error naming GATEWAY_PPROF", err)
	}
}

// A hangup stops the binary as SIGTERM does: it shuts down, closes the
// data file and exits 0, instead of dying at once.
func TestHangupShutsDownCleanly(t *testing.T) {
	dir, bin := buildGateway(t)
	logPath := filepath.Join(dir, "gw.log")
	g := startGateway(t, bin, filepath.Join(dir, "data", "gateway.db"), logPath)
	if err := g.proc.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the gateway still runs 20 s after SIGHUP")
	}
	out, _ := os.ReadFile(logPath)
	if code := g.state.ExitCode(); code != 0 {
		t.Fatalf("exit code after SIGHUP %d (%s), want 0 after a shutdown; log:\n%s", code, g.state, out)
	}

	// Started under nohup, the hangup stays ignored.
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("no nohup")
	}
	ln := testListener(t)
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(nohup, bin, "--addr", addr, "--data", filepath.Join(dir, "data", "gateway.db"))
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	awaitStatus(t, addr, &log)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		t.Fatalf("the gateway under nohup stopped on SIGHUP:\n%s", log.String())
	case <-time.After(time.Second):
	}
	resp, err := http.Get("http://" + addr + "/api/status")
	if err != nil {
		t.Fatalf("the gateway under nohup does not answer after SIGHUP: %v", err)
	}
	resp.Body.Close()
}

// The start names the data file by its full path: a relative --data is
// read from the working directory, which a service manager chooses.
func TestStartNamesTheDataFileByItsFullPath(t *testing.T) {
	dir, bin := buildGateway(t)
	ln := testListener(t)
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--addr", addr, "--data", filepath.Join("state", "gw.db"))
	cmd.Dir = dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}()
	awaitStatus(t, addr, &out)
	cmd.Process.Signal(syscall.SIGTERM)
	<-exited
	want := "data=" + filepath.Join(dir, "state", "gw.db")
	if !strings.Contains(out.String(), want) {
		t.Fatalf("the start does not say %s:\n%s", want, out.String())
	}
}

// A port in use stops the start before the data file is opened: no file,
// no root account with 123456 at a path nobody meant to use yet. A start
// that fails after taking the address frees it.
func TestPortInUseStopsTheStartBeforeTheDataFile(t *testing.T) {
	busy := testListener(t)
	defer busy.Close()
	data := filepath.Join(t.TempDir(), "data", "gateway.db")
	m := &Main{Config: Config{Addr: busy.Addr().String(), Data: data, LogLevel: "error", ShutdownTimeout: time.Second, NoSync: true}}
	err := m.Run(context.Background())
	m.Close()
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("Run on a port in use: %v", err)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("the data file was created by a start that could not listen: %v", err)
	}

	// The data file is locked by another store: the address is free again.
	st, err := store.Open(data, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ln := testListener(t)
	addr := ln.Addr().String()
	ln.Close()
	m = &Main{Config: Config{Addr: addr, Data: data, LogLevel: "error", ShutdownTimeout: time.Second, NoSync: true}}
	if err := m.Run(context.Background()); err == nil {
		m.Close()
		t.Fatal("Run on a locked data file started")
	}
	m.Close()
	again, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the address is still taken after the failed start: %v", err)
	}
	again.Close()
}

// awaitStatus waits up to 20 s for the gateway at addr to answer
// /api/status, failing t with the process's output otherwise.
func awaitStatus(t *testing.T, addr string, out fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if resp, err := http.Get("http://" + addr + "/api/status"); err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway not ready after 20s:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A hangup with the output piped (gateway 2>&1 | tee log) also ends the
// reader: the shutdown's first log line then meets a closed pipe, which
// must not kill the gateway before it has shut down.
func TestHangupWithItsLogReaderGoneShutsDownCleanly(t *testing.T) {
	dir, bin := buildGateway(t)
	ln := testListener(t)
	addr := ln.Addr().String()
	ln.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--addr", addr, "--data", filepath.Join(dir, "data", "gateway.db"))
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	var out strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(out.String(), "gateway listening") {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatalf("the gateway did not start: %v\n%s", err, out.String())
		}
		out.Write(buf[:n])
	}
	r.Close()
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the gateway still runs 20 s after SIGHUP")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit after SIGHUP with its log reader gone: %s, want 0 after a shutdown", cmd.ProcessState)
	}
}

// --compact-to writes a compacted copy of a stopped gateway's data file
// and exits without serving; a file a gateway holds is refused after a
// short wait, and so is a copy that exists. The environment twin works
// as the flag.
func TestCompactToWritesACopyAndExits(t *testing.T) {
	dir, bin := buildGateway(t)
	data := filepath.Join(dir, "data", "gateway.db")
	st, err := store.Open(data, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	filler := strings.Repeat("x", 2000)
	for i := range 3000 {
		if err := st.AppendLog(&store.Log{UserID: 1, Type: store.LogTypeConsume, ModelName: "m", Content: filler,
			CreatedAt: int64(1_700_000_000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := st.DeleteLogsBefore(context.Background(), 1_700_000_000+2900); err != nil || n != 2900 {
		t.Fatalf("cleared %d, %v", n, err)
	}
	copyPath := filepath.Join(dir, "compact.db")
	run := func(env []string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("gateway %v did not exit:\n%s", args, out)
		}
		return string(out), err
	}

	out, err := run(nil, "--data", data, "--compact-to", copyPath)
	if err == nil || !strings.Contains(out, "locked by another process") {
		t.Fatalf("--compact-to on a held file: %v\n%s", err, out)
	}
	if _, err := os.Stat(copyPath); !os.IsNotExist(err) {
		t.Fatalf("a refused --compact-to left its copy: %v", err)
	}
	st.Close()

	// The address is taken: a gateway that went on to start would fail.
	busy := testListener(t)
	defer busy.Close()
	out, err = run([]string{"GATEWAY_COMPACT_TO=" + data + ".ignored"}, "--data", data, "--compact-to", copyPath, "--addr", busy.Addr().String())
	if err != nil {
		t.Fatalf("--compact-to: %v\n%s", err, out)
	}
	if _, err := os.Stat(data + ".ignored"); !os.IsNotExist(err) {
		t.Fatalf("GATEWAY_COMPACT_TO was read: %v", err)
	}
	before, _ := os.Stat(data)
	after, err := os.Stat(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, strconv.FormatInt(before.Size(), 10)) || !strings.Contains(out, strconv.FormatInt(after.Size(), 10)) {
		t.Fatalf("the output does not give both sizes (%d, %d):\n%s", before.Size(), after.Size(), out)
	}
	if after.Size()*2 > before.Size() || after.Mode().Perm() != 0o600 {
		t.Fatalf("the copy: %d bytes of %d, mode %v", after.Size(), before.Size(), after.Mode().Perm())
	}
	if err := store.CheckFile(copyPath); err != nil {
		t.Fatal(err)
	}
	c, err := store.Open(copyPath, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Logs(store.LogFilter{}, 1, 10)
	c.Close()
	if err != nil || p.Total != 100 {
		t.Fatalf("logs in the copy: %+v, %v", p, err)
	}

	out, err = run(nil, "--data", data, "--compact-to", copyPath)
	if err == nil || !strings.Contains(out, "exists") {
		t.Fatalf("--compact-to onto an existing file: %v\n%s", err, out)
	}
}
