package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"gateway/api"
	"gateway/relay"
	"gateway/store"
	"gateway/ws"
)

// liveMessage is one {topic, data} frame of the console socket.
type liveMessage struct {
	Topic string          `json:"topic"`
	Data  json.RawMessage `json:"data"`
}

type liveUser struct {
	ID    uint64 `json:"id"`
	Quota int64  `json:"quota"`
	Role  int    `json:"role"`
}

// dialLive opens /api/ws with a session cookie and extra headers.
func dialLive(tb testing.TB, ts *TestServer, cookie string, header http.Header) (*websocket.Conn, *http.Response, error) {
	tb.Helper()
	if header == nil {
		header = http.Header{}
	}
	if cookie != "" {
		header.Set("Cookie", "session="+cookie)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http")+"/api/ws", &websocket.DialOptions{HTTPHeader: header})
	if c != nil {
		c.SetReadLimit(4 << 20) // as a browser, which sets none
		tb.Cleanup(func() { c.CloseNow() })
	}
	return c, resp, err
}

// openLive opens a console socket with the session cookie and reads its
// first user.self.
func openLive(tb testing.TB, ts *TestServer, cookie string) *websocket.Conn {
	tb.Helper()
	c, _, err := dialLive(tb, ts, cookie, nil)
	if err != nil {
		tb.Fatal(err)
	}
	readTopic(tb, c, "user.self")
	return c
}

// readLive reads the next message, failing the test after 15 s.
func readLive(tb testing.TB, c *websocket.Conn) liveMessage {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, data, err := c.Read(ctx)
	if err != nil {
		tb.Fatalf("read live message: %v", err)
	}
	var m liveMessage
	if err := json.Unmarshal(data, &m); err != nil {
		tb.Fatalf("live message %s: %v", data, err)
	}
	return m
}

// readTopic skips messages of other topics until one of topic arrives.
func readTopic(tb testing.TB, c *websocket.Conn, topic string) liveMessage {
	tb.Helper()
	for {
		if m := readLive(tb, c); m.Topic == topic {
			return m
		}
	}
}

func TestLive(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	cookie, id := ts.MustSession(t, "inviter")
	before := mustUser(t, ts, id)

	c, _, err := dialLive(t, ts, cookie, http.Header{"Origin": {ts.URL}})
	if err != nil {
		t.Fatalf("dial with a session cookie: %v", err)
	}
	hello := readLive(t, c)
	var u liveUser
	if err := json.Unmarshal(hello.Data, &u); err != nil || hello.Topic != "user.self" || u.ID != id || u.Quota != before.Quota {
		t.Fatalf("hello = %s %s, want user.self for %d with quota %d", hello.Topic, hello.Data, id, before.Quota)
	}

	// A transfer of invite earnings pushes the new balance.
	ApiScenario{Method: "POST", URL: "/api/user/aff_transfer", Cookie: cookie, UserID: id,
		Body: `{"quota":500000}`, WantStatus: 200}.Test(t, ts)
	m := readTopic(t, c, "user.self")
	if err := json.Unmarshal(m.Data, &u); err != nil || u.ID != id || u.Quota != before.Quota+500000 {
		t.Fatalf("after transfer: %s, want quota %d", m.Data, before.Quota+500000)
	}

	// Logging out closes the sockets of that session with 4401.
	ApiScenario{URL: "/api/user/logout", Cookie: cookie, UserID: id, WantStatus: 200}.Test(t, ts)
	if got := readCloseStatus(t, c); got != ws.CloseUnauthorized {
		t.Fatalf("after logout the socket ended with %d, want %d", got, ws.CloseUnauthorized)
	}
}

// An invitation used and a new display name reach the inviter's open
// consoles: the invite card and the header follow without a reload.
func TestLive_InvitationsAndProfile(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "QuotaForInviter", "1000")
	cookie, id := ts.MustSession(t, "inviter")
	c, _, err := dialLive(t, ts, cookie, http.Header{"Origin": {ts.URL}})
	if err != nil {
		t.Fatal(err)
	}
	readTopic(t, c, "user.self")
	var got struct {
		ID          uint64 `json:"id"`
		Username    string `json:"username"`
		DisplayName string `json:"display_name"`
		AffCount    int64  `json:"aff_count"`
		AffQuota    int64  `json:"aff_quota"`
	}
	before := mustUser(t, ts, id)
	code := before.AffCode
	ApiScenario{Method: "POST", URL: "/api/user/register", WantStatus: 200,
		Body: `{"username":"invitee","password":"password-1","password2":"password-1","aff_code":"` + code + `"}`}.Test(t, ts)
	if err := json.Unmarshal(readTopic(t, c, "user.self").Data, &got); err != nil || got.ID != id || got.AffCount != before.AffCount+1 || got.AffQuota != before.AffQuota+1000 || got.Username != "inviter" {
		t.Fatalf("after an invitation: %+v (%v)", got, err)
	}
	ApiScenario{Method: "PUT", URL: "/api/user/self", Cookie: cookie, UserID: id, Body: `{"display_name":"Neo"}`, WantStatus: 200}.Test(t, ts)
	if err := json.Unmarshal(readTopic(t, c, "user.self").Data, &got); err != nil || got.DisplayName != "Neo" {
		t.Fatalf("after a new display name: %+v (%v)", got, err)
	}
}

