package relay

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gateway/egress"
)

// A channel test or model fetch that got no answer says why in words,
// without Go's error chain or the gateway's own DNS server.
func TestDescribeTransport(t *testing.T) {
	t.Parallel()
	_, refused := net.Dial("tcp", "127.0.0.1:1")
	req, _ := http.NewRequest("GET", "http://127.0.0.1:1/", nil)
	req.Header["Authorization"] = []string{"Bearer sk-a\nb"}
	_, badHeader := http.DefaultClient.Do(req)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no such host", &url.Error{Op: "Get", URL: "https://api.example.invalid/v1/models",
			Err: &net.OpError{Op: "dial", Err: &net.DNSError{Name: "api.example.invalid", Server: "10.255.255.53:53", Err: "no such host", IsNotFound: true}}},
			"请求上游失败：无法解析上游域名 api.example.invalid"},
		{"refused", &url.Error{Op: "Post", URL: "http://127.0.0.1:1/", Err: refused}, "请求上游失败：上游拒绝连接"},
		{"blocked", &url.Error{Op: "Post", URL: "http://10.0.0.1/", Err: &egress.BlockedError{Host: "10.0.0.1"}}, "请求上游失败：目标地址 10.0.0.1 不允许访问"},
		{"timeout", &url.Error{Op: "Post", URL: "http://x/", Err: context.DeadlineExceeded}, "请求上游失败：连接上游超时"},
		{"header", badHeader, "请求上游失败：渠道的密钥或组织中有不能放进请求头的字符"},
	} {
		got := transportError{tc.err}.Error()
		if !strings.HasPrefix(got, tc.want) || strings.Contains(got, "10.255.255.53") {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
