package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"gateway/api"
	"gateway/policy"
	"gateway/store"
	"gateway/store/storetest"
	"gateway/ws"
)

// The fixture (storetest): the accounts below, shared by every test,
// never a store.
var fixture storetest.Fixture

// Fixture accounts and their passwords.
const (
	rootPassword    = "123456" // the first-start password
	adminPassword   = "admin-pass-1"
	alicePassword   = "alice-pass-1"
	bannedPassword  = "banned-pass-1"
	inviterPassword = "inviter-pass-1"

	aliceEmail = "alice@example.com"

	// fixtureInviterReward is QuotaForInviter while the fixture's invitee
	// registered, so the inviter holds that much real aff_quota.
	fixtureInviterReward = 2_000_000
)

// The users the roles of a scenario act as.
var roleUser = map[string]string{
	policy.User:  "alice",
	policy.Admin: "admin",
	policy.Root:  "root",
}

func TestMain(m *testing.M) {
	storetest.Main(m, func() (err error) {
		fixture, err = storetest.Build("api", fillFixture)
		return err
	})
}

func fillFixture(st *store.Store, ids map[string]uint64) error {
	if _, err := st.EnsureRoot(); err != nil {
		return err
	}
	if err := st.UpdateOption("QuotaForInviter", strconv.Itoa(fixtureInviterReward)); err != nil {
		return err
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	create := func(in store.NewUser, then func(*store.User) error) {
		u, err := st.CreateUser(in)
		if err == nil && then != nil {
			err = then(u)
		}
		if err != nil {
			errs <- fmt.Errorf("%s: %w", in.Username, err)
			return
		}
		mu.Lock()
		ids[u.Username] = u.ID
		mu.Unlock()
	}
	// Two chains, so the bcrypt work uses both cores. The administrator is
	// the inviter's invitee: one account fewer to hash.
	wg.Add(2)
	go func() {
		defer wg.Done()
		create(store.NewUser{Username: "alice", Password: alicePassword, Email: aliceEmail}, nil)
		create(store.NewUser{Username: "banned", Password: bannedPassword}, func(u *store.User) error {
			status := store.UserStatusDisabled
			_, err := st.UpdateUser(u.ID, store.UserUpdate{Status: &status})
			return err
		})
	}()
	go func() {
		defer wg.Done()
		create(store.NewUser{Username: "inviter", Password: inviterPassword}, func(inviter *store.User) error {
			admin, err := st.CreateUser(store.NewUser{Username: "admin", Password: adminPassword, InviterCode: inviter.AffCode})
			if err != nil {
				return err
			}
			role := store.RoleAdmin
			if _, err := st.UpdateUser(admin.ID, store.UserUpdate{Role: &role}); err != nil {
				return err
			}
			mu.Lock()
			ids[admin.Username] = admin.ID
			mu.Unlock()
			return nil
		})
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	return st.UpdateOption("QuotaForInviter", "0")
}

// testUI stands in for the built console.
var testUI = fstest.MapFS{
	"index.html":         {Data: []byte("<!doctype html><title>console index</title>")},
	"app.1a2b3c4d.js":    {Data: []byte("console.log('hashed')")},
	"logo.png":           {Data: []byte("\x89PNG\r\n\x1a\nlogo")},
	"assets/style.css":   {Data: []byte("body{}")},
	"assets/sub/dir.txt": {Data: []byte("nested")},
}

// TestServer is an httptest server over api.New with a real store copied
// from the fixture.
type TestServer struct {
	*httptest.Server
	API    *api.Server
	Store  *store.Store
	Hub    *ws.Hub
	Config api.Config
}

// MustStartServer starts a server on a private copy of the fixture; opts
// adjust the configuration before the server is built.
func MustStartServer(tb testing.TB, opts ...func(*api.Config)) *TestServer {
	tb.Helper()
	st := fixture.Open(tb, "gateway.db", store.Options{NoSync: true})
	pol, err := policy.New()
	if err != nil {
		tb.Fatalf("policy: %v", err)
	}
	hub := ws.NewHub()
	// The same wiring as main.go.
	st.SetHooks(store.Hooks{
		UserChanged:     func(u *store.User) { api.PublishUser(hub, u) },
		SettingsChanged: func(s *store.Settings) { api.PublishNotice(hub, s.Get("Notice")) },
		Charged:         func(b store.ChargeBatch) { api.PublishCharges(hub, b) },
	})
	cfg := api.Config{
		Store: st, Policy: pol, Hub: hub, UI: testUI,
		Version: "test-version", StartTime: time.Unix(1_700_000_000, 0),
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv := api.New(cfg)
	ts := httptest.NewServer(srv)
	tb.Cleanup(func() {
		ts.Close()
		srv.Close()
		if err := st.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	return &TestServer{Server: ts, API: srv, Store: st, Hub: hub, Config: cfg}
}

// MustSetOptions saves options in order, failing the test on refusal.
func (ts *TestServer) MustSetOptions(tb testing.TB, kv ...string) {
	tb.Helper()
	if len(kv)%2 != 0 {
		tb.Fatal("MustSetOptions needs key/value pairs")
	}
	var opts []store.Option
	for i := 0; i < len(kv); i += 2 {
		opts = append(opts, store.Option{Key: kv[i], Value: kv[i+1]})
	}
	if err := ts.Store.UpdateOptions(opts); err != nil {
		tb.Fatalf("set options %v: %v", kv, err)
	}
}

// UserID returns the id of a fixture account.
func (ts *TestServer) UserID(tb testing.TB, username string) uint64 {
	tb.Helper()
	u, err := ts.Store.UserByUsername(username)
	if err != nil {
		tb.Fatalf("user %q: %v", username, err)
	}
	return u.ID
}

// MustSession starts a login session for username without the cost of a
// password check and returns the cookie value.
func (ts *TestServer) MustSession(tb testing.TB, username string) (cookie string, id uint64) {
	tb.Helper()
	id = ts.UserID(tb, username)
	cookie, _, err := ts.Store.CreateSession(id)
	if err != nil {
		tb.Fatal(err)
	}
	return cookie, id
}

// Response is a finished request with its body read.
type Response struct {
	*http.Response
	Body []byte
}

// Envelope decodes the {success, message, data} body.
func (r *Response) Envelope(tb testing.TB) Envelope {
	tb.Helper()
	var e Envelope
	if err := json.Unmarshal(r.Body, &e); err != nil {
		tb.Fatalf("body is not an envelope: %v: %s", err, r.Body)
	}
	return e
}

// Envelope is the shape of every /api answer.
type Envelope struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// DataInto decodes data into v.
func (e Envelope) DataInto(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(e.Data, v); err != nil {
		tb.Fatalf("data: %v: %s", err, e.Data)
	}
}

// Cookie returns the Set-Cookie of name, or nil.
func (r *Response) Cookie(name string) *http.Cookie {
	for _, c := range r.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// ApiScenario is one request and what its answer must look like
// (PocketBase's tests.ApiScenario).
type ApiScenario struct {
	Name    string
	Method  string
	URL     string
	Headers map[string]string
	Body    string
	// As is who makes the request: "" or "guest" for nobody, a role
	// ("user", "admin", "root") for its fixture account, or any fixture
	// username. A fresh session is started for the request.
	As string
	// Cookie, when set, is sent as the session cookie (with New-Api-User
	// from UserID) instead of a fresh session.
	Cookie string
	UserID uint64
	// Before runs before the request.
	Before func(tb testing.TB, ts *TestServer)

	WantStatus      int
	WantContains    []string
	WantNotContains []string
}

// Do sends the scenario's request and returns the answer unchecked.
func (sc ApiScenario) Do(tb testing.TB, ts *TestServer) *Response {
	tb.Helper()
	if sc.Before != nil {
		sc.Before(tb, ts)
	}
	method := sc.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if sc.Body != "" {
		body = strings.NewReader(sc.Body)
	}
	req, err := http.NewRequest(method, ts.URL+sc.URL, body)
	if err != nil {
		tb.Fatal(err)
	}
	if sc.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	cookie, uid := sc.Cookie, sc.UserID
	if cookie == "" && sc.As != "" && sc.As != policy.Guest {
		name := sc.As
		if u, ok := roleUser[name]; ok {
			name = u
		}
		cookie, uid = ts.MustSession(tb, name)
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: "session", Value: cookie})
		req.Header.Set("New-Api-User", strconv.FormatUint(uid, 10))
	}
	for k, v := range sc.Headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, sc.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return &Response{Response: resp, Body: data}
}

// Test runs the scenario and checks its expectations.
func (sc ApiScenario) Test(tb testing.TB, ts *TestServer) *Response {
	tb.Helper()
	r := sc.Do(tb, ts)
	if sc.WantStatus != 0 && r.StatusCode != sc.WantStatus {
		tb.Fatalf("%s %s: status %d, want %d; body %s", sc.Method, sc.URL, r.StatusCode, sc.WantStatus, r.Body)
	}
	for _, s := range sc.WantContains {
		if !bytes.Contains(r.Body, []byte(s)) {
			tb.Errorf("%s %s: body does not contain %q: %s", sc.Method, sc.URL, s, r.Body)
		}
	}
	for _, s := range sc.WantNotContains {
		if bytes.Contains(r.Body, []byte(s)) {
			tb.Errorf("%s %s: body contains %q: %s", sc.Method, sc.URL, s, r.Body)
		}
	}
	return r
}

// runScenarios runs each scenario as a subtest, in order, on ts.
func runScenarios(t *testing.T, ts *TestServer, scenarios []ApiScenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) { sc.Test(t, ts) })
	}
}

// jsonString quotes s as a JSON string, for WantContains on messages.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// msg is the WantContains form of an envelope message.
func msg(s string) string { return `"message":` + jsonString(s) }

// Messages the guard answers with.
const (
	msgNotLoggedIn   = "未登录或登录已过期，请重新登录！"
	msgNoCredentials = "无权进行此操作，未登录且未提供 access token"
	msgNoPermission  = "无权进行此操作，权限不足"
)

// together runs f(0), …, f(n-1) in goroutines released at the same moment,
// and waits for them all: requests racing each other.
func together(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}
