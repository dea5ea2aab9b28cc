package api_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"gateway/api"
	"gateway/store"
)

var redemptionKey = regexp.MustCompile(`^[0-9a-f]{32}$`)

// mustCreateRedemptions creates codes as the fixture administrator and
// returns their keys.
func mustCreateRedemptions(tb testing.TB, ts *TestServer, name string, quota int64, count int) []string {
	tb.Helper()
	var keys []string
	ApiScenario{Method: "POST", URL: "/api/redemption/", As: "admin",
		Body: fmt.Sprintf(`{"name":%q,"quota":%d,"count":%d}`, name, quota, count), WantStatus: 200}.
		Test(tb, ts).Envelope(tb).DataInto(tb, &keys)
	if len(keys) != count {
		tb.Fatalf("%d keys, want %d", len(keys), count)
	}
	return keys
}

func redemptionByKey(tb testing.TB, ts *TestServer, key string) *store.Redemption {
	tb.Helper()
	all, err := ts.Store.Redemptions("", 0, 0)
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range all {
		if r.Key == key {
			return r
		}
	}
	tb.Fatalf("no redemption with key %s", key)
	return nil
}

func TestRedemptions_Admin(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	keys := mustCreateRedemptions(t, ts, "gift", 100000, 3)
	for _, k := range keys {
		if !redemptionKey.MatchString(k) {
			t.Fatalf("key %q is not 32 hex characters", k)
		}
	}
	first := redemptionByKey(t, ts, keys[0])
	one := fmt.Sprintf("/api/redemption/%d", first.ID)
	runScenarios(t, ts, []ApiScenario{
		{Name: "CreateGuest", Method: "POST", URL: "/api/redemption/", Body: `{"name":"x","quota":1,"count":1}`, WantStatus: 401},
		{Name: "CreateUser", Method: "POST", URL: "/api/redemption/", As: "user", Body: `{"name":"x","quota":1,"count":1}`, WantStatus: 403},
		{Name: "CreateNoName", Method: "POST", URL: "/api/redemption/", As: "admin", Body: `{"name":" ","quota":1,"count":1}`,
			WantStatus: 400, WantContains: []string{"兑换码名称长度必须在 1-20 之间"}},
		{Name: "CreateLongName", Method: "POST", URL: "/api/redemption/", As: "admin", Body: `{"name":"abcdefghijklmnopqrstu","quota":1,"count":1}`, WantStatus: 400},
		{Name: "UpdateWithoutID", Method: "PUT", URL: "/api/redemption/", As: "admin", Body: `{"name":"x"}`,
			WantStatus: 400, WantContains: []string{`"message":"缺少 id"`}},
		{Name: "ManageWithoutID", Method: "POST", URL: "/api/user/manage", As: "admin", Body: `{"action":"disable"}`,
			WantStatus: 400, WantContains: []string{`"message":"缺少 id"`}},
		{Name: "CreateNameWithNUL", Method: "POST", URL: "/api/redemption/", As: "admin", Body: `{"name":"x\u0000y","quota":1,"count":1}`,
			WantStatus: 400, WantContains: []string{"兑换码名称不能包含控制字符"}},
		{Name: "CreateQuotaBeyondTheBound", Method: "POST", URL: "/api/redemption/", As: "admin", Body: `{"name":"x","quota":9223372036854775807,"count":1}`,
			WantStatus: 400, WantContains: []string{"额度不能超过"}},
		{Name: "CreateNegativeQuota", Method: "POST", URL: "/api/redemption/", As: "admin", Body: `{"name":"x","quota":-5,"count":1}`,
			WantStatus: 400, WantContains: []string{"兑换码额度必须大于 0"}},
		{Name: "CreateZeroQuota", Method: "POST", URL: "/api/redemption/", As: "admin", Body: `{"name":"x","quota":0,"count":1}`,
			WantStatus: 400, WantContains: []string{"兑换码额度必须大于 0"}},
		{Name: "CreateZeroCount", Method: "POST", URL: "/api/redemption/", As: "admin", Body: `{"name":"x","quota":1,"count":0}`, WantStatus: 400},
		{Name: "CreateTooMany", Method: "POST", URL: "/api/redemption/", As: "admin", Body: `{"name":"x","quota":1,"count":101}`,
			WantStatus: 400, WantContains: []string{"1-100"}},
		{Name: "ListGuest", URL: "/api/redemption/", WantStatus: 401},
		{Name: "ListUser", URL: "/api/redemption/", As: "user", WantStatus: 403},
		{Name: "List", URL: "/api/redemption/?p=0", As: "admin", WantStatus: 200, WantContains: []string{keys[0], keys[1], keys[2]}},
		{Name: "ListPastTheEnd", URL: "/api/redemption/?p=1", As: "root", WantStatus: 200, WantContains: []string{`"data":[]`}},
		{Name: "SearchName", URL: "/api/redemption/search?keyword=gi", As: "admin", WantStatus: 200, WantContains: []string{keys[0], keys[2]}},
		{Name: "SearchID", URL: fmt.Sprintf("/api/redemption/search?keyword=%d", first.ID), As: "admin", WantStatus: 200,
			WantContains: []string{keys[0]}, WantNotContains: []string{keys[1]}},
		{Name: "SearchMiss", URL: "/api/redemption/search?keyword=ift", As: "admin", WantStatus: 200, WantContains: []string{`"data":[]`}},
		// name LIKE 'kw%': case does not count, % and _ are wildcards.
		{Name: "SearchOtherCase", URL: "/api/redemption/search?keyword=GI", As: "admin", WantStatus: 200, WantContains: []string{keys[0], keys[2]}},
		{Name: "SearchPercent", URL: "/api/redemption/search?keyword=%25ft", As: "admin", WantStatus: 200, WantContains: []string{keys[0], keys[2]}},
		{Name: "SearchUnderscore", URL: "/api/redemption/search?keyword=g_f", As: "admin", WantStatus: 200, WantContains: []string{keys[0], keys[2]}},
		{Name: "SearchUser", URL: "/api/redemption/search?keyword=gi", As: "user", WantStatus: 403},
		{Name: "Get", URL: one, As: "admin", WantStatus: 200, WantContains: []string{keys[0], `"status":1`, `"quota":100000`}},
		{Name: "GetUser", URL: one, As: "user", WantStatus: 403},
		{Name: "GetMissing", URL: "/api/redemption/999", As: "admin", WantStatus: 404},
		{Name: "Edit", Method: "PUT", URL: "/api/redemption/", As: "admin",
			Body:       fmt.Sprintf(`{"id":%d,"name":"renamed","quota":200000}`, first.ID),
			WantStatus: 200, WantContains: []string{`"name":"renamed"`, `"quota":200000`, `"status":1`}},
		{Name: "EditBadQuota", Method: "PUT", URL: "/api/redemption/", As: "admin",
			Body: fmt.Sprintf(`{"id":%d,"quota":0}`, first.ID), WantStatus: 400},
		{Name: "EditUser", Method: "PUT", URL: "/api/redemption/", As: "user", Body: fmt.Sprintf(`{"id":%d,"name":"x"}`, first.ID), WantStatus: 403},
		// status_only writes the status and nothing else.
		{Name: "Disable", Method: "PUT", URL: "/api/redemption/?status_only=true", As: "admin",
			Body:       fmt.Sprintf(`{"id":%d,"status":2,"name":"ignored"}`, first.ID),
			WantStatus: 200, WantContains: []string{`"status":2`, `"name":"renamed"`}},
		{Name: "StatusOnlyWithoutStatus", Method: "PUT", URL: "/api/redemption/?status_only=true", As: "admin",
			Body: fmt.Sprintf(`{"id":%d}`, first.ID), WantStatus: 400},
		{Name: "BadStatus", Method: "PUT", URL: "/api/redemption/?status_only=true", As: "admin",
			Body: fmt.Sprintf(`{"id":%d,"status":3}`, first.ID), WantStatus: 400},
		// A disabled code cannot be redeemed, and name and quota only change while unused.
		{Name: "RedeemDisabled", Method: "POST", URL: "/api/user/topup", As: "user", Body: `{"key":"` + keys[0] + `"}`,
			WantStatus: 400, WantContains: []string{"该兑换码已被使用或已禁用"}},
		{Name: "EditDisabled", Method: "PUT", URL: "/api/redemption/", As: "admin",
			Body: fmt.Sprintf(`{"id":%d,"name":"again"}`, first.ID), WantStatus: 400, WantContains: []string{"只能编辑未使用的兑换码"}},
		{Name: "Enable", Method: "PUT", URL: "/api/redemption/?status_only=true", As: "admin",
			Body: fmt.Sprintf(`{"id":%d,"status":1}`, first.ID), WantStatus: 200, WantContains: []string{`"status":1`}},
		{Name: "DeleteUser", Method: "DELETE", URL: one + "/", As: "user", WantStatus: 403},
		{Name: "DeleteDeeper", Method: "DELETE", URL: one + "/x/", As: "admin", WantStatus: 404},
		{Name: "Delete", Method: "DELETE", URL: one + "/", As: "admin", WantStatus: 200},
		{Name: "GetDeleted", URL: one, As: "admin", WantStatus: 404},
		{Name: "DeleteAgain", Method: "DELETE", URL: one, As: "admin", WantStatus: 404},
		{Name: "RedeemDeleted", Method: "POST", URL: "/api/user/topup", As: "user", Body: `{"key":"` + keys[0] + `"}`,
			WantStatus: 400, WantContains: []string{"无效的兑换码"}},
		{Name: "ListAfterDelete", URL: "/api/redemption/", As: "admin", WantStatus: 200,
			WantContains: []string{keys[1], keys[2]}, WantNotContains: []string{keys[0]}},
	})
}

