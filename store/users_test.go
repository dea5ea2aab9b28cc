package store_test

import (
	"bytes"
	"crypto/sha256"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"gateway/store"
)

func TestCreateUser(t *testing.T) {
	t.Parallel()

	t.Run("Validation", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		// Every row fails before hashing, so the table is fast.
		for _, tt := range []struct {
			name    string
			in      store.NewUser
			wantMsg string
		}{
			{"EmptyUsername", store.NewUser{Username: "  ", Password: "password1"}, "用户名不能为空"},
			{"LongUsername", store.NewUser{Username: strings.Repeat("u", 21), Password: "password1"}, "用户名长度不得超过 20 位"},
			{"UsernameWithSpace", store.NewUser{Username: "a b", Password: "password1"}, "用户名不能包含空白字符"},
			{"UsernameWithIdeographicSpace", store.NewUser{Username: "ro\u3000ot", Password: "password1"}, "用户名不能包含空白字符"},
			{"UsernameWithNoBreakSpace", store.NewUser{Username: "ro\u00a0ot", Password: "password1"}, "用户名不能包含空白字符"},
			{"UsernameWithHangulFiller", store.NewUser{Username: "root\u3164", Password: "password1"}, "用户名不能包含空白字符"},
			{"UsernameWithBrailleBlank", store.NewUser{Username: "root\u2800", Password: "password1"}, "用户名不能包含空白字符"},
			{"UsernameWithNUL", store.NewUser{Username: "root\x00", Password: "password1"}, "用户名不能包含控制字符或不可见字符"},
			{"UsernameWithZeroWidthSpace", store.NewUser{Username: "root\u200b", Password: "password1"}, "用户名不能包含控制字符或不可见字符"},
			{"UsernameLikeAnEmail", store.NewUser{Username: "alice@example.com", Password: "password1"}, "用户名不能包含 @"},
			{"UsernameFullWidth", store.NewUser{Username: "ｒｏｏｔ", Password: "password1"}, "用户名不能包含全角、兼容或未组合的字符，可改用：root"},
			{"UsernameDecomposedAccent", store.NewUser{Username: "jose\u0301", Password: "password1"}, "用户名不能包含全角、兼容或未组合的字符，可改用：jos\u00e9"},
			{"UsernameFullWidthAt", store.NewUser{Username: "alice＠example.com", Password: "password1"}, "用户名不能包含 @"},
			{"DisplayNameWithBell", store.NewUser{Username: "u1", Password: "password1", DisplayName: "u1\abell"}, "显示名称不能包含控制字符"},
			{"EmailWithNUL", store.NewUser{Username: "u1", Password: "password1", Email: "\x00@x.com"}, "无效的邮箱地址"},
			{"ShortPassword", store.NewUser{Username: "u1", Password: "1234567"}, "密码长度不得小于 8 位！"},
			{"LongPassword", store.NewUser{Username: "u1", Password: strings.Repeat("p", 21)}, "密码长度不得超过 20 位！"},
			{"LongDisplayName", store.NewUser{Username: "u1", Password: "password1", DisplayName: strings.Repeat("名", 21)}, "显示名称长度不得超过 20 位"},
			{"BadEmail", store.NewUser{Username: "u1", Password: "password1", Email: "not-an-email"}, "无效的邮箱地址"},
			{"EmailWithoutDot", store.NewUser{Username: "u1", Password: "password1", Email: "a@localhost"}, "无效的邮箱地址"},
			{"EmailWithComment", store.NewUser{Username: "u1", Password: "password1", Email: "a@example.com(2)"}, "无效的邮箱地址"},
			{"EmailWithDoubleDot", store.NewUser{Username: "u1", Password: "password1", Email: "a..b@example.com"}, "无效的邮箱地址"},
			{"LongEmail", store.NewUser{Username: "u1", Password: "password1", Email: strings.Repeat("a", 40) + "@example.com"}, "邮箱地址长度不得超过 50 位"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := s.CreateUser(tt.in)
				wantCode(t, err, store.EINVALID, tt.wantMsg)
			})
		}
		if users, _ := s.Users(store.UserFilter{}); len(users) != 0 {
			t.Fatalf("refused creations left %d users", len(users))
		}
	})

	// S §3.2: email ≤ 50, counted like the display name beside it, in
	// characters: an internationalised address of Chinese characters takes
	// three bytes a character.
	t.Run("EmailLimitCountsCharacters", func(t *testing.T) {
		t.Parallel()
		email := strings.Repeat("张", 30) + "@例子.中国" // 36 characters, 98 bytes
		if err := store.ValidateEmail(email); err != nil {
			t.Fatalf("ValidateEmail(%q) = %v, want nil", email, err)
		}
		long := strings.Repeat("张", 45) + "@例子.中国" // 51 characters
		if err := store.ValidateEmail(long); err == nil || !strings.Contains(err.Error(), "邮箱地址长度不得超过 50 位") {
			t.Fatalf("ValidateEmail of 51 characters = %v, want the length error", err)
		}
	})

	t.Run("PasswordRules", func(t *testing.T) {
		t.Parallel()
		for _, tt := range []struct {
			pw      string
			wantErr string
		}{
			{"1234567", "密码长度不得小于 8 位！"},
			{"12345678", ""},
			{strings.Repeat("x", 20), ""},
			{strings.Repeat("x", 21), "密码长度不得超过 20 位！"},
			{strings.Repeat("密", 8), ""},  // counted in characters, not bytes
			{strings.Repeat("密", 20), ""}, // 60 bytes
			{strings.Repeat("😀", 20), "密码过长：最多 72 字节（一个汉字或表情占 3 到 4 字节）"}, // 80 bytes: beyond bcrypt
			{strings.Repeat("密", 7), "密码长度不得小于 8 位！"},
			{"", "密码长度不得小于 8 位！"},
		} {
			err := store.ValidatePassword(tt.pw)
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("ValidatePassword(%q) = %v, want nil", tt.pw, err)
				}
				continue
			}
			if store.ErrorCode(err) != store.EINVALID || store.ErrorMessage(err) != tt.wantErr {
				t.Errorf("ValidatePassword(%q) = %v, want %q", tt.pw, err, tt.wantErr)
			}
		}
	})

	t.Run("OKAndConflicts", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		alice := MustCreateUser(t, s, store.NewUser{Username: " Alice ", Password: "password1", Email: "Alice@Example.com"})
		if alice.ID == 0 || alice.Username != "Alice" || alice.DisplayName != "Alice" || alice.Role != store.RoleCommon ||
			alice.Status != store.UserStatusEnabled || alice.Group != "default" || len(alice.AffCode) != 4 || alice.CreatedAt == 0 {
			t.Fatalf("created user = %+v", alice)
		}
		if alice.PasswordHash == "" || strings.Contains(alice.PasswordHash, "password1") {
			t.Fatalf("password stored as %q", alice.PasswordHash)
		}
		for _, login := range []string{"alice", "ALICE", "alice@example.com", " ALICE@EXAMPLE.COM "} {
			if u, err := s.UserByLogin(login); err != nil || u.ID != alice.ID {
				t.Fatalf("UserByLogin(%q) = %v, %v", login, u, err)
			}
		}
		if _, err := s.UserByLogin("nobody"); store.ErrorCode(err) != store.ENOTFOUND {
			t.Fatalf("UserByLogin(nobody) = %v, want not_found", err)
		}

		_, err := s.CreateUser(store.NewUser{Username: "ALICE", Password: "password1"})
		wantCode(t, err, store.ECONFLICT, "用户名已存在")
		_, err = s.CreateUser(store.NewUser{Username: "bob", Password: "password1", Email: "alice@EXAMPLE.com"})
		wantCode(t, err, store.ECONFLICT, "邮箱地址已被占用")
		if s.UsernameTaken("bob") {
			t.Fatal("a refused creation reserved its username")
		}

		// A deleted account keeps its username and e-mail reserved.
		if err := s.DeleteUser(alice.ID); err != nil {
			t.Fatal(err)
		}
		if !s.UsernameTaken("alice") || !s.EmailTaken("ALICE@example.com") {
			t.Fatal("deleted user's username or e-mail was released")
		}
		_, err = s.CreateUser(store.NewUser{Username: "alice", Password: "password1"})
		wantCode(t, err, store.ECONFLICT, "用户名已存在")
		// (The e-mail through UpdateUser: the same index check, without
		// another second of bcrypt.)
		bob := MustPutUser(t, s, store.User{Username: "bob"})
		email := "alice@example.com"
		_, err = s.UpdateUser(bob.ID, store.UserUpdate{Email: &email})
		wantCode(t, err, store.ECONFLICT, "邮箱地址已被占用")
	})
}

