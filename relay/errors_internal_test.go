package relay

import "testing"

// Upstream error bodies are read in the shapes providers send: OpenAI's
// error object, a bare message, Mistral's message object with FastAPI
// validation details, and FastAPI's detail, whatever other members hold.
func TestRawUpstreamMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`, "Incorrect API key provided"},
		{`{"error":"model not found"}`, "model not found"},
		{`{"message":"Unauthorized","request_id":"r1"}`, "Unauthorized"},
		{`{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","stream_options","include_usage"],"msg":"Extra inputs are not permitted"}]},"type":"invalid_request_error"}`,
			"body.stream_options.include_usage: Extra inputs are not permitted"},
		{`{"detail":"Unauthorized"}`, "Unauthorized"},
		{`{"detail":[{"loc":["body","max_completion_tokens"],"msg":"Extra inputs are not permitted"},{"loc":["body","n"],"msg":"Input should be 1"}]}`,
			"body.max_completion_tokens: Extra inputs are not permitted; body.n: Input should be 1"},
		{`{"message":{"unexpected":true}}`, ""},
		// A member of another shape than expected hides nothing beside it.
		{`{"error":{"message":"You exceeded your current quota"},"header":"h"}`, "You exceeded your current quota"},
		{`{"error":{"message":"boom"},"msg":{"a":1}}`, "boom"},
		{`{"message":"Invalid key","err":{"name":"AuthError"}}`, "Invalid key"},
		{`{"success":false,"msg":"quota used up","err":false}`, "quota used up"},
		{`{"header":{"code":10013,"message":"illegal access"},"payload":null}`, "illegal access"},
		{`{"response":{"error":{"message":"denied"}},"msg":7}`, "denied"},
		// Names in another case are read, as a decode into a struct reads them.
		{`{"Message":"User: anonymous is not authorized to perform: execute-api:Invoke"}`, "User: anonymous is not authorized to perform: execute-api:Invoke"},
		{`{"Error":{"Message":"denied"},"Type":"x"}`, "denied"},
		{`{"Header":{"Message":"illegal access"}}`, "illegal access"},
		{`null`, ""},
		{`not json`, ""},
	} {
		if got := rawUpstreamMessage([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.body, got, tc.want)
		}
	}
}

// A key echoed in part or masked is hidden as well as the whole key; other
// words stay.
func TestHideKey(t *testing.T) {
	const key = "sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789"
	vertex := `{"type":"service_account","project_id":"my-project-123","private_key":"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"}`
	for _, c := range []struct{ msg, key, want string }{
		{"Incorrect API key provided: " + key + ". You can find your API key at https://platform.openai.com/account/api-keys.", key,
			"Incorrect API key provided: [key hidden]. You can find your API key at https://platform.openai.com/account/api-keys."},
		{"Incorrect API key provided: sk-proj-********************************6789. You can find your API key at https://platform.openai.com/account/api-keys.", key,
			"Incorrect API key provided: [key hidden]. You can find your API key at https://platform.openai.com/account/api-keys."},
		{"key 'sk-pr...6789' (Abcdefghijklmn) is invalid", key, "key 'sk-pr...6789' ([key hidden]) is invalid"},
		{"quota exceeded for key ending 6789", key, "quota exceeded for key ending 6789"},
		{"invalid credential " + vertex + " for service_account in my-project-123", vertex, "invalid credential [key hidden] for service_account in my-project-123"},
		{"short sk-1234 is hidden, sk-12345 is another word", "sk-1234", "short [key hidden] is hidden, sk-12345 is another word"},
		{"Incorrect API key provided: tok123", "tok123", "Incorrect API key provided: [key hidden]"},
		{"no key x here", "x", "no key x here"},
		{"ollama: model not found", "ollama", "ollama: model not found"},
		{"key sk-proj-Abc...6789 refused", key, "key [key hidden] refused"},
		{"key sk-proj-Abcdefg... refused", key, "key [key hidden]... refused"},
		{"wait... Processing...", key, "wait... Processing..."},
		{"no key here", key, "no key here"},
		{"access key AKIAABCDEFGHIJKLMNOP is not valid", "AKIAABCDEFGHIJKLMNOP|wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY|us-east-1",
			"access key [key hidden] is not valid"},
		{"secret wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY refused in us-east-1", "AKIAABCDEFGHIJKLMNOP|wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY|us-east-1",
			"secret [key hidden] refused in us-east-1"},
		{"bad AKIAABCDEFGHIJKLMNOP|wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY|us-east-1", "AKIAABCDEFGHIJKLMNOP|wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY|us-east-1",
			"bad [key hidden]"},
	} {
		if got := hideKey(c.msg, c.key); got != c.want {
			t.Errorf("hideKey(%q)\n got %q\nwant %q", c.msg, got, c.want)
		}
	}
}

// An error event's key is hidden in its text only: a short key that is
// also a member name or a JSON word leaves the syntax alone.
func TestHideKeyInJSON(t *testing.T) {
	for _, c := range []struct{ doc, key, want string }{
		{`{"error":{"message":"bad key ab12 given","type":"ab12","code":null,"n":1.50}}`, "ab12",
			`{"error":{"code":null,"message":"bad key [key hidden] given","n":1.50,"type":"[key hidden]"}}`},
		{`{"error":{"message":"invalid","type":"type"}}`, "typ3", ""},
		{`{"error":{"message":"key sk-LongSecretKey0123456789abcdef refused"}}`, "sk-LongSecretKey0123456789abcdef",
			`{"error":{"message":"key [key hidden] refused"}}`},
		{`{"error":"nope"`, "sk-LongSecretKey0123456789abcdef", ""},
	} {
		got, ok := hideKeyInJSON([]byte(c.doc), c.key)
		if c.want == "" && ok || c.want != "" && string(got) != c.want {
			t.Errorf("hideKeyInJSON(%s, %q) = %s, %v; want %q", c.doc, c.key, got, ok, c.want)
		}
	}
}
