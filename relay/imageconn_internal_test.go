package relay

import (
	"bytes"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// An image URL in a request is a host the user chose: the download made to
// count its tokens leaves no connection behind once it is done. Keeping it
// in the pool for reuse would let a user hold an open file (and a socket on
// their server) per distinct host name for the idle timeout, eight per
// request, with no bound but the request rate.
func TestImageDownloadLeavesNoConnection(t *testing.T) {
	if openFDs() < 0 {
		t.Skip("no /proc/self/fd")
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	img := buf.Bytes()
	var srvs []*httptest.Server
	for i := range maxImageFetches {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			w.Write(img)
		}))
		t.Cleanup(srv.Close)
		if i%2 == 1 {
			// A redirect to another host: the connection to it ends too.
			target := srv.URL
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target+r.URL.Path, http.StatusFound)
			}))
			t.Cleanup(srv.Close)
		}
		srvs = append(srvs, srv)
	}
	// A client pooling as the gateway's does (keep-alive, idle connections
	// kept for 90 s).
	tr := &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second}
	t.Cleanup(tr.CloseIdleConnections)
	rl := &Relay{client: &http.Client{Transport: tr}}
	before := openFDs()
	c := &call{model: "gpt-4o", r: httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)}
	for _, srv := range srvs {
		if n, err := rl.imageTokens(c, srv.URL+"/a.png", "high"); err != nil || n <= 0 {
			t.Fatalf("image tokens = %d, %v", n, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for openFDs() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d files open after the downloads ended, %d before: connections to the users' hosts stay open", openFDs(), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
