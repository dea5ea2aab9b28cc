package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeUpstream is a minimal OpenAI-compatible server for the tests. Every
// failEvery-th request gets a 500 and, among the others, every cutEvery-th
// stream ends without data: [DONE].
type fakeUpstream struct {
	t         *testing.T
	wantKey   string
	failEvery int64
	cutEvery  int64

	requests atomic.Int64
	stream   atomic.Int64
}

func (f *fakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/__stats" {
		json.NewEncoder(w).Encode(UpstreamDelta{Requests: f.requests.Load(), Chat: f.requests.Load(), Stream: f.stream.Load()})
		return
	}
	n := f.requests.Add(1)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		f.t.Errorf("request %s %s", r.Method, r.URL.Path)
	}
	if got, want := r.Header.Get("Authorization"), "Bearer "+f.wantKey; f.wantKey != "" && got != want {
		f.t.Errorf("Authorization = %q, want %q", got, want)
	}
	var body struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Messages) != 1 || body.Model == "" {
		f.t.Errorf("body %+v: %v", body, err)
	}
	if body.Stream != body.StreamOptions.IncludeUsage {
		f.t.Errorf("stream %t with include_usage %t", body.Stream, body.StreamOptions.IncludeUsage)
	}
	if f.failEvery > 0 && n%f.failEvery == 0 {
		http.Error(w, `{"error":{"message":"boom"}}`, http.StatusInternalServerError)
		return
	}
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
		return
	}
	f.stream.Add(1)
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range 3 {
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%d\"}}]}\n\n", i)
		w.(http.Flusher).Flush()
	}
	if f.cutEvery > 0 && n%f.cutEvery == 0 {
		return
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

// MustStartFake starts f on an httptest server.
func MustStartFake(tb testing.TB, f *fakeUpstream) *httptest.Server {
	tb.Helper()
	ts := httptest.NewServer(f)
	tb.Cleanup(ts.Close)
	return ts
}

// MustRun runs cfg with a fresh client.
func MustRun(tb testing.TB, cfg Config) Result {
	tb.Helper()
	client := NewClient(cfg.Concurrency)
	defer client.CloseIdleConnections()
	res, err := Run(context.Background(), cfg, client)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// checkOrdered fails unless 0 < p50 <= p90 <= p99 <= max.
func checkOrdered(tb testing.TB, name string, p Percentiles) {
	tb.Helper()
	if p.P50 <= 0 || p.P50 > p.P90 || p.P90 > p.P99 || p.P99 > p.Max {
		tb.Errorf("%s percentiles not ordered: %+v", name, p)
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name   string
		stream bool
	}{
		{name: "plain", stream: false},
		{name: "stream", stream: true},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeUpstream{t: t, wantKey: "sk-test"}
			ts := MustStartFake(t, f)
			res := MustRun(t, Config{
				URL: ts.URL, Key: "sk-test", Model: "gpt-4o-mini", Concurrency: 8,
				Duration: time.Minute, Requests: 200, Stream: sc.stream, BodySize: 64,
				StatsURL: ts.URL + "/__stats",
			})

			if res.Sent != 200 || res.OK != 200 || res.ErrorCount() != 0 {
				t.Errorf("sent %d ok %d errors %v (%s)", res.Sent, res.OK, res.Errors, res.FirstError)
			}
			if got := f.requests.Load(); got != 200 {
				t.Errorf("server saw %d requests, want 200", got)
			}
			if res.Upstream == nil || res.Upstream.Requests != 200 {
				t.Errorf("upstream = %+v (%s), want 200 requests", res.Upstream, res.StatsError)
			}
			if res.RPS <= 0 || res.Elapsed <= 0 {
				t.Errorf("rps %f over %v", res.RPS, res.Elapsed)
			}
			checkOrdered(t, "latency", res.Latency)
			if !sc.stream {
				if res.TTFB != nil {
					t.Errorf("TTFB = %+v for a plain run", res.TTFB)
				}
				return
			}
			if res.TTFB == nil {
				t.Fatal("no TTFB for a stream run")
			}
			checkOrdered(t, "ttfb", *res.TTFB)
			if res.TTFB.P50 > res.Latency.P50 || res.TTFB.Max > res.Latency.Max {
				t.Errorf("ttfb %+v exceeds latency %+v", *res.TTFB, res.Latency)
			}
		})
	}
}

func TestRunErrorKinds(t *testing.T) {
	t.Parallel()
	f := &fakeUpstream{t: t, failEvery: 4, cutEvery: 5}
	ts := MustStartFake(t, f)
	res := MustRun(t, Config{URL: ts.URL, Model: "m", Concurrency: 8, Requests: 200, Stream: true})

	// Of requests 1..200, 50 are multiples of 4; of the rest, 30 are
	// multiples of 5.
	want := map[string]int64{"status 500": 50, errIncompleteStream: 30}
	if res.Sent != 200 || res.OK != 120 || fmt.Sprint(res.Errors) != fmt.Sprint(want) {
		t.Errorf("sent %d ok %d errors %v, want 200, 120, %v", res.Sent, res.OK, res.Errors, want)
	}
	if n := int64(len(res.Errors)); n != 2 {
		t.Errorf("error kinds = %v", res.Errors)
	}
}

