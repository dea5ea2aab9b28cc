package api_test

import (
	"net/http"
	"net/netip"
	"testing"
	"time"

	"gateway/api"
)

func TestCriticalRateLimit(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t, func(c *api.Config) {
		c.CriticalRateLimit = api.RateLimit{N: 3, Window: time.Hour}
	})
	login := ApiScenario{Method: "POST", URL: "/api/user/login", Body: `{}`}
	for i := 0; i < 3; i++ {
		login.WantStatus = 400
		login.Test(t, ts)
	}
	login.WantStatus = http.StatusTooManyRequests
	login.WantContains = []string{`"success":false`}
	login.Test(t, ts)
	// The critical limit is shared by every critical route...
	// (without a Retry-After: that is the mail cooldown's own)...
	if r := (ApiScenario{URL: "/api/verification?email=a@example.com", WantStatus: 429}).Test(t, ts); r.Header.Get("Retry-After") != "" {
		t.Errorf("a rate limit's refusal with Retry-After %q", r.Header.Get("Retry-After"))
	}
	ApiScenario{Method: "POST", URL: "/api/user/register", Body: `{}`, WantStatus: 429}.Test(t, ts)
	// ...and does not touch the others.
	ApiScenario{URL: "/api/status", WantStatus: 200}.Test(t, ts)
	ApiScenario{URL: "/api/user/self", As: "user", WantStatus: 200}.Test(t, ts)
}

func TestAPIRateLimit(t *testing.T) {
	t.Parallel()
	trusted := netip.MustParsePrefix("127.0.0.1/32")
	for _, tt := range []struct {
		name    string
		trusted []netip.Prefix
		// whether a request claiming another client through
		// X-Forwarded-For gets its own budget
		forwardedHonoured bool
	}{
		{"UntrustedPeer", nil, false},
		{"TrustedPeer", []netip.Prefix{trusted}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts := MustStartServer(t, func(c *api.Config) {
				c.APIRateLimit = api.RateLimit{N: 5, Window: time.Hour}
				c.TrustedProxies = tt.trusted
			})
			status := ApiScenario{URL: "/api/status", WantStatus: 200}
			for i := 0; i < 5; i++ {
				status.Test(t, ts)
			}
			ApiScenario{URL: "/api/status", WantStatus: 429}.Test(t, ts)
			// The limit covers every /api route, signed in or not...
			ApiScenario{URL: "/api/user/self", As: "user", WantStatus: 429}.Test(t, ts)
			// ...and the billing reads, in OpenAI's error shape (S §12)...
			ApiScenario{URL: "/dashboard/billing/subscription", WantStatus: 429,
				WantContains: []string{`"code":"rate_limit_exceeded"`}}.Test(t, ts)
			ApiScenario{URL: "/v1/dashboard/billing/usage", WantStatus: 429}.Test(t, ts)
			// ...but not the relay's calls (a missing token is their answer)...
			ApiScenario{Method: "POST", URL: "/v1/chat/completions", Body: `{"model":"m"}`, WantStatus: 401}.Test(t, ts)
			// ...nor the console pages.
			ApiScenario{URL: "/", WantStatus: 200}.Test(t, ts)

			forwarded := ApiScenario{URL: "/api/status", Headers: map[string]string{"X-Forwarded-For": "203.0.113.7"}, WantStatus: 429}
			if tt.forwardedHonoured {
				forwarded.WantStatus = 200
			}
			forwarded.Test(t, ts)
		})
	}
}

// S §12 limits /api/* and the billing reads per IP, not the relay: the
// playground (POST /pg/chat/completions, S §11) is a relay call, billed like
// one, and neither spends nor is refused by the /api budget.
func TestAPIRateLimit_PlaygroundNotLimited(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t, func(c *api.Config) {
		c.APIRateLimit = api.RateLimit{N: 2, Window: time.Hour}
	})
	cookie, id := ts.MustSession(t, "alice")
	pg := ApiScenario{Method: "POST", URL: "/pg/chat/completions", Cookie: cookie, UserID: id,
		Body: `{"model":"no-such-model","messages":[{"role":"user","content":"hi"}]}`}
	for i := 0; i < 3; i++ {
		if r := pg.Do(t, ts); r.StatusCode == http.StatusTooManyRequests {
			t.Fatalf("playground call %d refused by the /api rate limit: %s", i+1, r.Body)
		}
	}
	// The playground calls spent none of the /api budget...
	status := ApiScenario{URL: "/api/status", WantStatus: 200}
	status.Test(t, ts)
	status.Test(t, ts)
	ApiScenario{URL: "/api/status", WantStatus: 429}.Test(t, ts)
	// ...and an exhausted /api budget does not stop them.
	if r := pg.Do(t, ts); r.StatusCode == http.StatusTooManyRequests {
		t.Fatalf("playground refused once /api was limited: %s", r.Body)
	}
}