// readCloseStatus reads until the socket ends and returns its close status
// (-1 when it ended without one).
func readCloseStatus(tb testing.TB, c *websocket.Conn) websocket.StatusCode {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

func TestLive_Refused(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	cookie, id := ts.MustSession(t, "alice")
	for _, tt := range []struct {
		name   string
		cookie string
		header http.Header
		status int
	}{
		{"ForeignOrigin", cookie, http.Header{"Origin": {"https://evil.example.com"}}, http.StatusForbidden},
		{"NoSession", "", nil, http.StatusUnauthorized},
		{"UnknownSession", "forged", nil, http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, resp, err := dialLive(t, ts, tt.cookie, tt.header)
			if err == nil {
				c.CloseNow()
				t.Fatal("dial succeeded")
			}
			if resp == nil || resp.StatusCode != tt.status {
				t.Fatalf("dial answer = %v (%v), want %d", resp, err, tt.status)
			}
		})
	}
	// The console sends no New-Api-User on a socket; the cookie suffices, and
	// a session of a deleted account does not.
	if _, _, err := dialLive(t, ts, cookie, nil); err != nil {
		t.Fatalf("same-origin dial: %v", err)
	}
	if err := ts.Store.DeleteUser(id); err != nil {
		t.Fatal(err)
	}
	if _, resp, err := dialLive(t, ts, cookie, nil); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("dial after delete = %v, %v", resp, err)
	}
}

// A socket opened with a system access token closes when the token is
// rotated; a socket of the console's session stays.
func TestLive_AccessTokenRotationClosesItsSockets(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	cookie, id := ts.MustSession(t, "inviter")
	tok, err := ts.Store.ResetAccessToken(id)
	if err != nil {
		t.Fatal(err)
	}
	viaToken, _, err := dialLive(t, ts, "", http.Header{"Authorization": {tok}})
	if err != nil {
		t.Fatalf("dial with the access token: %v", err)
	}
	readTopic(t, viaToken, "user.self")
	viaSession, _, err := dialLive(t, ts, cookie, nil)
	if err != nil {
		t.Fatal(err)
	}
	readTopic(t, viaSession, "user.self")

	ApiScenario{URL: "/api/user/token", Cookie: cookie, UserID: id, WantStatus: 200}.Test(t, ts)
	if got := readCloseStatus(t, viaToken); got != ws.CloseUnauthorized {
		t.Fatalf("the old token's socket ended with %d, want %d", got, ws.CloseUnauthorized)
	}
	// The session's socket still gets its balance.
	ApiScenario{Method: "POST", URL: "/api/user/aff_transfer", Cookie: cookie, UserID: id, Body: `{"quota":500000}`, WantStatus: 200}.Test(t, ts)
	readTopic(t, viaSession, "user.self")
}

