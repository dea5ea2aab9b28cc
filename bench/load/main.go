// Command load sends OpenAI-compatible chat completions to one base URL as
// fast as a fixed number of workers can, and reports throughput, latency
// percentiles and errors by kind.
//
// Each worker loops: POST {url}/v1/chat/completions with a one-message chat
// body, read the answer to the end (for --stream, the event stream up to
// data: [DONE]), record the latency, repeat. A run ends by itself when
// --duration has passed or --requests have been sent, whichever comes
// first; requests in flight then finish, each bounded by a 60 s deadline.
//
// Flags:
//
//	--url          base URL, e.g. http://127.0.0.1:3000 (required)
//	--key          Bearer token (optional)
//	--model        model name (default gpt-4o-mini)
//	--concurrency  workers (default 64)
//	--duration     run length (default 10s; 0 = no time limit)
//	--requests     total requests (default 0 = no count limit)
//	--stream       ask for server-sent events
//	--body-size    prompt characters (default 64)
//	--sweep        comma-separated concurrencies run in turn, e.g. 1,8,64,256
//	--json         print one JSON document instead of a table
//	--out          also write that JSON document to this file
//	--stats-url    the fake upstream's /__stats, read before and after each
//	               run to report the upstream calls the run caused
//
// Latency covers successful requests only, from sending to the end of the
// body; TTFB (stream only) runs to the first data: line. RPS counts
// successful requests per second of the run.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// Report is the --json output.
type Report struct {
	URL      string   `json:"url"`
	Model    string   `json:"model"`
	Stream   bool     `json:"stream"`
	BodySize int      `json:"body_size"`
	Runs     []Result `json:"runs"`
}

// run parses args, performs every run and prints the results to stdout;
// progress goes to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	fs.StringVar(&cfg.URL, "url", "", "base URL, e.g. http://127.0.0.1:3000")
	fs.StringVar(&cfg.Key, "key", "", "Bearer token (optional)")
	fs.StringVar(&cfg.Model, "model", "gpt-4o-mini", "model name")
	fs.IntVar(&cfg.Concurrency, "concurrency", 64, "workers")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "run length (0 = no time limit)")
	fs.IntVar(&cfg.Requests, "requests", 0, "total requests (0 = no count limit)")
	fs.BoolVar(&cfg.Stream, "stream", false, "ask for server-sent events")
	fs.IntVar(&cfg.BodySize, "body-size", 64, "prompt characters")
	sweep := fs.String("sweep", "", "comma-separated concurrencies run in turn, e.g. 1,8,64,256")
	asJSON := fs.Bool("json", false, "print one JSON document instead of a table")
	out := fs.String("out", "", "also write the JSON document to this file")
	fs.StringVar(&cfg.StatsURL, "stats-url", "", "fake upstream /__stats URL, read before and after each run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}

	levels := []int{cfg.Concurrency}
	if *sweep != "" {
		var err error
		if levels, err = parseSweep(*sweep); err != nil {
			return err
		}
	}
	for _, c := range levels {
		check := cfg
		check.Concurrency = c
		if err := check.Validate(); err != nil {
			return err
		}
	}

	fmt.Fprintf(stderr, "load: POST %s/v1/chat/completions model=%s stream=%t body=%d chars, %s\n",
		strings.TrimSuffix(cfg.URL, "/"), cfg.Model, cfg.Stream, cfg.BodySize, limits(cfg))
	report := Report{URL: cfg.URL, Model: cfg.Model, Stream: cfg.Stream, BodySize: cfg.BodySize}
	if !*asJSON {
		printHeader(stdout)
	}
	for _, c := range levels {
		if ctx.Err() != nil {
			break
		}
		cfg.Concurrency = c
		client := NewClient(c)
		res, err := Run(ctx, cfg, client)
		client.CloseIdleConnections()
		if err != nil {
			return err
		}
		report.Runs = append(report.Runs, res)
		if !*asJSON {
			printRow(stdout, res)
		}
	}
	if *asJSON {
		if err := writeReport(stdout, report); err != nil {
			return err
		}
	}
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		err = writeReport(f, report)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	return nil
}

func writeReport(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// parseSweep parses "1,8,64" into concurrency levels.
func parseSweep(s string) ([]int, error) {
	var levels []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("sweep: %q is not a number", f)
		}
		levels = append(levels, n)
	}
	return levels, nil
}

// limits describes when each run stops.
func limits(cfg Config) string {
	switch {
	case cfg.Duration > 0 && cfg.Requests > 0:
		return fmt.Sprintf("%s or %d requests per run", cfg.Duration, cfg.Requests)
	case cfg.Duration > 0:
		return fmt.Sprintf("%s per run", cfg.Duration)
	default:
		return fmt.Sprintf("%d requests per run", cfg.Requests)
	}
}

const rowFormat = "%5s %6s %9s %9s %7s %10s %9s %9s %9s %9s %9s %9s %9s\n"

func printHeader(w io.Writer) {
	fmt.Fprintf(w, rowFormat, "conc", "stream", "sent", "ok", "errors", "rps",
		"p50", "p90", "p99", "max", "ttfb50", "ttfb99", "upstream")
}

// printRow prints one run as a table row, followed by its errors, if any.
func printRow(w io.Writer, r Result) {
	ttfb50, ttfb99 := "-", "-"
	if r.TTFB != nil {
		ttfb50, ttfb99 = formatDuration(r.TTFB.P50), formatDuration(r.TTFB.P99)
	}
	upstream := "-"
	if r.Upstream != nil {
		upstream = strconv.FormatInt(r.Upstream.Requests, 10)
	}
	fmt.Fprintf(w, rowFormat,
		strconv.Itoa(r.Concurrency), strconv.FormatBool(r.Stream),
		strconv.FormatInt(r.Sent, 10), strconv.FormatInt(r.OK, 10), strconv.FormatInt(r.ErrorCount(), 10),
		strconv.FormatFloat(r.RPS, 'f', 1, 64),
		formatDuration(r.Latency.P50), formatDuration(r.Latency.P90),
		formatDuration(r.Latency.P99), formatDuration(r.Latency.Max),
		ttfb50, ttfb99, upstream)
	if len(r.Errors) > 0 {
		fmt.Fprintf(w, "      errors: %s\n", errorSummary(r.Errors))
	}
	if r.FirstError != "" {
		fmt.Fprintf(w, "      first error: %s\n", r.FirstError)
	}
	if r.StatsError != "" {
		fmt.Fprintf(w, "      upstream stats: %s\n", r.StatsError)
	}
}

// formatDuration prints d with three significant digits in a unit that
// suits it.
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 0, 64) + "µs"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	default:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	}
}
