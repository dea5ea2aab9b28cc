package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/api"
	"gateway/egress"
	"gateway/policy"
	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/store"
	"gateway/store/storetest"
	"gateway/ws"
)

// The fixture (storetest), as the api tests have: every test needs the
// same few accounts. Tests share the accounts, never a store.
var fixture storetest.Fixture

// Prices the fixture sets, so the tests compute expected charges from
// numbers they own rather than from the gateway's defaults.
const (
	ratioModel      = "test-model" // ratio priced
	ratioModelMR    = 1.5
	ratioModelCR    = 2.0
	miniModel       = "gpt-4o-mini" // ratio priced, completion ratio from the built-in rule (4)
	miniModelMR     = 0.075
	miniModelCR     = 4.0
	embedModel      = "text-embedding-3-small"
	embedModelMR    = 0.01
	fixedModel      = "fixed-model" // ModelPrice 0.001 $ per call
	fixedModelPrice = 0.001
	unpricedModel   = "no-price-model"
	quotaPerUnit    = 500000.0
	vipGroupRatio   = 0.5

	// fixedCost is what one call of fixedModel costs in the default group.
	fixedCost = int64(fixedModelPrice * quotaPerUnit)

	// The accounts: alice has a big balance, fifty exactly fifty calls of
	// fixedModel, and root its first-start quota (plus fifty's, given to
	// every account created in the same phase).
	aliceQuota = int64(1_000_000_000)
	fiftyQuota = 50 * fixedCost
)

func TestMain(m *testing.M) {
	storetest.Main(m, func() (err error) {
		fixture, err = storetest.Build("relay", fillFixture)
		return err
	})
}

func fillFixture(st *store.Store, ids map[string]uint64) error {
	if err := st.UpdateOptions([]store.Option{
		{Key: "ModelRatio", Value: fmt.Sprintf(`{%q:%v,%q:%v,%q:%v}`, ratioModel, ratioModelMR, miniModel, miniModelMR, embedModel, embedModelMR)},
		{Key: "CompletionRatio", Value: fmt.Sprintf(`{%q:%v}`, ratioModel, ratioModelCR)},
		{Key: "ModelPrice", Value: fmt.Sprintf(`{%q:%v}`, fixedModel, fixedModelPrice)},
		{Key: "GroupRatio", Value: fmt.Sprintf(`{"default":1,"vip":%v,"svip":1}`, vipGroupRatio)},
		{Key: "QuotaPerUnit", Value: strconv.FormatFloat(quotaPerUnit, 'f', -1, 64)},
	}); err != nil {
		return err
	}
	var mu sync.Mutex
	// QuotaForNewUser is the ledger-safe way to give an account quota. Each
	// phase creates, in parallel, the accounts that get the same amount
	// (root gets it on top of its first-start quota).
	phases := []struct {
		quota int64
		names []string
	}{{fiftyQuota, []string{"root", "fifty"}}, {aliceQuota, []string{"alice"}}}
	for _, ph := range phases {
		if err := st.UpdateOption("QuotaForNewUser", strconv.FormatInt(ph.quota, 10)); err != nil {
			return err
		}
		errs := make(chan error, len(ph.names))
		for _, name := range ph.names {
			if name == "root" {
				// Root is created only while the store has no user: first.
				_, err := st.EnsureRoot()
				errs <- err
				continue
			}
			go func() {
				u, err := st.CreateUser(store.NewUser{Username: name, Password: name + "-pass-1"})
				if err == nil {
					mu.Lock()
					ids[name] = u.ID
					mu.Unlock()
				}
				errs <- err
			}()
		}
		for range ph.names {
			if err := <-errs; err != nil {
				return err
			}
		}
	}
	return st.UpdateOption("QuotaForNewUser", "0")
}