func TestCheckPassword(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "alice"})
	if !store.CheckPassword(u, store.FastPassword) {
		t.Fatal("right password refused")
	}
	if store.CheckPassword(u, "wrong-password") {
		t.Fatal("wrong password accepted")
	}
	if store.CheckPassword(&store.User{Username: "nohash"}, "") {
		t.Fatal("a user without a hash accepted the empty password")
	}

	// With no user, CheckPassword still runs a default-cost bcrypt compare,
	// so a login for an unknown name takes as long as a wrong password.
	// Default cost is 2^6 times the minimum cost; demand at least 4 times
	// the fastest minimum-cost compare measured here (a wide margin, so a
	// busy machine does not make this flaky; skipping the work entirely
	// takes microseconds).
	minHash, _ := bcrypt.GenerateFromPassword([]byte("x"), bcrypt.MinCost)
	fastest := time.Hour
	for i := 0; i < 5; i++ {
		start := time.Now()
		bcrypt.CompareHashAndPassword(minHash, []byte("y"))
		fastest = min(fastest, time.Since(start))
	}
	start := time.Now()
	ok := store.CheckPassword(nil, "anything")
	took := time.Since(start)
	if ok {
		t.Fatal("CheckPassword(nil) = true")
	}
	if took < 4*fastest {
		t.Fatalf("CheckPassword(nil) took %v, a min-cost compare %v: no bcrypt work done for a missing user", took, fastest)
	}
}

