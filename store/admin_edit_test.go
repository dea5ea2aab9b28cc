package store_test

import (
	"errors"
	"strings"
	"testing"

	"gateway/store"
)

// An administrator's add-quota is applied to the live balance inside the
// transaction: a redemption and a charge made while the administrator's
// form was open are kept, which a set computed from the form's old value
// would undo.
func TestEditUserAsAdminAddKeepsConcurrentChanges(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	root := MustPutUser(t, s, store.User{Username: "boss", Role: store.RoleRoot})
	u := MustPutUser(t, s, store.User{Username: "alice", Quota: 1_000_000})
	// Meanwhile: a redemption and a charged call.
	codes, err := s.CreateRedemptions(root.ID, "gift", 500_000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Redeem(u.ID, codes[0].Key); err != nil {
		t.Fatal(err)
	}
	r, err := s.Reserve(u.ID, 0, 1_000)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(r, 0, 300, &store.Log{UserID: u.ID, Username: "alice", Type: store.LogTypeConsume, ModelName: "m"}); err != nil {
		t.Fatal(err)
	}
	add := int64(100)
	if _, err := s.EditUserAsAdmin("boss", u.ID, store.UserUpdate{}, store.QuotaChange{Add: &add}); err != nil {
		t.Fatal(err)
	}
	if got, want := MustUser(t, s, u.ID).Quota, int64(1_000_000+500_000-300+100); got != want {
		t.Fatalf("quota = %d, want %d", got, want)
	}
	take := int64(-1_499_800)
	if _, err := s.EditUserAsAdmin("boss", u.ID, store.UserUpdate{}, store.QuotaChange{Add: &take}); err != nil {
		t.Fatal(err)
	}
	if got := MustUser(t, s, u.ID).Quota; got != 0 {
		t.Fatalf("quota after taking it all = %d", got)
	}
	set := int64(5)
	_, err = s.EditUserAsAdmin("boss", u.ID, store.UserUpdate{}, store.QuotaChange{Set: &set, Add: &add})
	wantCode(t, err, store.EINVALID, "额度与增加额度只能给出一个")
	tooMuch := int64(store.MaxQuota + 1)
	_, err = s.EditUserAsAdmin("boss", u.ID, store.UserUpdate{}, store.QuotaChange{Add: &tooMuch})
	wantCode(t, err, store.EINVALID, "额度不能超过")
	tooLittle := int64(-store.MaxQuota - 1)
	_, err = s.EditUserAsAdmin("boss", u.ID, store.UserUpdate{}, store.QuotaChange{Add: &tooLittle})
	wantCode(t, err, store.EINVALID, "额度不能低于 -9007199254740992")
	_, err = s.EditUserAsAdmin("boss", u.ID, store.UserUpdate{}, store.QuotaChange{Set: &tooLittle})
	wantCode(t, err, store.EINVALID, "额度不能低于 -9007199254740992")
	if got := MustUser(t, s, u.ID).Quota; got != 0 {
		t.Fatalf("quota after refused edits = %d", got)
	}
}

// A check given with an update or a deletion judges the account as it is
// in the transaction: an account deleted after the caller read it is not
// edited, renamed or deleted twice.
func TestUserChecksSeeTheCommittedRecord(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "alice", Quota: 10})
	if err := s.DeleteUser(u.ID); err != nil {
		t.Fatal(err)
	}
	errGone := errors.New("gone")
	notDeleted := func(cur *store.User) error {
		if cur.Deleted() {
			return errGone
		}
		return nil
	}
	name, quota := "mallory", int64(777)
	_, err := s.EditUserAsAdmin("boss", u.ID, store.UserUpdate{Username: &name, Check: notDeleted}, store.QuotaChange{Set: &quota})
	if !errors.Is(err, errGone) {
		t.Fatalf("edit of a deleted account: %v", err)
	}
	got := MustUser(t, s, u.ID)
	if got.Username != "alice" || got.Quota != 10 {
		t.Fatalf("deleted account changed: %q, quota %d", got.Username, got.Quota)
	}
	if err := s.DeleteUserIf(u.ID, notDeleted); !errors.Is(err, errGone) {
		t.Fatalf("second delete: %v", err)
	}
	// A check that allows lets the update through.
	other := MustPutUser(t, s, store.User{Username: "bob"})
	if _, err := s.UpdateUser(other.ID, store.UserUpdate{Username: &name, Check: notDeleted}); err != nil {
		t.Fatal(err)
	}
	if got := MustUser(t, s, other.ID).Username; !strings.EqualFold(got, name) {
		t.Fatalf("username = %q", got)
	}
}

// A balance set while calls are in flight is the balance as if none were:
// the records show it at once, the calls' reservations do not come back on
// top of it, and once they settle the balance is the set value minus what
// they were charged, in memory and in the file alike. The same holds for a
// token's remaining quota set by its owner.
func TestSetWhileCallsAreInFlight(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "alice", Quota: 1_000_000})
	tok, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "t", RemainQuota: 1_000, ExpiredTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	big, err := s.Reserve(u.ID, 0, 900_000)
	if err != nil {
		t.Fatal(err)
	}
	small, err := s.Reserve(u.ID, tok.ID, 800)
	if err != nil {
		t.Fatal(err)
	}
	// What the records show does not move with reservations.
	if got := MustUser(t, s, u.ID).Quota; got != 1_000_000 {
		t.Fatalf("shown quota with calls in flight = %d", got)
	}
	if got, _ := s.Token(0, tok.ID); got.RemainQuota != 1_000 {
		t.Fatalf("shown remain with a call in flight = %d", got.RemainQuota)
	}

	zero := int64(0)
	if _, err := s.EditUserAsAdmin("boss", u.ID, store.UserUpdate{}, store.QuotaChange{Set: &zero}); err != nil {
		t.Fatal(err)
	}
	if got := MustUser(t, s, u.ID).Quota; got != 0 {
		t.Fatalf("shown quota after the set = %d", got)
	}
	// Nothing more can be spent while the reservations are out.
	if _, err := s.Reserve(u.ID, 0, 1); err == nil {
		t.Fatal("a call was reserved against a balance set to 0")
	}
	remain := int64(500)
	if _, err := s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{RemainQuota: &remain}); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(big, 0, 100, &store.Log{UserID: u.ID, Username: "alice", Type: store.LogTypeConsume, ModelName: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(small, 0, 300, &store.Log{UserID: u.ID, Username: "alice", TokenID: tok.ID, Type: store.LogTypeConsume, ModelName: "m"}); err != nil {
		t.Fatal(err)
	}
	check := func(s *store.Store, when string) {
		t.Helper()
		if got := MustUser(t, s, u.ID).Quota; got != -400 {
			t.Fatalf("%s: quota = %d, want 0 - 100 - 300", when, got)
		}
		if got, _ := s.Token(0, tok.ID); got.RemainQuota != 200 {
			t.Fatalf("%s: token remain = %d, want 500 - 300", when, got.RemainQuota)
		}
	}
	check(s, "in memory")
	check(MustReopen(t, s), "in the file")
}
