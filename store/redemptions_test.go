package store_test

import (
	"testing"

	"gateway/store"
)

// A code redeemed for an account deleted while the request was on its way
// is refused and stays unused: credited to the deleted account it would be
// spent for nothing.
func TestRedeemRefusesDeletedAccount(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	root := MustPutUser(t, s, store.User{Username: "boss", Role: store.RoleRoot})
	u := MustPutUser(t, s, store.User{Username: "alice", Quota: 1_000})
	other := MustPutUser(t, s, store.User{Username: "bob"})
	codes, err := s.CreateRedemptions(root.ID, "gift", 500_000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(u.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.Redeem(u.ID, codes[0].Key)
	wantCode(t, err, store.EFORBIDDEN, "用户已注销")
	if got := MustUser(t, s, u.ID).Quota; got != 1_000 {
		t.Fatalf("deleted account's quota = %d, want 1000", got)
	}
	logs, err := s.Logs(store.LogFilter{UserID: u.ID, Type: store.LogTypeTopup}, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if logs.Total != 0 {
		t.Fatalf("deleted account has %d top-up logs", logs.Total)
	}
	r, err := s.Redemption(codes[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.RedemptionUnused || r.UsedUserID != 0 {
		t.Fatalf("code after the refused redemption: status %d, used by %d", r.Status, r.UsedUserID)
	}
	if q, err := s.Redeem(other.ID, codes[0].Key); err != nil || q != 500_000 {
		t.Fatalf("another account's redemption: %d, %v", q, err)
	}
}

// A payment notified for an account deleted after its order was placed is
// still credited and logged: the money has been paid, and the order and its
// log are what an administrator refunds from.
func TestTopUpOfDeletedAccountIsCredited(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "alice", Quota: 1_000})
	if err := s.CreateTopUp(&store.TopUp{UserID: u.ID, TradeNo: "T1", Quota: 500_000, Money: 7.3}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(u.ID); err != nil {
		t.Fatal(err)
	}
	if _, done, err := s.CompleteTopUp("T1", 7.3); err != nil || done {
		t.Fatalf("completing the deleted account's order: done %v, %v", done, err)
	}
	if got := MustUser(t, s, u.ID).Quota; got != 501_000 {
		t.Fatalf("deleted account's quota = %d, want 501000", got)
	}
	logs, err := s.Logs(store.LogFilter{UserID: u.ID, Type: store.LogTypeTopup}, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if logs.Total != 1 {
		t.Fatalf("deleted account has %d top-up logs, want 1", logs.Total)
	}
}
