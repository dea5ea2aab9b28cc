package api_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	bolt "go.etcd.io/bbolt"

	"gateway/api"
)

func TestStaticUI(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	const index = "console index"
	for _, tt := range []struct {
		name, method, path string
		status             int
		body               string
		cache              string
		csp                bool
	}{
		{"HashedAsset", "GET", "/app.1a2b3c4d.js", 200, "hashed", "public, max-age=31536000, immutable", false},
		{"PlainFile", "GET", "/logo.png", 200, "logo", "public, max-age=604800", false},
		{"NestedFile", "GET", "/assets/sub/dir.txt", 200, "nested", "public, max-age=604800", false},
		{"Root", "GET", "/", 200, index, "no-cache", true},
		{"IndexByName", "GET", "/index.html", 200, index, "no-cache", true},
		{"ClientRoute", "GET", "/setting?tab=personal", 200, index, "no-cache", true},
		{"DeepClientRoute", "GET", "/user/reset", 200, index, "no-cache", true},
		{"AssetsDirectory", "GET", "/assets/", 404, `"message":"Invalid URL (GET /assets/)"`, "", false},
		{"MissingAsset", "GET", "/assets/nope.js", 404, `"type":"invalid_request_error"`, "", false},
		{"MissingHashedAsset", "GET", "/app.deadbeef.js", 404, "Invalid URL", "", false},
		{"Traversal", "GET", "/../../etc/passwd", 200, index, "no-cache", true},
		{"Head", "HEAD", "/token", 200, "", "no-cache", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ApiScenario{Method: tt.method, URL: tt.path, WantStatus: tt.status, WantContains: []string{tt.body}}.Test(t, ts)
			if got := r.Header.Get("Cache-Control"); got != tt.cache {
				t.Errorf("Cache-Control = %q, want %q", got, tt.cache)
			}
			csp := r.Header.Get("Content-Security-Policy")
			if tt.csp && (!strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "object-src 'none'")) {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
			if r.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no X-Content-Type-Options: nosniff")
			}
			if tt.body == index && !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
				t.Errorf("index Content-Type = %q", r.Header.Get("Content-Type"))
			}
		})
	}
	ApiScenario{Method: "POST", URL: "/setting", WantStatus: http.StatusMethodNotAllowed}.Test(t, ts)
}

func TestStaticUI_NotBuilt(t *testing.T) {
	t.Parallel()
	for name, ui := range map[string]fstest.MapFS{"Empty": {}, "Nil": nil} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ts := MustStartServer(t, func(c *api.Config) {
				if ui == nil {
					c.UI = nil
				} else {
					c.UI = ui
				}
			})
			r := ApiScenario{URL: "/", WantStatus: http.StatusServiceUnavailable, WantContains: []string{"not built"}}.Test(t, ts)
			if r.Header.Get("Cache-Control") != "no-cache" {
				t.Errorf("Cache-Control = %q", r.Header.Get("Cache-Control"))
			}
			// The API works without the console.
			ApiScenario{URL: "/api/status", WantStatus: 200}.Test(t, ts)
		})
	}
}

func TestBackup(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	runScenarios(t, ts, []ApiScenario{
		{Name: "Guest", URL: "/api/backup", WantStatus: 401},
		{Name: "User", URL: "/api/backup", As: "user", WantStatus: 403},
		{Name: "Admin", URL: "/api/backup", As: "admin", WantStatus: 403, WantContains: []string{msg(msgNoPermission)}},
	})

	r := ApiScenario{URL: "/api/backup", As: "root", WantStatus: 200}.Test(t, ts)
	if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="gateway-`) || !strings.HasSuffix(cd, `.db"`) {
		t.Errorf("Content-Disposition = %q", cd)
	}
	if r.ContentLength != int64(len(r.Body)) || len(r.Body) == 0 {
		t.Errorf("Content-Length %d, body %d bytes", r.ContentLength, len(r.Body))
	}
	path := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(path, r.Body, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("bolt.Open(backup): %v", err)
	}
	defer db.Close()
	var users int
	var names []string
	if err := db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("users"))
		if b == nil {
			t.Error("backup has no users bucket")
			return nil
		}
		users = b.Stats().KeyN
		return tx.Bucket([]byte("idx_user_by_username")).ForEach(func(k, _ []byte) error {
			names = append(names, string(k))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if users != len(fixture.IDs) {
		t.Errorf("backup holds %d users, want %d (names %v)", users, len(fixture.IDs), names)
	}

	// A copy that fails before anything is sent (here its directory is
	// gone; a full disk does the same) answers an error status, so that a
	// scripted download fails instead of keeping an empty file.
	if err := os.RemoveAll(filepath.Dir(ts.Store.Path())); err != nil {
		t.Fatal(err)
	}
	r = ApiScenario{URL: "/api/backup", As: "root", WantStatus: 500, WantContains: []string{msg("Internal error.")}}.Test(t, ts)
	if cd := r.Header.Get("Content-Disposition"); cd != "" {
		t.Errorf("a failed backup is offered as a download: %q", cd)
	}
}

// The console's bundles (about a megabyte of JavaScript and CSS) go out
// gzip-compressed to a browser that accepts it, with Vary so that a cache
// keeps both forms apart; a client that does not ask gets the file as is.
func TestStaticUI_Compressed(t *testing.T) {
	t.Parallel()
	js := strings.Repeat("export const x = 'console bundle';\n", 4000)
	ts := MustStartServer(t, func(c *api.Config) {
		c.UI = fstest.MapFS{
			"index.html":     {Data: []byte("console index")},
			"ui.1a2b3c4d.js": {Data: []byte(js)},
			"logo.png":       {Data: []byte("logo")},
		}
	})
	get := func(enc string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", ts.URL+"/ui.1a2b3c4d.js", nil)
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	resp, body := get("gzip, deflate, br")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("status %d, Content-Encoding %q, %d bytes: want a gzip answer", resp.StatusCode, resp.Header.Get("Content-Encoding"), len(body))
	}
	if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
		t.Errorf("Vary = %q", resp.Header.Get("Vary"))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("Content-Type = %q", ct)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if string(plain) != js || len(body) >= len(js)/10 {
		t.Errorf("decoded %d bytes (want %d) from %d", len(plain), len(js), len(body))
	}
	resp, body = get("identity")
	if resp.Header.Get("Content-Encoding") != "" || string(body) != js {
		t.Errorf("identity: Content-Encoding %q, %d bytes", resp.Header.Get("Content-Encoding"), len(body))
	}
	resp, _ = get("gzip;q=0")
	if resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
}
