package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// MustStartServer starts an httptest server on 127.0.0.1 that counts its
// hits and answers with handler (or "ok" when handler is nil).
func MustStartServer(tb testing.TB, handler http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	tb.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if handler != nil {
			handler(w, r)
			return
		}
		io.WriteString(w, "ok")
	}))
	tb.Cleanup(srv.Close)
	return srv, &hits
}

// get fetches rawURL with c and returns the body.
func get(tb testing.TB, c *Client, rawURL string) (string, error) {
	tb.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, rawURL, nil)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// requireBlocked fails unless err carries a *BlockedError naming host.
func requireBlocked(tb testing.TB, err error, host string) {
	tb.Helper()
	var be *BlockedError
	if !errors.As(err, &be) {
		tb.Fatalf("err = %v, want *BlockedError", err)
	}
	if be.Host != host {
		tb.Fatalf("BlockedError.Host = %q, want %q", be.Host, host)
	}
	if want := fmt.Sprintf("egress: destination %q is not allowed (an administrator can allow it with the EgressAllowedHosts option or --allow-private-upstreams)", host); be.Error() != want {
		tb.Fatalf("message = %q, want %q", be.Error(), want)
	}
}

// fakeLookup answers name lookups from a fixed table.
func fakeLookup(table map[string][]string) func(context.Context, string, string) ([]netip.Addr, error) {
	return func(_ context.Context, _, host string) ([]netip.Addr, error) {
		ss, ok := table[host]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out, nil
	}
}

func TestIsBlockedAddr(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		addr string
		want bool
	}{
		// IPv4 public
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"100.63.255.255", false},
		{"100.128.0.0", false},
		{"172.15.255.255", false},
		{"172.32.0.1", false},
		{"192.169.0.1", false},
		{"203.0.113.10", false},
		// IPv4 blocked
		{"127.0.0.1", true},
		{"127.1.2.3", true},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"10.0.0.1", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.168.1.1", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"169.254.0.1", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"255.255.255.255", true},
		// metadata
		{"169.254.169.254", true},
		{"169.254.170.2", true},
		{"100.100.100.200", true},
		{"192.0.0.192", true},
		{"fd00:ec2::254", true},
		{"169.254.170.23", true},
		{"fd00:ec2::23", true},
		{"168.63.129.16", true},
		// IPv6 public
		{"2001:4860:4860::8888", false},
		{"2606:4700:4700::1111", false},
		// IPv6 blocked
		{"::1", true},
		{"::", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"febf:ffff::1", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"ff02::1", true},
		{"fec0::1", true},
		// IPv4-mapped, IPv4-compatible and NAT64 forms
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.1.2.3", true},
		{"::ffff:169.254.169.254", true},
		{"::ffff:8.8.8.8", false},
		{"::127.0.0.1", true},
		{"64:ff9b::7f00:1", true},
		{"64:ff9b::a9fe:a9fe", true},
		{"64:ff9b::808:808", false},
		{"64:ff9b:1::1", true},
		{"::ffff:0:7f00:1", true},
		{"::ffff:0:808:808", false},
		{"2002:7f00:1::", true},
		{"2002:a9fe:a9fe::1", true},
		{"2002:808:808::1", false},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", true},  // Teredo client 127.0.0.1
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", false}, // Teredo client 8.8.8.8
	}
	for _, s := range scenarios {
		if got := IsBlockedAddr(netip.MustParseAddr(s.addr)); got != s.want {
			t.Errorf("IsBlockedAddr(%s) = %v, want %v", s.addr, got, s.want)
		}
	}
	if !IsBlockedAddr(netip.Addr{}) {
		t.Error("IsBlockedAddr(invalid) = false, want true")
	}
}

func TestIsBlockedName(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name string
		want bool
	}{
		{"localhost", true},
		{"LOCALHOST.", true},
		{"api.localhost", true},
		{"metadata.google.internal", true},
		{"Metadata.Google.Internal.", true},
		{"metadata.goog", true},
		{"api.openai.com", false},
		{"localhost.example.com", false},
		{"notlocalhost", false},
	}
	for _, s := range scenarios {
		if got := IsBlockedName(s.name); got != s.want {
			t.Errorf("IsBlockedName(%q) = %v, want %v", s.name, got, s.want)
		}
	}
}