func TestEnsureRoot(t *testing.T) {
	t.Parallel()
	t.Run("EmptyStore", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		created, err := s.EnsureRoot()
		if err != nil || !created {
			t.Fatalf("EnsureRoot = %v, %v; want true", created, err)
		}
		root, err := s.UserByUsername("root")
		if err != nil {
			t.Fatal(err)
		}
		if root.Role != store.RoleRoot || root.Status != store.UserStatusEnabled || root.Quota != 100_000_000 ||
			root.DisplayName != "Root User" || !root.PasswordIsDefault {
			t.Fatalf("root = %+v", root)
		}
		if !store.CheckPassword(root, "123456") {
			t.Fatal("root password is not 123456")
		}
		// The starting quota is money like any other: an auditor finds it
		// in root's log (S §8, a system entry), or root's balance could
		// not be explained from the log.
		logs, err := s.Logs(store.LogFilter{UserID: root.ID}, 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		if logs.Total != 1 || logs.Items[0].Type != store.LogTypeSystem || !strings.Contains(logs.Items[0].Content, "$200.000000") {
			t.Fatalf("root's log after its creation: %+v", logs.Items)
		}
		// Committed, not only live: the quota survives a reopen.
		s = MustReopen(t, s)
		if got := MustUser(t, s, root.ID); got.Quota != 100_000_000 {
			t.Fatalf("root quota after reopen = %d", got.Quota)
		}
		created, err = s.EnsureRoot()
		if err != nil || created {
			t.Fatalf("second EnsureRoot = %v, %v; want false", created, err)
		}
		if users, _ := s.Users(store.UserFilter{}); len(users) != 1 {
			t.Fatalf("%d users after the second EnsureRoot, want 1", len(users))
		}
	})
	t.Run("ChosenPassword", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		wantCode(t, func() error { _, err := s.EnsureRootWith("short"); return err }(), store.EINVALID, "")
		if s.UsernameTaken("root") {
			t.Fatal("root created with a refused password")
		}
		if created, err := s.EnsureRootWith("first-pass-99"); err != nil || !created {
			t.Fatalf("EnsureRootWith = %v, %v", created, err)
		}
		root, err := s.UserByUsername("root")
		if err != nil {
			t.Fatal(err)
		}
		if root.PasswordIsDefault || !store.CheckPassword(root, "first-pass-99") || store.CheckPassword(root, "123456") {
			t.Fatalf("root with a chosen password: default=%v", root.PasswordIsDefault)
		}
	})
	t.Run("StoreWithUsers", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		MustPutUser(t, s, store.User{Username: "alice"})
		if created, err := s.EnsureRoot(); err != nil || created {
			t.Fatalf("EnsureRoot = %v, %v; want false", created, err)
		}
		if s.UsernameTaken("root") {
			t.Fatal("root created although users exist")
		}
	})
}

