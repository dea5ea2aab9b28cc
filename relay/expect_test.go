package relay_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"gateway/relay"
	"gateway/store"
)

// A client that declares a body over the limit and waits for
// "100 Continue" (curl and the SDKs do for large uploads) is refused with
// 413 at once: the gateway does not ask for the upload only to throw it away.
func TestBodyOverTheLimit_Declared(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Relay: relay.Config{MaxBodyBytes: 1 << 10}})
	_, key := g.MustCreateToken(t, "alice", store.Token{Name: "big", UnlimitedQuota: true})
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", key, 40<<20)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer without the body: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "request_too_large") {
		t.Fatalf("status %d (%s), want 413 request_too_large before the upload", resp.StatusCode, body)
	}
}