// A test of all channels started from the console tells the administrators'
// consoles how many channels it will test before the first result, then
// each result, saying which channel the health rules disabled for a slow
// answer (no failure) and which not.
func TestLive_TestAllProgress(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "AutomaticDisableChannelEnabled", "true")
	// Far on either side of the threshold, so a loaded machine cannot move
	// a channel across it.
	ts.MustSetOptions(t, "ChannelDisableThreshold", "1")
	answer := func(delay time.Duration) *httptest.Server {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(delay)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"x","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`))
		}))
		t.Cleanup(up.Close)
		return up
	}
	fast, slow := answer(0), answer(2*time.Second)
	chs := []*store.Channel{
		{Type: 1, Name: "fast", Key: "sk-fast", BaseURL: fast.URL, Models: "gpt-4o-mini", Group: "default", AutoBan: 1},
		{Type: 1, Name: "slow", Key: "sk-slow", BaseURL: slow.URL, Models: "gpt-4o-mini", Group: "default", AutoBan: 1},
	}
	if err := ts.Store.CreateChannels(chs); err != nil {
		t.Fatal(err)
	}
	cookie, _ := ts.MustSession(t, "root")
	c, _, err := dialLive(t, ts, cookie, http.Header{"Origin": {ts.URL}})
	if err != nil {
		t.Fatal(err)
	}
	readTopic(t, c, "user.self")
	ApiScenario{Name: "TestAll", URL: "/api/channel/test", As: "root", WantStatus: 200}.Test(t, ts)

	type progress struct {
		Task      string  `json:"task"`
		Done      int     `json:"done"`
		Total     int     `json:"total"`
		ChannelID *uint64 `json:"channel_id"`
		OK        bool    `json:"ok"`
		Disabled  bool    `json:"disabled"`
	}
	next := func() progress {
		var p progress
		if err := json.Unmarshal(readTopic(t, c, "task.progress").Data, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := next(); p.Task != "channel_test" || p.Done != 0 || p.Total != 2 || p.ChannelID != nil {
		t.Fatalf("first frame %+v, want the size of the run", p)
	}
	disabled := map[uint64]bool{}
	for i := 1; i <= 2; i++ {
		p := next()
		if p.Done != i || p.Total != 2 || p.ChannelID == nil || !p.OK {
			t.Fatalf("frame %d: %+v", i, p)
		}
		disabled[*p.ChannelID] = p.Disabled
	}
	if !disabled[chs[1].ID] || disabled[chs[0].ID] {
		t.Fatalf("disabled flags %v, want only the slow channel %d", disabled, chs[1].ID)
	}
}

// The console that changes its own password, or logs in again in the same
// browser, keeps its socket: the socket follows the new session, is checked
// against it at every ping, and closes when that session is logged out.
func TestLive_SocketFollowsItsBrowsersNewSession(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.Hub.PingInterval = 50 * time.Millisecond
	id := ts.UserID(t, "alice")
	pw := "oldpass123"
	if _, err := ts.Store.UpdateUser(id, store.UserUpdate{Password: &pw}); err != nil {
		t.Fatal(err)
	}
	cookie, _ := ts.MustSession(t, "alice")
	c := openLive(t, ts, cookie)
	// call sends a request with the browser's cookie and takes the one it sets.
	call := func(method, path, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Cookie", "session="+cookie)
		req.Header.Set("New-Api-User", strconv.FormatUint(id, 10))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %s", method, path, resp.Status)
		}
		for _, ck := range resp.Cookies() {
			if ck.Name == "session" && ck.Value != "" {
				cookie = ck.Value
			}
		}
	}
	// The socket is read in the background: a read whose deadline passes
	// would close it.
	ended := make(chan websocket.StatusCode, 1)
	go func() {
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				ended <- websocket.CloseStatus(err)
				return
			}
		}
	}()
	stillOpen := func(what string) {
		t.Helper()
		// Many pings, each asking whether the socket may stay.
		select {
		case code := <-ended:
			t.Fatalf("after %s the socket ended with %d", what, code)
		case <-time.After(20 * ts.Hub.PingInterval):
		}
	}
	old := cookie
	call("PUT", "/api/user/self", `{"password":"newpass123","original_password":"oldpass123"}`)
	if cookie == old {
		t.Fatal("the password change kept the session id")
	}
	stillOpen("the password change")
	old = cookie
	call("POST", "/api/user/login", `{"username":"alice","password":"newpass123"}`)
	if cookie == old {
		t.Fatal("the login kept the session id")
	}
	stillOpen("a second login")
	call("GET", "/api/user/logout", "")
	select {
	case code := <-ended:
		if code != ws.CloseUnauthorized {
			t.Fatalf("after logout the socket ended with %d, want %d", code, ws.CloseUnauthorized)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the socket outlived the logout")
	}
}