func TestCreateUser_QuotaAndInvites(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*store.Store, *store.User) {
		s := MustOpenStore(t)
		if err := s.UpdateOptions([]store.Option{
			{Key: "QuotaForNewUser", Value: "100"},
			{Key: "QuotaForInvitee", Value: "200"},
			{Key: "QuotaForInviter", Value: "300"},
			{Key: "DisplayInCurrencyEnabled", Value: "false"},
		}); err != nil {
			t.Fatal(err)
		}
		return s, MustPutUser(t, s, store.User{Username: "inviter", Quota: 7})
	}
	systemLogs := func(t *testing.T, s *store.Store, id uint64) []string {
		var out []string
		for _, l := range store.UserLogs(t, s, id) {
			if l.Type != store.LogTypeSystem {
				t.Errorf("user %d has a log of type %d: %+v", id, l.Type, l)
			}
			out = append(out, l.Content)
		}
		return out
	}

	// Invite earnings near the bound every balance keeps get no more, rather
	// than wrap around after enough invitations.
	t.Run("EarningsBounded", func(t *testing.T) {
		t.Parallel()
		s, inviter := setup(t)
		store.SetAffQuota(t, s, inviter.ID, store.MaxQuota-100)
		MustCreateUser(t, s, store.NewUser{Username: "invitee", Password: "password1", InviterCode: inviter.AffCode})
		if got := MustUser(t, s, inviter.ID); got.AffQuota != store.MaxQuota-100 || got.AffCount != 1 {
			t.Fatalf("inviter aff_quota %d, count %d", got.AffQuota, got.AffCount)
		}
	})

	// Gifts that together pass the bound give the bound: each option may
	// be 2^53, a balance may not.
	t.Run("GiftsBounded", func(t *testing.T) {
		t.Parallel()
		s, inviter := setup(t)
		max := strconv.FormatInt(store.MaxQuota, 10)
		if err := s.UpdateOptions([]store.Option{{Key: "QuotaForNewUser", Value: max}, {Key: "QuotaForInvitee", Value: max}}); err != nil {
			t.Fatal(err)
		}
		invitee := MustCreateUser(t, s, store.NewUser{Username: "invitee", Password: "password1", InviterCode: inviter.AffCode})
		if invitee.Quota != store.MaxQuota {
			t.Fatalf("invitee quota %d, want %d", invitee.Quota, store.MaxQuota)
		}
		if got := MustUser(t, s, invitee.ID); got.Quota != store.MaxQuota {
			t.Fatalf("stored quota %d", got.Quota)
		}
		if logs := systemLogs(t, s, invitee.ID); len(logs) != 1 {
			t.Fatalf("invitee logs = %q; want the new-user gift alone", logs)
		}
	})

	t.Run("WithInviteCode", func(t *testing.T) {
		t.Parallel()
		s, inviter := setup(t)
		invitee := MustCreateUser(t, s, store.NewUser{Username: "invitee", Password: "password1", InviterCode: inviter.AffCode})
		if invitee.Quota != 300 || invitee.InviterID != inviter.ID {
			t.Fatalf("invitee quota=%d inviter=%d; want 300 (100 new + 200 invitee), %d", invitee.Quota, invitee.InviterID, inviter.ID)
		}
		inv := MustUser(t, s, inviter.ID)
		if inv.AffCount != 1 || inv.AffQuota != 300 || inv.AffHistoryQuota != 300 || inv.Quota != 7 {
			t.Fatalf("inviter after = count %d aff %d history %d quota %d; want 1, 300, 300, 7",
				inv.AffCount, inv.AffQuota, inv.AffHistoryQuota, inv.Quota)
		}
		logs := systemLogs(t, s, invitee.ID)
		if len(logs) != 2 || !strings.Contains(logs[0], "100") || !strings.Contains(logs[1], "200") {
			t.Fatalf("invitee logs = %q; want the new-user gift (100) and the invitee gift (200)", logs)
		}
		if logs := systemLogs(t, s, inviter.ID); len(logs) != 1 || !strings.Contains(logs[0], "300") {
			t.Fatalf("inviter logs = %q; want one invite reward of 300", logs)
		}
		// Committed: the rewards survive a reopen.
		s = MustReopen(t, s)
		if got := MustUser(t, s, inviter.ID); got.AffQuota != 300 {
			t.Fatalf("inviter aff_quota after reopen = %d", got.AffQuota)
		}
		if got := MustUser(t, s, invitee.ID); got.Quota != 300 {
			t.Fatalf("invitee quota after reopen = %d", got.Quota)
		}
	})

	t.Run("UnknownCode", func(t *testing.T) {
		t.Parallel()
		s, inviter := setup(t)
		u := MustCreateUser(t, s, store.NewUser{Username: "loner", Password: "password1", InviterCode: "no-such-code"})
		if u.Quota != 100 || u.InviterID != 0 {
			t.Fatalf("quota=%d inviter=%d; want 100, 0", u.Quota, u.InviterID)
		}
		if logs := systemLogs(t, s, u.ID); len(logs) != 1 {
			t.Fatalf("logs = %q; want only the new-user gift", logs)
		}
		if got := MustUser(t, s, inviter.ID); got.AffCount != 0 || got.AffQuota != 0 {
			t.Fatalf("unrelated inviter rewarded: %+v", got)
		}
	})
}