func TestClient_Loopback(t *testing.T) {
	t.Parallel()
	srv, hits := MustStartServer(t, nil)

	t.Run("RefusedByDefault", func(t *testing.T) {
		_, err := get(t, New(Config{}), srv.URL)
		requireBlocked(t, err, "127.0.0.1")
		if hits.Load() != 0 {
			t.Fatal("blocked request reached the server")
		}
	})
	t.Run("LocalhostNameRefused", func(t *testing.T) {
		u := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
		_, err := get(t, New(Config{}), u)
		requireBlocked(t, err, "localhost")
	})
	t.Run("HTTPClientRefused", func(t *testing.T) {
		_, err := New(Config{}).HTTP().Get(srv.URL)
		requireBlocked(t, err, "127.0.0.1")
	})
	t.Run("AllowPrivate", func(t *testing.T) {
		body, err := get(t, New(Config{AllowPrivate: true}), srv.URL)
		if err != nil || body != "ok" {
			t.Fatalf("got %q, %v; want ok", body, err)
		}
	})
	t.Run("AllowPrivateLocalhostName", func(t *testing.T) {
		u := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
		body, err := get(t, New(Config{AllowPrivate: true}), u)
		if err != nil || body != "ok" {
			t.Fatalf("got %q, %v; want ok", body, err)
		}
	})
}

func TestClient_AllowedHosts(t *testing.T) {
	t.Parallel()
	srv, _ := MustStartServer(t, nil)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	other := "1"
	if port == other {
		other = "2"
	}
	// An entry with a port, or a URL, allows that port only (a URL without
	// one its scheme's); a bare address or prefix allows every port.
	scenarios := []struct {
		name    string
		allowed []string
		wantOK  bool
	}{
		{"IP", []string{"127.0.0.1"}, true},
		{"CIDR", []string{"127.0.0.0/8"}, true},
		{"IPWithPort", []string{"127.0.0.1:" + port}, true},
		{"IPWithOtherPort", []string{"127.0.0.1:" + other}, false},
		{"URL", []string{" http://127.0.0.1:" + port + "/v1 "}, true},
		{"URLWithOtherPort", []string{"http://127.0.0.1:" + other + "/v1"}, false},
		{"URLWithoutPort", []string{"http://127.0.0.1/v1", "https://127.0.0.1"}, false},
		{"URLWithOtherScheme", []string{"ftp://127.0.0.1", "wss://127.0.0.1/"}, false},
		{"PortAndPathWithoutScheme", []string{"127.0.0.1:" + port + "/v1"}, true},
		{"OtherPortAndPathWithoutScheme", []string{"127.0.0.1:" + other + "/v1"}, false},
		{"BracketsAndPathWithoutScheme", []string{"[::ffff:127.0.0.1]/v1"}, true},
		{"OtherIP", []string{"127.0.0.2"}, false},
		{"OtherCIDR", []string{"10.0.0.0/8", "192.168.0.0/16"}, false},
		{"Garbage", []string{"", "not a host/", "::::", "127.0.0.1:0", "127.0.0.1:99999"}, false},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			c := New(Config{AllowedHosts: func() []string { return s.allowed }})
			body, err := get(t, c, srv.URL)
			if !s.wantOK {
				requireBlocked(t, err, "127.0.0.1")
				return
			}
			if err != nil || body != "ok" {
				t.Fatalf("got %q, %v; want ok", body, err)
			}
		})
	}

	t.Run("ChangesApply", func(t *testing.T) {
		var list atomic.Value
		list.Store([]string{"127.0.0.1"})
		c := New(Config{AllowedHosts: func() []string { return list.Load().([]string) }})
		if _, err := get(t, c, srv.URL); err != nil {
			t.Fatal(err)
		}
		list.Store([]string{})
		c.CloseIdleConnections()
		_, err := get(t, c, srv.URL)
		requireBlocked(t, err, "127.0.0.1")
	})
}

