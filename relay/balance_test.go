package relay_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/store"
)

// billingUpstream speaks OpenAI's billing endpoints (S §5.11): the
// subscription's hard limit in dollars and the usage in cents over the
// queried dates, which it records.
type billingUpstream struct {
	*relaytest.Upstream
	mu      sync.Mutex
	queries []url.Values
	orgs    []string // OpenAI-Organization of each subscription query
}

func newBillingUpstream(t *testing.T, key string, hasPayment bool, hardLimitUSD, usageCents float64) *billingUpstream {
	b := &billingUpstream{}
	b.Upstream = relaytest.New(t, key, relaytest.Routes{
		"GET /v1/dashboard/billing/subscription": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			b.mu.Lock()
			b.orgs = append(b.orgs, r.Header.Get("OpenAI-Organization"))
			b.mu.Unlock()
			relaytest.WriteJSON(w, http.StatusOK, map[string]any{"object": "billing_subscription",
				"has_payment_method": hasPayment, "hard_limit_usd": hardLimitUSD})
		},
		"GET /v1/dashboard/billing/usage": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			b.mu.Lock()
			b.queries = append(b.queries, r.URL.Query())
			b.mu.Unlock()
			relaytest.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "total_usage": usageCents})
		},
	})
	return b
}

func (b *billingUpstream) lastQuery(t *testing.T) url.Values {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queries) == 0 {
		t.Fatal("the usage endpoint was not asked")
	}
	return b.queries[len(b.queries)-1]
}

func channelBalance(t *testing.T, g *gateway, id uint64) (float64, int64) {
	t.Helper()
	c, err := g.st.Channel(id)
	if err != nil {
		t.Fatal(err)
	}
	return c.Balance, c.BalanceUpdatedTime
}