func TestUpdateUser(t *testing.T) {
	t.Parallel()

	t.Run("RenameFreesOldName", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		alice := MustPutUser(t, s, store.User{Username: "alice", Email: "alice@example.com"})
		bob := MustPutUser(t, s, store.User{Username: "bob"})

		name := " Alicia "
		u, err := s.UpdateUser(alice.ID, store.UserUpdate{Username: &name})
		if err != nil || u.Username != "Alicia" {
			t.Fatalf("rename = %v, %v", u, err)
		}
		if s.UsernameTaken("alice") {
			t.Fatal("old username still taken")
		}
		if got, err := s.UserByUsername("ALICIA"); err != nil || got.ID != alice.ID {
			t.Fatalf("UserByUsername(ALICIA) = %v, %v", got, err)
		}
		// The freed name can be used again.
		MustPutUser(t, s, store.User{Username: "alice"})

		taken := "aLiCiA"
		_, err = s.UpdateUser(bob.ID, store.UserUpdate{Username: &taken})
		wantCode(t, err, store.ECONFLICT, "用户名已存在")
		if got := MustUser(t, s, bob.ID); got.Username != "bob" {
			t.Fatalf("refused rename changed bob to %q", got.Username)
		}

		email := "ALICE@example.com"
		_, err = s.UpdateUser(bob.ID, store.UserUpdate{Email: &email})
		wantCode(t, err, store.ECONFLICT, "邮箱地址已被占用")

		// Clearing an e-mail frees it.
		empty := ""
		if _, err := s.UpdateUser(alice.ID, store.UserUpdate{Email: &empty}); err != nil {
			t.Fatal(err)
		}
		if s.EmailTaken("alice@example.com") {
			t.Fatal("cleared e-mail still taken")
		}
		if _, err := s.UpdateUser(bob.ID, store.UserUpdate{Email: &email}); err != nil {
			t.Fatalf("take freed e-mail: %v", err)
		}

		bad := "a b"
		_, err = s.UpdateUser(bob.ID, store.UserUpdate{Username: &bad})
		wantCode(t, err, store.EINVALID, "")
		_, err = s.UpdateUser(999, store.UserUpdate{})
		wantCode(t, err, store.ENOTFOUND, "")
	})

	// Each row changes one field of alice and says whether that ends her
	// sessions; bob's session must survive every row.
	intp := func(v int) *int { return &v }
	strp := func(v string) *string { return &v }
	for _, tt := range []struct {
		name        string
		upd         store.UserUpdate
		endSessions bool
	}{
		{"DisplayName", store.UserUpdate{DisplayName: strp("Alice A.")}, false},
		{"Group", store.UserUpdate{Group: strp("vip")}, false},
		{"SameRole", store.UserUpdate{Role: intp(store.RoleCommon)}, false},
		{"Role", store.UserUpdate{Role: intp(store.RoleAdmin)}, true},
		{"Ban", store.UserUpdate{Status: intp(store.UserStatusDisabled)}, true},
		{"Password", store.UserUpdate{Password: strp("new-password")}, true},
		{"InvalidPassword", store.UserUpdate{Password: strp("short")}, false},
	} {
		t.Run("Sessions/"+tt.name, func(t *testing.T) {
			t.Parallel()
			s := MustOpenStore(t)
			alice := MustPutUser(t, s, store.User{Username: "alice"})
			bob := MustPutUser(t, s, store.User{Username: "bob"})
			a1, _, _ := s.CreateSession(alice.ID)
			a2, _, _ := s.CreateSession(alice.ID)
			b1, _, _ := s.CreateSession(bob.ID)

			_, err := s.UpdateUser(alice.ID, tt.upd)
			if tt.name == "InvalidPassword" {
				wantCode(t, err, store.EINVALID, "密码长度不得小于 8 位！")
			} else if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{a1, a2} {
				_, err := s.Session(id)
				if tt.endSessions && store.ErrorCode(err) != store.EUNAUTHORIZED {
					t.Errorf("alice's session survived: %v", err)
				}
				if !tt.endSessions && err != nil {
					t.Errorf("alice's session ended: %v", err)
				}
			}
			if _, err := s.Session(b1); err != nil {
				t.Errorf("bob's session ended by a change to alice: %v", err)
			}
			if tt.name == "Password" {
				got := MustUser(t, s, alice.ID)
				if got.PasswordHash == alice.PasswordHash || !strings.HasPrefix(got.PasswordHash, "$2") {
					t.Errorf("password hash after change = %q", got.PasswordHash)
				}
				if got.PasswordIsDefault {
					t.Error("PasswordIsDefault kept after a change")
				}
			}
		})
	}

	t.Run("UnbanKeepsSessions", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		u := MustPutUser(t, s, store.User{Username: "alice", Status: store.UserStatusDisabled})
		sid, _, _ := s.CreateSession(u.ID)
		enabled := store.UserStatusEnabled
		if _, err := s.UpdateUser(u.ID, store.UserUpdate{Status: &enabled}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Session(sid); err != nil {
			t.Fatalf("enabling a user ended a session: %v", err)
		}
	})
}

