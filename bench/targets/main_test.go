package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRound writes the six files of a round in the load tool's format:
// rps at 64, p50 at 1 and ttfb at 1 for floor, hop and gateway.
func writeRound(t *testing.T, dir string, n int, sets map[string][3]float64) {
	t.Helper()
	for set, f := range sets {
		plain := fmt.Sprintf(`{"url":"u","runs":[{"concurrency":1,"ok":10,"rps":100,"latency":{"p50_ms":%g}},{"concurrency":64,"ok":10,"rps":%g,"latency":{"p50_ms":9}}]}`, f[1], f[0])
		stream := fmt.Sprintf(`{"url":"u","stream":true,"runs":[{"concurrency":1,"ok":10,"rps":50,"latency":{"p50_ms":2},"ttfb":{"p50_ms":%g}}]}`, f[2])
		for kind, body := range map[string]string{"plain": plain, "stream": stream} {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("r%d-%s-%s.json", n, set, kind)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	// Shares 20, 30, 26 %: median 26 % (met). Added p50 0.9, 1.2, 1.1 ms:
	// median 1.1 (missed). Added TTFB 0.2, 0.5, 0.25: median 0.25 (met).
	writeRound(t, dir, 1, map[string][3]float64{"floor": {1000, 0.2, 0.3}, "hop": {300, 0.4, 0.5}, "gateway": {200, 1.1, 0.5}})
	writeRound(t, dir, 2, map[string][3]float64{"floor": {2000, 0.1, 0.2}, "hop": {600, 0.3, 0.4}, "gateway": {600, 1.3, 0.7}})
	writeRound(t, dir, 3, map[string][3]float64{"floor": {1000, 0.2, 0.25}, "hop": {300, 0.4, 0.45}, "gateway": {260, 1.3, 0.5}})
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("other files are ignored"), 0o644); err != nil {
		t.Fatal(err)
	}
	rounds, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	report(&out, rounds)
	for _, want := range []string{
		"26.0 % of the floor (target >= 25 %): met",
		"+1.100ms over the floor (target <= +1.0 ms): missed",
		"TTFB p50 at 1: +0.250ms over the floor (target <= +0.3 ms): met",
		"30.0%", // hop share of every round
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Index(out.String(), "\n1 ") > strings.Index(out.String(), "\n3 ") {
		t.Errorf("rounds out of order:\n%s", out.String())
	}
}

func TestLoadRefusesIncompleteRounds(t *testing.T) {
	dir := t.TempDir()
	if _, err := load(dir); err == nil {
		t.Error("an empty directory was accepted")
	}
	writeRound(t, dir, 1, map[string][3]float64{"floor": {1000, 0.2, 0.3}, "hop": {300, 0.4, 0.5}})
	if _, err := load(dir); err == nil || !strings.Contains(err.Error(), "round 1 is incomplete") {
		t.Errorf("a round without the gateway: %v", err)
	}
	writeRound(t, dir, 1, map[string][3]float64{"gateway": {0, 1, 1}})
	if _, err := load(dir); err == nil {
		t.Error("a round without the gateway's RPS at 64 was accepted")
	}
}
