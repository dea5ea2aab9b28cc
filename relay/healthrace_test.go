package relay_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/store"
)

// A wrong organization makes OpenAI answer 401 (mismatched_organization).
// An administrator fixes the organization while the test runs; the verdict
// reached on the old organization does not disable the fixed channel.
func TestHealth_StaleVerdictAfterOrganizationFix(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"AutomaticDisableChannelEnabled": "true"}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("OpenAI-Organization") != "org-right" {
			relaytest.WriteError(w, http.StatusUnauthorized, "invalid_request_error", "mismatched_organization", "OpenAI-Organization header should match organization for API key")
			return
		}
		relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "ok", relaytest.NewUsage(1, 1)))
	}))
	t.Cleanup(srv.Close)
	ch := g.MustCreateChannel(t, &relaytest.Upstream{Server: srv, Key: "sk-k"}, ratioModel, func(c *store.Channel) { c.OpenAIOrganization = "org-wrong" })
	stale := *ch
	r := g.rl.TestChannel(context.Background(), &stale, "", nil)
	if r.Status != 401 {
		t.Fatalf("test: %+v", r)
	}
	org := "org-right"
	if _, err := g.st.UpdateChannel(ch.ID, store.ChannelUpdate{OpenAIOrganization: &org}); err != nil {
		t.Fatal(err)
	}
	g.rl.ApplyTestOutcome(&stale, r)
	if c, _ := g.st.Channel(ch.ID); c.Status != store.ChannelStatusEnabled {
		t.Fatalf("fixed channel disabled by a verdict on its old organization: status %d (%s)", c.Status, c.OtherInfo)
	}
}

// Some upstreams answer an exhausted account with 200 and an error object.
// The relay disables the channel for it (okButFailed); a channel test of
// the same upstream reaches the same verdict, with the upstream's message.
func TestHealth_TestOf200ErrorAnswer(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"AutomaticDisableChannelEnabled": "true"}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		relaytest.WriteJSON(w, 200, map[string]any{"error": map[string]any{"type": "insufficient_quota", "code": "insufficient_quota", "message": "You exceeded your current quota, please check your plan"}})
	}))
	t.Cleanup(srv.Close)
	ch := g.MustCreateChannel(t, &relaytest.Upstream{Server: srv, Key: "sk-k"}, ratioModel, nil)
	r := g.rl.TestChannel(context.Background(), ch, "", nil)
	if r.Err == nil || r.Status != http.StatusInternalServerError || r.Type != "insufficient_quota" || r.Message != "You exceeded your current quota, please check your plan" {
		t.Fatalf("test result: err=%v status=%d type=%q msg=%q", r.Err, r.Status, r.Type, r.Message)
	}
	g.rl.ApplyTestOutcome(ch, r)
	if c, _ := g.st.Channel(ch.ID); c.Status != store.ChannelStatusAutoDisabled {
		t.Errorf("test: status %d, want 3", c.Status)
	}
	// The relay, for comparison.
	ch2 := g.MustCreateChannel(t, &relaytest.Upstream{Server: srv, Key: "sk-k2"}, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	s := store.ChannelStatusManuallyOff
	g.st.UpdateChannel(ch.ID, store.ChannelUpdate{Status: &s})
	g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
	if c, _ := g.st.Channel(ch2.ID); c.Status != store.ChannelStatusAutoDisabled {
		t.Errorf("relay: status %d", c.Status)
	}
}

// A channel deleted while a test-all run tests another one is skipped, and
// reported as skipped, not as a failed test (the console and the summary
// mail count failures).
func TestHealth_TestAllSkipsDeleted(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	slow, reached, release := heldChat(t)
	gone := g.MustCreateChannel(t, slow, ratioModel, nil)
	g.MustCreateChannel(t, slow, ratioModel, nil) // newest: tested first
	var mu sync.Mutex
	var got []relay.Progress
	if err := g.rl.TestAll(nil, func(p relay.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	<-reached
	if _, err := g.st.DeleteChannels([]uint64{gone.ID}); err != nil {
		t.Fatal(err)
	}
	close(release)
	eventually(t, 10*time.Second, "the run to end", func() bool { return !g.rl.Testing() })
	mu.Lock()
	defer mu.Unlock()
	skipped := false
	for _, p := range got {
		if p.Result != nil && p.Result.ChannelID == gone.ID {
			skipped = p.Skipped
		}
	}
	if !skipped {
		t.Errorf("the deleted channel was not reported as skipped: %+v", got)
	}
}

// Update-all-balances reads each channel at its turn: a key changed since
// the run began is the one asked.
func TestHealth_BalanceRunReadsEachChannel(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	release := make(chan struct{})
	reached := make(chan struct{}, 1)
	limits := map[string]float64{"Bearer sk-a": 1, "Bearer sk-old": 5, "Bearer sk-new": 100}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if auth == "Bearer sk-a" && r.URL.Path == "/v1/dashboard/billing/subscription" {
			select {
			case reached <- struct{}{}:
			default:
			}
			<-release
		}
		if r.URL.Path == "/v1/dashboard/billing/usage" {
			relaytest.WriteJSON(w, 200, map[string]any{"total_usage": 0})
			return
		}
		relaytest.WriteJSON(w, 200, map[string]any{"has_payment_method": true, "hard_limit_usd": limits[auth]})
	}))
	t.Cleanup(srv.Close)
	b := g.MustCreateChannel(t, &relaytest.Upstream{Server: srv, Key: "sk-old"}, ratioModel, nil)
	g.MustCreateChannel(t, &relaytest.Upstream{Server: srv, Key: "sk-a"}, ratioModel, nil) // newest: first
	done := make(chan struct{})
	go func() { g.rl.UpdateAllBalances(context.Background()); close(done) }()
	<-reached
	nk := "sk-new"
	if _, err := g.st.UpdateChannel(b.ID, store.ChannelUpdate{Key: &nk}); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-done
	if c, _ := g.st.Channel(b.ID); c.Balance != 100 {
		t.Errorf("balance %v stored for the channel's new key (want 100: asked with the old key)", c.Balance)
	}
}

