package store_test

import (
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
