package store_test

import (
	"testing"

	"gateway/store"
)

// The ledger's exact quantities: what a reservation holds, what a
// settlement and a refund move, on the live balances and in the file.

// exact is every balance a charge moves, as one comparable value.
type exact struct {
	UserQuota, UserUsed, UserCount int64
	TokenRemain, TokenUsed         int64
	ChannelUsed                    int64
}

// exactOf reads the balances of user, token and channel (0: none) as the
// console shows them.
func exactOf(tb testing.TB, s *store.Store, userID, tokenID, channelID uint64) exact {
	tb.Helper()
	u := MustUser(tb, s, userID)
	e := exact{UserQuota: u.Quota, UserUsed: u.UsedQuota, UserCount: u.RequestCount}
	if tokenID != 0 {
		t, err := s.Token(0, tokenID)
		if err != nil {
			tb.Fatal(err)
		}
		e.TokenRemain, e.TokenUsed = t.RemainQuota, t.UsedQuota
	}
	if channelID != 0 {
		c, err := s.Channel(channelID)
		if err != nil {
			tb.Fatal(err)
		}
		e.ChannelUsed = c.UsedQuota
	}
	return e
}

// wantExact fails unless the balances are want, both live and, after a
// reopen, in the file; it returns the reopened store.
func wantExact(tb testing.TB, s *store.Store, userID, tokenID, channelID uint64, want exact, what string) *store.Store {
	tb.Helper()
	if got := exactOf(tb, s, userID, tokenID, channelID); got != want {
		tb.Errorf("%s: live balances %+v, want %+v", what, got, want)
	}
	s = MustReopen(tb, s)
	if got := exactOf(tb, s, userID, tokenID, channelID); got != want {
		tb.Errorf("%s: balances in the file %+v, want %+v", what, got, want)
	}
	return s
}

// wantSpendable fails unless a new call may spend exactly quota of the
// user's balance.
func wantSpendable(tb testing.TB, s *store.Store, userID uint64, quota int64, what string) {
	tb.Helper()
	b, err := s.LiveBalance(userID)
	if err != nil {
		tb.Fatal(err)
	}
	if b.Quota != quota {
		tb.Errorf("%s: spendable quota %d, want %d", what, b.Quota, quota)
	}
}

// A reservation is refused when the user or the token holds one unit less
// than it, and when either has nothing left, even for a call that reserves
// nothing; a refused one holds nothing. One that fits exactly is taken.
func TestReserveBounds(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "alice", Quota: 1_000})
	_, err := s.Reserve(u.ID, 0, 1_001)
	wantCode(t, err, store.EQUOTA, "用户额度不足")
	r, err := s.Reserve(u.ID, 0, 1_000)
	if err != nil {
		t.Fatalf("a reservation of the whole balance: %v", err)
	}
	wantSpendable(t, s, u.ID, 0, "holding it all")
	_, err = s.Reserve(u.ID, 0, 0)
	wantCode(t, err, store.EQUOTA, "用户额度不足")
	s.Refund(r)
	wantSpendable(t, s, u.ID, 1_000, "after the refund")
	// A user below zero (a call used more than it reserved) likewise.
	low := MustPutUser(t, s, store.User{Username: "low", Quota: -5})
	_, err = s.Reserve(low.ID, 0, 0)
	wantCode(t, err, store.EQUOTA, "用户额度不足")
	wantSpendable(t, s, low.ID, -5, "a refused user below zero")

	rich := MustPutUser(t, s, store.User{Username: "rich", Quota: 1_000_000})
	token := func(name string, remain int64) *store.Token {
		tok, err := s.CreateToken(&store.Token{UserID: rich.ID, Name: name, RemainQuota: remain, ExpiredTime: -1})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	short, fits, empty := token("short", 999), token("fits", 1_000), token("empty", 0)
	_, err = s.Reserve(rich.ID, short.ID, 1_000)
	wantCode(t, err, store.EQUOTA, "令牌额度不足")
	_, err = s.Reserve(rich.ID, empty.ID, 0)
	wantCode(t, err, store.EQUOTA, "令牌额度不足")
	wantSpendable(t, s, rich.ID, 1_000_000, "after the tokens' refusals")
	if r, err = s.Reserve(rich.ID, fits.ID, 1_000); err != nil {
		t.Fatalf("a reservation of the token's whole quota: %v", err)
	}
	_, err = s.Reserve(rich.ID, fits.ID, 0)
	wantCode(t, err, store.EQUOTA, "令牌额度不足")
	s.Refund(r)
	wantExact(t, s, rich.ID, fits.ID, 0, exact{UserQuota: 1_000_000, TokenRemain: 1_000}, "after the refund")
}