// Balances (S §5.11): OpenAI and custom channels read the billing endpoints
// (hard limit minus usage; usage from the first of the month, or the last
// 100 days without a payment method); other types are refused one by one
// and left out of update-all, as are disabled channels; the periodic job
// refreshes them when ChannelBalanceInterval is set.
func TestChannelBalance(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	ctx := context.Background()

	paid := newBillingUpstream(t, "sk-paid", true, 120, 2050) // 120 − 20.50 = 99.50
	trial := newBillingUpstream(t, "sk-trial", false, 5, 125) // 5 − 1.25 = 3.75
	refused := relaytest.New(t, "sk-refused", relaytest.Routes{
		"GET /v1/dashboard/billing/subscription": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			relaytest.WriteError(w, http.StatusForbidden, "invalid_request_error", "", "billing is not available")
		},
	})
	// Any request to this one is a test failure (relaytest reports unknown routes).
	silent := relaytest.New(t, "sk-silent", relaytest.Routes{})

	openai := g.MustCreateChannel(t, paid.Upstream, "m-openai", func(c *store.Channel) { c.OpenAIOrganization = "org-billed" })
	custom := g.MustCreateChannel(t, trial.Upstream, "m-custom", func(c *store.Channel) {
		c.Type = relay.TypeCustom
		c.BaseURL = trial.URL + "/v1/chat/completions" // a custom base is the whole endpoint
	})
	failing := g.MustCreateChannel(t, refused, "m-failing", nil)
	azure := g.MustCreateChannel(t, silent, "m-azure", func(c *store.Channel) { c.Type = relay.TypeAzure })
	off := g.MustCreateChannel(t, silent, "m-off", nil)
	if _, _, err := g.st.SetChannelStatusAuto(off.ID, store.ChannelStatusAutoDisabled, "test"); err != nil {
		t.Fatal(err)
	}

	b, err := g.rl.UpdateBalance(ctx, openai)
	if err != nil || b != 99.5 {
		t.Fatalf("openai balance = %v, %v; want 99.5", b, err)
	}
	if stored, at := channelBalance(t, g, openai.ID); stored != 99.5 || at == 0 {
		t.Fatalf("stored balance %v at %d", stored, at)
	}
	// The organisation the channel's calls are billed to is the one asked.
	paid.mu.Lock()
	orgs := append([]string(nil), paid.orgs...)
	paid.mu.Unlock()
	if len(orgs) != 1 || orgs[0] != "org-billed" {
		t.Errorf("subscription asked for organisations %q", orgs)
	}
	now := time.Now().UTC()
	q := paid.lastQuery(t)
	if want := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02"); q.Get("start_date") != want {
		t.Errorf("paid start_date %q, want %q", q.Get("start_date"), want)
	}
	if want := now.AddDate(0, 0, 1).Format("2006-01-02"); q.Get("end_date") != want {
		t.Errorf("end_date %q, want %q", q.Get("end_date"), want)
	}

	b, err = g.rl.UpdateBalance(ctx, custom)
	if err != nil || b != 3.75 {
		t.Fatalf("custom balance = %v, %v; want 3.75", b, err)
	}
	if want := now.AddDate(0, 0, -100).Format("2006-01-02"); trial.lastQuery(t).Get("start_date") != want {
		t.Errorf("trial start_date %q, want %q", trial.lastQuery(t).Get("start_date"), want)
	}

	if _, err := g.rl.UpdateBalance(ctx, azure); !errors.Is(err, relay.ErrBalanceUnsupported) {
		t.Fatalf("azure: %v, want ErrBalanceUnsupported", err)
	}
	if _, err := g.rl.UpdateBalance(ctx, failing); err == nil || !strings.Contains(err.Error(), "billing is not available") {
		t.Fatalf("failing: %v, want the upstream's message", err)
	}

	// Update-all: the enabled channels with a balance endpoint, each with its outcome.
	for _, id := range []uint64{openai.ID, custom.ID} {
		if err := g.st.RecordChannelBalance(id, 0); err != nil {
			t.Fatal(err)
		}
	}
	res, err := g.rl.UpdateAllBalances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint64]relay.BalanceResult{}
	for _, r := range res {
		got[r.ID] = r
	}
	if len(got) != 3 || got[openai.ID].Balance != 99.5 || got[custom.ID].Balance != 3.75 ||
		got[openai.ID].Error != "" || got[failing.ID].Error == "" {
		t.Fatalf("update-all = %+v", res)
	}
	if stored, _ := channelBalance(t, g, custom.ID); stored != 3.75 {
		t.Fatalf("custom stored %v after update-all", stored)
	}

	// The periodic job: every ChannelBalanceInterval ticks.
	for _, id := range []uint64{openai.ID, custom.ID} {
		if err := g.st.RecordChannelBalance(id, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.st.UpdateOptions([]store.Option{{Key: "ChannelBalanceInterval", Value: "1"}}); err != nil {
		t.Fatal(err)
	}
	jobCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.rl.RunPeriodicTests(jobCtx, 20*time.Millisecond)
	}()
	defer func() {
		stop()
		<-done
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, _ := channelBalance(t, g, openai.ID)
		c, _ := channelBalance(t, g, custom.ID)
		if a == 99.5 && c == 3.75 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the periodic job did not refresh the balances: %v, %v", a, c)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An answer of 200 that holds no balance (another gateway's error object,
// {"success": false}, a document without the fields) is a failed query
// with the upstream's message, never a balance of 0 stored over the last
// one read.
func TestChannelBalanceAnswersWithoutABalance(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		body any
		want string
	}{
		{"error object", map[string]any{"error": map[string]any{"message": "无效的令牌", "type": "upstream_error"}}, "无效的令牌"},
		{"success false", map[string]any{"success": false, "message": "无权进行此操作"}, "无权进行此操作"},
		{"no fields", map[string]any{"object": "billing_subscription"}, "hard_limit_usd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := relaytest.New(t, "sk-"+strings.ReplaceAll(tc.name, " ", "-"), relaytest.Routes{
				"GET /v1/dashboard/billing/subscription": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
					relaytest.WriteJSON(w, http.StatusOK, tc.body)
				},
			})
			ch := g.MustCreateChannel(t, up, "m-"+strings.ReplaceAll(tc.name, " ", "-"), nil)
			if err := g.st.RecordChannelBalance(ch.ID, 42); err != nil {
				t.Fatal(err)
			}
			if b, err := g.rl.UpdateBalance(ctx, ch); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("balance %v, %v; want an error naming %q", b, err, tc.want)
			}
			if stored, _ := channelBalance(t, g, ch.ID); stored != 42 {
				t.Fatalf("stored balance %v, want the last one read (42)", stored)
			}
		})
	}
	// The usage query answering without its field fails the same way.
	up := relaytest.New(t, "sk-usage-less", relaytest.Routes{
		"GET /v1/dashboard/billing/subscription": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			relaytest.WriteJSON(w, http.StatusOK, map[string]any{"has_payment_method": true, "hard_limit_usd": 10})
		},
		"GET /v1/dashboard/billing/usage": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			relaytest.WriteJSON(w, http.StatusOK, map[string]any{"object": "list"})
		},
	})
	ch := g.MustCreateChannel(t, up, "m-usage-less", nil)
	if b, err := g.rl.UpdateBalance(ctx, ch); err == nil || !strings.Contains(err.Error(), "total_usage") {
		t.Fatalf("balance %v, %v; want an error naming total_usage", b, err)
	}
	// Numbers no account holds are not stored.
	up = relaytest.New(t, "sk-huge", relaytest.Routes{
		"GET /v1/dashboard/billing/subscription": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"has_payment_method":true,"hard_limit_usd":1.7e308}`)
		},
		"GET /v1/dashboard/billing/usage": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"total_usage":-1e308}`)
		},
	})
	ch = g.MustCreateChannel(t, up, "m-huge", nil)
	if b, err := g.rl.UpdateBalance(ctx, ch); err == nil || err.Error() != "上游返回的余额无法读取" {
		t.Fatalf("balance %v, %v; want 上游返回的余额无法读取", b, err)
	}
	if stored, _ := channelBalance(t, g, ch.ID); stored != 0 {
		t.Fatalf("stored balance %v", stored)
	}
}