// An IPv6 client counts by its /64: walking through the block does not
// escape the limit; another /64 and IPv4 addresses have their own budgets.
func TestRateLimitIPv6Block(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t, func(c *api.Config) {
		c.APIRateLimit = api.RateLimit{N: 2, Window: time.Hour}
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	from := func(ip string, status int) ApiScenario {
		return ApiScenario{URL: "/api/status", Headers: map[string]string{"X-Forwarded-For": ip}, WantStatus: status}
	}
	runScenarios(t, ts, []ApiScenario{
		from("2001:db8:1:2::1", 200),
		from("2001:db8:1:2:ffff::9", 200),
		from("2001:db8:1:2::abcd", 429),
		from("2001:db8:1:3::1", 200),
		from("198.51.100.1", 200),
		from("198.51.100.2", 200),
		from("198.51.100.2", 200),
		from("198.51.100.2", 429),
	})
}

func TestClientIP(t *testing.T) {
	t.Parallel()
	prefixes := func(ss ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, s := range ss {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out
	}
	proxies := prefixes("10.0.0.0/8", "127.0.0.1/32")
	for _, tt := range []struct {
		name    string
		trusted []netip.Prefix
		remote  string
		xff     []string
		want    string
	}{
		{"NoProxiesConfigured", nil, "198.51.100.1:5000", []string{"203.0.113.9"}, "198.51.100.1"},
		{"UntrustedPeerIgnored", proxies, "198.51.100.1:5000", []string{"203.0.113.9"}, "198.51.100.1"},
		{"TrustedPeer", proxies, "10.1.2.3:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"TrustedPeerNoHeader", proxies, "10.1.2.3:5000", nil, "10.1.2.3"},
		{"ChainOfProxies", proxies, "10.1.2.3:5000", []string{"203.0.113.9, 10.9.9.9"}, "203.0.113.9"},
		{"SpoofedLeftmost", proxies, "10.1.2.3:5000", []string{"6.6.6.6, 203.0.113.9"}, "203.0.113.9"},
		{"SeveralHeaders", proxies, "10.1.2.3:5000", []string{"6.6.6.6", "203.0.113.9"}, "203.0.113.9"},
		{"AllTrusted", proxies, "10.1.2.3:5000", []string{"10.4.4.4"}, "10.1.2.3"},
		{"GarbageHop", proxies, "10.1.2.3:5000", []string{"6.6.6.6, not-an-ip"}, "10.1.2.3"},
		{"MappedPeer", proxies, "[::ffff:127.0.0.1]:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"MappedClient", proxies, "10.1.2.3:5000", []string{"::ffff:203.0.113.9"}, "203.0.113.9"},
		{"IPv6", proxies, "[2001:db8::1]:5000", []string{"203.0.113.9"}, "2001:db8::1"},
		{"NoPort", nil, "198.51.100.1", nil, "198.51.100.1"},
		{"HopWithPort", proxies, "10.1.2.3:5000", []string{"6.6.6.6, 203.0.113.9:4711"}, "203.0.113.9"},
		{"IPv6HopWithPort", proxies, "10.1.2.3:5000", []string{"[2001:db8::7]:4711"}, "2001:db8::7"},
		{"IPv6HopInBrackets", proxies, "10.1.2.3:5000", []string{"[2001:db8::7]"}, "2001:db8::7"},
		{"IPv4HopInBrackets", proxies, "10.1.2.3:5000", []string{"[203.0.113.9]"}, "10.1.2.3"},
		{"TrustedHopWithPort", proxies, "10.1.2.3:5000", []string{"203.0.113.9, 10.9.9.9:80"}, "203.0.113.9"},
		// A link-local proxy is seen with its interface (fe80::5%eth0); the zone does not make it another host.
		{"ZonedTrustedPeer", prefixes("fe80::/10"), "[fe80::5%eth0]:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"ZonedTrustedHop", prefixes("10.0.0.0/8", "fe80::/10"), "10.1.2.3:5000", []string{"203.0.113.9, fe80::5%eth0"}, "203.0.113.9"},
		{"ZonedTrustedHopWithPort", prefixes("10.0.0.0/8", "fe80::/10"), "10.1.2.3:5000", []string{"203.0.113.9, [fe80::5%eth0]:80"}, "203.0.113.9"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest("GET", "http://gw.example.com/api/status", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := api.ClientIP(tt.trusted, r); got != tt.want {
				t.Fatalf("ClientIP = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSecureCookieBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	local := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	for _, tt := range []struct {
		name    string
		trusted []netip.Prefix
		proto   string
		secure  bool
	}{
		{"Untrusted", nil, "https", false},
		{"Trusted", local, "https", true},
		// Proxies that append to the header: the first is the client's.
		{"TrustedChain", local, "https, http", true},
		{"TrustedChainPlain", local, "http, https", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts := MustStartServer(t, func(c *api.Config) { c.TrustedProxies = tt.trusted })
			cookie, id := ts.MustSession(t, "alice")
			r := ApiScenario{URL: "/api/user/logout", Cookie: cookie, UserID: id,
				Headers: map[string]string{"X-Forwarded-Proto": tt.proto}, WantStatus: 200}.Test(t, ts)
			if c := r.Cookie("session"); c == nil || c.Secure != tt.secure {
				t.Fatalf("cookie = %+v, want Secure=%v", c, tt.secure)
			}
		})
	}
}

// A password change checks the old password under the login's budget: a
// stolen session cannot guess it faster than a login could. Other changes
// of the profile stay outside it.
func TestPasswordChangeUnderTheCriticalLimit(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t, func(c *api.Config) {
		c.CriticalRateLimit = api.RateLimit{N: 3, Window: time.Hour}
	})
	guess := ApiScenario{Method: "PUT", URL: "/api/user/self", As: "user",
		Body: `{"password":"new-password-1","original_password":"wrong-guess"}`}
	for i := 0; i < 3; i++ {
		guess.WantStatus = 400
		guess.WantContains = []string{msg("原密码错误")}
		guess.Test(t, ts)
	}
	guess.WantStatus = http.StatusTooManyRequests
	guess.WantContains = []string{msg("请求过于频繁，请稍后再试")}
	guess.Test(t, ts)
	ApiScenario{Method: "PUT", URL: "/api/user/self", As: "user", Body: `{"display_name":"renamed"}`, WantStatus: 200}.Test(t, ts)
}

// The window's boundaries with S §12's 180 per 180 s: the 181st request is
// refused, one exactly when the oldest leaves the window is allowed, a clock
// set back does not shut the address out for the correction, and an idle
// address is forgotten.
func TestRateLimitWindowClock(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	l := api.NewTestLimiter(api.RateLimit{N: 180, Window: 180 * time.Second}, func() time.Time { return now })
	const ip = "203.0.113.5"
	for i := 0; i < 180; i++ {
		if !l.Allow(ip) {
			t.Fatalf("request %d refused", i+1)
		}
		now = now.Add(time.Second)
	}
	// 180 s after the first: it leaves the window, the next one stays.
	now = now.Add(-time.Nanosecond)
	if l.Allow(ip) {
		t.Fatal("the 181st request within 180 s allowed")
	}
	now = now.Add(time.Nanosecond)
	if !l.Allow(ip) {
		t.Fatal("refused when the oldest request left the window")
	}
	if l.Allow(ip) {
		t.Fatal("allowed while the second request is still in the window")
	}
	// The clock is corrected an hour back: the requests stamped "later"
	// no longer count, or the address would wait out that hour.
	now = now.Add(-time.Hour)
	if !l.Allow(ip) {
		t.Fatal("refused after the clock was set back")
	}
	if n := l.Prune(); n != 1 {
		t.Fatalf("%d addresses remembered, want 1", n)
	}
	// Idle for the window: forgotten.
	now = now.Add(180 * time.Second)
	if n := l.Prune(); n != 0 {
		t.Fatalf("%d addresses remembered after a window idle, want 0", n)
	}
}