func TestDeleteUser(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	root := MustPutUser(t, s, store.User{Username: "root", Role: store.RoleRoot})
	alice := MustPutUser(t, s, store.User{Username: "alice"})
	bob := MustPutUser(t, s, store.User{Username: "bob"})
	aSess, _, _ := s.CreateSession(alice.ID)
	bSess, _, _ := s.CreateSession(bob.ID)
	token, err := s.ResetAccessToken(alice.ID)
	if err != nil {
		t.Fatal(err)
	}

	wantCode(t, s.DeleteUser(root.ID), store.EFORBIDDEN, "不能删除超级管理员账户")
	if MustUser(t, s, root.ID).Deleted() {
		t.Fatal("root was deleted")
	}
	wantCode(t, s.DeleteUser(12345), store.ENOTFOUND, "")

	if err := s.DeleteUser(alice.ID); err != nil {
		t.Fatal(err)
	}
	got := MustUser(t, s, alice.ID) // deleted users are still found by id
	if !got.Deleted() {
		t.Fatal("alice not marked deleted")
	}
	if _, err := s.Session(aSess); store.ErrorCode(err) != store.EUNAUTHORIZED {
		t.Fatalf("deleted user's session: %v", err)
	}
	if _, err := s.Session(bSess); err != nil {
		t.Fatalf("bob's session ended: %v", err)
	}
	if _, err := s.UserByAccessToken(token); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("deleted user's access token still works: %v", err)
	}
	if _, err := s.ResetAccessToken(alice.ID); store.ErrorCode(err) != store.EFORBIDDEN {
		t.Fatalf("ResetAccessToken on a deleted user = %v", err)
	}
	if err := s.DeleteUser(alice.ID); err != nil {
		t.Fatalf("second delete: %v", err)
	}
}

func TestResetAccessToken(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	alice := MustPutUser(t, s, store.User{Username: "alice"})
	MustPutUser(t, s, store.User{Username: "bob"})

	first, err := s.ResetAccessToken(alice.ID)
	if err != nil || len(first) < 32 {
		t.Fatalf("ResetAccessToken = %q, %v", first, err)
	}
	if u, err := s.UserByAccessToken(first); err != nil || u.ID != alice.ID {
		t.Fatalf("UserByAccessToken(first) = %v, %v", u, err)
	}
	second, err := s.ResetAccessToken(alice.ID)
	if err != nil || second == first {
		t.Fatalf("second token = %q, %v", second, err)
	}
	if _, err := s.UserByAccessToken(first); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("old token still works: %v", err)
	}
	if u, err := s.UserByAccessToken(second); err != nil || u.ID != alice.ID {
		t.Fatalf("UserByAccessToken(second) = %v, %v", u, err)
	}
	for _, tok := range []string{"", "Bearer " + second, second + "x"} {
		if _, err := s.UserByAccessToken(tok); store.ErrorCode(err) != store.ENOTFOUND {
			t.Fatalf("UserByAccessToken(%q) = %v", tok, err)
		}
	}

	// Only a hash is stored: neither token appears anywhere in the file.
	sum := sha256.Sum256([]byte(second))
	if got := MustUser(t, s, alice.ID).AccessTokenHash; !bytes.Equal(got, sum[:]) {
		t.Fatalf("stored hash = %x, want sha256 of the token", got)
	}
	data := backupBytes(t, s)
	if bytes.Contains(data, []byte(first)) || bytes.Contains(data, []byte(second)) {
		t.Fatal("an access token is stored in plain text")
	}
	if _, err := s.ResetAccessToken(999); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("ResetAccessToken(999) = %v", err)
	}

	// A new password ends the access token with the sessions; another
	// change leaves it.
	name := "alice2"
	if _, err := s.UpdateUser(alice.ID, store.UserUpdate{Username: &name}); err != nil {
		t.Fatal(err)
	}
	if u, err := s.UserByAccessToken(second); err != nil || u.ID != alice.ID {
		t.Fatalf("token after a rename: %v, %v", u, err)
	}
	password := "a-new-password-1"
	if _, err := s.UpdateUser(alice.ID, store.UserUpdate{Password: &password}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UserByAccessToken(second); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("the access token outlived a password change: %v", err)
	}
}

func TestEnsureAffCode(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "alice"})
	code, err := s.EnsureAffCode(u.ID)
	if err != nil || code != u.AffCode {
		t.Fatalf("EnsureAffCode = %q, %v; want the existing %q", code, err, u.AffCode)
	}
	if _, err := s.EnsureAffCode(999); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("EnsureAffCode(999) = %v", err)
	}
}

