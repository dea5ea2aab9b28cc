package api_test

import (
	"testing"

	"gateway/api"
)

// TestTurnstile_FailedOnEveryForm checks that a token Cloudflare rejects
// stops each form that takes ?turnstile= before it does anything.
func TestTurnstile_FailedOnEveryForm(t *testing.T) {
	t.Parallel()
	const secret = "forms-secret"
	double := startTurnstileDouble(t, secret)
	ts := MustStartServer(t, func(c *api.Config) { c.TurnstileVerifyURL = double.URL })
	ts.MustSetOptions(t, "TurnstileSiteKey", "site-key", "TurnstileSecretKey", secret, "TurnstileCheckEnabled", "true")
	const failed = "Turnstile 校验失败"
	runScenarios(t, ts, []ApiScenario{
		{Name: "Login", Method: "POST", URL: "/api/user/login?turnstile=bad-1", Body: `{"username":"alice","password":"` + alicePassword + `"}`,
			WantStatus: 403, WantContains: []string{failed}, WantNotContains: []string{`"username"`}},
		{Name: "Register", Method: "POST", URL: "/api/user/register?turnstile=bad-2", Body: `{"username":"newcomer","password":"password-1"}`,
			WantStatus: 403, WantContains: []string{failed}},
		{Name: "Verification", URL: "/api/verification?email=new@example.com&turnstile=bad-3",
			WantStatus: 403, WantContains: []string{failed}},
		{Name: "ResetPassword", URL: "/api/reset_password?email=" + aliceEmail + "&turnstile=bad-4",
			WantStatus: 403, WantContains: []string{failed}},
	})
	if n := len(double.Calls()); n != 4 {
		t.Errorf("siteverify called %d times, want 4", n)
	}
	if ts.Store.UsernameTaken("newcomer") {
		t.Error("a failed check still registered the account")
	}
}
