package relay

import (
	"bufio"
	"io"
	"slices"
	"strings"
	"testing"
)

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

// readEvents returns the payloads of the events sseEvents finds in the
// pieces of a stream, read once from one buffer and once as the pieces
// arrive one by one: where an event ends must not depend on how its lines
// came. It also returns the bytes scanned for structure.
func readEvents(t *testing.T, pieces ...string) ([]string, int) {
	t.Helper()
	collect := func(r io.Reader) ([]string, int) {
		s := sseEvents{r: bufio.NewReaderSize(r, 64<<10), onData: func() {}, onWait: func() {}}
		var out []string
		for {
			p, wire, err := s.next()
			if wire != nil {
				out = append(out, string(p))
			}
			if err == io.EOF {
				return out, s.scanned
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	whole, scanned := collect(strings.NewReader(strings.Join(pieces, "")))
	pr, pw := io.Pipe()
	go func() {
		for _, p := range pieces {
			io.WriteString(pw, p)
		}
		pw.Close()
	}()
	apart, _ := collect(pr)
	if !slices.Equal(whole, apart) {
		t.Errorf("read whole: %q; read as it came: %q", whole, apart)
	}
	return whole, scanned
}

// Events as the upstream meant them: SSE's blank lines, and each line
// that holds a whole value (or is not JSON) taken as an event, so an
// upstream without blank lines passes line by line.
func TestSSEEvents(t *testing.T) {
	big := `{"x":"` + strings.Repeat("a", 20<<10) + `"}`
	for _, tc := range []struct {
		name   string
		pieces []string
		want   []string
	}{
		{"one line each", []string{"data: {\"a\":1}\n\n", "data: {\"b\":2}\n\n", "data: [DONE]\n\n"}, []string{`{"a":1}`, `{"b":2}`, "[DONE]"}},
		{"several lines", []string{"data: {\"a\":\n", "data: 1}\n\n", "data: [DONE]\n\n"}, []string{`{"a": 1}`, "[DONE]"}},
		{"CRLF and comments", []string{"data: {\"a\":\r\n", ": ping\r\n", "data: 1}\r\n\r\n", "data: [DONE]\r\n\r\n"}, []string{`{"a": 1}`, "[DONE]"}},
		{"[DONE] right after", []string{"data: {\"a\":\n", "data: 1}\n", "data: [DONE]\n\n"}, []string{`{"a": 1}`, "[DONE]"}},
		{"cut off by [DONE]", []string{"data: {\"a\":\n", "data: [DONE]\n\n"}, []string{`{"a":`, "[DONE]"}},
		{"no blank lines", []string{"data: {\"a\":1}\n", "data: processing {\n", "data: {\"b\":2}\n", "data: " + big + "\n", "data: {\"c\":3}\n", "data: [DONE]\n"},
			[]string{`{"a":1}`, "processing {", `{"b":2}`, big, `{"c":3}`, "[DONE]"}},
		{"two values in one event", []string{"data: {\"a\":1}\n", ": ping\n", "data: {\"b\":2}\n\n"}, []string{`{"a":1}`, `{"b":2}`}},
		{"pretty-printed", []string{"data: {\"x\":0}\n\n", "data: {\n", "data: \"a\":\n", "data: \"b\"\n", "data: }\n\n"},
			[]string{`{"x":0}`, `{ "a": "b" }`}},
		{"brackets and quotes inside strings", []string{"data: {\"a\":\"}]\\\"{\",\n", "data: \"b\":[1]}\n\n"}, []string{`{"a":"}]\"{", "b":[1]}`}},
		{"end without newline", []string{"data: {\"a\":\n", "data: 1}"}, []string{`{"a": 1}`}},
	} {
		if got, _ := readEvents(t, tc.pieces...); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Finding where an event of many lines ends reads each of its bytes once,
// however many lines it has and however they arrive.
func TestSSEEventsLinear(t *testing.T) {
	pieces := []string{"data: {\"text\":[\n"}
	for range 20_000 {
		pieces = append(pieces, "data: \""+strings.Repeat("x", 90)+"\",\n")
	}
	pieces = append(pieces, "data: 1]}\n\n")
	events, scanned := readEvents(t, pieces...)
	if len(events) != 1 {
		t.Fatalf("%d events, want 1", len(events))
	}
	if size := len(strings.Join(pieces, "")); scanned > size {
		t.Errorf("%d bytes scanned for a stream of %d", scanned, size)
	}
}
