package api_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"gateway/store"
	"gateway/ws"
)

func TestUpdateSelf(t *testing.T) {
	t.Parallel()

	t.Run("Profile", func(t *testing.T) {
		t.Parallel()
		ts := MustStartServer(t)
		cookie, id := ts.MustSession(t, "alice")
		other, _ := ts.MustSession(t, "alice")
		runScenarios(t, ts, []ApiScenario{
			{Name: "DisplayName", Method: "PUT", URL: "/api/user/self", Cookie: cookie, UserID: id,
				Body:       `{"display_name":"Alice A."}`,
				WantStatus: 200, WantContains: []string{msg("用户信息更新成功！"), `"display_name":"Alice A."`}},
			// A blank display name keeps the old one; spaces around one are dropped.
			{Name: "BlankDisplayName", Method: "PUT", URL: "/api/user/self", Cookie: cookie, UserID: id,
				Body:       `{"display_name":"   "}`,
				WantStatus: 200, WantContains: []string{`"display_name":"Alice A."`}},
			{Name: "SpacedDisplayName", Method: "PUT", URL: "/api/user/self", Cookie: cookie, UserID: id,
				Body:       `{"display_name":"  Alice B  "}`,
				WantStatus: 200, WantContains: []string{`"display_name":"Alice B"`}},
			{Name: "UsernameTaken", Method: "PUT", URL: "/api/user/self", Cookie: cookie, UserID: id,
				Body:       `{"username":"Admin"}`,
				WantStatus: 409, WantContains: []string{msg("用户名已存在")}},
			{Name: "Rename", Method: "PUT", URL: "/api/user/self", Cookie: cookie, UserID: id,
				Body:       `{"username":"alice2"}`,
				WantStatus: 200, WantContains: []string{`"username":"alice2"`}},
			// A profile change keeps every session.
			{Name: "OtherSessionKept", URL: "/api/user/self", Cookie: other, UserID: id, WantStatus: 200},
		})
		if ts.Store.UsernameTaken("alice") {
			t.Fatal("old username still taken after a rename")
		}
	})

	t.Run("Password", func(t *testing.T) {
		t.Parallel()
		ts := MustStartServer(t)
		cookie, id := ts.MustSession(t, "alice")
		other, _ := ts.MustSession(t, "alice")
		mustUserBefore := mustUser(t, ts, id)
		const newPassword = "brand-new-pass"
		// A console tab on each session.
		wsCurrent, _, err := dialLive(t, ts, cookie, nil)
		if err != nil {
			t.Fatal(err)
		}
		wsOther, _, err := dialLive(t, ts, other, nil)
		if err != nil {
			t.Fatal(err)
		}
		readTopic(t, wsCurrent, "user.self")
		readTopic(t, wsOther, "user.self")
		ApiScenario{Name: "NoOriginal", Method: "PUT", URL: "/api/user/self", Cookie: cookie, UserID: id,
			Body:       `{"password":"` + newPassword + `"}`,
			WantStatus: 400, WantContains: []string{msg("原密码错误")}}.Test(t, ts)
		ApiScenario{Name: "StillLoggedIn", URL: "/api/user/self", Cookie: cookie, UserID: id, WantStatus: 200}.Test(t, ts)

		r := ApiScenario{Name: "Change", Method: "PUT", URL: "/api/user/self", Cookie: cookie, UserID: id,
			Body:       `{"password":"` + newPassword + `","original_password":"` + alicePassword + `"}`,
			WantStatus: 200, WantContains: []string{msg("密码修改成功！")}}.Test(t, ts)
		if u := mustUser(t, ts, id); u.PasswordHash == mustUserBefore.PasswordHash {
			t.Fatal("password hash unchanged")
		}
		// The session that changed the password continues under a new id;
		// every other session of the account ends.
		c := r.Cookie("session")
		if c == nil || c.Value == "" || c.Value == cookie {
			t.Fatalf("no new session cookie after the change: %+v", c)
		}
		runScenarios(t, ts, []ApiScenario{
			{Name: "CurrentContinues", URL: "/api/user/self", Cookie: c.Value, UserID: id, WantStatus: 200},
			{Name: "OldCookieEnded", URL: "/api/user/self", Cookie: cookie, UserID: id, WantStatus: 401},
			{Name: "OtherSessionEnded", URL: "/api/user/self", Cookie: other, UserID: id, WantStatus: 401},
		})
		// The other session's socket is closed; the current tab's stays and
		// belongs to the new session, so logging out of it closes the socket.
		if got := readCloseStatus(t, wsOther); got != ws.CloseUnauthorized {
			t.Fatalf("other session's socket ended with %d, want %d", got, ws.CloseUnauthorized)
		}
		ts.Hub.Publish(ws.Audience{UserID: id}, "ping", nil)
		readTopic(t, wsCurrent, "ping")
		ApiScenario{URL: "/api/user/logout", Cookie: c.Value, UserID: id, WantStatus: 200}.Test(t, ts)
		if got := readCloseStatus(t, wsCurrent); got != ws.CloseUnauthorized {
			t.Fatalf("after logout the socket ended with %d, want %d", got, ws.CloseUnauthorized)
		}
	})
}