// A balance query that got no answer, or one that is not JSON, reads to the
// administrator as what went wrong in words: no Go error chain and no
// address of the gateway's own resolver (S §15.10), one by one and in
// update-all alike.
func TestChannelBalanceFailuresInWords(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	ctx := context.Background()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	silent := relaytest.New(t, "sk-gone", relaytest.Routes{})
	gone := g.MustCreateChannel(t, silent, "m-gone", func(c *store.Channel) { c.BaseURL = closed })

	garbled := relaytest.New(t, "sk-garbled", relaytest.Routes{
		"GET /v1/dashboard/billing/subscription": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"has_payment_method": tru`)
		},
	})
	bad := g.MustCreateChannel(t, garbled, "m-garbled", nil)

	want := map[uint64]string{gone.ID: "请求上游失败：上游拒绝连接", bad.ID: "上游返回的余额格式错误"}
	for _, ch := range []*store.Channel{gone, bad} {
		if _, err := g.rl.UpdateBalance(ctx, ch); err == nil || relay.BalanceErrorText(err) != want[ch.ID] {
			t.Errorf("channel %d: %v, want %q", ch.ID, err, want[ch.ID])
		}
	}
	res, err := g.rl.UpdateAllBalances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Error != want[r.ID] {
			t.Errorf("update-all, channel %d: %q, want %q", r.ID, r.Error, want[r.ID])
		}
	}
	if len(res) != 2 {
		t.Errorf("update-all = %+v", res)
	}
}

// The billing usage is asked for by UTC dates, as OpenAI's billing counts its days, whatever the
// server's time zone: a gateway whose TZ is a day ahead of (or behind) UTC must not ask for
// another day's (or month's) usage. Not parallel: it changes time.Local.
func TestChannelBalanceDatesIgnoreServerTimeZone(t *testing.T) {
	saved := time.Local
	t.Cleanup(func() { time.Local = saved })
	// A zone whose date differs from UTC's now: 14 hours ahead late in the UTC day, 12 behind early.
	if time.Now().UTC().Hour() >= 10 {
		time.Local = time.FixedZone("UTC+14", 14*3600)
	} else {
		time.Local = time.FixedZone("UTC-12", -12*3600)
	}
	g := MustOpenGateway(t, gatewayConfig{})
	paid := newBillingUpstream(t, "sk-paid", true, 120, 2050)
	trial := newBillingUpstream(t, "sk-trial", false, 5, 125)
	openai := g.MustCreateChannel(t, paid.Upstream, "m-openai", nil)
	custom := g.MustCreateChannel(t, trial.Upstream, "m-custom", func(c *store.Channel) {
		c.Type = relay.TypeCustom
		c.BaseURL = trial.URL + "/v1/chat/completions"
	})
	if _, err := g.rl.UpdateBalance(context.Background(), openai); err != nil {
		t.Fatal(err)
	}
	if _, err := g.rl.UpdateBalance(context.Background(), custom); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	q := paid.lastQuery(t)
	if want := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02"); q.Get("start_date") != want {
		t.Errorf("paid start_date %q, want %q (UTC)", q.Get("start_date"), want)
	}
	if want := now.AddDate(0, 0, 1).Format("2006-01-02"); q.Get("end_date") != want {
		t.Errorf("end_date %q, want %q (UTC)", q.Get("end_date"), want)
	}
	if want := now.AddDate(0, 0, -100).Format("2006-01-02"); trial.lastQuery(t).Get("start_date") != want {
		t.Errorf("trial start_date %q, want %q (UTC)", trial.lastQuery(t).Get("start_date"), want)
	}
}

// A base URL written with /v1, as providers print it, reads the billing
// endpoints under that /v1, not under /v1/v1.
func TestChannelBalanceBaseEndingInV1(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	paid := newBillingUpstream(t, "sk-paid", true, 120, 2050)
	ch := g.MustCreateChannel(t, paid.Upstream, "m-openai", func(c *store.Channel) { c.BaseURL = paid.URL + "/v1" })
	if b, err := g.rl.UpdateBalance(context.Background(), ch); err != nil || b != 99.5 {
		t.Fatalf("balance = %v, %v; want 99.5", b, err)
	}
	if paid.lastQuery(t).Get("start_date") == "" {
		t.Fatal("usage asked without its dates")
	}
}

// The periodic balance update runs beside the periodic channel test, not in
// its way: a provider whose billing endpoint hangs (30 s a channel, one
// channel after another) does not hold the channel tests back meanwhile,
// and the job waits for the update it started before it returns.
func TestPeriodicTestsNotHeldByBalances(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ChannelTestInterval": "1", "ChannelBalanceInterval": "1",
	}})
	var mu sync.Mutex
	tests := 0
	up := relaytest.New(t, "sk-slow-billing", relaytest.Routes{
		"GET /v1/dashboard/billing/subscription": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			<-r.Context().Done() // hangs until the update is cut short
		},
		"POST /v1/chat/completions": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			mu.Lock()
			tests++
			mu.Unlock()
			relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "h", relaytest.NewUsage(8, 1)))
		},
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.rl.RunPeriodicTests(ctx, 20*time.Millisecond)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := tests
		mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			stop()
			<-done
			t.Fatalf("%d channel tests in 10 s while a balance update hung, want one a tick", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-done
	if _, err := g.rl.UpdateAllBalances(ctx); errors.Is(err, relay.ErrBalancesRunning) {
		t.Fatal("the periodic job returned while its balance update still ran")
	}
}

// lockedBuffer is a log destination read while the job writing to it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Nobody reads the periodic balance update's answer: a channel whose
// balance it could not read is logged with the upstream's reason, where
// the console shows only the last balance read.
func TestPeriodicBalanceUpdateLogsTheChannelsItCouldNotRead(t *testing.T) {
	var out lockedBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&out, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	g := MustOpenGateway(t, gatewayConfig{})
	refused := relaytest.New(t, "sk-refused", relaytest.Routes{
		"GET /v1/dashboard/billing/subscription": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
			relaytest.WriteError(w, http.StatusForbidden, "invalid_request_error", "", "billing is not available")
		},
	})
	ch := g.MustCreateChannel(t, refused, "m-refused", nil)
	if err := g.st.UpdateOptions([]store.Option{{Key: "ChannelBalanceInterval", Value: "1"}}); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.rl.RunPeriodicTests(ctx, 20*time.Millisecond)
	}()
	defer func() {
		stop()
		<-done
	}()
	want := "channel=" + strconv.FormatUint(ch.ID, 10)
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, "level=WARN") && strings.Contains(line, want) && strings.Contains(line, "billing is not available") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no warning names channel %d whose balance was not read:\n%s", ch.ID, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