// gatewayConfig varies a test gateway.
type gatewayConfig struct {
	// Durable opens the store with fsync on, as production does.
	Durable bool
	// Relay carries the relay's timeouts; Store, Client and ClientIP are
	// filled in. Zero timeouts get short test values.
	Relay          relay.Config
	TrustedProxies []netip.Prefix
	// DefaultClientIP leaves relay.Config.ClientIP unset (the relay's own
	// default) instead of the trusted-proxy rule.
	DefaultClientIP bool
	// UpstreamClient replaces the guarded client for upstream calls.
	UpstreamClient *http.Client
	// Options are stored before the server starts.
	Options map[string]string
	// Wrap, when set, wraps the whole HTTP front (to watch responses).
	Wrap func(http.Handler) http.Handler
	// Mail, when set, sends the channel mails to root instead of SMTP.
	Mail api.MailFunc
}

// gateway is the whole HTTP front (api.Server with the relay mounted) over
// a temp copy of the fixture, behind httptest.
type gateway struct {
	st     *store.Store
	srv    *httptest.Server
	client *http.Client
	rl     *relay.Relay
	mail   *api.ChannelMailer // mails root about channel health
	// bodyRead is sent on when the gateway first reads the body of a
	// request marked with slowUploadHeader: it has let the call in.
	bodyRead chan struct{}
}

// slowUploadHeader marks the requests whose first body read is reported
// on gateway.bodyRead.
const slowUploadHeader = "X-Test-Slow-Upload"

// bodyReadReporter reports the first read of its body on read.
type bodyReadReporter struct {
	io.ReadCloser
	once sync.Once
	read chan<- struct{}
}

func (b *bodyReadReporter) Read(p []byte) (int, error) {
	b.once.Do(func() { b.read <- struct{}{} })
	return b.ReadCloser.Read(p)
}

// MustOpenGateway starts a gateway for one test.
func MustOpenGateway(tb testing.TB, cfg gatewayConfig) *gateway {
	tb.Helper()
	st := fixture.Open(tb, "g.db", store.Options{NoSync: !cfg.Durable})
	tb.Cleanup(func() { st.Close() })
	if len(cfg.Options) > 0 {
		var opts []store.Option
		for k, v := range cfg.Options {
			opts = append(opts, store.Option{Key: k, Value: v})
		}
		if err := st.UpdateOptions(opts); err != nil {
			tb.Fatalf("options: %v", err)
		}
	}
	pol, err := policy.New()
	if err != nil {
		tb.Fatal(err)
	}
	rc := cfg.Relay
	rc.Store = st
	// The gateway's own guarded client, allowed to reach the loopback
	// httptest upstreams: plain-http calls take its inline path.
	rc.Client = egress.New(egress.Config{AllowPrivate: true}).HTTP()
	if cfg.UpstreamClient != nil {
		rc.Client = cfg.UpstreamClient
	}
	trusted := cfg.TrustedProxies
	if !cfg.DefaultClientIP {
		rc.ClientIP = func(r *http.Request) string { return api.ClientIP(trusted, r) }
	}
	if rc.StreamIdleTimeout == 0 {
		rc.StreamIdleTimeout = 5 * time.Second
	}
	if rc.FirstByteTimeout == 0 {
		rc.FirstByteTimeout = 5 * time.Second
	}
	if rc.RelayTimeout == 0 {
		rc.RelayTimeout = 10 * time.Second
	}
	hub := ws.NewHub()
	var mailer *api.ChannelMailer
	if cfg.Mail != nil {
		mailer = api.NewChannelMailer(st, cfg.Mail)
	}
	rc.Events = api.RelayEvents{Hub: hub, Store: st, Mail: mailer}
	rl := relay.New(rc)
	srv := api.New(api.Config{
		Store: st, Policy: pol, Hub: hub, HTTPClient: http.DefaultClient,
		Relay: rl, TrustedProxies: trusted, ChannelMail: mailer,
	})
	bodyRead := make(chan struct{}, 1)
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(slowUploadHeader) != "" {
			r.Body = &bodyReadReporter{ReadCloser: r.Body, read: bodyRead}
		}
		srv.ServeHTTP(w, r)
	})
	if cfg.Wrap != nil {
		h = cfg.Wrap(h)
	}
	ts := httptest.NewServer(h)
	// Close the server before the store: in-flight charges finish first.
	tb.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return &gateway{st: st, srv: ts, client: &http.Client{Timeout: 30 * time.Second}, rl: rl, mail: srv.ChannelMailer(), bodyRead: bodyRead}
}

