package store_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"gateway/store"
)

// Channel changes made at once leave routing as the file has them: every
// change's own call returns with routing showing it, and once all have
// returned routing holds the last one (rebuilds racing could store an
// older read last, and route to a channel the file has disabled).
func TestRoutingFollowsConcurrentChanges(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	var chs, extra []*store.Channel
	for i := range 8 {
		chs = append(chs, &store.Channel{Type: 1, Key: fmt.Sprintf("k%d", i), Name: fmt.Sprintf("c%d", i), Models: "m"})
	}
	// Other channels make each rebuild take a little longer, as in a real
	// gateway, widening the window.
	for i := range 200 {
		extra = append(extra, &store.Channel{Type: 1, Key: fmt.Sprintf("x%d", i), Name: fmt.Sprintf("x%d", i), Models: "other", Status: store.ChannelStatusManuallyOff})
	}
	if err := s.CreateChannels(append(chs, extra...)); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		var wg sync.WaitGroup
		for _, c := range chs {
			wg.Add(1)
			go func(id uint64) {
				defer wg.Done()
				for j := range 21 { // an odd count: every channel ends disabled
					st := store.ChannelStatusManuallyOff
					if j%2 == 1 {
						st = store.ChannelStatusEnabled
					}
					if _, err := s.UpdateChannel(id, store.ChannelUpdate{Status: &st}); err != nil {
						t.Error(err)
						return
					}
					if r := s.RoutingChannel(id); r.Status != st {
						t.Errorf("round %d: channel %d set to %d, routing has %d after the call returned", round, id, st, r.Status)
					}
				}
			}(c.ID)
		}
		wg.Wait()
		if c := s.SelectChannel("default", "m", 0, nil); c != nil {
			t.Fatalf("round %d: routing selects channel %d, which the file has disabled", round, c.ID)
		}
	}
}

// An expiry found at use time is judged again on the stored token: an owner
// who cleared it meanwhile keeps an enabled token.
func TestExpiryFoundAtUseKeepsTheOwnersExtension(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "owner"})
	tok, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "t", UnlimitedQuota: true, ExpiredTime: time.Now().Unix() + 60})
	if err != nil {
		t.Fatal(err)
	}
	s.Now = func() time.Time { return time.Now().Add(time.Hour) } // the expiry has passed
	never := int64(-1)
	if _, err := s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{ExpiredTime: &never}); err != nil {
		t.Fatal(err)
	}
	// The relay read the token before the owner's edit and found it expired.
	if err := s.SetTokenStatus(tok.ID, store.TokenStatusExpired); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Token(0, tok.ID); got.Status != store.TokenStatusEnabled || got.ExpiredTime != -1 {
		t.Fatalf("token after a stale expiry verdict: status %d, expiry %d", got.Status, got.ExpiredTime)
	}
	// A token whose stored expiry has passed is marked.
	due, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "due", UnlimitedQuota: true, ExpiredTime: time.Now().Unix() + 60})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetTokenStatus(due.ID, store.TokenStatusExpired); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Token(0, due.ID); got.Status != store.TokenStatusExpired {
		t.Fatalf("a token past its expiry: status %d", got.Status)
	}
}
