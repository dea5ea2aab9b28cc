package relay_test

import (
	"net/http"
	"testing"

	json "github.com/goccy/go-json"

	"gateway/relay/relaytest"
	"gateway/store"
)

// billingGet reads one of the OpenAI billing-compat endpoints with key.
func (g *gateway) billingGet(t *testing.T, key, path string) map[string]float64 {
	t.Helper()
	status, body := g.get(t, "Bearer "+key, path)
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil || status != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, status, err)
	}
	out := map[string]float64{}
	for k, v := range raw {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}

// S §5.12: the subscription shows the token's remain + used (the user's with
// token stats off), in dollars when currency display is on; an unlimited
// token shows 100 000 000 in either unit. Usage is the used quota × 100.
func TestBillingCompat(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelRatio": `{"gpt-4o-mini":1}`, "CompletionRatio": `{"gpt-4o-mini":1}`}})
	up := relaytest.NewChat(t, "sk-bill", okChat(t, "gpt-4o-mini", "ok", relaytest.NewUsage(100_000, 150_000)))
	g.MustCreateChannel(t, up, "gpt-4o-mini", nil)
	limited, limitedKey := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 1_000_000, ExpiredTime: 4102444800})
	_, openKey := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})

	if res := g.post(t, limitedKey, "/v1/chat/completions", chat("gpt-4o-mini", "hello")); res.Status != http.StatusOK {
		t.Fatalf("call: %d %s", res.Status, res.Body)
	}
	const used = 250_000 // (100 000 + 150 000 × 1) × 1
	if b := g.balances(t, "alice", limited.ID); b.TokenUsed != used {
		t.Fatalf("token used %d, want %d", b.TokenUsed, used)
	}

	for _, p := range []string{"/v1/dashboard/billing", "/dashboard/billing"} {
		sub := g.billingGet(t, limitedKey, p+"/subscription")
		if sub["hard_limit_usd"] != 2 || sub["soft_limit_usd"] != 2 || sub["system_hard_limit_usd"] != 2 || sub["access_until"] != 4102444800 {
			t.Fatalf("%s limited token: %v", p, sub)
		}
		if u := g.billingGet(t, limitedKey, p+"/usage"); u["total_usage"] != 50 {
			t.Fatalf("%s usage: %v, want 50 (US$0.50 × 100)", p, u)
		}
		if sub := g.billingGet(t, openKey, p+"/subscription"); sub["hard_limit_usd"] != 100_000_000 || sub["access_until"] != 0 {
			t.Fatalf("%s unlimited token: %v", p, sub)
		}
	}

	if err := g.st.UpdateOptions([]store.Option{{Key: "DisplayInCurrencyEnabled", Value: "false"}}); err != nil {
		t.Fatal(err)
	}
	if sub := g.billingGet(t, limitedKey, "/v1/dashboard/billing/subscription"); sub["hard_limit_usd"] != 1_000_000 {
		t.Fatalf("limited token in quota units: %v", sub)
	}
	if u := g.billingGet(t, limitedKey, "/v1/dashboard/billing/usage"); u["total_usage"] != used*100 {
		t.Fatalf("usage in quota units: %v", u)
	}
	if sub := g.billingGet(t, openKey, "/v1/dashboard/billing/subscription"); sub["hard_limit_usd"] != 100_000_000 {
		t.Fatalf("unlimited token in quota units: %v", sub)
	}

	if err := g.st.UpdateOptions([]store.Option{{Key: "DisplayInCurrencyEnabled", Value: "true"}, {Key: "DisplayTokenStatEnabled", Value: "false"}}); err != nil {
		t.Fatal(err)
	}
	if sub := g.billingGet(t, openKey, "/v1/dashboard/billing/subscription"); sub["hard_limit_usd"] != float64(aliceQuota)/500_000 {
		t.Fatalf("user totals: %v, want %v", sub, float64(aliceQuota)/500_000)
	}
}

// A model several types list (gpt-4o-mini: OpenAI and Azure) always names
// the same owner in /v1/models: the lowest type's.
func TestModelOwnerIsStable(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-owner", okChat(t, miniModel, "ok", relaytest.NewUsage(1, 1)))
	g.MustCreateChannel(t, up, miniModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	for range 16 {
		_, body := g.get(t, "Bearer "+key, "/v1/models/"+miniModel)
		var m struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		}
		if err := json.Unmarshal(body, &m); err != nil || m.ID != miniModel || m.OwnedBy != "openai" {
			t.Fatalf("model %+v, %v", m, err)
		}
	}
}
