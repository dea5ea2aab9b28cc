package relay_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	pngenc "image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"gateway/relay/relaytest"
	"gateway/store"
)

// imageLogOther is the part of an image log's other the console reads.
type imageLogOther struct {
	Image   bool   `json:"image"`
	Size    string `json:"size"`
	Quality string `json:"quality"`
	N       int    `json:"n"`
}

// Image generation (S §5.8): priced by model, size, quality and count,
// charged in full after the answer; sizes the model does not make are
// refused before any upstream call.
func TestImageGenerations(t *testing.T) {
	t.Parallel()
	const dalle2Ratio, dalle3Price = 8.0, 0.04
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{
		"ModelRatio": `{"dall-e-2":8}`,
		"ModelPrice": `{"dall-e-3":0.04}`,
	}})
	var sizes []string
	up := relaytest.New(t, "sk-up", relaytest.Routes{"POST /v1/images/generations": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		size, _ := req.JSON["size"].(string)
		sizes = append(sizes, size)
		relaytest.WriteJSON(w, 200, map[string]any{"created": 1, "data": []any{map[string]any{"url": "https://images.example/1.png"}}})
	}})
	ch := g.MustCreateChannel(t, up, "dall-e-2,dall-e-3", nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 100_000_000})

	for _, tc := range []struct {
		name string
		body map[string]any
		want int64
		// other is what the log's other adds for the console, which
		// cannot price an image from its zero token counts.
		other imageLogOther
	}{
		{"dall-e-2 by default, two at 1024x1024", map[string]any{"prompt": "a cat", "n": 2},
			int64(0.0025 * dalle2Ratio * 1 * 2 * quotaPerUnit), imageLogOther{true, "1024x1024", "", 2}},
		{"dall-e-2 small", map[string]any{"model": "dall-e-2", "prompt": "a cat", "size": "256x256"},
			int64(0.0025 * dalle2Ratio * 0.4 * quotaPerUnit), imageLogOther{true, "256x256", "", 1}},
		{"dall-e-3 hd wide", map[string]any{"model": "dall-e-3", "prompt": "a cat", "size": "1792x1024", "quality": "hd"},
			int64(dalle3Price * 2 * 1.5 * quotaPerUnit), imageLogOther{true, "1792x1024", "hd", 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := g.balances(t, "alice", tok.ID, ch)
			res := g.post(t, key, "/v1/images/generations", tc.body)
			if res.Status != 200 {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			after := g.balances(t, "alice", tok.ID, ch)
			if got := after.UserUsed - before.UserUsed; got != tc.want || after.TokenUsed-before.TokenUsed != tc.want || after.Channels[ch.ID]-before.Channels[ch.ID] != tc.want {
				t.Fatalf("charged user %d token %d channel %d, want %d", got, after.TokenUsed-before.TokenUsed, after.Channels[ch.ID]-before.Channels[ch.ID], tc.want)
			}
			l := g.consumeLogs(t, "alice")[0]
			if l.Quota != tc.want {
				t.Fatalf("log quota %d, want %d", l.Quota, tc.want)
			}
			var o imageLogOther
			if err := json.Unmarshal([]byte(l.Other), &o); err != nil || o != tc.other {
				t.Fatalf("log other %s: got %+v (%v), want %+v", l.Other, o, err, tc.other)
			}
		})
	}
	if len(sizes) != 3 || sizes[0] != "" || sizes[2] != "1792x1024" {
		t.Fatalf("sizes sent upstream: %q", sizes)
	}

	for _, tc := range []struct{ name, model, size string }{
		{"multiplication sign", "dall-e-2", "1024×1024"},
		{"dall-e-2 does not make tall images", "dall-e-2", "1024x1792"},
		{"dall-e-3 does not make small images", "dall-e-3", "256x256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := g.balances(t, "alice", tok.ID, ch)
			g.post(t, key, "/v1/images/generations", map[string]any{"model": tc.model, "prompt": "a cat", "size": tc.size}).
				wantError(t, 400, "invalid_request")
			if after := g.balances(t, "alice", tok.ID, ch); after.UserUsed != before.UserUsed || after.UserCount != before.UserCount {
				t.Fatalf("a refused image call was charged: %+v -> %+v", before, after)
			}
		})
	}
	// More than OpenAI's 10 images a call is refused: the price multiplies
	// by n, and a huge n must not wrap it around to a free call.
	for _, n := range []int64{11, 2_000_000_000_000_000_000} {
		before := g.balances(t, "alice", tok.ID, ch)
		e := g.post(t, key, "/v1/images/generations", map[string]any{"model": "dall-e-2", "prompt": "a cat", "n": n}).
			wantError(t, 400, "invalid_request")
		if !strings.HasPrefix(e.Error.Message, "n 不能大于 10") {
			t.Errorf("n=%d: message %q", n, e.Error.Message)
		}
		if after := g.balances(t, "alice", tok.ID, ch); after.UserUsed != before.UserUsed || after.UserCount != before.UserCount {
			t.Fatalf("n=%d: a refused image call was charged: %+v -> %+v", n, before, after)
		}
	}
	// A prompt is what an image is made of: none, an empty one or one that
	// is not text is refused before an upstream is asked.
	for name, prompt := range map[string]any{"no prompt": nil, "empty prompt": " ", "prompt not text": []string{"a cat"}} {
		body := map[string]any{"model": "dall-e-2"}
		if prompt != nil {
			body["prompt"] = prompt
		}
		e := g.post(t, key, "/v1/images/generations", body).wantError(t, 400, "invalid_request")
		if !strings.HasPrefix(e.Error.Message, "prompt 不能为空") {
			t.Errorf("%s: message %q", name, e.Error.Message)
		}
	}
	if len(sizes) != 3 {
		t.Fatalf("refused calls reached the upstream: %q", sizes)
	}
}

