package store_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gateway/store"
)

func ptr[T any](v T) *T { return &v }

// Reads of tokens and users are served from memory between changes; every
// change must be visible to the very next read.
func TestAuthCacheFollowsEveryChange(t *testing.T) {
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "cached"})
	tok, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "t", RemainQuota: 1000, ExpiredTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	read := func() (*store.Token, *store.User) {
		t.Helper()
		got, err := s.TokenByKey("sk-" + tok.Key)
		if err != nil {
			t.Fatalf("TokenByKey: %v", err)
		}
		return got, MustUser(t, s, u.ID)
	}
	read() // warm

	if _, err := s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{Status: ptr(store.TokenStatusDisabled)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := read(); got.Status != store.TokenStatusDisabled {
		t.Fatalf("status after disable = %d", got.Status)
	}
	if _, err := s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{Status: ptr(store.TokenStatusEnabled), AllowIPs: ptr("10.0.0.0/8"), Group: ptr("vip")}); err != nil {
		t.Fatal(err)
	}
	if got, _ := read(); got.Status != store.TokenStatusEnabled || got.AllowIPs != "10.0.0.0/8" || got.Group != "vip" {
		t.Fatalf("after edit: %+v", got)
	}
	soon := time.Now().Unix() + 60
	if _, err := s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{ExpiredTime: &soon}); err != nil {
		t.Fatal(err)
	}
	read()
	s.Now = func() time.Time { return time.Now().Add(time.Hour) } // the expiry has passed
	if err := s.SetTokenStatus(tok.ID, store.TokenStatusExpired); err != nil {
		t.Fatal(err)
	}
	if got, _ := read(); got.Status != store.TokenStatusExpired {
		t.Fatalf("status after expiry = %d", got.Status)
	}

	if _, err := s.UpdateUser(u.ID, store.UserUpdate{Status: ptr(store.UserStatusDisabled), Group: ptr("vip")}); err != nil {
		t.Fatal(err)
	}
	if _, got := read(); got.Status != store.UserStatusDisabled || got.Group != "vip" {
		t.Fatalf("user after ban: %+v", got)
	}

	// The returned records are copies: changing one changes no later read.
	got, gotUser := read()
	got.Status, gotUser.Role = 99, 99
	if again, againUser := read(); again.Status == 99 || againUser.Role == 99 {
		t.Fatal("a caller's change leaked into the cache")
	}

	if err := s.DeleteToken(u.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TokenByKey(tok.Key); store.ErrorCode(err) != store.ENOTFOUND {
		t.Fatalf("deleted token: err = %v", err)
	}
	if err := s.DeleteUser(u.ID); err != nil {
		t.Fatal(err)
	}
	if got := MustUser(t, s, u.ID); !got.Deleted() {
		t.Fatal("deleted user still reads as live")
	}
}

// Balances come from the ledger on every read, cached record or not, and a
// commit that exhausts a token shows at once.
func TestAuthCacheServesLiveBalances(t *testing.T) {
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "payer"})
	if _, err := s.UpdateUserAsAdmin("root", u.ID, store.UserUpdate{}, new(int64(10_000))); err != nil {
		t.Fatal(err)
	}
	tok, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "t", RemainQuota: 300, ExpiredTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TokenByKey(tok.Key); err != nil { // warm
		t.Fatal(err)
	}
	MustUser(t, s, u.ID)
	r, err := s.Reserve(u.ID, tok.ID, 300)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(r, 0, 300, &store.Log{UserID: u.ID, Username: "payer", TokenID: tok.ID, Type: store.LogTypeConsume, ModelName: "m", Quota: 300}); err != nil {
		t.Fatal(err)
	}
	got, err := s.TokenByKey(tok.Key)
	if err != nil {
		t.Fatal(err)
	}
	if got.RemainQuota != 0 || got.UsedQuota != 300 || got.Status != store.TokenStatusExhausted {
		t.Fatalf("token after charge: remain %d used %d status %d", got.RemainQuota, got.UsedQuota, got.Status)
	}
	if got.AccessedTime == 0 {
		t.Fatal("access time not kept")
	}
	if uu := MustUser(t, s, u.ID); uu.Quota != 10_000-300 || uu.UsedQuota != 300 || uu.RequestCount != 1 {
		t.Fatalf("user after charge: quota %d used %d count %d", uu.Quota, uu.UsedQuota, uu.RequestCount)
	}
}

