package api_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"gateway/store"

	bolt "go.etcd.io/bbolt"
)

// quotaRow is one dashboard row as the API answers it.
type quotaRow struct {
	UserID    uint64 `json:"user_id"`
	Username  string `json:"username"`
	ModelName string `json:"model_name"`
	CreatedAt int64  `json:"created_at"`
	TokenUsed int64  `json:"token_used"`
	Count     int64  `json:"count"`
	Quota     int64  `json:"quota"`
}

// mustCharge settles one call of model for username at the given time,
// through the ledger, which also writes the dashboard's hourly row.
func mustCharge(tb testing.TB, ts *TestServer, username, model string, at, quota, prompt, completion int64) {
	tb.Helper()
	id := ts.UserID(tb, username)
	res, err := ts.Store.Reserve(id, 0, quota)
	if err != nil {
		tb.Fatal(err)
	}
	err = ts.Store.Settle(res, 0, quota, &store.Log{UserID: id, Username: username, Type: store.LogTypeConsume,
		ModelName: model, CreatedAt: at, PromptTokens: prompt, CompletionTokens: completion})
	if err != nil {
		tb.Fatal(err)
	}
}

func getRows(t *testing.T, ts *TestServer, as, url string) []quotaRow {
	t.Helper()
	var rows []quotaRow
	ApiScenario{URL: url, As: as, WantStatus: 200}.Test(t, ts).Envelope(t).DataInto(t, &rows)
	return rows
}

func TestDashboard(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	alice, admin := ts.UserID(t, "alice"), ts.UserID(t, "admin")
	for _, id := range []uint64{alice, admin} {
		if _, err := ts.Store.UpdateUserAsAdmin("setup", id, store.UserUpdate{}, new(int64(1_000_000))); err != nil {
			t.Fatal(err)
		}
	}
	const base = int64(1_700_000_000 - 1_700_000_000%3600)
	mustCharge(t, ts, "alice", "model-a", base+10, 100, 10, 5)
	mustCharge(t, ts, "alice", "model-a", base+20, 200, 1, 1)
	mustCharge(t, ts, "alice", "model-b", base+3600+5, 50, 3, 0)
	mustCharge(t, ts, "admin", "model-a", base+30, 1000, 7, 7)
	now := time.Now().Unix()
	mustCharge(t, ts, "alice", "model-now", now, 1, 1, 1)
	span := fmt.Sprintf("?start_timestamp=%d&end_timestamp=%d", base, base+7200)

	runScenarios(t, ts, []ApiScenario{
		{Name: "AllGuest", URL: "/api/data/" + span, WantStatus: 401},
		{Name: "AllUser", URL: "/api/data/" + span, As: "user", WantStatus: 403},
		{Name: "SelfGuest", URL: "/api/data/self" + span, WantStatus: 401},
		{Name: "SelfTooLong", URL: fmt.Sprintf("/api/data/self?start_timestamp=%d&end_timestamp=%d", base, base+31*86400),
			As: "user", WantStatus: 400, WantContains: []string{"时间跨度不能超过 1 个月"}},
		{Name: "UnknownUser", URL: "/api/data/" + span + "&username=nobody", As: "admin", WantStatus: 200,
			WantContains: []string{`"data":[]`}},
	})

	t.Run("AllSummed", func(t *testing.T) {
		rows := getRows(t, ts, "admin", "/api/data/"+span)
		want := []quotaRow{
			{ModelName: "model-a", CreatedAt: base, Count: 3, Quota: 1300, TokenUsed: 31},
			{ModelName: "model-b", CreatedAt: base + 3600, Count: 1, Quota: 50, TokenUsed: 3},
		}
		if fmt.Sprint(rows) != fmt.Sprint(want) {
			t.Fatalf("rows %+v, want %+v", rows, want)
		}
	})
	t.Run("OneUser", func(t *testing.T) {
		rows := getRows(t, ts, "root", "/api/data/"+span+"&username=alice")
		if len(rows) != 2 {
			t.Fatalf("rows %+v", rows)
		}
		for _, r := range rows {
			if r.UserID != alice || r.Username != "alice" {
				t.Fatalf("row of another user: %+v", r)
			}
		}
		if rows[0].ModelName != "model-a" || rows[0].Count != 2 || rows[0].Quota != 300 || rows[0].TokenUsed != 17 {
			t.Fatalf("first row %+v", rows[0])
		}
	})
	t.Run("Range", func(t *testing.T) {
		rows := getRows(t, ts, "admin", fmt.Sprintf("/api/data/?start_timestamp=%d&end_timestamp=%d", base+3600, base+7200))
		if len(rows) != 1 || rows[0].ModelName != "model-b" {
			t.Fatalf("rows %+v", rows)
		}
	})
	// Times before 1970: a start there starts at 1970, an end there ends
	// before every row.
	t.Run("NegativeTimes", func(t *testing.T) {
		if rows := getRows(t, ts, "admin", fmt.Sprintf("/api/data/?start_timestamp=-3601&end_timestamp=%d", base+7200)); len(rows) != 2 {
			t.Fatalf("negative start: rows %+v", rows)
		}
		if rows := getRows(t, ts, "admin", "/api/data/?start_timestamp=0&end_timestamp=-5"); len(rows) != 0 {
			t.Fatalf("negative end: rows %+v", rows)
		}
	})
	t.Run("SelfOwnRowsOnly", func(t *testing.T) {
		rows := getRows(t, ts, "user", "/api/data/self"+span)
		if len(rows) != 2 {
			t.Fatalf("rows %+v", rows)
		}
		for _, r := range rows {
			if r.UserID != alice {
				t.Fatalf("another user's row: %+v", r)
			}
		}
		// Older consoles ask with a trailing slash.
		if slash := getRows(t, ts, "user", "/api/data/self/"+span); len(slash) != len(rows) {
			t.Fatalf("with a trailing slash: rows %+v", slash)
		}
		rows = getRows(t, ts, "admin", "/api/data/self"+span)
		if len(rows) != 1 || rows[0].UserID != admin || rows[0].Quota != 1000 {
			t.Fatalf("admin's own rows %+v", rows)
		}
	})
	t.Run("SelfDefaultRange", func(t *testing.T) {
		// Without timestamps: the last 30 days.
		rows := getRows(t, ts, "user", "/api/data/self")
		if len(rows) != 1 || rows[0].ModelName != "model-now" {
			t.Fatalf("rows %+v", rows)
		}
	})
}

