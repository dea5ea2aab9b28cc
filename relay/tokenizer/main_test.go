package tokenizer

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// httpCalls counts every HTTP request made through the default transport
// while the tests run. The encodings must come from the binary, so it must
// stay zero.
var httpCalls atomic.Int64

type refuseTransport struct{}

func (refuseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	httpCalls.Add(1)
	return nil, errors.New("network access refused in tests: " + r.URL.String())
}

func TestMain(m *testing.M) {
	// tiktoken-go's default loader downloads with http.Get and caches in
	// TIKTOKEN_CACHE_DIR: refuse the first and point the second at an
	// empty directory, so that only the embedded files can satisfy a load.
	http.DefaultTransport = refuseTransport{}
	dir, err := os.MkdirTemp("", "tokenizer-cache")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TIKTOKEN_CACHE_DIR", dir)
	os.Setenv("DATA_GYM_CACHE_DIR", dir)
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())

	code := m.Run()
	os.RemoveAll(dir)
	if n := httpCalls.Load(); n != 0 {
		fmt.Fprintf(os.Stderr, "tokenizer made %d HTTP requests\n", n)
		code = 1
	}
	os.Exit(code)
}

func TestPreloadOffline(t *testing.T) {
	if err := Preload(); err != nil {
		t.Fatalf("Preload: %v", err)
	}
	if n := httpCalls.Load(); n != 0 {
		t.Fatalf("HTTP requests = %d, want 0", n)
	}
	entries, err := os.ReadDir(os.Getenv("TIKTOKEN_CACHE_DIR"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("cache dir has %d entries, want none", len(entries))
	}
}

// references are tiktoken-go's encodings, the tests' yardstick: their
// counts are tiktoken's (but their merge is quadratic, so only texts without
// long pre-tokens are given to them).
var references sync.Map // encoding name -> *tiktoken.Tiktoken

func reference(t testing.TB, name string) *tiktoken.Tiktoken {
	t.Helper()
	if tk, ok := references.Load(name); ok {
		return tk.(*tiktoken.Tiktoken)
	}
	tk, err := tiktoken.GetEncoding(name)
	if err != nil {
		t.Fatal(err)
	}
	references.Store(name, tk)
	return tk
}