func TestTransferAffQuota(t *testing.T) {
	t.Parallel()

	t.Run("Limits", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		u := MustPutUser(t, s, store.User{Username: "alice", Quota: 10})
		store.SetAffQuota(t, s, u.ID, 800_000)

		_, err := s.TransferAffQuota(u.ID, 499_999)
		wantCode(t, err, store.EINVALID, "划转金额最低为")
		_, err = s.TransferAffQuota(u.ID, 0)
		wantCode(t, err, store.EINVALID, "划转金额最低为")
		_, err = s.TransferAffQuota(u.ID, 800_001)
		wantCode(t, err, store.EINVALID, "邀请额度不足")

		got, err := s.TransferAffQuota(u.ID, 500_000)
		if err != nil {
			t.Fatal(err)
		}
		if got.Quota != 500_010 || got.AffQuota != 300_000 {
			t.Fatalf("after transfer quota=%d aff=%d; want 500010, 300000", got.Quota, got.AffQuota)
		}
		_, err = s.TransferAffQuota(u.ID, 500_000)
		wantCode(t, err, store.EINVALID, "邀请额度不足")

		// The minimum follows QuotaPerUnit.
		if err := s.UpdateOption("QuotaPerUnit", "1000"); err != nil {
			t.Fatal(err)
		}
		if got, err = s.TransferAffQuota(u.ID, 1000); err != nil || got.AffQuota != 299_000 {
			t.Fatalf("transfer at the new minimum = %+v, %v", got, err)
		}
		_, err = s.TransferAffQuota(u.ID, 999)
		wantCode(t, err, store.EINVALID, "划转金额最低为")

		s = MustReopen(t, s)
		if got := MustUser(t, s, u.ID); got.Quota != 501_010 || got.AffQuota != 299_000 {
			t.Fatalf("after reopen quota=%d aff=%d", got.Quota, got.AffQuota)
		}
		_, err = s.TransferAffQuota(999, 500_000)
		wantCode(t, err, store.ENOTFOUND, "")
	})

	t.Run("ConcurrentNeverOverdraws", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		u := MustPutUser(t, s, store.User{Username: "alice"})
		store.SetAffQuota(t, s, u.ID, 5_000_000)

		var wg sync.WaitGroup
		var mu sync.Mutex
		ok, refused := 0, 0
		start := make(chan struct{})
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := s.TransferAffQuota(u.ID, 500_000)
				mu.Lock()
				defer mu.Unlock()
				switch store.ErrorCode(err) {
				case "":
					ok++
				case store.EINVALID:
					refused++
				default:
					t.Errorf("transfer: %v", err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if ok != 10 || refused != 10 {
			t.Fatalf("%d transfers succeeded and %d were refused; want 10 and 10", ok, refused)
		}
		got := MustUser(t, s, u.ID)
		if got.AffQuota != 0 || got.Quota != 5_000_000 {
			t.Fatalf("aff_quota=%d quota=%d; want 0, 5000000", got.AffQuota, got.Quota)
		}
	})
}