func TestClient_Redirect(t *testing.T) {
	t.Parallel()
	var self string
	srv, hits := MustStartServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/private":
			http.Redirect(w, r, "http://10.0.0.1/admin", http.StatusFound)
		case "/localhost":
			http.Redirect(w, r, strings.Replace(self, "127.0.0.1", "localhost", 1)+"/final", http.StatusFound)
		case "/file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/hop":
			http.Redirect(w, r, "/final", http.StatusFound)
		default:
			io.WriteString(w, "final")
		}
	})
	self = srv.URL
	c := New(Config{AllowedHosts: func() []string { return []string{"127.0.0.1"} }})

	t.Run("ToMetadataRefused", func(t *testing.T) {
		_, err := get(t, c, srv.URL+"/metadata")
		requireBlocked(t, err, "169.254.169.254")
	})
	t.Run("ToPrivateRefused", func(t *testing.T) {
		_, err := get(t, c, srv.URL+"/private")
		requireBlocked(t, err, "10.0.0.1")
	})
	t.Run("ToLocalhostNameRefused", func(t *testing.T) {
		before := hits.Load()
		_, err := get(t, c, srv.URL+"/localhost")
		requireBlocked(t, err, "localhost")
		if hits.Load() != before+1 {
			t.Fatal("redirect target was reached")
		}
	})
	t.Run("ToFileSchemeRefused", func(t *testing.T) {
		_, err := get(t, c, srv.URL+"/file")
		if !errors.Is(err, ErrScheme) {
			t.Fatalf("err = %v, want ErrScheme", err)
		}
	})
	t.Run("TooMany", func(t *testing.T) {
		before := hits.Load()
		_, err := get(t, c, srv.URL+"/loop")
		if err == nil || !strings.Contains(err.Error(), "stopped after 5 redirects") {
			t.Fatalf("err = %v, want redirect limit", err)
		}
		if n := hits.Load() - before; n != MaxRedirects+1 {
			t.Fatalf("server hit %d times, want %d", n, MaxRedirects+1)
		}
	})
	t.Run("AllowedFollowed", func(t *testing.T) {
		body, err := get(t, c, srv.URL+"/hop")
		if err != nil || body != "final" {
			t.Fatalf("got %q, %v; want final", body, err)
		}
	})
}

func TestClient_Scheme(t *testing.T) {
	t.Parallel()
	c := New(Config{AllowPrivate: true})
	for _, u := range []string{"file:///etc/passwd", "ftp://example.com/x", "gopher://127.0.0.1:70/", "unix:///var/run/docker.sock"} {
		if _, err := get(t, c, u); !errors.Is(err, ErrScheme) {
			t.Errorf("get(%q) err = %v, want ErrScheme", u, err)
		}
		if err := c.Check(context.Background(), u); !errors.Is(err, ErrScheme) {
			t.Errorf("Check(%q) err = %v, want ErrScheme", u, err)
		}
	}
}