// payer is a user with a limited token and a channel, the parties a charge
// moves.
type payer struct {
	user    *store.User
	token   *store.Token
	channel *store.Channel
}

func newPayer(tb testing.TB, s *store.Store, name string, quota, remain int64) payer {
	tb.Helper()
	u := MustPutUser(tb, s, store.User{Username: name, Quota: quota})
	tok, err := s.CreateToken(&store.Token{UserID: u.ID, Name: name, RemainQuota: remain, ExpiredTime: -1})
	if err != nil {
		tb.Fatal(err)
	}
	ch := &store.Channel{Name: name, Type: 1, Key: "sk-" + name, Models: "m"}
	if err := s.CreateChannels([]*store.Channel{ch}); err != nil {
		tb.Fatal(err)
	}
	return payer{u, tok, ch}
}

func (p payer) log(quota int64) *store.Log {
	return &store.Log{UserID: p.user.ID, Username: p.user.Username, TokenID: p.token.ID, TokenName: p.token.Name,
		ChannelID: p.channel.ID, Type: store.LogTypeConsume, ModelName: "m", Quota: quota, PromptTokens: 1}
}

// consumeLogs returns the quotas of the user's consume logs.
func consumeLogs(tb testing.TB, s *store.Store, userID uint64) []int64 {
	tb.Helper()
	page, err := s.Logs(store.LogFilter{Type: store.LogTypeConsume, UserID: userID}, 1, 100)
	if err != nil {
		tb.Fatal(err)
	}
	var out []int64
	for _, l := range page.Items {
		out = append(out, l.Quota)
	}
	return out
}