// heldChat is an upstream whose answers wait until release is closed;
// reached tells that a request has come.
func heldChat(t *testing.T) (up *relaytest.Upstream, reached <-chan struct{}, release chan struct{}) {
	release = make(chan struct{})
	came := make(chan struct{}, 1)
	up = relaytest.NewChat(t, "sk-slow", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		select {
		case came <- struct{}{}:
		default:
		}
		<-release
		relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "ok", relaytest.NewUsage(1, 1)))
	})
	return up, came, release
}

// A verdict reached before an administrator changed the channel's status
// is stale: a test that saw the account out of quota does not disable a
// channel re-enabled since (the account topped up), even with the same key,
// and a test that passed before a new automatic disable does not enable the
// channel again.
func TestHealth_StaleVerdictAfterStatusChange(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"AutomaticDisableChannelEnabled": "true", "AutomaticEnableChannelEnabled": "true",
	}})
	var broke sync.Mutex
	exhausted := true
	up := relaytest.NewChat(t, "sk-k", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		broke.Lock()
		out := exhausted
		broke.Unlock()
		if out {
			relaytest.WriteError(w, http.StatusTooManyRequests, "insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan and billing details.")
			return
		}
		relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "ok", relaytest.NewUsage(1, 1)))
	})
	ch := g.MustCreateChannel(t, up, ratioModel, nil)
	status := func() *store.Channel {
		t.Helper()
		c, err := g.st.Channel(ch.ID)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	// The test is answered "out of quota"; meanwhile a call disables the
	// channel and the administrator tops up and enables it again.
	stale := *status()
	r := g.rl.TestChannel(context.Background(), &stale, "", nil)
	if r.Err == nil {
		t.Fatalf("test of the exhausted account passed")
	}
	if _, _, err := g.st.SetChannelStatusAuto(ch.ID, store.ChannelStatusAutoDisabled, "上游返回 429：You exceeded your current quota"); err != nil {
		t.Fatal(err)
	}
	on := store.ChannelStatusEnabled
	if _, err := g.st.UpdateChannel(ch.ID, store.ChannelUpdate{Status: &on}); err != nil {
		t.Fatal(err)
	}
	if got := g.rl.ApplyTestOutcome(&stale, r); got != 0 {
		t.Errorf("a verdict from before the re-enable set status %d", got)
	}
	if c := status(); c.Status != store.ChannelStatusEnabled {
		t.Fatalf("channel re-enabled by the administrator has status %d (%s)", c.Status, c.OtherInfo)
	}

	// A disabled channel's test passes; meanwhile the administrator enables
	// it and a call disables it again: the older pass enables nothing.
	if _, _, err := g.st.SetChannelStatusAuto(ch.ID, store.ChannelStatusAutoDisabled, "first"); err != nil {
		t.Fatal(err)
	}
	broke.Lock()
	exhausted = false
	broke.Unlock()
	stale = *status()
	r = g.rl.TestChannel(context.Background(), &stale, "", nil)
	if r.Err != nil {
		t.Fatalf("test: %v", r.Err)
	}
	if _, err := g.st.UpdateChannel(ch.ID, store.ChannelUpdate{Status: &on}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.st.SetChannelStatusAuto(ch.ID, store.ChannelStatusAutoDisabled, "second"); err != nil {
		t.Fatal(err)
	}
	if got := g.rl.ApplyTestOutcome(&stale, r); got != 0 {
		t.Errorf("a pass from before the new disable set status %d", got)
	}
	if c := status(); c.Status != store.ChannelStatusAutoDisabled || !strings.Contains(c.OtherInfo, "second") {
		t.Fatalf("channel disabled since the test: status %d (%s)", c.Status, c.OtherInfo)
	}
}

// A channel the run cannot read (here the data file closed under it) is
// reported as a failure with the reason, not as deleted and skipped: the
// console and the summary mail would count it neither passed nor failed.
func TestHealth_TestAllReportsAnUnreadableChannel(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	slow, reached, release := heldChat(t)
	unread := g.MustCreateChannel(t, slow, ratioModel, nil)
	g.MustCreateChannel(t, slow, ratioModel, nil) // newest: tested first
	var mu sync.Mutex
	var got []relay.Progress
	if err := g.rl.TestAll(nil, func(p relay.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	<-reached
	g.st.Close()
	close(release)
	eventually(t, 10*time.Second, "the run to end", func() bool { return !g.rl.Testing() })
	mu.Lock()
	defer mu.Unlock()
	var p *relay.Progress
	for i := range got {
		if got[i].Result != nil && got[i].Result.ChannelID == unread.ID {
			p = &got[i]
		}
	}
	if p == nil || p.Skipped || p.Result.Err == nil || !strings.Contains(p.Result.Err.Error(), "读取渠道失败") {
		t.Fatalf("the unreadable channel was not reported as failed: %+v", p)
	}
	if run := g.rl.TestRunState(); run.Failed < 1 {
		t.Errorf("the run counts %d failures", run.Failed)
	}
}
