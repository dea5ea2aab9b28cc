// Command hop is a do-nothing HTTP forwarder: every request goes to --to
// as it came and the answer comes back as it came, flushed as it arrives.
// Measured between the load tool and the fake upstream it shows what one
// extra process hop costs on the machine by itself, the part of the
// gateway's added latency that no gateway code can remove.
package main

import (
	"bytes"
	"flag"
	"io"
	"log"
	"net/http"
	"strings"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9200", "listen address")
	to := flag.String("to", "http://127.0.0.1:9100", "where requests go")
	flag.Parse()
	target := strings.TrimRight(*to, "/")
	client := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1024, DisableCompression: true}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for k, v := range r.Header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		flusher, _ := w.(http.Flusher)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				if flusher != nil {
					flusher.Flush()
				}
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				return
			}
		}
	})
	log.Fatal(http.ListenAndServe(*addr, h))
}
