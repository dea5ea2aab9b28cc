package api_test

import (
	"encoding/json"
	"testing"

	"gateway/store"
)

// pricingOut is the whole answer of GET /api/pricing.
type pricingOut struct {
	Success    bool               `json:"success"`
	GroupRatio map[string]float64 `json:"group_ratio"`
	Data       []struct {
		ModelName       string   `json:"model_name"`
		QuotaType       int      `json:"quota_type"`
		ModelRatio      float64  `json:"model_ratio"`
		ModelPrice      float64  `json:"model_price"`
		OwnerBy         *string  `json:"owner_by"`
		CompletionRatio float64  `json:"completion_ratio"`
		EnableGroups    []string `json:"enable_groups"`
	} `json:"data"`
}

func getPricing(t *testing.T, ts *TestServer, as string) pricingOut {
	t.Helper()
	r := ApiScenario{URL: "/api/pricing", As: as, WantStatus: 200}.Test(t, ts)
	var out pricingOut
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatalf("%v: %s", err, r.Body)
	}
	return out
}

func TestPricing(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.MustSetOptions(t,
		"ModelPrice", `{"fixed-m":0.02,"gpt-4-gizmo-*":0.1}`,
		"ModelRatio", `{"ratio-m":1.5,"gpt-4o-mini":0.075,"hidden-m":1}`,
		"CompletionRatio", `{"ratio-m":2}`,
		"GroupRatio", `{"default":1,"vip":0.5}`)
	err := ts.Store.CreateChannels([]*store.Channel{
		{Name: "both", Type: 1, Key: "k1", Group: "default,vip", Models: "ratio-m,fixed-m,gpt-4o-mini,unpriced-m"},
		{Name: "vip", Type: 1, Key: "k2", Group: "vip", Models: "gpt-4-gizmo-abc,ratio-m"},
		{Name: "off", Type: 1, Key: "k3", Models: "hidden-m", Status: store.ChannelStatusManuallyOff},
	})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		quotaType                int
		ratio, price, completion float64
		groups                   string
	}
	wantItems := map[string]want{
		"fixed-m":         {1, 0, 0.02, 0, "default,vip"},
		"gpt-4-gizmo-abc": {1, 0, 0.1, 0, "vip"},
		"gpt-4o-mini":     {0, 0.075, 0, 4, "default,vip"}, // the built-in completion rule, as billing uses
		"ratio-m":         {0, 1.5, 0, 2, "default,vip"},   // the option wins
	}
	for _, as := range []string{"", "user", "admin", "root"} {
		t.Run("as "+as, func(t *testing.T) {
			out := getPricing(t, ts, as)
			if !out.Success || len(out.GroupRatio) != 2 || out.GroupRatio["vip"] != 0.5 {
				t.Fatalf("success %v, group_ratio %v", out.Success, out.GroupRatio)
			}
			// Sorted by name; the unpriced model and the disabled channel's model are absent.
			var names []string
			for _, it := range out.Data {
				names = append(names, it.ModelName)
				w, ok := wantItems[it.ModelName]
				if !ok {
					t.Errorf("unexpected model %s", it.ModelName)
					continue
				}
				groups := ""
				for i, g := range it.EnableGroups {
					if i > 0 {
						groups += ","
					}
					groups += g
				}
				if it.QuotaType != w.quotaType || it.ModelRatio != w.ratio || it.ModelPrice != w.price ||
					it.CompletionRatio != w.completion || groups != w.groups || it.OwnerBy == nil || *it.OwnerBy != "" {
					t.Errorf("%s = %+v, want %+v", it.ModelName, it, w)
				}
			}
			if len(names) != 4 || names[0] != "fixed-m" || names[3] != "ratio-m" {
				t.Errorf("models %v", names)
			}
		})
	}
	// An option change shows at once.
	ts.MustSetOptions(t, "CompletionRatio", `{"ratio-m":3}`)
	for _, it := range getPricing(t, ts, "").Data {
		if it.ModelName == "ratio-m" && it.CompletionRatio != 3 {
			t.Fatalf("completion ratio %v after the change", it.CompletionRatio)
		}
	}
}
