package relay_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"gateway/relay/relaytest"
	"gateway/store"
)

// BenchmarkRelayChat measures one non-stream chat through the whole HTTP
// front (client → gateway → fake upstream → charge → client), with the
// store's fsync off and on, one call at a time and many at once.
func BenchmarkRelayChat(b *testing.B) {
	for _, bc := range []struct {
		name    string
		durable bool
	}{{"nosync", false}, {"durable", true}} {
		b.Run(bc.name, func(b *testing.B) {
			// Enough idle connections on both hops that the parallel runs
			// measure the gateway rather than TCP connection churn.
			upstreamClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			g := MustOpenGateway(b, gatewayConfig{Durable: bc.durable, UpstreamClient: upstreamClient})
			answer, _ := json.Marshal(relaytest.Completion(ratioModel, "Hello!", relaytest.NewUsage(12, 3)))
			up := relaytest.NewChat(b, "sk-bench", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write(answer)
			})
			g.MustCreateChannel(b, up, ratioModel, nil)
			_, key := g.MustCreateToken(b, "alice", store.Token{})
			g.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			body := `{"model":"test-model","messages":[{"role":"user","content":"Say hello"}]}`
			call := func() {
				res, err := g.do(context.Background(), key, "/v1/chat/completions", body)
				if err != nil || res.Status != 200 {
					b.Errorf("call: %v %d %s", err, res.Status, res.Body)
				}
			}
			call() // warm the tokenizer and the connections
			b.Run("serial", func(b *testing.B) {
				for b.Loop() {
					call()
				}
			})
			b.Run("parallel", func(b *testing.B) {
				b.SetParallelism(16)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						call()
					}
				})
			})
		})
	}
}
