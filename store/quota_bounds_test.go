package store_test

import (
	"testing"

	"gateway/store"
)

// No balance goes past MaxQuota: amounts beyond it are refused where they
// are set, and an addition that would cross it is refused whole, so that
// int64 sums never wrap around to a negative balance.
func TestQuotaBounds(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	root := MustPutUser(t, s, store.User{Username: "boss", Role: store.RoleRoot})
	u := MustPutUser(t, s, store.User{Username: "alice"})

	_, err := s.CreateRedemptions(root.ID, "huge", store.MaxQuota+1, 1)
	wantCode(t, err, store.EINVALID, "额度不能超过 9007199254740992")
	_, err = s.UpdateUserAsAdmin("boss", u.ID, store.UserUpdate{}, ptr(int64(store.MaxQuota+1)))
	wantCode(t, err, store.EINVALID, "额度不能超过")
	_, err = s.CreateToken(&store.Token{UserID: u.ID, Name: "t", RemainQuota: store.MaxQuota + 1, ExpiredTime: -1})
	wantCode(t, err, store.EINVALID, "额度不能超过")

	if _, err := s.UpdateUserAsAdmin("boss", u.ID, store.UserUpdate{}, ptr(int64(store.MaxQuota-10))); err != nil {
		t.Fatal(err)
	}
	big, err := s.CreateRedemptions(root.ID, "big", 11, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Redeem(u.ID, big[0].Key)
	wantCode(t, err, store.EINVALID, "额度不能超过")
	if got := MustUser(t, s, u.ID).Quota; got != store.MaxQuota-10 {
		t.Fatalf("quota after a refused redemption = %d", got)
	}
	fits, err := s.CreateRedemptions(root.ID, "fits", 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Redeem(u.ID, fits[0].Key); err != nil {
		t.Fatal(err)
	}
	// The refused code is still unused: it can go to another account.
	if _, err := s.Redeem(root.ID, big[0].Key); err != nil {
		t.Fatalf("the refused code could not be redeemed elsewhere: %v", err)
	}
	s = MustReopen(t, s)
	if got := MustUser(t, s, u.ID).Quota; got != store.MaxQuota {
		t.Fatalf("quota after reopen = %d, want %d", got, int64(store.MaxQuota))
	}
}

// A paid order that would take the balance past MaxQuota is not credited:
// it stays pending, nothing is logged, and it can be completed once the
// balance has room.
func TestTopUpQuotaBound(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	root := MustPutUser(t, s, store.User{Username: "boss", Role: store.RoleRoot})
	u := MustPutUser(t, s, store.User{Username: "alice"})
	if _, err := s.UpdateUserAsAdmin(root.Username, u.ID, store.UserUpdate{}, ptr(int64(store.MaxQuota-10))); err != nil {
		t.Fatal(err)
	}
	order := &store.TopUp{UserID: u.ID, TradeNo: "T1", Quota: 11, Money: 1}
	if err := s.CreateTopUp(order); err != nil {
		t.Fatal(err)
	}
	_, done, err := s.CompleteTopUp("T1", 1)
	wantCode(t, err, store.EINVALID, "额度不能超过")
	if done || MustUser(t, s, u.ID).Quota != store.MaxQuota-10 {
		t.Fatalf("done %v, quota %d", done, MustUser(t, s, u.ID).Quota)
	}
	if _, err := s.UpdateUserAsAdmin(root.Username, u.ID, store.UserUpdate{}, ptr(int64(0))); err != nil {
		t.Fatal(err)
	}
	if _, done, err := s.CompleteTopUp("T1", 1); err != nil || done {
		t.Fatalf("completing with room: done %v, %v", done, err)
	}
	if got := MustUser(t, s, u.ID).Quota; got != 11 {
		t.Fatalf("quota = %d, want 11", got)
	}
}