// A user record that cannot be read is an internal failure: the dashboard,
// the log list and sum filtered by that username, and the token log lookup
// of that user's token answer 500, never an empty list or 用户已被封禁,
// which are plausible answers about an account that may have been used.
func TestAnUnreadableUserRecordAnswers500(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data.db")
	e := newConsoleEnvAt(t, path)
	_, admin := e.mustUser("auditor", store.RoleAdmin)
	u, _ := e.mustUser("mangled", store.RoleCommon)
	tok, err := e.store.CreateToken(&store.Token{UserID: u.ID, Name: "t", UnlimitedQuota: true, ExpiredTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Close()
	e.store.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("users")).Put(be64(u.ID), []byte(`{"id":"mangled"`))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	e = newConsoleEnvAt(t, path)
	internal := []string{`"success":false`, `"message":"Internal error."`}
	e.run(t, []consoleScenario{
		{name: "dashboard", method: "GET", url: "/api/data/?username=mangled", token: admin,
			wantStatus: 500, wantContains: internal},
		{name: "log list", method: "GET", url: "/api/log/?username=mangled", token: admin,
			wantStatus: 500, wantContains: internal},
		{name: "log sum", method: "GET", url: "/api/log/stat?username=mangled", token: admin,
			wantStatus: 500, wantContains: internal},
		{name: "token logs", method: "GET", url: "/api/log/token", token: "sk-" + tok.Key,
			wantStatus: 500, wantContains: internal},
		// An unknown username still has no rows.
		{name: "unknown", method: "GET", url: "/api/data/?username=nobody", token: admin,
			wantStatus: 200, wantContains: []string{`"data":[]`}},
	})
}