func TestRedemptions_Redeem(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "DisplayInCurrencyEnabled", "false")
	keys := mustCreateRedemptions(t, ts, "gift", 123456, 2)
	alice := ts.UserID(t, "alice")
	before := mustUser(t, ts, alice).Quota
	runScenarios(t, ts, []ApiScenario{
		{Name: "Guest", Method: "POST", URL: "/api/user/topup", Body: `{"key":"` + keys[0] + `"}`, WantStatus: 401},
		{Name: "Empty", Method: "POST", URL: "/api/user/topup", As: "user", Body: `{"key":" "}`,
			WantStatus: 400, WantContains: []string{"请输入兑换码！"}},
		{Name: "Unknown", Method: "POST", URL: "/api/user/topup", As: "user", Body: `{"key":"0123456789abcdef0123456789abcdef"}`,
			WantStatus: 400, WantContains: []string{"无效的兑换码"}},
		{Name: "OK", Method: "POST", URL: "/api/user/topup", As: "user", Body: `{"key":" ` + keys[0] + ` "}`,
			WantStatus: 200, WantContains: []string{`"data":123456`, msg("兑换成功，充值额度 123456 点额度")}},
		{Name: "Again", Method: "POST", URL: "/api/user/topup", As: "admin", Body: `{"key":"` + keys[0] + `"}`,
			WantStatus: 400, WantContains: []string{"该兑换码已被使用或已禁用"}},
		// A used code never changes again: not its status, not its fields.
		{Name: "ReEnableUsed", Method: "PUT", URL: "/api/redemption/?status_only=true", As: "admin",
			Body:       fmt.Sprintf(`{"id":%d,"status":1}`, redemptionByKey(t, ts, keys[0]).ID),
			WantStatus: 400, WantContains: []string{"兑换码已被使用，无法修改"}},
		{Name: "AdminRedeems", Method: "POST", URL: "/api/user/topup", As: "admin", Body: `{"key":"` + keys[1] + `"}`, WantStatus: 200},
	})
	if got := mustUser(t, ts, alice).Quota; got != before+123456 {
		t.Fatalf("alice quota %d, want %d", got, before+123456)
	}
	r := redemptionByKey(t, ts, keys[0])
	if r.Status != store.RedemptionUsed || r.UsedUserID != alice || r.RedeemedTime == 0 {
		t.Fatalf("redeemed code = %+v", r)
	}
	logs, err := ts.Store.Logs(store.LogFilter{UserID: alice, Type: store.LogTypeTopup}, 1, 10)
	if err != nil || logs.Total != 1 || !strings.Contains(logs.Items[0].Content, "兑换码") {
		t.Fatalf("top-up logs = %+v, %v", logs, err)
	}
}