func TestClient_Metadata(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("BlockedUnderAllowPrivate", func(t *testing.T) {
		c := New(Config{AllowPrivate: true})
		for _, u := range []string{
			"http://169.254.169.254/latest/meta-data/",
			"http://[fd00:ec2::254]/",
			"http://[::ffff:169.254.169.254]/",
			"http://169.254.170.23/v1/credentials",
			"http://168.63.129.16/machine?comp=goalstate",
			"http://[2002:a9fe:a9fe::]/",
			"http://metadata.google.internal/computeMetadata/v1/",
		} {
			err := c.Check(ctx, u)
			var be *BlockedError
			if !errors.As(err, &be) {
				t.Errorf("Check(%q) err = %v, want *BlockedError", u, err)
			}
		}
	})
	t.Run("AllowedExplicitly", func(t *testing.T) {
		c := New(Config{AllowedHosts: func() []string { return []string{"169.254.169.254"} }})
		if err := c.Check(ctx, "http://169.254.169.254/"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestClient_DNS(t *testing.T) {
	t.Parallel()
	srv, _ := MustStartServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Host)
	})
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	lookup := fakeLookup(map[string][]string{
		"public.test":  {"203.0.113.10"},
		"private.test": {"10.0.0.1"},
		"mixed.test":   {"203.0.113.10", "127.0.0.1"},
		"mapped.test":  {"::ffff:127.0.0.1"},
		"ollama.lan":   {"127.0.0.1"},
		"api.corp.lan": {"127.0.0.1"},
	})
	newTestClient := func(cfg Config) *Client {
		return newClient(&guard{cfg: cfg, lookup: lookup})
	}
	ctx := context.Background()

	t.Run("AnyBlockedAddressRefuses", func(t *testing.T) {
		c := newTestClient(Config{})
		if err := c.Check(ctx, "https://public.test/"); err != nil {
			t.Fatalf("public.test: %v", err)
		}
		for _, host := range []string{"private.test", "mixed.test", "mapped.test"} {
			_, err := get(t, c, "http://"+host+":"+port+"/")
			requireBlocked(t, err, host)
			if strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "10.0.0.1") {
				t.Fatalf("error leaks the resolved address: %v", err)
			}
		}
	})
	t.Run("UnknownHost", func(t *testing.T) {
		err := newTestClient(Config{}).Check(ctx, "http://nowhere.test/")
		var be *BlockedError
		if err == nil || errors.As(err, &be) {
			t.Fatalf("err = %v, want a resolve error", err)
		}
	})
	t.Run("AllowedNameOnItsPortOnly", func(t *testing.T) {
		c := newTestClient(Config{AllowedHosts: func() []string { return []string{"ollama.lan:" + port, "*.corp.lan:1"} }})
		if _, err := get(t, c, "http://ollama.lan:"+port+"/"); err != nil {
			t.Fatal(err)
		}
		_, err := get(t, c, "http://api.corp.lan:"+port+"/")
		requireBlocked(t, err, "api.corp.lan")
		if err := c.Check(ctx, "http://ollama.lan:"+port+"/v1"); err != nil {
			t.Fatalf("Check on the allowed port: %v", err)
		}
		requireBlocked(t, c.Check(ctx, "http://ollama.lan/v1"), "ollama.lan")
	})
	t.Run("AllowedNameDialsCheckedAddress", func(t *testing.T) {
		c := newTestClient(Config{AllowedHosts: func() []string { return []string{"ollama.lan", "*.corp.lan"} }})
		for _, host := range []string{"ollama.lan", "api.corp.lan"} {
			body, err := get(t, c, "http://"+host+":"+port+"/")
			if err != nil {
				t.Fatal(err)
			}
			// The server at 127.0.0.1 saw the original name as Host.
			if want := host + ":" + port; body != want {
				t.Fatalf("Host = %q, want %q", body, want)
			}
		}
	})
}

func TestClient_Timeout(t *testing.T) {
	t.Parallel()
	srv, _ := MustStartServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	c := New(Config{AllowPrivate: true, Timeout: 100 * time.Millisecond})
	start := time.Now()
	_, err := get(t, c, srv.URL)
	if err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") {
		t.Fatalf("err = %v, want response header timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestResponseLimit(t *testing.T) {
	t.Parallel()
	payload := strings.Repeat("x", 100)
	srv, _ := MustStartServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("chunked") != "" {
			w.(http.Flusher).Flush() // no Content-Length
		}
		io.WriteString(w, payload)
	})
	fetch := func(t *testing.T, c *Client, path string) *http.Response {
		t.Helper()
		resp, err := c.HTTP().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	scenarios := []struct {
		name    string
		path    string
		limit   int64
		wantErr bool
	}{
		{"UnderLimit", "/", 200, false},
		{"AtLimit", "/", 100, false},
		{"OverLimitDeclared", "/", 50, true},
		{"OverLimitChunked", "/?chunked=1", 50, true},
		{"AtLimitChunked", "/?chunked=1", 100, false},
		{"NoLimit", "/", 0, false},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			resp := fetch(t, New(Config{AllowPrivate: true, MaxResponseBytes: s.limit}), s.path)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if s.wantErr {
				if !errors.Is(err, ErrResponseTooLarge) {
					t.Fatalf("err = %v, want ErrResponseTooLarge", err)
				}
				if !strings.Contains(err.Error(), fmt.Sprintf("limit %d bytes", s.limit)) {
					t.Fatalf("message %q does not state the limit", err)
				}
				return
			}
			if err != nil || string(b) != payload {
				t.Fatalf("got %d bytes, %v", len(b), err)
			}
		})
	}

	t.Run("ConfigMaxResponseBytes", func(t *testing.T) {
		c := New(Config{AllowPrivate: true, MaxResponseBytes: 64})
		_, err := io.ReadAll(fetch(t, c, "/?chunked=1").Body)
		if !errors.Is(err, ErrResponseTooLarge) {
			t.Fatalf("err = %v, want ErrResponseTooLarge", err)
		}
		c = New(Config{AllowPrivate: true, MaxResponseBytes: 100})
		b, err := io.ReadAll(fetch(t, c, "/?chunked=1").Body)
		if err != nil || len(b) != 100 {
			t.Fatalf("got %d bytes, %v", len(b), err)
		}
	})

	t.Run("LimitedBodyReturnsPrefix", func(t *testing.T) {
		rc := LimitedBody(io.NopCloser(strings.NewReader(payload)), 10)
		b, err := io.ReadAll(rc)
		if !errors.Is(err, ErrResponseTooLarge) || len(b) != 10 {
			t.Fatalf("got %d bytes, %v", len(b), err)
		}
		if _, err := rc.Read(make([]byte, 1)); !errors.Is(err, ErrResponseTooLarge) {
			t.Fatalf("read after limit: %v", err)
		}
	})
}