// Readers racing a writer never keep what they read before the last commit:
// once the writer is done, every read sees its final state.
func TestAuthCacheUnderConcurrentChanges(t *testing.T) {
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "racer"})
	tok, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "t", UnlimitedQuota: true, ExpiredTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := s.TokenByKey(tok.Key); err != nil {
					t.Error(err)
					return
				}
				if _, err := s.User(u.ID); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	names := []string{"a", "b", "c", "d"}
	for i := range 200 {
		if _, err := s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{Name: ptr(names[i%len(names)])}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateUser(u.ID, store.UserUpdate{DisplayName: ptr(names[i%len(names)])}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{Name: ptr("final")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateUser(u.ID, store.UserUpdate{DisplayName: ptr("final")}); err != nil {
		t.Fatal(err)
	}
	// Let the readers run on a while after the last commit.
	for range 1000 {
		got, err := s.TokenByKey(tok.Key)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "final" {
			t.Fatalf("token name = %q after the last change", got.Name)
		}
		if uu := MustUser(t, s, u.ID); uu.DisplayName != "final" {
			t.Fatalf("display name = %q after the last change", uu.DisplayName)
		}
	}
	stop.Store(true)
	wg.Wait()
}

// A call may cost more than its token held, leaving the remaining quota
// below zero: the token can still be disabled and edited, only a negative
// value the user sends is refused, and topping it up lets it be enabled.
func TestTokenBelowZeroStaysEditable(t *testing.T) {
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "over"})
	if _, err := s.UpdateUserAsAdmin("root", u.ID, store.UserUpdate{}, new(int64(10_000))); err != nil {
		t.Fatal(err)
	}
	tok, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "t", RemainQuota: 10, ExpiredTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Reserve(u.ID, tok.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(r, 0, 25, &store.Log{UserID: u.ID, Username: "over", TokenID: tok.ID, Type: store.LogTypeConsume, ModelName: "m", Quota: 25}); err != nil {
		t.Fatal(err)
	}
	disabled, name, negative, topUp, enabled := store.TokenStatusDisabled, "renamed", int64(-1), int64(100), store.TokenStatusEnabled
	got, err := s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{Status: &disabled})
	if err != nil || got.Status != disabled || got.RemainQuota != -15 {
		t.Fatalf("disable a token below zero: %+v %v", got, err)
	}
	if got, err = s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{Name: &name}); err != nil || got.Name != name {
		t.Fatalf("rename a token below zero: %+v %v", got, err)
	}
	if _, err = s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{RemainQuota: &negative}); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("a negative remaining quota was accepted: %v", err)
	}
	if _, err = s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{Status: &enabled}); store.ErrorCode(err) != store.EINVALID {
		t.Fatalf("a token without quota was enabled: %v", err)
	}
	if _, err = s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{RemainQuota: &topUp}); err != nil {
		t.Fatal(err)
	}
	if got, err = s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{Status: &enabled}); err != nil || got.Status != enabled || got.RemainQuota != 100 {
		t.Fatalf("enable after a top-up: %+v %v", got, err)
	}
}

// A limited token created or edited without quota cannot serve a call: it is
// stored as exhausted, not shown as enabled, until quota is given and it is
// enabled again. An unlimited one stays enabled.
func TestTokenWithoutQuotaIsExhausted(t *testing.T) {
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "empty"})
	tok, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "zero", RemainQuota: 0, ExpiredTime: -1})
	if err != nil || tok.Status != store.TokenStatusExhausted {
		t.Fatalf("a limited token created without quota: %+v %v", tok, err)
	}
	open, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "open", UnlimitedQuota: true, ExpiredTime: -1})
	if err != nil || open.Status != store.TokenStatusEnabled {
		t.Fatalf("an unlimited token created without quota: %+v %v", open, err)
	}
	limited, zero, some, enabled := false, int64(0), int64(50), store.TokenStatusEnabled
	got, err := s.UpdateToken(u.ID, open.ID, store.TokenUpdate{UnlimitedQuota: &limited})
	if err != nil || got.Status != store.TokenStatusExhausted {
		t.Fatalf("an unlimited token made limited without quota: %+v %v", got, err)
	}
	funded, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "funded", RemainQuota: 10, ExpiredTime: -1})
	if err != nil || funded.Status != store.TokenStatusEnabled {
		t.Fatalf("a funded token: %+v %v", funded, err)
	}
	if got, err = s.UpdateToken(u.ID, funded.ID, store.TokenUpdate{RemainQuota: &zero}); err != nil || got.Status != store.TokenStatusExhausted {
		t.Fatalf("a token whose quota was set to 0: %+v %v", got, err)
	}
	if got, err = s.UpdateToken(u.ID, funded.ID, store.TokenUpdate{RemainQuota: &some}); err != nil || got.Status != store.TokenStatusExhausted {
		t.Fatalf("giving quota enables by itself: %+v %v", got, err)
	}
	if got, err = s.UpdateToken(u.ID, funded.ID, store.TokenUpdate{Status: &enabled}); err != nil || got.Status != enabled {
		t.Fatalf("enable after giving quota: %+v %v", got, err)
	}
	if got, err := s.Token(u.ID, tok.ID); err != nil || got.Status != store.TokenStatusExhausted {
		t.Fatalf("stored status: %+v %v", got, err)
	}
}
