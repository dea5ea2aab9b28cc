package relay_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/store"
)

// The playground (S §11) bills the session's user at the chosen group's
// ratio and keeps its own group field from the upstream.
func TestPlayground(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"GroupRatio": `{"default":1,"vip":2}`, "UserUsableGroups": `{"default":"默认分组","vip":"vip","unpriced":"unpriced"}`,
	}})
	answer := relaytest.Completion(ratioModel, "Hi!", relaytest.NewUsage(12, 3))
	up := relaytest.NewChat(t, "sk-pg", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusOK, answer)
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	uid := fixture.IDs["alice"]
	sid, _, err := g.st.CreateSession(uid)
	if err != nil {
		t.Fatal(err)
	}
	call := func(body string) (int, string) {
		res := g.playground(t, uid, sid, body)
		return res.Status, string(res.Body)
	}
	before, _ := g.st.LiveBalance(uid)
	status, body := call(`{"model":"` + ratioModel + `","group":"vip","messages":[{"role":"user","content":"Hello"}]}`)
	if status != http.StatusOK {
		t.Fatalf("playground: %d %s", status, body)
	}
	sent := up.LastRequest()
	if _, ok := sent.JSON["group"]; ok {
		t.Fatalf("the upstream got the gateway's group field: %s", sent.Body)
	}
	if sent.JSON["model"] != ratioModel || sent.JSON["messages"] == nil {
		t.Fatalf("the upstream got %s", sent.Body)
	}
	logs, err := g.st.Logs(store.LogFilter{UserID: uid, Type: store.LogTypeConsume}, 1, 10)
	if err != nil || len(logs.Items) != 1 {
		t.Fatalf("logs %+v, %v", logs, err)
	}
	var other map[string]any
	_ = json.Unmarshal([]byte(logs.Items[0].Other), &other)
	after, _ := g.st.LiveBalance(uid)
	if other["group_ratio"] != 2.0 || before.Quota-after.Quota != int64(logs.Items[0].Quota) || logs.Items[0].Quota <= 0 {
		t.Fatalf("charged %d (log %d), other %v", before.Quota-after.Quota, logs.Items[0].Quota, other)
	}
	// A group the user may not use is refused before any upstream call.
	hits := up.Hits()
	if status, body := call(`{"model":"` + ratioModel + `","group":"secret","messages":[{"role":"user","content":"Hi"}]}`); status != http.StatusForbidden || up.Hits() != hits {
		t.Fatalf("foreign group: %d %s", status, body)
	}
	// A usable group without a ratio is not offered, as for tokens: never billed at a made-up 1.
	if status, body := call(`{"model":"` + ratioModel + `","group":"unpriced","messages":[{"role":"user","content":"Hi"}]}`); status != http.StatusForbidden || up.Hits() != hits {
		t.Fatalf("group without a ratio: %d %s", status, body)
	}
	// A group that is not a name is refused, not read as no group.
	if status, body := call(`{"model":"` + ratioModel + `","group":123,"messages":[{"role":"user","content":"Hi"}]}`); status != http.StatusBadRequest ||
		!strings.Contains(body, "字段 group 应为字符串") || up.Hits() != hits {
		t.Fatalf("group of the wrong type: %d %s", status, body)
	}
}

// A 401 from the playground means the console's session ended: the console
// forgets the user and sends them to the login page (A §6, §8). An upstream
// that refuses the channel's key must therefore not reach the playground as a
// 401, or every user trying a model of that channel is logged out; it is the
// gateway's failure (502), with the upstream's message. A /v1 client keeps
// the upstream's status (S §1).
func TestPlaygroundUpstreamUnauthorizedKeepsTheSession(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	up := relaytest.NewChat(t, "sk-revoked", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
			"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}})
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	uid := fixture.IDs["alice"]
	sid, _, err := g.st.CreateSession(uid)
	if err != nil {
		t.Fatal(err)
	}
	// As the console sends it: streamed.
	res := g.post(t, "", "/pg/chat/completions", streamChat(ratioModel, "Hello", false),
		"New-Api-User", strconv.FormatUint(uid, 10), "Cookie", "session="+sid)
	if res.Status != http.StatusBadGateway || !strings.Contains(string(res.Body), "Incorrect API key provided") {
		t.Fatalf("playground with a refused channel key: %d %s, want 502 with the upstream's message", res.Status, res.Body)
	}
	if up.Hits() != 1 {
		t.Fatalf("upstream hits %d, want 1", up.Hits())
	}
	// The session is untouched, and the guard's own 401 is still a 401.
	if _, err := g.st.Session(sid); err != nil {
		t.Fatalf("session after the call: %v", err)
	}
	if res := g.post(t, "", "/pg/chat/completions", chat(ratioModel, "Hello")); res.Status != http.StatusUnauthorized {
		t.Fatalf("playground without a session: %d, want 401", res.Status)
	}
	// A /v1 caller still gets the upstream's status.
	_, key := g.MustCreateToken(t, "alice", store.Token{Name: "v1", UnlimitedQuota: true})
	if res := g.post(t, key, "/v1/chat/completions", chat(ratioModel, "Hello")); res.Status != http.StatusUnauthorized {
		t.Fatalf("/v1 with a refused channel key: %d, want the upstream's 401", res.Status)
	}
}

// A playground body over the relay's limit is refused as /v1 refuses one,
// 413 request_too_large, not cut at the limit and then called bad JSON.
func TestPlayground_BodyOverTheLimit(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Relay: relay.Config{MaxBodyBytes: 1 << 10}})
	up := relaytest.NewChat(t, "sk-pg", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion(ratioModel, "Hi!", relaytest.NewUsage(12, 3)))
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	uid := fixture.IDs["alice"]
	sid, _, err := g.st.CreateSession(uid)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"model":"` + ratioModel + `","messages":[{"role":"user","content":"` + strings.Repeat("a", 2<<10) + `"}]}`
	g.playground(t, uid, sid, body).wantError(t, http.StatusRequestEntityTooLarge, "request_too_large")
	if up.Hits() != 0 {
		t.Fatalf("the upstream was asked %d times", up.Hits())
	}
}

// playground sends body to /pg/chat/completions in the session sid of
// user uid, as the console does.
func (g *gateway) playground(t *testing.T, uid uint64, sid, body string) result {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.srv.URL+"/pg/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("New-Api-User", strconv.FormatUint(uid, 10))
	req.AddCookie(&http.Cookie{Name: "session", Value: sid})
	res, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return result{Status: res.StatusCode, Header: res.Header, Body: b}
}
