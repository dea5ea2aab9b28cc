package relay_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"gateway/relay/relaytest"
	"gateway/store"
)

// An upstream 401 shows the channel's key is unusable: with automatic
// disabling on, a channel that allows it is disabled (status 3, with the
// reason in other_info) and leaves routing; with auto_ban 0 it stays.
func TestHealth_AutoDisable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		autoBan    int
		wantStatus int
	}{
		{"auto_ban on", 1, store.ChannelStatusAutoDisabled},
		{"auto_ban off", 0, store.ChannelStatusEnabled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"AutomaticDisableChannelEnabled": "true"}})
			up := relaytest.NewChat(t, "sk-revoked", failWith(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided"))
			ch := g.MustCreateChannel(t, up, ratioModel, func(c *store.Channel) { c.AutoBan = tc.autoBan })
			_, key := g.MustCreateToken(t, "alice", store.Token{})

			res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
			res.wantError(t, http.StatusUnauthorized, "bad_response_status_code")
			fresh, err := g.st.Channel(ch.ID)
			if err != nil {
				t.Fatal(err)
			}
			if fresh.Status != tc.wantStatus {
				t.Fatalf("channel status = %d, want %d", fresh.Status, tc.wantStatus)
			}
			if tc.wantStatus == store.ChannelStatusEnabled {
				if fresh.OtherInfo != "" {
					t.Errorf("other_info = %q on an enabled channel", fresh.OtherInfo)
				}
				return
			}
			var info store.ChannelStatusInfo
			if err := json.Unmarshal([]byte(fresh.OtherInfo), &info); err != nil || !strings.Contains(info.StatusReason, "401") || info.StatusTime == 0 {
				t.Errorf("other_info = %q, want the reason and time", fresh.OtherInfo)
			}
			// The disabled channel no longer routes.
			res = g.post(t, key, "/v1/chat/completions", chat(ratioModel, "hi"))
			res.wantError(t, http.StatusServiceUnavailable, "model_not_found")
			if up.Hits() != 1 {
				t.Errorf("upstream hits = %d, want 1", up.Hits())
			}
		})
	}
}

// rootGet calls a console route as root with a system access token.
func (g *gateway) rootGet(t *testing.T, path string) map[string]any {
	t.Helper()
	token, err := g.st.ResetAccessToken(fixture.ids["root"])
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, g.srv.URL+path, nil)
	req.Header.Set("Authorization", token)
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return out
}

// A channel test against a healthy upstream re-enables a channel that was
// disabled automatically, only when automatic enabling is on, and never a
// channel an administrator turned off.
func TestHealth_ChannelTestReEnables(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-healthy", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		if req.Model() != ratioModel || req.Stream() {
			t.Errorf("channel test body = %s", req.Body)
		}
		// The test request is {"messages":[{"role":"user","content":"hi"}],"max_tokens":1};
		// the relay call at the end says something else.
		if strings.Contains(string(req.Body), `"content":"hi"`) {
			if mt, _ := req.JSON["max_tokens"].(float64); mt != 1 {
				t.Errorf("channel test max_tokens = %v, want 1", req.JSON["max_tokens"])
			}
		}
		relaytest.WriteJSON(w, 200, relaytest.Completion(ratioModel, "h", relaytest.NewUsage(8, 1)))
	})
	auto := g.MustCreateChannel(t, up, ratioModel, nil)
	manual := g.MustCreateChannel(t, up, ratioModel, nil)
	if _, _, err := g.st.SetChannelStatusAuto(auto.ID, store.ChannelStatusAutoDisabled, "test"); err != nil {
		t.Fatal(err)
	}
	off := store.ChannelStatusManuallyOff
	if _, err := g.st.UpdateChannel(manual.ID, store.ChannelUpdate{Status: &off}); err != nil {
		t.Fatal(err)
	}
	status := func(c *store.Channel) int {
		t.Helper()
		fresh, err := g.st.Channel(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return fresh.Status
	}
	test := func(c *store.Channel) {
		t.Helper()
		out := g.rootGet(t, "/api/channel/test/"+strconv.FormatUint(c.ID, 10))
		if out["success"] != true {
			t.Fatalf("channel test: %v", out)
		}
	}

	// Automatic enabling off: a clean test changes nothing.
	test(auto)
	if s := status(auto); s != store.ChannelStatusAutoDisabled {
		t.Fatalf("status = %d after a test with automatic enabling off, want 3", s)
	}
	if err := g.st.UpdateOption("AutomaticEnableChannelEnabled", "true"); err != nil {
		t.Fatal(err)
	}
	test(auto)
	if s := status(auto); s != store.ChannelStatusEnabled {
		t.Fatalf("status = %d after a clean test with automatic enabling on, want 1", s)
	}
	test(manual)
	if s := status(manual); s != store.ChannelStatusManuallyOff {
		t.Fatalf("manually disabled channel has status %d after a test, want 2", s)
	}
	if up.Hits() != 3 {
		t.Errorf("upstream hits = %d, want 3", up.Hits())
	}
	// The re-enabled channel routes again.
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	if res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "routed again")); res.Status != 200 {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
}
