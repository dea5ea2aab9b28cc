package policy_test

import (
	"strings"
	"testing"

	"gateway/policy"
)

func MustNew(tb testing.TB) *policy.Policy {
	tb.Helper()
	p, err := policy.New()
	if err != nil {
		tb.Fatalf("policy.New: %v", err)
	}
	return p
}

func TestAllowed(t *testing.T) {
	t.Parallel()
	p := MustNew(t)
	// One route per level; the full route-by-role matrix lives in the api
	// tests, against the routes the server really registers.
	for _, tt := range []struct {
		path, method string
		want         map[string]bool
	}{
		{"/api/status", "GET", map[string]bool{policy.Guest: true, policy.User: true, policy.Admin: true, policy.Root: true}},
		{"/api/user/self", "GET", map[string]bool{policy.Guest: false, policy.User: true, policy.Admin: true, policy.Root: true}},
		{"/api/backup", "GET", map[string]bool{policy.Guest: false, policy.User: false, policy.Admin: false, policy.Root: true}},
		// Exact matches only: another method, a longer path or a prefix is not covered.
		{"/api/status", "POST", map[string]bool{policy.Guest: false, policy.Root: false}},
		{"/api/user/self/extra", "GET", map[string]bool{policy.Root: false}},
		{"/api/user", "GET", map[string]bool{policy.Root: false}},
		{"/api/nope", "GET", map[string]bool{policy.Root: false}},
	} {
		for role, want := range tt.want {
			if got := p.Allowed(role, tt.path, tt.method); got != want {
				t.Errorf("Allowed(%s, %s %s) = %v, want %v", role, tt.method, tt.path, got, want)
			}
		}
	}
	// Unknown subjects get nothing, not even public routes.
	for _, role := range []string{"", "superuser", "Guest"} {
		if p.Allowed(role, "/api/status", "GET") {
			t.Errorf("unknown subject %q allowed", role)
		}
	}
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	p := MustNew(t)
	routes := p.Routes()
	if len(routes) == 0 {
		t.Fatal("no policy lines")
	}
	seen := map[[2]string]bool{}
	for _, r := range routes {
		if seen[r] {
			t.Errorf("duplicate policy line %v", r)
		}
		seen[r] = true
		if !strings.HasPrefix(r[0], "/") {
			t.Errorf("policy path %q is not a path", r[0])
		}
		switch r[1] {
		case "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS":
		default:
			t.Errorf("policy line %v has method %q", r, r[1])
		}
	}
	if len(policy.Roles) != 4 || policy.Roles[0] != policy.Guest || policy.Roles[3] != policy.Root {
		t.Fatalf("Roles = %v", policy.Roles)
	}
}
