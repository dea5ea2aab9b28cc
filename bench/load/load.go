package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes one load run.
type Config struct {
	// URL is the base URL; requests go to URL + "/v1/chat/completions".
	URL string
	// Key, when set, is sent as "Authorization: Bearer <Key>".
	Key string
	// Model is the model of every request.
	Model string
	// Concurrency is the number of workers, each with one request in flight.
	Concurrency int
	// Duration stops issuing new requests after this long; 0 means no limit.
	Duration time.Duration
	// Requests stops after this many requests in total; 0 means no limit.
	Requests int
	// Stream asks for server-sent events (with stream_options.include_usage).
	Stream bool
	// BodySize is the number of characters of the prompt.
	BodySize int
	// StatsURL, when set, is the fake upstream's /__stats, read before and
	// after the run.
	StatsURL string
}

// Limits that keep a mistyped flag from turning a benchmark into an outage.
const (
	maxConcurrency = 10_000
	maxBodySize    = 1 << 20
)

// requestTimeout bounds each request. The client itself has no timeout, so
// this deadline is what stops a stalled stream.
const requestTimeout = 60 * time.Second

// Validate reports a config that cannot run or would not stop by itself.
func (c *Config) Validate() error {
	if err := checkURL(c.URL); err != nil {
		return fmt.Errorf("url: %w", err)
	}
	if c.StatsURL != "" {
		if err := checkURL(c.StatsURL); err != nil {
			return fmt.Errorf("stats-url: %w", err)
		}
	}
	switch {
	case c.Model == "":
		return errors.New("model must not be empty")
	case c.Concurrency < 1 || c.Concurrency > maxConcurrency:
		return fmt.Errorf("concurrency must be between 1 and %d", maxConcurrency)
	case c.Duration < 0 || c.Requests < 0:
		return errors.New("duration and requests must not be negative")
	case c.Duration == 0 && c.Requests == 0:
		return errors.New("set a duration or a number of requests, or both")
	case c.BodySize < 0 || c.BodySize > maxBodySize:
		return fmt.Errorf("body size must be between 0 and %d", maxBodySize)
	}
	return nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL with a host", s)
	}
	return nil
}

// Error kinds, the keys of Result.Errors besides "status NNN".
const (
	errTransport        = "transport"
	errIncompleteStream = "incomplete stream"
)

// Result is the outcome of one run.
type Result struct {
	Concurrency int  `json:"concurrency"`
	Stream      bool `json:"stream"`
	// Elapsed runs from the first request to the end of the last one.
	Elapsed time.Duration `json:"-"`
	// Sent counts requests issued; each ends either OK or in Errors.
	Sent int64 `json:"sent"`
	OK   int64 `json:"ok"`
	// Errors counts failures by kind: "status NNN" for a non-2xx answer,
	// "transport" for a failed connection, request or body read, and
	// "incomplete stream" for a stream that ended without data: [DONE].
	Errors map[string]int64 `json:"errors"`
	// FirstError is the text of the first failure that had one (transport
	// errors, broken streams), which usually explains the rest.
	FirstError string `json:"first_error,omitempty"`
	// RPS is OK requests per second of Elapsed.
	RPS float64 `json:"rps"`
	// Latency covers OK requests, from sending to the end of the body.
	Latency Percentiles `json:"latency"`
	// TTFB covers OK streams, from sending to the first data: line.
	TTFB *Percentiles `json:"ttfb,omitempty"`
	// Upstream is what the fake upstream served during the run.
	Upstream *UpstreamDelta `json:"upstream,omitempty"`
	// StatsError explains a missing Upstream when StatsURL was set.
	StatsError string `json:"stats_error,omitempty"`
}

// ErrorCount returns the number of failed requests.
func (r *Result) ErrorCount() int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

// Percentiles summarises a set of durations.
type Percentiles struct {
	P50, P90, P99, Max time.Duration
}

// MarshalJSON adds elapsed_ms to the tagged fields.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return json.Marshal(struct {
		plain
		ElapsedMS float64 `json:"elapsed_ms"`
	}{plain(r), ms(r.Elapsed)})
}

// ms converts d to milliseconds for JSON output.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// MarshalJSON writes the durations as milliseconds.
func (p Percentiles) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		P50 float64 `json:"p50_ms"`
		P90 float64 `json:"p90_ms"`
		P99 float64 `json:"p99_ms"`
		Max float64 `json:"max_ms"`
	}{ms(p.P50), ms(p.P90), ms(p.P99), ms(p.Max)})
}

