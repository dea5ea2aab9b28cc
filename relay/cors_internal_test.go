package relay

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// headerWriter is a ResponseWriter that keeps one header map, so that
// only the handler's own allocations are counted.
type headerWriter struct{ h http.Header }

func (w *headerWriter) Header() http.Header         { return w.h }
func (w *headerWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *headerWriter) WriteHeader(int)             {}

// The CORS headers' values are made once, not at every request (the
// request id is the one value of a call's own); a handler that adds to
// one of them gets a copy, and the next answer the headers as they were.
func TestCORSHeadersMadeOnce(t *testing.T) {
	rl := &Relay{}
	h := rl.CORS(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	w := &headerWriter{h: http.Header{"X-Oneapi-Request-Id": {"req-1"}}}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	allocs := testing.AllocsPerRun(100, func() { h.ServeHTTP(w, r) })
	if allocs > 1 {
		t.Errorf("%v allocations a request, want at most 1 (X-Request-Id)", allocs)
	}
	w.h.Add("Access-Control-Expose-Headers", "X-Other")
	w.h.Add("Access-Control-Allow-Origin", "https://example.com")
	w2 := httptest.NewRecorder()
	rl.CORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Request-Id", "req-2") })).ServeHTTP(w2, r)
	for k, want := range map[string][]string{
		"Access-Control-Allow-Origin":   {"*"},
		"Access-Control-Allow-Methods":  {"GET, POST, DELETE, OPTIONS"},
		"Access-Control-Allow-Headers":  {"Authorization, *"},
		"Access-Control-Expose-Headers": {"X-Oneapi-Request-Id, X-Request-Id, Retry-After, Retry-After-Ms"},
	} {
		if got := w2.Result().Header[k]; !slices.Equal(got, want) {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}