func TestTransport(t *testing.T) {
	t.Parallel()
	tr := newTransport(&guard{cfg: Config{Timeout: 3 * time.Second}, lookup: net.DefaultResolver.LookupNetIP})
	if tr.Proxy != nil {
		t.Error("Proxy is set")
	}
	if tr.MaxIdleConnsPerHost != 256 || tr.IdleConnTimeout != 90*time.Second || !tr.ForceAttemptHTTP2 {
		t.Errorf("pooling = %d / %v / h2 %v", tr.MaxIdleConnsPerHost, tr.IdleConnTimeout, tr.ForceAttemptHTTP2)
	}
	if tr.TLSClientConfig.InsecureSkipVerify {
		t.Error("TLS verification disabled")
	}
	if tr.ResponseHeaderTimeout != 3*time.Second || tr.TLSHandshakeTimeout != 3*time.Second {
		t.Errorf("timeouts = %v / %v", tr.ResponseHeaderTimeout, tr.TLSHandshakeTimeout)
	}
	srv, _ := MustStartServer(t, nil)
	_, err := (&http.Client{Transport: tr}).Get(srv.URL)
	requireBlocked(t, err, "127.0.0.1")
	if New(Config{}).HTTP().Timeout != 0 {
		t.Error("HTTP() has a global Timeout")
	}
}

// A request marked PublicOnly reaches public addresses only, even on a
// client whose allowances let the administrator's URLs reach the host, and
// even after such a URL left a pooled connection to it.
func TestClient_PublicOnly(t *testing.T) {
	t.Parallel()
	srv, hits := MustStartServer(t, nil)
	for name, c := range map[string]*Client{
		"AllowPrivate": New(Config{AllowPrivate: true}),
		"AllowedHosts": New(Config{AllowedHosts: func() []string { return []string{"127.0.0.1"} }}),
	} {
		t.Run(name, func(t *testing.T) {
			before := hits.Load()
			// The administrator's request opens (and pools) a connection.
			if body, err := get(t, c, srv.URL); err != nil || body != "ok" {
				t.Fatalf("got %q, %v; want ok", body, err)
			}
			req, err := http.NewRequestWithContext(PublicOnly(context.Background()), http.MethodGet, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.HTTP().Do(req)
			requireBlocked(t, err, "127.0.0.1")
			if hits.Load() != before+1 {
				t.Fatalf("the public-only request reached the server (%d hits)", hits.Load()-before)
			}
		})
	}
}

// A provider's redirect to another host never carries the channel key:
// every credential header is dropped (Go itself drops only Authorization);
// a redirect on the same host keeps them.
func TestClient_RedirectDropsCredentials(t *testing.T) {
	t.Parallel()
	seen := make(chan http.Header, 4)
	other, _ := MustStartServer(t, func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Clone()
		io.WriteString(w, "elsewhere")
	})
	origin, _ := MustStartServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
		case "/stay":
			http.Redirect(w, r, "/final", http.StatusTemporaryRedirect)
		default:
			seen <- r.Header.Clone()
			io.WriteString(w, "here")
		}
	})
	c := New(Config{AllowedHosts: func() []string { return []string{"127.0.0.1"} }})
	send := func(path string) http.Header {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, origin.URL+path, nil)
		req.Header.Set("api-key", "AZURE-SECRET")
		req.Header.Set("x-api-key", "ANTHROPIC-SECRET")
		req.Header.Set("Authorization", "Bearer sk-secret")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return <-seen
	}
	if h := send("/away"); h.Get("api-key") != "" || h.Get("x-api-key") != "" || h.Get("Authorization") != "" {
		t.Fatalf("credentials followed a redirect to another host: %v", h)
	}
	if h := send("/stay"); h.Get("api-key") != "AZURE-SECRET" || h.Get("Authorization") != "Bearer sk-secret" {
		t.Fatalf("credentials lost on a redirect within the host: %v", h)
	}
}