// percentiles sorts samples in place and returns their nearest-rank
// percentiles.
func percentiles(samples []time.Duration) Percentiles {
	if len(samples) == 0 {
		return Percentiles{}
	}
	slices.Sort(samples)
	at := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(samples)))) - 1
		return samples[min(max(i, 0), len(samples)-1)]
	}
	return Percentiles{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: samples[len(samples)-1]}
}

// UpstreamDelta is the difference between two reads of the fake upstream's
// /__stats.
type UpstreamDelta struct {
	Requests int64 `json:"requests"`
	Chat     int64 `json:"chat"`
	Stream   int64 `json:"stream"`
}

// NewClient returns an HTTP client tuned for concurrency workers: one idle
// connection kept per worker, no proxy from the environment (traffic goes
// only to the given URL), no redirects, no transparent gzip, and no client
// timeout (each request carries its own deadline).
func NewClient(concurrency int) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy: nil,
			DialContext: (&net.Dialer{
				Timeout:   5 * time.Second,
				KeepAlive: 30 * time.Second,
			}).DialContext,
			MaxIdleConns:        concurrency,
			MaxIdleConnsPerHost: concurrency,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Run performs one load run and returns its result. It stops issuing
// requests when the duration has passed, the request budget is spent or ctx
// is done, then waits for the requests in flight (each bounded by
// requestTimeout; cancelled at once when ctx is done).
func Run(ctx context.Context, cfg Config, client *http.Client) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	res := Result{Concurrency: cfg.Concurrency, Stream: cfg.Stream, Errors: map[string]int64{}}

	var before UpstreamDelta
	if cfg.StatsURL != "" {
		var err error
		if before, err = readStats(ctx, client, cfg.StatsURL); err != nil {
			return res, fmt.Errorf("read upstream stats: %w", err)
		}
	}

	workers := cfg.Concurrency
	if cfg.Requests > 0 {
		workers = min(workers, cfg.Requests)
	}
	sampleCap := 8192
	if cfg.Requests > 0 {
		sampleCap = min(sampleCap, cfg.Requests/workers+1)
	}

	header := http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json"},
	}
	if cfg.Stream {
		header["Accept"] = []string{"text/event-stream"}
	}
	if cfg.Key != "" {
		header["Authorization"] = []string{"Bearer " + cfg.Key}
	}
	shared := &state{
		ctx:      ctx,
		client:   client,
		endpoint: strings.TrimSuffix(cfg.URL, "/") + "/v1/chat/completions",
		header:   header,
		body:     ChatBody(cfg.Model, cfg.BodySize, cfg.Stream),
		stream:   cfg.Stream,
		budget:   int64(cfg.Requests),
	}

	ws := make([]*worker, workers)
	for i := range ws {
		ws[i] = &worker{
			state:  shared,
			errors: map[string]int64{},
			lat:    make([]time.Duration, 0, sampleCap),
		}
		if cfg.Stream {
			ws[i].ttfb = make([]time.Duration, 0, sampleCap)
			ws[i].br = bufio.NewReaderSize(nil, 16<<10)
		}
	}

	start := time.Now()
	if cfg.Duration > 0 {
		shared.deadline = start.Add(cfg.Duration)
	}
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(w.loop)
	}
	wg.Wait()
	res.Elapsed = time.Since(start)

	var lat, ttfb []time.Duration
	for _, w := range ws {
		res.Sent += w.sent
		res.OK += w.ok
		for k, v := range w.errors {
			res.Errors[k] += v
		}
		if res.FirstError == "" {
			res.FirstError = w.firstErr
		}
		lat = append(lat, w.lat...)
		ttfb = append(ttfb, w.ttfb...)
	}
	res.Latency = percentiles(lat)
	if cfg.Stream {
		p := percentiles(ttfb)
		res.TTFB = &p
	}
	if res.Elapsed > 0 {
		res.RPS = float64(res.OK) / res.Elapsed.Seconds()
	}

	if cfg.StatsURL != "" {
		// The run's own context may be cancelled; the stats read is short
		// and bounded by its own deadline.
		after, err := readStats(context.WithoutCancel(ctx), client, cfg.StatsURL)
		if err != nil {
			res.StatsError = err.Error()
		} else {
			res.Upstream = &UpstreamDelta{
				Requests: after.Requests - before.Requests,
				Chat:     after.Chat - before.Chat,
				Stream:   after.Stream - before.Stream,
			}
		}
	}
	return res, nil
}

// state is what the workers of one run share.
type state struct {
	ctx      context.Context
	client   *http.Client
	endpoint string
	// header is shared by every request: the client only reads it.
	header   http.Header
	body     []byte
	stream   bool
	deadline time.Time // zero: no time limit
	budget   int64     // 0: no request limit
	issued   atomic.Int64
}