// liveLogs reads log.tail messages from c until n entries arrived, and
// returns them with the number of messages they came in.
func liveLogs(tb testing.TB, c *websocket.Conn, n int) (logs []map[string]any, messages int) {
	tb.Helper()
	for len(logs) < n {
		var batch []map[string]any
		if err := json.Unmarshal(readTopic(tb, c, "log.tail").Data, &batch); err != nil {
			tb.Fatalf("log.tail is not a list of entries: %v", err)
		}
		logs = append(logs, batch...)
		messages++
	}
	return logs, messages
}

// A burst of charges reaches the consoles as one log.tail message a commit,
// oldest first: administrators get every entry, each other user their own
// without admin detail, and no console falls behind (its socket closed)
// however many charges one commit holds.
func TestLive_LogTailBurst(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.Store.SetSyncInterval(300 * time.Millisecond) // the burst commits together
	rootCookie, _ := ts.MustSession(t, "root")
	aliceCookie, alice := ts.MustSession(t, "alice")
	bobCookie, bob := ts.MustSession(t, "inviter")
	conns := map[string]*websocket.Conn{}
	for name, cookie := range map[string]string{"root": rootCookie, "alice": aliceCookie, "inviter": bobCookie} {
		conns[name] = openLive(t, ts, cookie)
	}
	set := int64(1_000_000)
	for _, id := range []uint64{alice, bob} {
		if _, err := ts.Store.UpdateUserAsAdmin("root", id, store.UserUpdate{}, &set); err != nil {
			t.Fatal(err)
		}
	}
	const perAlice, perBob = 120, 40
	for i := range perAlice + perBob {
		id, name := alice, "alice"
		if i >= perAlice {
			id, name = bob, "inviter"
		}
		r, err := ts.Store.Reserve(id, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		err = ts.Store.Settle(r, 7, 1, &store.Log{UserID: id, Username: name, Type: store.LogTypeConsume, ModelName: "gpt-4o-mini",
			Content: fmt.Sprint("call ", i), Other: `{"admin_info":{"use_channel":[7]}}`})
		if err != nil {
			t.Fatal(err)
		}
	}
	all, messages := liveLogs(t, conns["root"], perAlice+perBob)
	if messages > 10 {
		t.Errorf("%d entries came in %d messages, want one a commit", len(all), messages)
	}
	for i, l := range all {
		if l["content"] != fmt.Sprint("call ", i) {
			t.Fatalf("entry %d is %v: not oldest first", i, l["content"])
		}
		if !strings.Contains(fmt.Sprint(l["other"]), "admin_info") {
			t.Fatalf("the administrator's entry lacks admin_info: %v", l)
		}
	}
	for name, want := range map[string]int{"alice": perAlice, "inviter": perBob} {
		own, _ := liveLogs(t, conns[name], want)
		for _, l := range own {
			if l["username"] != name || strings.Contains(fmt.Sprint(l["other"]), "admin_info") || l["channel"] != nil {
				t.Fatalf("%s got %v", name, l)
			}
		}
		if len(own) != want {
			t.Fatalf("%s got %d entries, want %d", name, len(own), want)
		}
	}
}

// A channel test's log joins the administrators' live tail, and only
// theirs: a scheduled test's log belongs to nobody.
func TestLive_ChannelTestLogged(t *testing.T) {
	t.Parallel()
	var rl *relay.Relay
	ts := MustStartServer(t, func(c *api.Config) {
		rl = relay.New(relay.Config{Store: c.Store, Events: api.RelayEvents{Hub: c.Hub, Store: c.Store}})
		c.Relay = rl
	})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`))
	}))
	t.Cleanup(up.Close)
	ch := &store.Channel{Type: 1, Name: "tested", Key: "sk-t", BaseURL: up.URL, Models: "gpt-4o-mini", Group: "default"}
	if err := ts.Store.CreateChannels([]*store.Channel{ch}); err != nil {
		t.Fatal(err)
	}
	cookie, _ := ts.MustSession(t, "root")
	c := openLive(t, ts, cookie)
	aliceCookie, _ := ts.MustSession(t, "alice")
	alice := openLive(t, ts, aliceCookie)
	ApiScenario{Name: "Test", URL: fmt.Sprintf("/api/channel/test/%d", ch.ID), As: "root", WantStatus: 200}.Test(t, ts)
	logs, _ := liveLogs(t, c, 1)
	if l := logs[0]; l["token_name"] != "模型测试" || l["channel"] != float64(ch.ID) {
		t.Fatalf("live entry %v, want the channel test's", l)
	}
	// A scheduled run tests as nobody.
	if err := rl.TestAll(nil, nil); err != nil {
		t.Fatal(err)
	}
	logs, _ = liveLogs(t, c, 1)
	if l := logs[0]; l["user_id"] != float64(0) || l["token_name"] != "模型测试" {
		t.Fatalf("live entry %v, want the scheduled test's", l)
	}
	// Alice's console got nothing of either: the next thing it gets is
	// the notice of an option saved now.
	ts.MustSetOptions(t, "Notice", "after the tests")
	for {
		m := readLive(t, alice)
		if m.Topic == "log.tail" {
			t.Fatalf("a user's console got a channel test's log: %s", m.Data)
		}
		if m.Topic == "notice" {
			break
		}
	}
}

// The tokens a commit charged reach their owner in one token.usage message,
// however many they are.
func TestLive_TokenUsageBurst(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.Store.SetSyncInterval(300 * time.Millisecond)
	cookie, alice := ts.MustSession(t, "alice")
	set := int64(1_000_000)
	if _, err := ts.Store.UpdateUserAsAdmin("root", alice, store.UserUpdate{}, &set); err != nil {
		t.Fatal(err)
	}
	const tokens = 100
	ids := map[float64]bool{}
	var toks []*store.Token
	for i := range tokens {
		tok, err := ts.Store.CreateToken(&store.Token{UserID: alice, Name: fmt.Sprint("t", i), RemainQuota: 50, ExpiredTime: -1})
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
		ids[float64(tok.ID)] = true
	}
	c := openLive(t, ts, cookie)
	for _, tok := range toks {
		r, err := ts.Store.Reserve(alice, tok.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.Store.Settle(r, 7, 3, &store.Log{UserID: alice, Username: "alice", Type: store.LogTypeConsume}); err != nil {
			t.Fatal(err)
		}
	}
	var got []map[string]any
	messages := 0
	for len(got) < tokens {
		var batch []map[string]any
		if err := json.Unmarshal(readTopic(t, c, "token.usage").Data, &batch); err != nil {
			t.Fatalf("token.usage is not a list: %v", err)
		}
		got = append(got, batch...)
		messages++
	}
	if messages > 10 {
		t.Errorf("%d tokens came in %d messages, want one a commit", len(got), messages)
	}
	for _, u := range got {
		if !ids[u["id"].(float64)] || u["remain_quota"] != float64(47) || u["used_quota"] != float64(3) {
			t.Fatalf("token usage %v, want 47 left and 3 used", u)
		}
		delete(ids, u["id"].(float64))
	}
}

// Every balance pushed carries a number that grows with each read, so that
// a console can tell an older read arriving late (a charge read before a
// credit, pushed after it) from a newer one (docs/live.md).
func TestLive_BalanceSeqGrows(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	cookie, id := ts.MustSession(t, "inviter")
	if _, err := ts.Store.UpdateUserAsAdmin("setup", id, store.UserUpdate{}, new(int64(100000))); err != nil {
		t.Fatal(err)
	}
	c, _, err := dialLive(t, ts, cookie, nil)
	if err != nil {
		t.Fatal(err)
	}
	type balance struct {
		Quota int64  `json:"quota"`
		Seq   uint64 `json:"balance_seq"`
	}
	next := func(what string) balance {
		t.Helper()
		var b balance
		m := readTopic(t, c, "user.self")
		if err := json.Unmarshal(m.Data, &b); err != nil || b.Seq == 0 {
			t.Fatalf("%s: user.self %s without balance_seq", what, m.Data)
		}
		return b
	}
	charge := func(quota int64) {
		t.Helper()
		res, err := ts.Store.Reserve(id, 0, quota)
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.Store.Settle(res, 0, quota, &store.Log{UserID: id, Username: "inviter", Type: store.LogTypeConsume, ModelName: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	hello := next("hello")
	charge(300)
	charged := next("after a charge")
	ApiScenario{Method: "POST", URL: "/api/user/aff_transfer", Cookie: cookie, UserID: id,
		Body: `{"quota":500000}`, WantStatus: 200}.Test(t, ts)
	credited := next("after a credit")
	charge(200)
	again := next("after another charge")
	if charged.Quota != hello.Quota-300 || credited.Quota != charged.Quota+500000 || again.Quota != credited.Quota-200 {
		t.Fatalf("balances %d, %d, %d, %d", hello.Quota, charged.Quota, credited.Quota, again.Quota)
	}
	if !(hello.Seq < charged.Seq && charged.Seq < credited.Seq && credited.Seq < again.Seq) {
		t.Fatalf("balance_seq %d, %d, %d, %d: not growing", hello.Seq, charged.Seq, credited.Seq, again.Seq)
	}
	// A read of the own account is numbered in the same order, so that a
	// console can tell it from a newer push.
	var self struct {
		Data balance `json:"data"`
	}
	r := ApiScenario{URL: "/api/user/self", Cookie: cookie, UserID: id, WantStatus: 200}.Test(t, ts)
	if err := json.Unmarshal(r.Body, &self); err != nil || self.Data.Seq <= again.Seq || self.Data.Quota != again.Quota {
		t.Fatalf("GET /api/user/self %s: want balance_seq above %d and quota %d", r.Body, again.Seq, again.Quota)
	}
	charge(100)
	if later := next("after a charge following the read"); later.Seq <= self.Data.Seq {
		t.Fatalf("push after the read numbered %d, read %d", later.Seq, self.Data.Seq)
	}
}

// A channel push shows the channel as committed when it goes out: a change
// that lost the race to publish cannot show its older state after a newer
// one.
func TestLive_ChannelPushIsTheCommittedState(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ch := &store.Channel{Type: 1, Name: "raced", Key: "sk-raced", Models: "gpt-4o-mini", Group: "default", Status: store.ChannelStatusEnabled}
	if err := ts.Store.CreateChannels([]*store.Channel{ch}); err != nil {
		t.Fatal(err)
	}
	stale := *ch
	cookie, _ := ts.MustSession(t, "root")
	c, _, err := dialLive(t, ts, cookie, http.Header{"Origin": {ts.URL}})
	if err != nil {
		t.Fatal(err)
	}
	readTopic(t, c, "user.self")
	disabled := store.ChannelStatusManuallyOff
	if _, err := ts.Store.UpdateChannel(ch.ID, store.ChannelUpdate{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	// The relay publishes what it saw before the administrator's change.
	api.RelayEvents{Hub: ts.Hub, Store: ts.Store}.ChannelChanged(&stale)
	var h struct {
		ID     uint64 `json:"id"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal(readTopic(t, c, "channel.health").Data, &h); err != nil || h.ID != ch.ID || h.Status != disabled {
		t.Fatalf("pushed %+v, want channel %d with the committed status %d", h, ch.ID, disabled)
	}
}

// The progress of a test-all run can be read at any time, so a console that
// opens the channel page during a run shows it before the run's next push:
// the channels tested so far, of them the failures, and whether it still
// runs; a run of the test interval is marked periodic.
func TestTestAllProgressRoute(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	release := make(chan struct{})
	answer := func(status int, wait bool) *httptest.Server {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if wait {
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			if status != http.StatusOK {
				w.Write([]byte(`{"error":{"message":"upstream down","type":"server_error"}}`))
				return
			}
			w.Write([]byte(`{"id":"x","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`))
		}))
		t.Cleanup(up.Close)
		return up
	}
	ok, failing, held := answer(200, false), answer(500, false), answer(200, true)
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	t.Cleanup(letGo) // before the upstreams close, should the test end early
	// A run tests the newest channel first: the held one goes last.
	chs := []*store.Channel{
		{Type: 1, Name: "held", Key: "sk-held", BaseURL: held.URL, Models: "gpt-4o-mini", Group: "default"},
		{Type: 1, Name: "failing", Key: "sk-failing", BaseURL: failing.URL, Models: "gpt-4o-mini", Group: "default"},
		{Type: 1, Name: "ok", Key: "sk-ok", BaseURL: ok.URL, Models: "gpt-4o-mini", Group: "default"},
	}
	if err := ts.Store.CreateChannels(chs); err != nil {
		t.Fatal(err)
	}
	type state struct {
		Task     string `json:"task"`
		Running  bool   `json:"running"`
		Periodic bool   `json:"periodic"`
		Done     int    `json:"done"`
		Total    int    `json:"total"`
		Failed   int    `json:"failed"`
		Disabled int    `json:"disabled"`
	}
	read := func() state {
		var st state
		ApiScenario{URL: "/api/channel/test/progress", As: "admin", WantStatus: 200}.Test(t, ts).Envelope(t).DataInto(t, &st)
		return st
	}
	if st := read(); st != (state{Task: "channel_test"}) {
		t.Fatalf("before any run: %+v", st)
	}
	ApiScenario{Name: "User", URL: "/api/channel/test/progress", As: "user", WantStatus: 403}.Test(t, ts)

	ApiScenario{Name: "TestAll", URL: "/api/channel/test", As: "root", WantStatus: 200}.Test(t, ts)
	want := state{Task: "channel_test", Running: true, Done: 2, Total: 3, Failed: 1}
	deadline := time.Now().Add(30 * time.Second)
	for st := read(); st != want; st = read() {
		if time.Now().After(deadline) || !st.Running || st.Done > 2 {
			t.Fatalf("while the third channel is tested: %+v, want %+v", st, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	letGo()
	want = state{Task: "channel_test", Done: 3, Total: 3, Failed: 1}
	for st := read(); st != want; st = read() {
		if time.Now().After(deadline) {
			t.Fatalf("after the run: %+v, want %+v", st, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Channels added or deleted are pushed to administrators' consoles
// (channel.list), so an open channel list follows another console's
// creates, copies and deletes; a user's console gets none of it.
func TestLive_ChannelListChanges(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	cookie, _ := ts.MustSession(t, "root")
	admin := openLive(t, ts, cookie)
	userCookie, userID := ts.MustSession(t, "alice")
	user := openLive(t, ts, userCookie)
	created := func(name string) uint64 {
		t.Helper()
		r := ApiScenario{Method: "POST", URL: "/api/channel/", As: "root", WantStatus: 200,
			Body: `{"name":"` + name + `","type":1,"key":"sk-` + name + `","models":"gpt-4o-mini","group":"default"}`}.Test(t, ts)
		var out struct {
			Data []struct {
				ID uint64 `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &out); err != nil || len(out.Data) != 1 {
			t.Fatalf("create %s: %s", name, r.Body)
		}
		readTopic(t, admin, "channel.list")
		return out.Data[0].ID
	}
	one, two := created("listed-one"), created("listed-two")
	ApiScenario{Method: "POST", URL: "/api/channel/copy/" + strconv.FormatUint(one, 10), As: "root", WantStatus: 200}.Test(t, ts)
	readTopic(t, admin, "channel.list")
	ApiScenario{Method: "DELETE", URL: "/api/channel/" + strconv.FormatUint(one, 10), As: "root", WantStatus: 200}.Test(t, ts)
	readTopic(t, admin, "channel.list")
	ApiScenario{Method: "POST", URL: "/api/channel/batch", As: "root", WantStatus: 200, Body: `{"ids":[` + strconv.FormatUint(two, 10) + `]}`}.Test(t, ts)
	readTopic(t, admin, "channel.list")
	three := created("listed-three")
	off := store.ChannelStatusManuallyOff
	if _, err := ts.Store.UpdateChannel(three, store.ChannelUpdate{Status: &off}); err != nil {
		t.Fatal(err)
	}
	ApiScenario{Method: "DELETE", URL: "/api/channel/disabled", As: "root", WantStatus: 200}.Test(t, ts)
	readTopic(t, admin, "channel.list")

	// The user's console heard none of it: the next thing it gets is its own balance.
	ApiScenario{Method: "PUT", URL: "/api/user/self", Cookie: userCookie, UserID: userID, Body: `{"display_name":"Listless"}`, WantStatus: 200}.Test(t, ts)
	if m := readLive(t, user); m.Topic != "user.self" {
		t.Fatalf("a user's console got %s %s", m.Topic, m.Data)
	}
}