// Password changes racing from several sessions of one account: one wins,
// and the others, whose original password is no longer the account's, get
// 原密码错误 (or find their session ended) instead of each setting theirs.
func TestUpdateSelf_RacingPasswordChanges(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	const n = 8
	cookies := make([]string, n)
	var id uint64
	for i := range cookies {
		cookies[i], id = ts.MustSession(t, "alice")
	}
	statuses := make([]int, n)
	together(n, func(i int) {
		statuses[i] = ApiScenario{Method: "PUT", URL: "/api/user/self", Cookie: cookies[i], UserID: id,
			Body: `{"password":"racer-pass-` + strconv.Itoa(i) + `","original_password":"` + alicePassword + `"}`}.Do(t, ts).StatusCode
	})
	u := mustUser(t, ts, id)
	won := 0
	for i, st := range statuses {
		switch {
		case st == 200:
			won++
			if !store.CheckPassword(u, "racer-pass-"+strconv.Itoa(i)) {
				t.Errorf("change %d answered 200 but its password is not the account's", i)
			}
		case st != 400 && st != 401:
			t.Errorf("change %d: status %d", i, st)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d racing password changes succeeded (%v), want 1", won, n, statuses)
	}
}

func TestDeleteSelf(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	cookie, id := ts.MustSession(t, "alice")
	runScenarios(t, ts, []ApiScenario{
		{Name: "RootRefused", Method: "DELETE", URL: "/api/user/self", As: "root",
			WantStatus: 403, WantContains: []string{msg("不能删除超级管理员账户")}},
		{Name: "User", Method: "DELETE", URL: "/api/user/self", Cookie: cookie, UserID: id,
			WantStatus: 200, WantContains: []string{msg("账户已删除！")}},
		{Name: "SessionEnded", URL: "/api/user/self", Cookie: cookie, UserID: id, WantStatus: 401},
		{Name: "LoginRefused", Method: "POST", URL: "/api/user/login",
			Body: `{"username":"alice","password":"` + alicePassword + `"}`, WantStatus: 401, WantContains: []string{msg(msgBadLogin)}},
	})
	if root := mustUser(t, ts, ts.UserID(t, "root")); root.Deleted() {
		t.Fatal("root deleted")
	}
	if !mustUser(t, ts, id).Deleted() {
		t.Fatal("alice not deleted")
	}
}

func TestAff(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	inviter := mustUser(t, ts, ts.UserID(t, "inviter"))
	if inviter.AffQuota != fixtureInviterReward {
		t.Fatalf("fixture inviter aff_quota = %d", inviter.AffQuota)
	}
	r := ApiScenario{URL: "/api/user/aff", As: "inviter", WantStatus: 200}.Test(t, ts)
	var code string
	r.Envelope(t).DataInto(t, &code)
	if code == "" || code != inviter.AffCode {
		t.Fatalf("aff code = %q, want %q", code, inviter.AffCode)
	}
	runScenarios(t, ts, []ApiScenario{
		{Name: "BelowMinimum", Method: "POST", URL: "/api/user/aff_transfer", As: "inviter", Body: `{"quota":499999}`,
			WantStatus: 400, WantContains: []string{"划转金额最低为"}},
		{Name: "MoreThanEarned", Method: "POST", URL: "/api/user/aff_transfer", As: "inviter",
			Body:       `{"quota":` + strconv.Itoa(fixtureInviterReward+1) + `}`,
			WantStatus: 400, WantContains: []string{msg("邀请额度不足")}},
		{Name: "NotANumber", Method: "POST", URL: "/api/user/aff_transfer", As: "inviter", Body: `{"quota":"lots"}`,
			WantStatus: 400},
		{Name: "OK", Method: "POST", URL: "/api/user/aff_transfer", As: "inviter", Body: `{"quota":500000}`,
			WantStatus: 200, WantContains: []string{`"success":true`, `"aff_quota":1500000`,
				`"quota":` + strconv.FormatInt(inviter.Quota+500000, 10)}},
	})
	if got := mustUser(t, ts, inviter.ID); got.AffQuota != fixtureInviterReward-500000 || got.Quota != inviter.Quota+500000 {
		t.Fatalf("after transfer aff=%d quota=%d", got.AffQuota, got.Quota)
	}
}

func TestGroups(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	groups := func(tb testing.TB, sc ApiScenario) map[string]string {
		sc.WantStatus = 200
		var m map[string]string
		sc.Test(tb, ts).Envelope(tb).DataInto(tb, &m)
		return m
	}
	want := map[string]string{"default": "默认分组", "vip": "vip分组"}
	if got := groups(t, ApiScenario{URL: "/api/user/self/groups", As: "user"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("self groups = %v, want %v", got, want)
	}
	if got := groups(t, ApiScenario{URL: "/api/user/groups"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("public groups = %v, want %v", got, want)
	}

	// Usable = UserUsableGroups plus the user's own group, limited to groups
	// with a ratio; the own group is labelled when it is not listed.
	ts.MustSetOptions(t,
		"GroupRatio", `{"default":1,"vip":1,"svip":2}`,
		"UserUsableGroups", `{"default":"默认分组","nope":"no ratio"}`)
	svip := "svip"
	if _, err := ts.Store.UpdateUser(ts.UserID(t, "alice"), store.UserUpdate{Group: &svip}); err != nil {
		t.Fatal(err)
	}
	want = map[string]string{"default": "默认分组", "svip": "用户分组"}
	if got := groups(t, ApiScenario{URL: "/api/user/self/groups", As: "user"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("self groups = %v, want %v", got, want)
	}
	if got := groups(t, ApiScenario{URL: "/api/user/groups"}); !reflect.DeepEqual(got, map[string]string{"default": "默认分组"}) {
		t.Fatalf("public groups = %v", got)
	}
}

func TestGetSelf(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	if _, err := ts.Store.ResetAccessToken(ts.UserID(t, "alice")); err != nil {
		t.Fatal(err)
	}
	r := ApiScenario{URL: "/api/user/self", As: "user", WantStatus: 200,
		WantNotContains: []string{`"password"`, "password_hash", "access_token_hash", "$2a$"}}.Test(t, ts)
	var self map[string]json.RawMessage
	r.Envelope(t).DataInto(t, &self)
	for _, k := range []string{"id", "username", "display_name", "email", "quota", "used_quota", "request_count",
		"group", "role", "status", "aff_code", "aff_count", "aff_quota", "aff_history_quota", "inviter_id", "DeletedAt"} {
		if _, ok := self[k]; !ok {
			t.Errorf("self has no %q", k)
		}
	}
	if string(self["email"]) != `"`+aliceEmail+`"` || string(self["DeletedAt"]) != "null" {
		t.Errorf("self = %s", r.Body)
	}
}

// GET /api/user/models lists the caller's group's models, or with ?group=
// those of another group the caller may use (the playground's choice).
func TestUserModels(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.MustSetOptions(t,
		"GroupRatio", `{"default":1,"vip":2,"secret":1}`,
		"UserUsableGroups", `{"default":"默认分组","vip":"vip"}`)
	if err := ts.Store.CreateChannels([]*store.Channel{
		{Name: "d", Type: 1, Key: "k1", Group: "default", Models: "m-default"},
		{Name: "v", Type: 1, Key: "k2", Group: "vip", Models: "m-vip"},
		{Name: "s", Type: 1, Key: "k3", Group: "secret", Models: "m-secret"},
	}); err != nil {
		t.Fatal(err)
	}
	runScenarios(t, ts, []ApiScenario{
		{Name: "OwnGroup", URL: "/api/user/models", As: "user", WantStatus: 200,
			WantContains: []string{`"data":["m-default"]`}},
		{Name: "UsableGroup", URL: "/api/user/models?group=vip", As: "user", WantStatus: 200,
			WantContains: []string{`"data":["m-vip"]`}},
		{Name: "ForeignGroup", URL: "/api/user/models?group=secret", As: "user", WantStatus: 403,
			WantContains: []string{"无权使用分组 secret"}, WantNotContains: []string{"m-secret"}},
	})
}