// next reports whether another request may be sent.
func (r *state) next() bool {
	if r.ctx.Err() != nil {
		return false
	}
	if !r.deadline.IsZero() && !time.Now().Before(r.deadline) {
		return false
	}
	return r.budget == 0 || r.issued.Add(1) <= r.budget
}

// worker sends one request at a time and keeps its own counters and
// samples, so that workers share nothing on the hot path but the budget.
type worker struct {
	*state
	sent, ok int64
	errors   map[string]int64
	firstErr string
	lat      []time.Duration
	ttfb     []time.Duration
	br       *bufio.Reader
}

func (w *worker) loop() {
	for w.next() {
		kind, err := w.do()
		if kind != "" && w.ctx.Err() != nil {
			// Interrupted: the failure is ours, not the server's.
			return
		}
		w.sent++
		if kind != "" {
			w.errors[kind]++
			if err != nil && w.firstErr == "" {
				w.firstErr = err.Error()
			}
		} else {
			w.ok++
		}
	}
}

// do sends one request and returns the error kind, "" when it succeeded.
func (w *worker) do() (kind string, err error) {
	ctx, cancel := context.WithTimeout(w.ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.endpoint, bytes.NewReader(w.body))
	if err != nil {
		return errTransport, err
	}
	req.Header = w.header

	start := time.Now()
	resp, err := w.client.Do(req)
	if err != nil {
		return errTransport, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return "status " + strconv.Itoa(resp.StatusCode), nil
	}

	if !w.stream {
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return errTransport, err
		}
		w.lat = append(w.lat, time.Since(start))
		return "", nil
	}

	ttfb, done, err := readStream(w.br, resp.Body, start)
	if !done {
		return errIncompleteStream, err
	}
	// Read to EOF so that the connection goes back to the pool.
	io.Copy(io.Discard, resp.Body)
	w.lat = append(w.lat, time.Since(start))
	w.ttfb = append(w.ttfb, ttfb)
	return "", nil
}

var (
	dataPrefix = []byte("data:")
	doneData   = []byte("[DONE]")
)

// readStream reads server-sent events from body until data: [DONE]. It
// returns the time from start to the first data: line and whether [DONE]
// arrived; err explains an early end other than EOF.
func readStream(br *bufio.Reader, body io.Reader, start time.Time) (ttfb time.Duration, done bool, err error) {
	br.Reset(body)
	seenData := false
	lineStart := true
	for {
		line, err := br.ReadSlice('\n')
		if lineStart && bytes.HasPrefix(line, dataPrefix) {
			if !seenData {
				ttfb = time.Since(start)
				seenData = true
			}
			if bytes.Equal(bytes.TrimSpace(line[len(dataPrefix):]), doneData) {
				return ttfb, true, nil
			}
		}
		// A line longer than the buffer arrives in pieces; only the first
		// piece starts a line.
		lineStart = !errors.Is(err, bufio.ErrBufferFull)
		switch {
		case err == nil || errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return ttfb, false, nil
		default:
			return ttfb, false, err
		}
	}
}

// promptText is repeated to fill the prompt: plain ASCII words, so that
// characters, bytes and a gateway's token estimate stay predictable.
const promptText = "the quick brown fox jumps over the lazy dog "

// ChatBody returns the chat completion request body sent by every worker: one
// user message of size characters, and for a stream include_usage set so
// that the upstream reports usage.
func ChatBody(model string, size int, stream bool) []byte {
	content := strings.Repeat(promptText, size/len(promptText)+1)[:size]
	type streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	body := struct {
		Model         string              `json:"model"`
		Messages      []map[string]string `json:"messages"`
		Stream        bool                `json:"stream,omitempty"`
		StreamOptions *streamOptions      `json:"stream_options,omitempty"`
	}{
		Model:    model,
		Messages: []map[string]string{{"role": "user", "content": content}},
	}
	if stream {
		body.Stream = true
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err) // strings and bools always marshal
	}
	return b
}

// readStats reads the fake upstream's counters.
func readStats(ctx context.Context, client *http.Client, statsURL string) (UpstreamDelta, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, statsURL, nil)
	if err != nil {
		return UpstreamDelta{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return UpstreamDelta{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return UpstreamDelta{}, fmt.Errorf("%s answered %s", statsURL, resp.Status)
	}
	var s UpstreamDelta
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&s); err != nil {
		return UpstreamDelta{}, fmt.Errorf("decode %s: %w", statsURL, err)
	}
	return s, nil
}

// errorSummary formats the error counts as "kind=N, ..." in a stable order.
func errorSummary(errs map[string]int64) string {
	parts := make([]string, 0, len(errs))
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, errs[k]))
	}
	return strings.Join(parts, ", ")
}