// A reservation is settled or refunded once: a second Settle, and a Refund
// after a Settle (a deferred refund), move nothing and write no log; a
// Settle after a Refund charges nothing.
func TestSettleAndRefundActOnce(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	p := newPayer(t, s, "alice", 1_000, 500)
	r, err := s.Reserve(p.user.ID, p.token.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(r, p.channel.ID, 30, p.log(30)); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(r, p.channel.ID, 30, p.log(30)); err != store.ErrAlreadySettled {
		t.Errorf("a second settle: %v, want ErrAlreadySettled", err)
	}
	s.Refund(r)
	wantSpendable(t, s, p.user.ID, 970, "settled once")

	refunded, err := s.Reserve(p.user.ID, p.token.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	s.Refund(refunded)
	s.Refund(refunded)
	if err := s.Settle(refunded, p.channel.ID, 40, p.log(40)); err != store.ErrAlreadySettled {
		t.Errorf("a settle after the refund: %v, want ErrAlreadySettled", err)
	}
	wantSpendable(t, s, p.user.ID, 970, "refunded once")

	s = wantExact(t, s, p.user.ID, p.token.ID, p.channel.ID,
		exact{UserQuota: 970, UserUsed: 30, UserCount: 1, TokenRemain: 470, TokenUsed: 30, ChannelUsed: 30}, "one charge")
	if got := consumeLogs(t, s, p.user.ID); len(got) != 1 || got[0] != 30 {
		t.Errorf("consume logs' quotas %v, want [30]", got)
	}
}

// A token made unlimited or limited while its call is in flight gets back
// exactly what the reservation held of it: what it may spend afterwards is
// its remaining quota, neither less (a hold never given back) nor more (a
// hold given back that was never taken).
func TestSettleGivesBackWhatTheTokenHeld(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	flip := func(p payer, unlimited bool) {
		t.Helper()
		if _, err := s.UpdateToken(p.user.ID, p.token.ID, store.TokenUpdate{UnlimitedQuota: &unlimited}); err != nil {
			t.Fatal(err)
		}
	}
	// wantTokenSpendable: a reservation of remain fits, one more does not.
	wantTokenSpendable := func(p payer, remain int64, what string) {
		t.Helper()
		r, err := s.Reserve(p.user.ID, p.token.ID, remain)
		if err != nil {
			t.Errorf("%s: a reservation of the remaining %d: %v", what, remain, err)
		} else {
			s.Refund(r)
		}
		if r, err := s.Reserve(p.user.ID, p.token.ID, remain+1); err == nil {
			t.Errorf("%s: a reservation of %d, one above the remaining quota, was taken", what, remain+1)
			s.Refund(r)
		}
	}

	// Limited when reserved, unlimited when settled: not charged to the
	// remaining quota, and the hold comes back.
	a := newPayer(t, s, "alice", 100_000, 1_000)
	r, err := s.Reserve(a.user.ID, a.token.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	flip(a, true)
	if err := s.Settle(r, a.channel.ID, 30, a.log(30)); err != nil {
		t.Fatal(err)
	}
	flip(a, false)
	wantTokenSpendable(a, 1_000, "limited to unlimited")

	// Unlimited when reserved (nothing held), limited when settled: charged
	// to the remaining quota, and nothing comes back.
	b := newPayer(t, s, "bob", 100_000, 1_000)
	flip(b, true)
	if r, err = s.Reserve(b.user.ID, b.token.ID, 100); err != nil {
		t.Fatal(err)
	}
	flip(b, false)
	if err := s.Settle(r, b.channel.ID, 30, b.log(30)); err != nil {
		t.Fatal(err)
	}
	wantTokenSpendable(b, 970, "unlimited to limited")

	s = wantExact(t, s, a.user.ID, a.token.ID, a.channel.ID,
		exact{UserQuota: 99_970, UserUsed: 30, UserCount: 1, TokenRemain: 1_000, TokenUsed: 30, ChannelUsed: 30}, "limited to unlimited")
	wantExact(t, s, b.user.ID, b.token.ID, b.channel.ID,
		exact{UserQuota: 99_970, UserUsed: 30, UserCount: 1, TokenRemain: 970, TokenUsed: 30, ChannelUsed: 30}, "unlimited to limited")
}

// A charge adds to what the channel had used before this process started:
// the live used quota the console shows is the stored one plus the charge.
func TestChannelUsedAddsToTheStored(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	p := newPayer(t, s, "alice", 1_000, 500)
	settle := func(quota int64) {
		t.Helper()
		r, err := s.Reserve(p.user.ID, p.token.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Settle(r, p.channel.ID, quota, p.log(quota)); err != nil {
			t.Fatal(err)
		}
	}
	settle(30)
	s = MustReopen(t, s)
	settle(20)
	wantExact(t, s, p.user.ID, p.token.ID, p.channel.ID,
		exact{UserQuota: 950, UserUsed: 50, UserCount: 2, TokenRemain: 450, TokenUsed: 50, ChannelUsed: 50}, "a charge before a restart and one after")
}

// With consume logging off a call is charged in full and writes no log;
// the dashboard still counts it.
func TestChargeWithoutConsumeLog(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	if err := s.UpdateOption("LogConsumeEnabled", "false"); err != nil {
		t.Fatal(err)
	}
	p := newPayer(t, s, "alice", 1_000, 500)
	r, err := s.Reserve(p.user.ID, p.token.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	l := p.log(30)
	if err := s.Settle(r, p.channel.ID, 30, l); err != nil {
		t.Fatal(err)
	}
	s = wantExact(t, s, p.user.ID, p.token.ID, p.channel.ID,
		exact{UserQuota: 970, UserUsed: 30, UserCount: 1, TokenRemain: 470, TokenUsed: 30, ChannelUsed: 30}, "an unlogged charge")
	if got := consumeLogs(t, s, p.user.ID); len(got) != 0 {
		t.Errorf("consume logs' quotas %v, want none", got)
	}
	rows, err := s.QuotaData(0, 0, p.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Count != 1 || rows[0].Quota != 30 {
		t.Errorf("the user's hourly rows: %+v, want one of 1 call and 30 quota", rows)
	}
}

// A negative amount is none: a reservation of one holds nothing, and a
// settlement of one charges nothing (it counts the request), so neither
// credits a balance.
func TestNegativeAmountsMoveNothing(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	p := newPayer(t, s, "alice", 1_000, 500)
	r, err := s.Reserve(p.user.ID, p.token.ID, -100)
	if err != nil {
		t.Fatal(err)
	}
	if r.Amount != 0 {
		t.Errorf("a reservation of -100 holds %d, want 0", r.Amount)
	}
	wantSpendable(t, s, p.user.ID, 1_000, "holding a negative amount")
	if err := s.Settle(r, p.channel.ID, -50, p.log(0)); err != nil {
		t.Fatal(err)
	}
	wantSpendable(t, s, p.user.ID, 1_000, "after a negative charge")
	wantExact(t, s, p.user.ID, p.token.ID, p.channel.ID,
		exact{UserQuota: 1_000, UserCount: 1, TokenRemain: 500}, "a negative charge")
}
