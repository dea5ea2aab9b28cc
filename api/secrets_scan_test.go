package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/api"
	"gateway/policy"
	"gateway/relay"
	"gateway/store"
)

// secretScan is a gateway filled with distinctive secrets, and who may see
// each of them.
type secretScan struct {
	ts *TestServer
	// secrets maps each value to the accounts that may see it ("alice",
	// "inviter", "admin", "root"); a value no one may see maps to none.
	secrets map[string][]string
	mu      sync.Mutex
}

func (sc *secretScan) add(value string, seenBy ...string) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.secrets[value] = seenBy
}

// check fails when body, an answer to who, carries a value who may not see.
func (sc *secretScan) check(t *testing.T, who, what string, body []byte) {
	t.Helper()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for v, seenBy := range sc.secrets {
		allowed := false
		for _, s := range seenBy {
			allowed = allowed || s == who
		}
		if !allowed && strings.Contains(string(body), v) {
			t.Errorf("%s as %s: the answer carries %q: %.600s", what, who, v, body)
		}
	}
}

// The answers of every read and of the writes a console makes carry no
// secret their caller may not see: a user never sees another's token keys,
// e-mail, bindings, logs or balance; an administrator never a channel key,
// a password, another's access token or session, nor a secret option;
// nobody signed in only what the public pages show. The live socket of
// each role is held to the same rule while the changes happen, and the
// errors of a failing upstream do not carry its channel's key.
func TestSecretsReachOnlyWhoMaySeeThem(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t, func(c *api.Config) {
		c.Relay = relay.New(relay.Config{Store: c.Store, Events: api.RelayEvents{Hub: c.Hub, Store: c.Store}})
	})
	sc := &secretScan{ts: ts, secrets: map[string][]string{}}
	const (
		goodKey  = "sk-scanGoodChannelKey0001"
		echoKey  = "sk-scanEchoChannelKey0002"
		azureKey = "scanAzureChannelKey0003"
	)
	// The upstream: good for goodKey; anything else is refused with the key
	// it was given, and the request's headers, echoed.
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if auth == "" {
			auth = r.Header.Get("api-key")
		}
		if auth != goodKey {
			hdr, _ := json.Marshal(r.Header)
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s; headers %s","type":"invalid_request_error","code":"invalid_api_key"}}`, auth, strings.ReplaceAll(string(hdr), `"`, `'`))
			return
		}
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprint(w, `{"object":"list","data":[{"id":"gpt-4o-mini"}]}`)
		default:
			fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
		}
	}))
	t.Cleanup(up.Close)

	// Channel keys of every format: nobody sees them once saved.
	keys := map[int]string{
		1:  goodKey,
		3:  azureKey,
		41: `{"type":"service_account","project_id":"scan-proj","private_key_id":"scanVertexKeyId0004","private_key":"-----BEGIN PRIVATE KEY-----\nscanVertexPrivate0005\n-----END PRIVATE KEY-----\n","client_email":"scan@scan-proj.iam.gserviceaccount.com"}`,
		33: "AKIASCANACCESS0006|scanAwsSecret0007|us-east-1",
		15: "scanBaiduApi0008|scanBaiduSecret0009",
		18: "scanXfAppId0010|scanXfSecret0011|scanXfKey0012",
	}
	for _, v := range []string{goodKey, echoKey, azureKey, "scanVertexKeyId0004", "scanVertexPrivate0005", "scanAwsSecret0007", "AKIASCANACCESS0006", "scanBaiduApi0008", "scanBaiduSecret0009", "scanXfSecret0011", "scanXfKey0012"} {
		sc.add(v)
	}

	// A refused key disables its channel, with the upstream's message
	// as the reason the administrators read.
	ts.MustSetOptions(t, "AutomaticDisableChannelEnabled", "true")
	// Secret options: root sets them and never reads them back.
	secretOpts := map[string]string{
		"SMTPToken": "scanSmtpToken0101", "EpayKey": "scanEpayKey0102", "GitHubClientSecret": "scanGhSecret0103",
		"LinuxDOClientSecret": "scanLdSecret0104", "WeChatServerToken": "scanWxToken0105",
		"TelegramBotToken": "scanTgToken0106", "TurnstileSecretKey": "scanTsSecret0107", "WorkerValidKey": "scanWorkerKey0108",
	}
	for k, v := range secretOpts {
		ts.MustSetOptions(t, k, v)
		sc.add(v)
	}

	// The two users' details: their own and the administrators'.
	alice, bob := ts.UserID(t, "alice"), ts.UserID(t, "inviter")
	details := map[uint64]map[string]string{
		alice: {"email": aliceEmail, "gh": "scanGhAlice0201", "wx": "scanWxAlice0202", "tg": "scanTgAlice0203", "ld": "scanLdAlice0204"},
		bob:   {"email": "scan-bob@example.com", "gh": "scanGhBob0301", "wx": "scanWxBob0302", "tg": "scanTgBob0303", "ld": "scanLdBob0304"},
	}
	names := map[uint64]string{alice: "alice", bob: "inviter"}
	for id, d := range details {
		email, gh, wx, tg, ld := d["email"], d["gh"], d["wx"], d["tg"], d["ld"]
		if _, err := ts.Store.UpdateUser(id, store.UserUpdate{Email: &email, GitHubID: &gh, WeChatID: &wx, TelegramID: &tg, LinuxDOID: &ld}); err != nil {
			t.Fatal(err)
		}
		for _, v := range d {
			sc.add(v, names[id], "admin", "root")
		}
		quota := int64(7_654_321 + id)
		if _, err := ts.Store.UpdateUserAsAdmin("root", id, store.UserUpdate{}, &quota); err != nil {
			t.Fatal(err)
		}
	}
	// Passwords: nobody, ever (root's first-start one is too short to be
	// told from a number).
	for _, p := range []string{adminPassword, alicePassword, inviterPassword} {
		sc.add(p)
	}

	// Sessions and access tokens: their owner at most.
	cookies := map[string]string{}
	uids := map[string]uint64{}
	for _, name := range []string{"alice", "inviter", "admin", "root"} {
		cookies[name], uids[name] = ts.MustSession(t, name)
		sc.add(cookies[name])
		tok, err := ts.Store.ResetAccessToken(uids[name])
		if err != nil {
			t.Fatal(err)
		}
		sc.add(tok, name)
	}

	// Token keys: their owner's.
	tokens := map[string][]*store.Token{}
	for _, name := range []string{"alice", "inviter"} {
		for i := range 2 {
			tok, err := ts.Store.CreateToken(&store.Token{UserID: uids[name], Name: fmt.Sprintf("scan-%s-%d", name, i), UnlimitedQuota: true, ExpiredTime: -1})
			if err != nil {
				t.Fatal(err)
			}
			tokens[name] = append(tokens[name], tok)
			sc.add(tok.Key, name)
		}
	}
	// Top-up orders: their owner's and the administrators'.
	for name, no := range map[string]string{"alice": "scanTradeAlice0401", "inviter": "scanTradeBob0402"} {
		if err := ts.Store.CreateTopUp(&store.TopUp{UserID: uids[name], Amount: 1, Quota: 500000, Money: 7.3, TradeNo: no, PaymentMethod: "zfb"}); err != nil {
			t.Fatal(err)
		}
		sc.add(no, name, "admin", "root")
	}
	// Redemption codes: the administrators'.
	codes, err := ts.Store.CreateRedemptions(ts.UserID(t, "admin"), "scan", 1000, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range codes {
		sc.add(c.Key, "admin", "root")
	}

	// Live sockets of every role, read from their first message while
	// the changes below happen, until the last notice.
	var wg sync.WaitGroup
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	for _, name := range []string{"alice", "inviter", "admin", "root"} {
		// A separate session: the scan's requests use the ones above.
		cookie, _ := ts.MustSession(t, name)
		sc.add(cookie)
		c, _, err := dialLive(t, ts, cookie, nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, data, err := c.Read(ctx)
				if err != nil {
					t.Errorf("%s's live socket: %v", name, err)
					return
				}
				sc.check(t, name, "live message", data)
				if strings.Contains(string(data), "scan done") {
					return
				}
			}
		}()
	}

	call := func(who, method, path, body string, header map[string]string) []byte {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, ts.URL+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if who != policy.Guest {
			req.AddCookie(&http.Cookie{Name: "session", Value: cookies[who]})
			req.Header.Set("New-Api-User", fmt.Sprint(uids[who]))
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		sc.check(t, who, method+" "+path, data)
		for k, vs := range resp.Header {
			sc.check(t, who, method+" "+path+" header "+k, []byte(strings.Join(vs, " ")))
		}
		return data
	}

	// The administrator saves channels of every key format, edits, copies
	// and tests them and fetches their models.
	var chIDs []uint64
	for typ, key := range keys {
		// The good channel first: the relay's calls succeed and are logged.
		priority := 0
		if key == goodKey {
			priority = 10
		}
		body, _ := json.Marshal(map[string]any{"name": fmt.Sprint("scan-", typ), "type": typ, "key": key, "models": "gpt-4o-mini", "group": "default", "base_url": up.URL, "priority": priority, "auto_ban": 1, "other": map[int]string{3: "2024-02-01", 41: "us-central1"}[typ]})
		data := call("admin", "POST", "/api/channel/", string(body), nil)
		var env struct {
			Data []struct {
				ID uint64 `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(data, &env); err != nil || len(env.Data) != 1 {
			t.Fatalf("create channel type %d: %s", typ, data)
		}
		chIDs = append(chIDs, env.Data[0].ID)
	}
	echo := &store.Channel{Type: 1, Name: "scan-echo", Key: echoKey, BaseURL: up.URL, Models: "gpt-4o-mini", Group: "default", Priority: 20, AutoBan: 1}
	if err := ts.Store.CreateChannels([]*store.Channel{echo}); err != nil {
		t.Fatal(err)
	}
	chIDs = append(chIDs, echo.ID)
	// A user's call meets the refusing channel first: its message, key
	// hidden, reaches the user, and the channel is disabled.
	if data := call("alice", "POST", "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"Authorization": "Bearer sk-" + tokens["alice"][0].Key}); !strings.Contains(string(data), "Incorrect API key provided") {
		t.Fatalf("the refusing channel's message did not reach the caller: %s", data)
	}
	for _, id := range chIDs {
		for _, who := range []string{"admin", "root"} {
			call(who, "PUT", "/api/channel/", fmt.Sprintf(`{"id":%d,"name":"scan-renamed-%d"}`, id, id), nil)
			call(who, "GET", fmt.Sprintf("/api/channel/test/%d", id), "", nil)
			call(who, "GET", fmt.Sprintf("/api/channel/fetch_models/%d", id), "", nil)
			call(who, "POST", "/api/channel/fetch_models", fmt.Sprintf(`{"id":%d,"type":1,"base_url":%q}`, id, up.URL), nil)
			call(who, "GET", fmt.Sprintf("/api/channel/update_balance/%d", id), "", nil)
		}
		call("admin", "POST", fmt.Sprintf("/api/channel/copy/%d", id), "", nil)
	}
	call("admin", "GET", "/api/channel/update_balance", "", nil)

	// The users call the relay: logs with admin detail, charges, balances;
	// the echoing channel fails first, and its message is relayed.
	for _, toks := range tokens {
		for _, tok := range toks {
			call(policy.Guest, "POST", "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`,
				map[string]string{"Authorization": "Bearer sk-" + tok.Key, "X-Forwarded-For": "203.0.113.77"})
		}
	}
	// Options saved by root, secret ones included.
	for k, v := range secretOpts {
		call("root", "PUT", "/api/option/", fmt.Sprintf(`{"key":%q,"value":%q}`, k, v), nil)
	}
	call("root", "PUT", "/api/option/", `{"key":"Notice","value":"scan notice"}`, nil)
	// The users' own token writes.
	for name, toks := range tokens {
		call(name, "PUT", "/api/token/", fmt.Sprintf(`{"id":%d,"name":"scan-edited","expired_time":-1,"unlimited_quota":true}`, toks[0].ID), nil)
		call(name, "GET", "/api/token/search?keyword=scan", "", nil)
	}
	// Each token key asked of the public log lookup by a stranger.
	for _, toks := range tokens {
		for _, tok := range toks {
			data := call(policy.Guest, "GET", "/api/log/token?key="+url.QueryEscape("sk-"+tok.Key), "", nil)
			if strings.Contains(string(data), "admin_info") {
				t.Errorf("the public token log lookup carries admin detail: %.400s", data)
			}
		}
	}

	// Every read of every role, with each id the gateway holds.
	ids := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16"}
	skip := map[string]bool{
		"GET /api/user/logout": true, "GET /api/ws": true, "GET /api/backup": true,
		"GET /api/user/token": true, "GET /api/channel/test": true, "GET /api/channel/update_balance": true,
		"GET /api/oauth/github": true, "GET /api/oauth/linuxdo": true, "GET /api/oauth/wechat": true,
		"GET /api/oauth/telegram/login": true, "GET /api/oauth/telegram/bind": true, "GET /api/oauth/wechat/bind": true,
		"GET /api/oauth/email/bind": true, "GET /api/verification": true, "GET /api/reset_password": true,
	}
	for _, who := range []string{policy.Guest, "alice", "inviter", "admin", "root"} {
		for _, r := range ts.API.Routes() {
			if r.Method != "GET" || skip[r.Method+" "+r.Path] {
				continue
			}
			if !strings.Contains(r.Path, "{id}") {
				path := strings.ReplaceAll(r.Path, "{$}", "")
				call(who, "GET", path+"?p=0&page_size=100&keyword=scan", "", nil)
				call(who, "GET", path, "", nil)
				continue
			}
			for _, id := range ids {
				call(who, "GET", strings.ReplaceAll(r.Path, "{id}", id), "", nil)
			}
		}
		// The log and dashboard lists, every type, all time.
		for _, path := range []string{"/api/log/", "/api/log/self", "/api/log/self/search?keyword=2", "/api/log/search?keyword=",
			"/api/data/", "/api/data/self", "/api/user/search?keyword=", "/api/token/search?keyword="} {
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			call(who, "GET", path+sep+"start_timestamp=0&end_timestamp=9999999999&type=0&page_size=100", "", nil)
		}
	}
	// The scan reads what it should: the owners' and administrators'
	// views do carry what they may see.
	for who, want := range map[string]string{"alice": tokens["alice"][0].Key, "inviter": tokens["inviter"][0].Key, "admin": aliceEmail, "root": "scanTradeBob0402"} {
		path := map[string]string{"alice": "/api/token/", "inviter": "/api/token/", "admin": "/api/user/", "root": "/api/topup/"}[who]
		if data := call(who, "GET", path, "", nil); !strings.Contains(string(data), want) {
			t.Errorf("GET %s as %s lacks %q: %.400s", path, who, want, data)
		}
	}
	if data := call("admin", "GET", "/api/log/?type=2", "", nil); !strings.Contains(string(data), "admin_info") {
		t.Errorf("the administrators' log list lacks the relay's entries: %.400s", data)
	}
	// Balances changed by an administrator reach their owners; then a
	// last notice ends the sockets' reading.
	for _, name := range []string{"alice", "inviter"} {
		quota := int64(2_500_000)
		if _, err := ts.Store.UpdateUserAsAdmin("admin", uids[name], store.UserUpdate{}, &quota); err != nil {
			t.Fatal(err)
		}
	}
	ts.MustSetOptions(t, "Notice", "scan done")
	wg.Wait()
}