// The remote images of one chat request are downloaded for counting at
// most eight times; the others count as the default, and the call goes on.
func TestChat_RemoteImagesBounded(t *testing.T) {
	t.Parallel()
	var png bytes.Buffer
	if err := pngenc.Encode(&png, image.NewRGBA(image.Rect(0, 0, 64, 64))); err != nil {
		t.Fatal(err)
	}
	var fetched atomic.Int64
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		w.Header().Set("Content-Type", "image/png")
		w.Write(png.Bytes())
	}))
	t.Cleanup(images.Close)
	// The images are on loopback, which the guarded client never fetches
	// for a user's URL: this test is about the bounds, not the guard.
	g := MustOpenGateway(t, gatewayConfig{UpstreamClient: http.DefaultClient})
	up := relaytest.NewChat(t, "sk-up", okChat(t, ratioModel, "a picture", relaytest.NewUsage(100, 3)))
	g.MustCreateChannel(t, up, ratioModel, nil)
	_, key := g.MustCreateToken(t, "alice", store.Token{})
	parts := []any{map[string]any{"type": "text", "text": "what are these?"}}
	for i := range 12 {
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": fmt.Sprintf("%s/%d.png", images.URL, i), "detail": "high"}})
	}
	body := map[string]any{"model": ratioModel, "messages": []any{map[string]any{"role": "user", "content": parts}}}
	if res := g.post(t, key, "/v1/chat/completions", body); res.Status != 200 {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	if n := fetched.Load(); n != 8 {
		t.Fatalf("images downloaded = %d, want 8 of 12", n)
	}
}

// A streamed image generation is refused before any upstream makes an
// image: the relay reads image answers whole, and a stream would be made,
// refused as no answer and made again on the next channel, unpaid.
func TestImageGenerations_StreamRefused(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelRatio": `{"gpt-image-1":8}`}})
	up := relaytest.New(t, "sk-up", relaytest.Routes{"POST /v1/images/generations": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, 200, map[string]any{"created": 1, "data": []any{map[string]any{"b64_json": "AAAA"}}})
	}})
	g.MustCreateChannel(t, up, "gpt-image-1", nil)
	tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 100_000_000})
	before := g.balances(t, "alice", tok.ID)
	e := g.post(t, key, "/v1/images/generations", map[string]any{"model": "gpt-image-1", "prompt": "a cat", "stream": true}).
		wantError(t, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(e.Error.Message, "stream") || up.Hits() != 0 {
		t.Fatalf("message %q, upstream hits %d", e.Error.Message, up.Hits())
	}
	wantMoved(t, before, g.balances(t, "alice", tok.ID), true, 0, 0, 0)
}