func TestUsers(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	alice := MustPutUser(t, s, store.User{Username: "alice", Email: "alice@example.com", Group: "vip"})
	bob := MustPutUser(t, s, store.User{Username: "bob", DisplayName: "Bobby Tables"})
	carol := MustPutUser(t, s, store.User{Username: "carol", Email: "carol@mail.org", Group: "vip"})
	dave := MustPutUser(t, s, store.User{Username: "dave"})
	if err := s.DeleteUser(dave.ID); err != nil {
		t.Fatal(err)
	}
	// A name that contains another user's id must not hide the id match.
	user2 := MustPutUser(t, s, store.User{Username: "user2", Group: "vip"})

	ids := func(users []*store.User) []uint64 {
		out := []uint64{}
		for _, u := range users {
			out = append(out, u.ID)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		f    store.UserFilter
		want []uint64
	}{
		{"All", store.UserFilter{}, []uint64{user2.ID, dave.ID, carol.ID, bob.ID, alice.ID}},
		{"Limit", store.UserFilter{Limit: 2}, []uint64{user2.ID, dave.ID}},
		{"OffsetLimit", store.UserFilter{Offset: 2, Limit: 2}, []uint64{carol.ID, bob.ID}},
		{"OffsetPastEnd", store.UserFilter{Offset: 9}, []uint64{}},
		{"Username", store.UserFilter{Keyword: "LIC"}, []uint64{alice.ID}},
		{"DisplayName", store.UserFilter{Keyword: "tables"}, []uint64{bob.ID}},
		{"Email", store.UserFilter{Keyword: "mail.org"}, []uint64{carol.ID}},
		{"Group", store.UserFilter{Group: "vip"}, []uint64{user2.ID, carol.ID, alice.ID}},
		{"KeywordAndGroup", store.UserFilter{Keyword: "a", Group: "vip"}, []uint64{carol.ID, alice.ID}},
		{"KeywordNotInGroup", store.UserFilter{Keyword: "bob", Group: "vip"}, []uint64{}},
		{"ID", store.UserFilter{Keyword: "2"}, []uint64{bob.ID}},
		{"IDWithGroup", store.UserFilter{Keyword: "2", Group: "default"}, []uint64{bob.ID}},
		{"IDWrongGroupFallsBackToText", store.UserFilter{Keyword: "2", Group: "vip"}, []uint64{user2.ID}},
		{"DeletedIncluded", store.UserFilter{Keyword: "dave"}, []uint64{dave.ID}},
		{"NoMatch", store.UserFilter{Keyword: "zzz"}, []uint64{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			users, err := s.Users(tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(users); !equalIDs(got, tt.want) {
				t.Fatalf("Users(%+v) = %v, want %v", tt.f, got, tt.want)
			}
		})
	}

	t.Run("GroupWithJSONEscapedCharacters", func(t *testing.T) {
		// Groups are free strings (S §7); the encoder escapes & < > in
		// JSON, so filtering must compare decoded values.
		g := "r&d"
		u := MustPutUser(t, s, store.User{Username: "eve", Group: g})
		users, err := s.Users(store.UserFilter{Group: g})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(users); !equalIDs(got, []uint64{u.ID}) {
			t.Fatalf("group %q matched %v, want [%d]", g, got, u.ID)
		}
	})
}

func equalIDs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A login verifies the password, then starts a session: a password change
// or a ban committed in between (bcrypt takes a while) ended the sessions
// there were, and the login must not start one after it.
func TestCreateSessionFor_RefusedAfterChange(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	alice := MustPutUser(t, s, store.User{Username: "alice"})
	bob := MustPutUser(t, s, store.User{Username: "bob"})
	verifiedAlice, verifiedBob := MustUser(t, s, alice.ID), MustUser(t, s, bob.ID)
	if _, _, err := s.CreateSessionFor(verifiedAlice); err != nil {
		t.Fatalf("a session for the account as verified: %v", err)
	}
	pw := "another-password-1"
	if _, err := s.UpdateUser(alice.ID, store.UserUpdate{Password: &pw}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, func() error { _, _, err := s.CreateSessionFor(verifiedAlice); return err }(), store.EUNAUTHORIZED, "用户名或密码错误，或用户已被封禁")
	banned := store.UserStatusDisabled
	if _, err := s.UpdateUser(bob.ID, store.UserUpdate{Status: &banned}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, func() error { _, _, err := s.CreateSessionFor(verifiedBob); return err }(), store.EUNAUTHORIZED, "用户名或密码错误，或用户已被封禁")
}

// A new access token is made only while the request's own credential is
// still valid: a password change ends the session (and clears the token) a
// request came with.
func TestResetAccessTokenWith_CredentialChecked(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	alice := MustPutUser(t, s, store.User{Username: "alice"})
	sess, _, err := s.CreateSession(alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ResetAccessTokenWith(alice.ID, store.Credential{SessionID: sess}); err != nil {
		t.Fatalf("with a live session: %v", err)
	}
	viaToken := MustUser(t, s, alice.ID).AccessTokenHash
	if _, err := s.ResetAccessTokenWith(alice.ID, store.Credential{TokenHash: viaToken}); err != nil {
		t.Fatalf("with the current token: %v", err)
	}
	// viaToken was replaced by the call above.
	wantCode(t, func() error {
		_, err := s.ResetAccessTokenWith(alice.ID, store.Credential{TokenHash: viaToken})
		return err
	}(), store.EUNAUTHORIZED, "无效的访问令牌")
	if err := s.DeleteSession(sess); err != nil {
		t.Fatal(err)
	}
	wantCode(t, func() error {
		_, err := s.ResetAccessTokenWith(alice.ID, store.Credential{SessionID: sess})
		return err
	}(), store.EUNAUTHORIZED, "未登录或登录已过期，请重新登录！")
	other, _, _ := s.CreateSession(MustPutUser(t, s, store.User{Username: "bob"}).ID)
	wantCode(t, func() error {
		_, err := s.ResetAccessTokenWith(alice.ID, store.Credential{SessionID: other})
		return err
	}(), store.EUNAUTHORIZED, "未登录或登录已过期，请重新登录！")
}

// A username made before a rule that now refuses it stays editable: the
// rules judge a new name, not the one kept.
func TestUpdateUser_LegacyUsernameKept(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	legacy := MustPutUser(t, s, store.User{Username: "张\u3000三"})
	name, group := "张\u3000三", "vip"
	if _, err := s.UpdateUser(legacy.ID, store.UserUpdate{Username: &name, Group: &group}); err != nil {
		t.Fatalf("edit keeping the legacy name: %v", err)
	}
	bad := "李\u3000四"
	wantCode(t, func() error { _, err := s.UpdateUser(legacy.ID, store.UserUpdate{Username: &bad}); return err }(), store.EINVALID, "用户名不能包含空白字符")
}

// QuotaPerUnit is a decimal option: the smallest transfer is QuotaPerUnit
// itself (S §6.4: "must be ≥ QuotaPerUnit"), not its integer part.
func TestTransferAffQuota_FractionalQuotaPerUnit(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "alice"})
	store.SetAffQuota(t, s, u.ID, 10_000)
	if err := s.UpdateOption("QuotaPerUnit", "1000.5"); err != nil {
		t.Fatal(err)
	}
	_, err := s.TransferAffQuota(u.ID, 1000)
	wantCode(t, err, store.EINVALID, "划转金额最低为")
	if got, err := s.TransferAffQuota(u.ID, 1001); err != nil || got.AffQuota != 8_999 {
		t.Fatalf("transfer of 1001 = %+v, %v", got, err)
	}
}

// Names in normal form pass, whatever their script: the form rule refuses
// only look-alike spellings.
func TestValidateUsername_NormalForms(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"root", "jos\u00e9", "张三", "Ölçü", "user_01"} {
		if err := store.ValidateUsername(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}
