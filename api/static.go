package api

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"
)

// hashedAsset matches Parcel's content-hashed file names (name.1a2b3c4d.js).
var hashedAsset = regexp.MustCompile(`\.[0-9a-f]{8,}\.[a-z0-9]+$`)

// contentSecurityPolicy is sent with every console page. Cloudflare's
// Turnstile script and Telegram's login widget are always allowed: the
// console is one page that loads them when root switches either login on,
// and a policy fixed at the switch's old value would block them in every tab
// already open until a reload. The Telegram widget is used with
// data-auth-url, never data-onauth, which would need 'unsafe-eval'.
func (s *Server) contentSecurityPolicy() string {
	return "default-src 'self'; script-src 'self' https://challenges.cloudflare.com https://telegram.org; " +
		"style-src 'self' 'unsafe-inline'; img-src 'self' data: https: http:; font-src 'self' data:; connect-src 'self'; " +
		"frame-src https: http:; object-src 'none'; base-uri 'self'; form-action 'self' https: http:"
}

// uiHandler serves the embedded console: files as they are, with long
// caching for content-hashed assets, and index.html (no-cache) for every
// other path so client-side routes work on reload.
func (s *Server) uiHandler() http.Handler {
	fsys := s.cfg.UI
	var index []byte
	if fsys != nil {
		index, _ = fs.ReadFile(fsys, "index.html")
	}
	start := time.Now()
	var gzipped sync.Map // name → []byte, the gzip form of a compressible file
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		get := r.Method == http.MethodGet || r.Method == http.MethodHead
		if p := r.URL.Path; strings.HasPrefix(p, "/v1") || strings.HasPrefix(p, "/api") || (!get && strings.HasPrefix(p, "/assets")) {
			// Unknown /v1*, /api* and /assets* paths (/v1beta/models
			// included) are 404s for the client that built them (S §1),
			// not the console's page.
			writeNotFoundURL(w, r)
			return
		}
		if !get {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name != "" && name != "index.html" && fsys != nil {
			if f, err := fsys.Open(name); err == nil {
				st, serr := f.Stat()
				if serr == nil && !st.IsDir() {
					defer f.Close()
					if hashedAsset.MatchString(name) {
						h.Set("Cache-Control", "public, max-age=31536000, immutable")
					} else {
						h.Set("Cache-Control", "public, max-age=604800")
					}
					if compressible(name, st.Size()) {
						// The bundles are a megabyte of text: send them
						// compressed (once, then kept) to a browser that
						// takes gzip.
						h.Add("Vary", "Accept-Encoding")
						if acceptsGzip(r) {
							z, ok := gzipped.Load(name)
							if !ok {
								z = gzipFile(f)
								gzipped.Store(name, z)
							}
							if z := z.([]byte); z != nil {
								h.Set("Content-Encoding", "gzip")
								http.ServeContent(w, r, name, st.ModTime(), bytes.NewReader(z))
								return
							}
						}
						if rs, ok := f.(io.Seeker); ok {
							rs.Seek(0, io.SeekStart)
						}
					}
					if rs, ok := f.(io.ReadSeeker); ok {
						http.ServeContent(w, r, name, st.ModTime(), rs)
						return
					}
					data, _ := io.ReadAll(f)
					http.ServeContent(w, r, name, start, bytes.NewReader(data))
					return
				}
				f.Close()
			}
		}
		if strings.HasPrefix(name, "assets") || hashedAsset.MatchString(name) {
			// A file that is not there (an old page asking for a chunk a
			// newer build replaced) is a 404 (S §1), not the console's page
			// served as a script.
			writeNotFoundURL(w, r)
			return
		}
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Security-Policy", s.contentSecurityPolicy())
		h.Set("X-Frame-Options", "SAMEORIGIN")
		if index == nil {
			h.Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "The console is not built into this binary. Run `make build` (needs Node) and start it again; the API under /api and /v1 works without it.\n")
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		http.ServeContent(w, r, "index.html", start, bytes.NewReader(index))
	})
}

// compressible tells the console's text files worth compressing.
func compressible(name string, size int64) bool {
	if size < 1024 {
		return false
	}
	switch path.Ext(name) {
	case ".js", ".mjs", ".css", ".html", ".svg", ".json", ".map", ".txt", ".wasm":
		return true
	}
	return false
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip
// (gzip or *, with a quality above 0).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if coding != "gzip" && coding != "x-gzip" && coding != "*" {
				continue
			}
			q := strings.ReplaceAll(strings.ToLower(params), " ", "")
			if strings.HasPrefix(q, "q=0") && strings.Trim(strings.TrimPrefix(q, "q=0"), ".0") == "" {
				return false
			}
			return true
		}
	}
	return false
}

// gzipFile compresses f whole; nil when it cannot be read.
func gzipFile(f fs.File) []byte {
	data, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}