func TestRedemptions_RedeemIsCritical(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t, func(c *api.Config) { c.CriticalRateLimit = api.RateLimit{N: 2, Window: time.Minute} })
	for i, want := range []int{400, 400, 429} {
		ApiScenario{Name: fmt.Sprint(i), Method: "POST", URL: "/api/user/topup", As: "user", Body: `{"key":"nope"}`, WantStatus: want}.Test(t, ts)
	}
}

// TestRedemptions_ConcurrentRedeem has 100 users redeem one code at once:
// exactly one succeeds and the quota is credited once.
func TestRedemptions_ConcurrentRedeem(t *testing.T) {
	t.Parallel()
	const n = 100
	ts, ids := startServerWithUsers(t, n)
	keys := mustCreateRedemptions(t, ts, "race", 5000, 1)
	cookies := make([]string, n)
	for i, id := range ids {
		c, _, err := ts.Store.CreateSession(id)
		if err != nil {
			t.Fatal(err)
		}
		cookies[i] = c
	}
	statuses := make([]int, n)
	together(len(ids), func(i int) {
		r := ApiScenario{Method: "POST", URL: "/api/user/topup", Cookie: cookies[i], UserID: ids[i], Body: `{"key":"` + keys[0] + `"}`}.Do(t, ts)
		statuses[i] = r.StatusCode
	})
	winner := -1
	for i, s := range statuses {
		switch {
		case s == 200 && winner >= 0:
			t.Fatalf("users %d and %d both redeemed the code", winner, i)
		case s == 200:
			winner = i
		case s != 400:
			t.Fatalf("user %d: status %d", i, s)
		}
	}
	if winner < 0 {
		t.Fatal("nobody redeemed the code")
	}
	var credited int64
	for _, id := range ids {
		credited += mustUser(t, ts, id).Quota
		logs, err := ts.Store.Logs(store.LogFilter{UserID: id, Type: store.LogTypeTopup}, 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1, false: 0}[id == ids[winner]]; logs.Total != want {
			t.Fatalf("user %d has %d top-up logs, want %d", id, logs.Total, want)
		}
	}
	if credited != 5000 {
		t.Fatalf("%d quota credited in all, want 5000", credited)
	}
}