// MustCreateChannel creates an enabled OpenAI channel on up for models.
func (g *gateway) MustCreateChannel(tb testing.TB, up *relaytest.Upstream, models string, edit func(c *store.Channel)) *store.Channel {
	tb.Helper()
	c := &store.Channel{Type: relay.TypeOpenAI, Name: "ch-" + models, Key: up.Key, BaseURL: up.URL,
		Models: models, Group: "default,vip", AutoBan: 1}
	if edit != nil {
		edit(c)
	}
	if err := g.st.CreateChannels([]*store.Channel{c}); err != nil {
		tb.Fatalf("create channel: %v", err)
	}
	return c
}

// MustCreateToken creates a token for user and returns it with its key
// ("sk-...").
func (g *gateway) MustCreateToken(tb testing.TB, user string, t store.Token) (*store.Token, string) {
	tb.Helper()
	t.UserID = fixture.IDs[user]
	if t.Name == "" {
		t.Name = "t"
	}
	if t.RemainQuota == 0 && !t.UnlimitedQuota {
		t.UnlimitedQuota = true
	}
	created, err := g.st.CreateToken(&t)
	if err != nil {
		tb.Fatalf("create token: %v", err)
	}
	return created, "sk-" + created.Key
}

// result is a relay answer as the client saw it.
type result struct {
	Status int
	Header http.Header
	Body   []byte
}

// apiError is OpenAI's error object.
type apiError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   string `json:"param"`
		Code    any    `json:"code"`
	} `json:"error"`
}

func (r result) err(tb testing.TB) apiError {
	tb.Helper()
	var e apiError
	if err := json.Unmarshal(r.Body, &e); err != nil || e.Error.Message == "" {
		tb.Fatalf("want an OpenAI error object, got %d %s", r.Status, r.Body)
	}
	return e
}

// wantError checks the status and the error code of a failed call.
func (r result) wantError(tb testing.TB, status int, code string) apiError {
	tb.Helper()
	if r.Status != status {
		tb.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	e := r.err(tb)
	if fmt.Sprint(e.Error.Code) != code {
		tb.Fatalf("code = %v, want %s; body %s", e.Error.Code, code, r.Body)
	}
	return e
}

// get reads path with the Authorization header given (a bearer token, or
// a console access token) and returns the status and the body.
func (g *gateway) get(tb testing.TB, authorization, path string) (int, []byte) {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodGet, g.srv.URL+path, nil)
	req.Header.Set("Authorization", authorization)
	resp, err := g.client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, body
}

// post sends body (JSON-encoded unless it is a string) to path with key.
func (g *gateway) post(tb testing.TB, key, path string, body any, header ...string) result {
	tb.Helper()
	return g.postCtx(tb, context.Background(), key, path, body, header...)
}

func (g *gateway) postCtx(tb testing.TB, ctx context.Context, key, path string, body any, header ...string) result {
	tb.Helper()
	res, err := g.do(ctx, key, path, body, header...)
	if err != nil {
		tb.Fatalf("POST %s: %v", path, err)
	}
	return res
}