// A redirect from https to plain http on the same host loses the
// credentials too: the key would cross the network in clear.
func TestCheckRedirectDowngradeDropsCredentials(t *testing.T) {
	t.Parallel()
	first, _ := http.NewRequest(http.MethodGet, "https://api.example.com/v1/models", nil)
	for _, tc := range []struct {
		to   string
		keep bool
	}{
		{"http://api.example.com/v1/models", false},
		{"https://api.example.com/v2/models", true},
	} {
		req, _ := http.NewRequest(http.MethodGet, tc.to, nil)
		req.Header.Set("Authorization", "Bearer sk-secret")
		req.Header.Set("api-key", "AZURE-SECRET")
		if err := checkRedirect(req, []*http.Request{first}); err != nil {
			t.Fatal(err)
		}
		if kept := req.Header.Get("Authorization") != "" && req.Header.Get("api-key") != ""; kept != tc.keep {
			t.Errorf("redirect to %s: credentials kept %v, want %v", tc.to, kept, tc.keep)
		}
	}
}

// A connection in use when the allowances change (CloseIdleConnections)
// is not used again once its exchange ends, even though other requests
// ran in between: a host taken off EgressAllowedHosts is never reached
// again over a connection opened before. The bodies are too large for the
// inline path, so this is http.Transport's pool.
func TestClient_AllowedHostsChangeReachesBusyConnections(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, hits := MustStartServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "one;")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/wait" {
			<-release
		}
		io.WriteString(w, "two")
	})
	var list atomic.Value
	list.Store([]string{"127.0.0.1"})
	c := New(Config{AllowedHosts: func() []string { return list.Load().([]string) }})
	post := func(path string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(strings.Repeat("x", 64<<10+1)))
		return c.Do(req)
	}
	resp, err := post("/wait")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	// The host is taken off the list while the call is still running; a
	// request made meanwhile is refused.
	list.Store([]string{})
	c.CloseIdleConnections()
	_, err = post("/")
	requireBlocked(t, err, "127.0.0.1")
	close(release)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	before := hits.Load()
	r, err := post("/")
	if err == nil {
		r.Body.Close()
		t.Fatalf("a host taken off the list was reached again over a kept connection (%d hits)", hits.Load()-before)
	}
	requireBlocked(t, err, "127.0.0.1")
}

// A POST answered 301, 302 or 303 is not resent as a GET without its body
// (the upstream would answer a request nobody made): the redirect is
// refused with its status and target. 307 and 308 keep the method and the
// body and are followed, as is any redirect of a GET.
func TestClient_RedirectThatDropsTheBodyIsRefused(t *testing.T) {
	t.Parallel()
	srv, _ := MustStartServer(t, func(w http.ResponseWriter, r *http.Request) {
		if code, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r")); err == nil {
			http.Redirect(w, r, "/final", code)
			return
		}
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s", r.Method, body)
	})
	c := New(Config{AllowedHosts: func() []string { return []string{"127.0.0.1"} }})
	send := func(method string, code int) (string, error) {
		t.Helper()
		req, _ := http.NewRequest(method, fmt.Sprintf("%s/r%d", srv.URL, code), strings.NewReader(`{"model":"m"}`))
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), nil
	}
	for _, code := range []int{301, 302, 303} {
		_, err := send(http.MethodPost, code)
		var re *RedirectError
		if !errors.As(err, &re) || re.Status != code || re.Method != http.MethodPost || !strings.HasSuffix(re.Location, "/final") {
			t.Errorf("POST answered %d: err %v, want a RedirectError", code, err)
		}
	}
	for _, code := range []int{307, 308} {
		if got, err := send(http.MethodPost, code); err != nil || got != `POST {"model":"m"}` {
			t.Errorf("POST answered %d: %q, %v; want it followed with its body", code, got, err)
		}
	}
	if got, err := send(http.MethodGet, 301); err != nil || !strings.HasPrefix(got, "GET") {
		t.Errorf("GET answered 301: %q, %v; want it followed", got, err)
	}
}
