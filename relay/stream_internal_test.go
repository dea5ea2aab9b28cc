package relay

import (
	"bufio"
	"io"
	"slices"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
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

// readEvents returns the payloads of the events sseEvents finds in stream.
func readEvents(t *testing.T, stream string) []string {
	t.Helper()
	s := sseEvents{r: bufio.NewReaderSize(strings.NewReader(stream), 64<<10), onData: func() {}, onWait: func() {}}
	var out []string
	for {
		p, wire, err := s.next()
		if wire != nil {
			out = append(out, string(p))
		}
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Events as the upstream meant them: SSE's blank lines when it sends them,
// one event a line when it sends none, whatever a line holds.
func TestSSEEvents(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		want         []string
	}{
		{"one line each", "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n", []string{`{"a":1}`, `{"b":2}`, "[DONE]"}},
		{"several lines", "data: {\"a\":\ndata: 1}\n\ndata: [DONE]\n\n", []string{`{"a": 1}`, "[DONE]"}},
		{"CRLF and comments", "data: {\"a\":\r\n: ping\r\ndata: 1}\r\n\r\ndata: [DONE]\r\n\r\n", []string{`{"a": 1}`, "[DONE]"}},
		{"[DONE] right after", "data: {\"a\":\ndata: 1}\ndata: [DONE]\n\n", []string{`{"a": 1}`, "[DONE]"}},
		{"no blank lines", "data: {\"a\":1}\ndata: processing\ndata: {\"b\":2}\ndata: {\"c\":3}\ndata: [DONE]\n",
			[]string{`{"a":1}`, "processing", `{"b":2}`, `{"c":3}`, "[DONE]"}},
		{"two values in one event", "data: {\"a\":1}\ndata: {\"b\":2}\n\n", []string{`{"a":1}`, `{"b":2}`}},
		// Once the upstream has shown it ends events with blank lines, a
		// line that is a whole value by itself stays part of its event.
		{"pretty-printed after a blank line", "data: {\"x\":0}\n\ndata: {\ndata: \"a\":\ndata: \"b\"\ndata: }\n\n",
			[]string{`{"x":0}`, `{ "a": "b" }`}},
		{"end without newline", "data: {\"a\":\ndata: 1}", []string{`{"a": 1}`}},
	} {
		if got := readEvents(t, tc.stream); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Finding where an event of many lines ends reads each of its bytes a
// bounded number of times, however many lines it has.
func TestSSEEventsLinear(t *testing.T) {
	var scanned int
	validJSON = func(p []byte) bool { scanned += len(p); return json.Valid(p) }
	defer func() { validJSON = json.Valid }()
	line := "data: " + strings.Repeat("x", 94) + "\n"
	for _, blank := range []bool{true, false} {
		scanned = 0
		stream := "data: {\"warm\":1}\n"
		if blank {
			stream += "\n"
		}
		stream += "data: {\"text\":\n" + strings.Repeat(line, 20_000) + "data: 1}\n\n"
		events := readEvents(t, stream)
		if len(events) < 2 {
			t.Fatalf("%d events", len(events))
		}
		if scanned > 4*len(stream) {
			t.Errorf("blank lines %v: %d bytes checked for a stream of %d", blank, scanned, len(stream))
		}
	}
}
