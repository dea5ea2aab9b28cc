package relay

import "testing"

// Only an event with a usage object is decoded while a stream passes; the
// check must not be fooled by text that mentions usage.
func TestUsageObject(t *testing.T) {
	cases := []struct {
		payload string
		want    bool
	}{
		{`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5}}`, true},
		{`{"choices":[] , "usage" :` + "\n\t" + ` {"total_tokens":8}}`, true},
		{`{"choices":[{"delta":{"content":"hi"}}],"usage":null}`, false},
		{`{"choices":[{"delta":{"content":"the \"usage\": {is} here"}}]}`, false},
		{`{"choices":[{"delta":{"content":"usage"}}],"x":{"usage":3}}`, false},
		{`{"choices":[{"delta":{"content":"usage"}}],"usage":{"total_tokens":1}}`, true},
		{`{"usage"`, false},
		{``, false},
	}
	for _, c := range cases {
		if got := usageObject([]byte(c.payload)); got != c.want {
			t.Errorf("usageObject(%s) = %v, want %v", c.payload, got, c.want)
		}
	}
}