// startServerWithUsers starts a server like MustStartServer on a copy of the
// fixture with n more common users, written straight into the file: creating
// them through the store would cost a bcrypt each. They share alice's
// password hash.
func startServerWithUsers(tb testing.TB, n int) (*TestServer, []uint64) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "gateway.db")
	if err := os.WriteFile(path, fixture.Data, 0o600); err != nil {
		tb.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		tb.Fatal(err)
	}
	var ids []uint64
	err = db.Update(func(tx *bolt.Tx) error {
		users, byName := tx.Bucket([]byte("users")), tx.Bucket([]byte("idx_user_by_username"))
		var alice store.User
		if err := json.Unmarshal(users.Get(be64(fixture.IDs["alice"])), &alice); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			id, _ := users.NextSequence()
			name := fmt.Sprintf("bulk%03d", i)
			u := store.User{ID: id, Username: name, DisplayName: name, PasswordHash: alice.PasswordHash,
				Group: "default", Role: store.RoleCommon, Status: store.UserStatusEnabled, CreatedAt: alice.CreatedAt}
			data, err := json.Marshal(u)
			if err != nil {
				return err
			}
			if err := users.Put(be64(id), data); err != nil {
				return err
			}
			if err := byName.Put([]byte(name), be64(id)); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
	// The same wiring as MustStartServer, over the prepared file.
	ts := MustStartServer(tb, func(c *api.Config) {
		st, err := store.Open(path, store.Options{NoSync: true})
		if err != nil {
			tb.Fatalf("open store: %v", err)
		}
		tb.Cleanup(func() { st.Close() })
		st.SetHooks(store.Hooks{UserChanged: func(u *store.User) { api.PublishUser(c.Hub, u) }})
		c.Store = st
	})
	ts.Store = ts.Config.Store
	return ts, ids
}

func be64(v uint64) []byte {
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
	return b
}

// A create without a quota gets the column's default of 100 (S §3.6).
func TestRedemptions_DefaultQuota(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	var keys []string
	ApiScenario{Method: "POST", URL: "/api/redemption/", As: "admin", Body: `{"name":"dflt","count":1}`, WantStatus: 200}.
		Test(t, ts).Envelope(t).DataInto(t, &keys)
	if len(keys) != 1 {
		t.Fatalf("keys = %v", keys)
	}
	if r := redemptionByKey(t, ts, keys[0]); r.Quota != 100 {
		t.Fatalf("quota = %d, want 100", r.Quota)
	}
}
