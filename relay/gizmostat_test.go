package relay_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"gateway/relay/relaytest"
	"gateway/store"
)

// The stat's rpm for the model name the log list shows (and filters by)
// counts the call that row records.
func TestLogStat_GizmoRPMMatchesListedRows(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelPrice": `{"gpt-4-gizmo-*":0.1}`}})
	up := relaytest.NewChat(t, "sk-gizmo", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusOK, relaytest.Completion(fmt.Sprint(req.JSON["model"]), "ok", relaytest.NewUsage(10, 20)))
	})
	g.MustCreateChannel(t, up, "gpt-4-gizmo-*", nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	if res := g.post(t, key, "/v1/chat/completions", chat("gpt-4-gizmo-g-abc", "hi")); res.Status != http.StatusOK {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	m := url.QueryEscape("gpt-4-gizmo-*")
	list := g.rootGet(t, "/api/log/?model_name="+m)["data"].(map[string]any)
	stat := g.rootGet(t, "/api/log/stat?model_name="+m)["data"].(map[string]any)
	if list["total"].(float64) != 1 || stat["rpm"].(float64) != 1 {
		t.Fatalf("rows listed %v, rpm %v: want 1 and 1", list["total"], stat["rpm"])
	}
}