func TestRunTransportError(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close() // nothing listens there any more

	res := MustRun(t, Config{URL: url, Model: "m", Concurrency: 2, Requests: 10})
	if res.Sent != 10 || res.OK != 0 || res.Errors[errTransport] != 10 || res.FirstError == "" {
		t.Errorf("sent %d ok %d errors %v first %q", res.Sent, res.OK, res.Errors, res.FirstError)
	}
	if res.Latency != (Percentiles{}) {
		t.Errorf("latency %+v without a single success", res.Latency)
	}
}

func TestRunStopsAfterDuration(t *testing.T) {
	t.Parallel()
	ts := MustStartFake(t, &fakeUpstream{t: t})
	// A worker first run after the duration has passed (a busy machine)
	// rightly sends nothing: a run that sent nothing is made again.
	var res Result
	for range 5 {
		start := time.Now()
		res = MustRun(t, Config{URL: ts.URL, Model: "m", Concurrency: 4, Duration: 200 * time.Millisecond})
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("run took %v", d)
		}
		if res.Sent > 0 {
			break
		}
	}
	if res.Sent == 0 || res.Sent != res.OK {
		t.Errorf("sent %d ok %d errors %v", res.Sent, res.OK, res.Errors)
	}
}

func TestRunCommand(t *testing.T) {
	t.Parallel()
	f := &fakeUpstream{t: t}
	ts := MustStartFake(t, f)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{
		"--url", ts.URL, "--sweep", "1,4", "--requests", "20", "--json", "--stats-url", ts.URL + "/__stats",
	}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var got struct {
		Runs []struct {
			Concurrency int     `json:"concurrency"`
			Sent        int64   `json:"sent"`
			OK          int64   `json:"ok"`
			ElapsedMS   float64 `json:"elapsed_ms"`
			Latency     struct {
				P50 float64 `json:"p50_ms"`
				Max float64 `json:"max_ms"`
			} `json:"latency"`
			Upstream struct {
				Requests int64 `json:"requests"`
			} `json:"upstream"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("decode %s: %v", stdout.String(), err)
	}
	if len(got.Runs) != 2 {
		t.Fatalf("runs = %s", stdout.String())
	}
	for i, c := range []int{1, 4} {
		r := got.Runs[i]
		if r.Concurrency != c || r.Sent != 20 || r.OK != 20 || r.Upstream.Requests != 20 ||
			r.ElapsedMS <= 0 || r.Latency.P50 <= 0 || r.Latency.P50 > r.Latency.Max {
			t.Errorf("run %d = %+v", i, r)
		}
	}

	stdout.Reset()
	file := filepath.Join(t.TempDir(), "stream.json")
	if err := run(context.Background(), []string{"--url", ts.URL, "--requests", "5", "--concurrency", "2", "--stream", "--out", file}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.Contains(out, "ttfb50") || strings.Count(out, "\n") != 2 {
		t.Errorf("table output:\n%s", out)
	}
	// --out keeps the JSON document besides the table.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var kept Report
	if err := json.Unmarshal(data, &kept); err != nil || !kept.Stream || len(kept.Runs) != 1 || kept.Runs[0].OK != 5 {
		t.Errorf("--out file: %v %s", err, data)
	}
}

func TestRunCommandRejects(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name string
		args []string
	}{
		{name: "no url", args: nil},
		{name: "not http", args: []string{"--url", "ftp://x"}},
		{name: "unbounded", args: []string{"--url", "http://127.0.0.1:1", "--duration", "0"}},
		{name: "bad sweep", args: []string{"--url", "http://127.0.0.1:1", "--sweep", "1,x"}},
		{name: "zero concurrency", args: []string{"--url", "http://127.0.0.1:1", "--sweep", "0"}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			if err := run(context.Background(), sc.args, io.Discard, io.Discard); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestPercentiles(t *testing.T) {
	t.Parallel()
	samples := make([]time.Duration, 100)
	for i := range samples {
		samples[i] = time.Duration(100-i) * time.Millisecond // reversed: Run sorts
	}
	want := Percentiles{P50: 50 * time.Millisecond, P90: 90 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond}
	if got := percentiles(samples); got != want {
		t.Errorf("percentiles = %+v, want %+v", got, want)
	}
	if got := percentiles([]time.Duration{7}); got != (Percentiles{7, 7, 7, 7}) {
		t.Errorf("one sample = %+v", got)
	}
}

func TestChatBody(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 1, 64, 1000} {
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.Unmarshal(ChatBody("m", size, false), &body); err != nil {
			t.Fatal(err)
		}
		if got := len(body.Messages[0].Content); got != size {
			t.Errorf("content of %d characters, want %d", got, size)
		}
	}
}
