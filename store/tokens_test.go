package store_test

import (
	"fmt"
	"strings"
	"testing"

	"gateway/store"
)

// An allow list matches a client whatever form its entries and the
// client's address take: IPv4 written in IPv6 form, as an address or as a
// range, matches the IPv4 client; a link-local client, whose address comes
// with the interface it reached the server on, matches its address and range.
func TestTokenAllowsIP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		list, ip string
		want     bool
	}{
		{"", "203.0.113.9", true},
		{"127.0.0.0/8", "127.0.0.1", true},
		{"::ffff:127.0.0.1", "127.0.0.1", true},
		{"::ffff:127.0.0.0/104", "127.0.0.1", true},
		{"::ffff:127.0.0.0/104", "::ffff:127.0.0.2", true},
		{"::ffff:10.0.0.0/104", "127.0.0.1", false},
		{"10.1.0.0/16, 192.0.2.7", "::ffff:10.1.2.3", true},
		{"2001:db8::/32", "2001:db8::1", true},
		{"2001:db8::/32", "127.0.0.1", false},
		{"192.0.2.7", "not an address", false},
		{"fe80::/10", "fe80::1%eth0", true},
		{"fe80::1", "fe80::1%eth0", true},
		{"fe80::1%eth0", "fe80::1", true},
		{"fe80::2", "fe80::1%eth0", false},
	} {
		tok := &store.Token{AllowIPs: tc.list}
		if got := tok.AllowsIP(tc.ip); got != tc.want {
			t.Errorf("list %q, client %s: %v, want %v", tc.list, tc.ip, got, tc.want)
		}
	}
}

// An allow list whose entries a tab separates (pasted from a table) is
// saved, and each entry matches, as with spaces.
func TestTokenAllowListTabs(t *testing.T) {
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "tabs"})
	tok, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "office", RemainQuota: 10, ExpiredTime: -1, AllowIPs: "192.0.2.7\t198.51.100.0/24\t\n2001:db8::1\t"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	list := "203.0.113.9\t10.0.0.0/8"
	if tok, err = s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{AllowIPs: &list}); err != nil {
		t.Fatalf("edit: %v", err)
	}
	for ip, want := range map[string]bool{"203.0.113.9": true, "10.1.2.3": true, "192.0.2.7": false} {
		if got := tok.AllowsIP(ip); got != want {
			t.Errorf("client %s: %v, want %v", ip, got, want)
		}
	}
}

// The model limits' bound of 1 024 characters (S §3.5) applies to the list
// as stored: spaces and repeated names the cleaning drops do not count.
func TestTokenModelLimitsBoundAsStored(t *testing.T) {
	s := MustOpenStore(t)
	u := MustPutUser(t, s, store.User{Username: "limits"})
	spaced := strings.Repeat("gpt-4o-mini , ", 100) // 1 400 characters, 11 stored
	tok, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "spaced", RemainQuota: 10, ExpiredTime: -1, ModelLimitsEnabled: true, ModelLimits: spaced})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if tok.ModelLimits != "gpt-4o-mini" {
		t.Fatalf("stored limits %q", tok.ModelLimits)
	}
	var names []string
	for i := range 120 {
		names = append(names, fmt.Sprintf("model-%04d", i)) // 120 × 11 - 1 = 1 319 characters stored
	}
	long := strings.Join(names, ",")
	if _, err := s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{ModelLimits: &long}); store.ErrorMessage(err) != "模型限制列表过长" {
		t.Fatalf("a stored list over the bound: %v", err)
	}
}
