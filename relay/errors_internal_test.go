package relay

import "testing"

// Upstream error bodies are read in the shapes providers send: OpenAI's
// error object, a bare message, Mistral's message object with FastAPI
// validation details, and FastAPI's detail.
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
		{`not json`, ""},
	} {
		if got := rawUpstreamMessage([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.body, got, tc.want)
		}
	}
}