// do is post for any goroutine: it returns errors instead of failing.
func (g *gateway) do(ctx context.Context, key, path string, body any, header ...string) (result, error) {
	var data []byte
	if s, ok := body.(string); ok {
		data = []byte(s)
	} else {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return result{}, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.srv.URL+path, bytes.NewReader(data))
	if err != nil {
		return result{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return result{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	res := result{Status: resp.StatusCode, Header: resp.Header, Body: b}
	if err != nil {
		// What came before a cut connection, with the error.
		return res, fmt.Errorf("read: %w", err)
	}
	return res, nil
}

// chat is a chat request body with one user message.
func chat(model, content string) map[string]any {
	return map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": content}}}
}

// streamChat is chat with stream on and, when includeUsage, the
// stream_options asking for usage.
func streamChat(model, content string, includeUsage bool) map[string]any {
	b := chat(model, content)
	b["stream"] = true
	if includeUsage {
		b["stream_options"] = map[string]any{"include_usage": true}
	}
	return b
}

// ratioQuota is the final quota of the ratio formula:
// round((p + round(c × CR)) × MR × GR), at least 1 when anything was used.
func ratioQuota(p, c int, mr, cr, gr float64) int64 {
	if p+c == 0 {
		return 0
	}
	q := math.Round((float64(p) + math.Round(float64(c)*cr)) * mr * gr)
	if q < 1 {
		q = 1
	}
	return int64(q)
}

// balances is every balance a charge moves.
type balances struct {
	UserQuota, UserUsed, UserCount int64
	TokenRemain, TokenUsed         int64
	Channels                       map[uint64]int64
}

func (g *gateway) balances(tb testing.TB, user string, tokenID uint64, channels ...*store.Channel) balances {
	tb.Helper()
	u, err := g.st.User(fixture.IDs[user])
	if err != nil {
		tb.Fatal(err)
	}
	b := balances{UserQuota: u.Quota, UserUsed: u.UsedQuota, UserCount: u.RequestCount, Channels: map[uint64]int64{}}
	if tokenID != 0 {
		t, err := g.st.Token(0, tokenID)
		if err != nil {
			tb.Fatal(err)
		}
		b.TokenRemain, b.TokenUsed = t.RemainQuota, t.UsedQuota
	}
	for _, c := range channels {
		fresh, err := g.st.Channel(c.ID)
		if err != nil {
			tb.Fatal(err)
		}
		b.Channels[c.ID] = fresh.UsedQuota
	}
	return b
}

// consumeLogs returns the user's consume logs, newest first.
func (g *gateway) consumeLogs(tb testing.TB, user string) []*store.Log {
	tb.Helper()
	page, err := g.st.Logs(store.LogFilter{Type: store.LogTypeConsume, UserID: fixture.IDs[user]}, 1, 100000)
	if err != nil {
		tb.Fatal(err)
	}
	return page.Items
}

// logOther is the part of a consume log's other field the tests read.
type logOther struct {
	RequestID     string  `json:"request_id"`
	ModelRatio    float64 `json:"model_ratio"`
	GroupRatio    float64 `json:"group_ratio"`
	ModelPrice    float64 `json:"model_price"`
	FRT           int64   `json:"frt"`
	UpstreamModel string  `json:"upstream_model"`
	AdminInfo     struct {
		UseChannel []uint64 `json:"use_channel"`
	} `json:"admin_info"`
}

func other(tb testing.TB, l *store.Log) logOther {
	tb.Helper()
	var o logOther
	if err := json.Unmarshal([]byte(l.Other), &o); err != nil {
		tb.Fatalf("log other %q: %v", l.Other, err)
	}
	return o
}

// eventually polls cond until it holds or the deadline passes.
func eventually(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// wantMoved checks that the user, the token and the channel each moved by
// exactly quota (and the user's request count by calls) between before and
// after.
func wantMoved(tb testing.TB, before, after balances, tokenLimited bool, channelID uint64, quota, calls int64) {
	tb.Helper()
	if d := before.UserQuota - after.UserQuota; d != quota {
		tb.Errorf("user quota moved by %d, want %d", d, quota)
	}
	if d := after.UserUsed - before.UserUsed; d != quota {
		tb.Errorf("user used_quota moved by %d, want %d", d, quota)
	}
	if d := after.UserCount - before.UserCount; d != calls {
		tb.Errorf("user request_count moved by %d, want %d", d, calls)
	}
	if d := after.TokenUsed - before.TokenUsed; d != quota {
		tb.Errorf("token used_quota moved by %d, want %d", d, quota)
	}
	if tokenLimited {
		if d := before.TokenRemain - after.TokenRemain; d != quota {
			tb.Errorf("token remain_quota moved by %d, want %d", d, quota)
		}
	}
	if channelID != 0 {
		if d := after.Channels[channelID] - before.Channels[channelID]; d != quota {
			tb.Errorf("channel %d used_quota moved by %d, want %d", channelID, d, quota)
		}
	}
}

// okChat is an upstream handler that checks a non-stream chat request for
// model and answers content with usage.
func okChat(tb testing.TB, model, content string, usage *relaytest.Usage) relaytest.Handler {
	return func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		if req.Model() != model {
			tb.Errorf("upstream got model %q, want %q", req.Model(), model)
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			tb.Errorf("upstream Content-Type = %q", ct)
		}
		relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion(model, content, usage))
	}
}
