package relay_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"gateway/relay/relaytest"
	"gateway/store"
)

// A stream whose charge cannot be written after its events went out ends
// with a broken connection, not a cleanly ended body: a client that takes
// the end of the body for the end of the answer must not hold an unbilled
// answer as whole.
func TestStream_ChargeFailureAfterStartAborts(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	release := make(chan struct{})
	up := relaytest.NewChat(t, "sk-up", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(ratioModel, "hello"))
		sse.Send(relaytest.FinishChunk(ratioModel, "stop"))
		<-release
		sse.Send(relaytest.UsageChunk(ratioModel, 5, 2))
		sse.Done()
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
	body := `{"model":"` + ratioModel + `","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, g.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	for n := 0; n < 2; {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			n++
		}
	}
	// From here on the charge cannot be written (as after a disk error).
	g.st.Close()
	close(release)
	rest, err := io.ReadAll(rd)
	if err == nil {
		t.Fatalf("the body ended cleanly after a failed charge: %q", rest)
	}
}

// panicAfterBody panics on the read after the upstream's first bytes: a
// bug anywhere once a stream started.
type panicAfterBody struct {
	rc    io.ReadCloser
	reads int
}

func (b *panicAfterBody) Read(p []byte) (int, error) {
	b.reads++
	if b.reads > 1 {
		panic("bug after the stream started")
	}
	return b.rc.Read(p)
}

func (b *panicAfterBody) Close() error { return b.rc.Close() }

type panicAfterTransport struct{}

func (panicAfterTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &panicAfterBody{rc: resp.Body}
	}
	return resp, err
}

// A panic after a stream started cuts the connection (the call is
// refunded) instead of writing an error after the events, which would end
// the body cleanly.
func TestStream_PanicAfterStartAborts(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{UpstreamClient: &http.Client{Transport: panicAfterTransport{}}})
	up := relaytest.NewChat(t, "sk-up", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		sse := relaytest.NewSSE(w)
		sse.Send(relaytest.Chunk(ratioModel, "hello"))
		time.Sleep(50 * time.Millisecond)
		sse.Send(relaytest.FinishChunk(ratioModel, "stop"))
		sse.Done()
	})
	g.MustCreateChannel(t, up, ratioModel, nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 10_000_000})
	before := g.balances(t, "alice", tok.ID)
	res, err := g.do(context.Background(), key, "/v1/chat/completions", streamChat(ratioModel, "hi", false))
	if err == nil {
		t.Fatalf("status %d, body ended cleanly: %q", res.Status, res.Body)
	}
	if after := g.balances(t, "alice", tok.ID); after.UserQuota != before.UserQuota || after.UserUsed != before.UserUsed ||
		after.TokenRemain != before.TokenRemain || after.TokenUsed != before.TokenUsed {
		t.Fatalf("balances %+v after the aborted call, want %+v", after, before)
	}
}
