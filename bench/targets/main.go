// Command targets compares the gateway with the floor and the bare hop over
// the rounds of one bench/run.sh run and checks the benchmark targets.
//
//	targets DIR
//
// DIR holds the load tool's --out files of every round, named
// r<round>-<set>-<kind>.json: set is floor, hop or gateway; kind is plain
// (a sweep over concurrencies 1 and 64 without streaming) or stream
// (concurrency 1, streaming). Each figure is compared within its round,
// where the three paths ran each kind back to back, and the median over the
// rounds is checked against the targets:
//
//   - concurrency 64, non-stream: gateway RPS at least 25 % of the floor's;
//   - concurrency 1, non-stream: p50 latency at most 1 ms above the floor's;
//   - concurrency 1, stream: p50 time to first byte at most 0.3 ms above
//     the floor's.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: targets DIR")
		os.Exit(2)
	}
	rounds, err := load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "targets:", err)
		os.Exit(1)
	}
	report(os.Stdout, rounds)
}

// figures are one set's measurements in one round.
type figures struct {
	rps64  float64 // requests per second at 64, non-stream
	p50    float64 // ms, p50 latency at 1, non-stream
	ttfb50 float64 // ms, p50 time to first byte at 1, stream
}

// round holds the floor, hop and gateway figures of one round.
type round struct {
	n                   int
	floor, hop, gateway figures
}

type loadReport struct {
	Runs []struct {
		Concurrency int     `json:"concurrency"`
		OK          int64   `json:"ok"`
		RPS         float64 `json:"rps"`
		Latency     struct {
			P50 float64 `json:"p50_ms"`
		} `json:"latency"`
		TTFB *struct {
			P50 float64 `json:"p50_ms"`
		} `json:"ttfb"`
	} `json:"runs"`
}

var fileName = regexp.MustCompile(`^r([0-9]+)-(floor|hop|gateway)-(plain|stream)\.json$`)

// load reads every round file in dir. A round must have all six files.
func load(dir string) ([]round, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byRound := map[int]*round{}
	seen := map[int]int{}
	for _, e := range entries {
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var rep loadReport
		if err := json.Unmarshal(data, &rep); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		r := byRound[n]
		if r == nil {
			r = &round{n: n}
			byRound[n] = r
		}
		f := map[string]*figures{"floor": &r.floor, "hop": &r.hop, "gateway": &r.gateway}[m[2]]
		for _, run := range rep.Runs {
			if run.OK == 0 {
				return nil, fmt.Errorf("%s: a run at concurrency %d had no successful request", e.Name(), run.Concurrency)
			}
			switch {
			case m[3] == "stream" && run.Concurrency == 1 && run.TTFB != nil:
				f.ttfb50 = run.TTFB.P50
			case m[3] == "plain" && run.Concurrency == 1:
				f.p50 = run.Latency.P50
			case m[3] == "plain" && run.Concurrency == 64:
				f.rps64 = run.RPS
			}
		}
		seen[n]++
	}
	var out []round
	for n, r := range byRound {
		if seen[n] != 6 || r.floor.rps64 == 0 || r.floor.p50 == 0 || r.floor.ttfb50 == 0 ||
			r.hop.rps64 == 0 || r.gateway.rps64 == 0 || r.gateway.p50 == 0 || r.gateway.ttfb50 == 0 {
			return nil, fmt.Errorf("round %d is incomplete", n)
		}
		out = append(out, *r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no round files in %s", dir)
	}
	slices.SortFunc(out, func(a, b round) int { return a.n - b.n })
	return out, nil
}

// Targets of the benchmark.
const (
	minShare    = 25.0 // % of the floor's RPS at 64
	maxAddedP50 = 1.0  // ms at 1, non-stream
	maxAddedTTF = 0.3  // ms at 1, stream
)

// comparison is one set against the floor of the same round.
type comparison struct {
	share, addedP50, addedTTFB float64
}

func compare(set, floor figures) comparison {
	return comparison{share: 100 * set.rps64 / floor.rps64, addedP50: set.p50 - floor.p50, addedTTFB: set.ttfb50 - floor.ttfb50}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// report prints each round and the medians, and the targets' verdicts.
func report(w io.Writer, rounds []round) {
	row := "%-7s %12s %12s %12s   %9s %9s %9s   %9s %9s %9s\n"
	fmt.Fprintf(w, "== targets: %d rounds, each measuring the floor, the bare hop and the gateway back to back\n", len(rounds))
	fmt.Fprintf(w, row, "round", "rps@64 floor", "hop", "gateway", "p50@1 fl", "hop", "gateway", "ttfb fl", "hop", "gateway")
	var gw, hop [3][]float64
	for _, r := range rounds {
		h, g := compare(r.hop, r.floor), compare(r.gateway, r.floor)
		for i, v := range []float64{g.share, g.addedP50, g.addedTTFB} {
			gw[i] = append(gw[i], v)
		}
		for i, v := range []float64{h.share, h.addedP50, h.addedTTFB} {
			hop[i] = append(hop[i], v)
		}
		fmt.Fprintf(w, row, strconv.Itoa(r.n),
			fmt.Sprintf("%.0f", r.floor.rps64), fmt.Sprintf("%.1f%%", h.share), fmt.Sprintf("%.1f%%", g.share),
			ms(r.floor.p50), added(h.addedP50), added(g.addedP50),
			ms(r.floor.ttfb50), added(h.addedTTFB), added(g.addedTTFB))
	}
	fmt.Fprintf(w, row, "median", "",
		fmt.Sprintf("%.1f%%", median(hop[0])), fmt.Sprintf("%.1f%%", median(gw[0])),
		"", added(median(hop[1])), added(median(gw[1])),
		"", added(median(hop[2])), added(median(gw[2])))
	share, p50, ttfb := median(gw[0]), median(gw[1]), median(gw[2])
	fmt.Fprintf(w, "gateway RPS at 64, non-stream: %.1f %% of the floor (target >= %.0f %%): %s\n", share, minShare, verdict(share >= minShare))
	fmt.Fprintf(w, "gateway p50 at 1, non-stream: %s over the floor (target <= +%.1f ms): %s\n", added(p50), maxAddedP50, verdict(p50 <= maxAddedP50))
	fmt.Fprintf(w, "gateway stream TTFB p50 at 1: %s over the floor (target <= +%.1f ms): %s\n", added(ttfb), maxAddedTTF, verdict(ttfb <= maxAddedTTF))
}

func ms(v float64) string { return fmt.Sprintf("%.3fms", v) }

func added(v float64) string { return fmt.Sprintf("%+.3fms", v) }
