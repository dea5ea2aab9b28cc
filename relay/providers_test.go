package relay_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"gateway/relay"
	"gateway/relay/relaytest"
	"gateway/store"
)

// seen is one request a provider stand-in received.
type seen struct {
	path  string
	query url.Values
	auth  string // Authorization
	key   string // api-key (Azure)
	org   string // OpenAI-Organization
	body  map[string]any
}

// providerUpstream stands in for any OpenAI-compatible provider, Azure
// included: it records each request and answers in OpenAI's wire format (a
// completion, or an event stream with a usage chunk only when asked).
func providerUpstream(t *testing.T) (*httptest.Server, func() []seen) {
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		s := seen{path: r.URL.Path, query: r.URL.Query(), auth: r.Header.Get("Authorization"), key: r.Header.Get("api-key"), org: r.Header.Get("OpenAI-Organization")}
		_ = json.Unmarshal(data, &s.body)
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
		model, _ := s.body["model"].(string)
		if stream, _ := s.body["stream"].(bool); stream {
			sse := relaytest.NewSSE(w)
			sse.Send(relaytest.Chunk(model, "Hi there"))
			if opts, _ := s.body["stream_options"].(map[string]any); opts["include_usage"] == true {
				sse.Send(relaytest.UsageChunk(model, 9, 2))
			}
			sse.Done()
			return
		}
		relaytest.WriteJSON(w, 200, relaytest.Completion(model, "Hi there", relaytest.NewUsage(9, 2)))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen { mu.Lock(); defer mu.Unlock(); return append([]seen(nil), got...) }
}

// Each OpenAI-compatible type of issue 3 reaches its provider at the right
// URL with the right credentials, with the mapped model, and asks for stream
// usage only where the provider documents it (S §5.8 step 8, §5.13).
func TestProviderAdapters(t *testing.T) {
	t.Parallel()
	// Clients ask for an alias the channel maps to the provider's name.
	const alias, model = "alias-3.5", "gpt-3.5-turbo"
	for _, tc := range []struct {
		name      string
		typ       int
		base      string // appended to the stand-in's URL
		other     string
		org       string
		query     string // on the client's request
		wantPath  string
		wantQuery string // api-version
		azure     bool
		usage     bool // asks for stream usage
	}{
		{name: "OpenAI", typ: relay.TypeOpenAI, org: "org-7", wantPath: "/v1/chat/completions", usage: true},
		{name: "Azure, default version", typ: relay.TypeAzure, wantPath: "/openai/deployments/gpt-35-turbo/chat/completions", wantQuery: relay.AzureDefaultAPIVersion, azure: true},
		{name: "Azure, channel version", typ: relay.TypeAzure, other: "2024-02-01", wantPath: "/openai/deployments/gpt-35-turbo/chat/completions", wantQuery: "2024-02-01", azure: true},
		// A version typed with spaces around it (through the API; the form trims it) is read without them.
		{name: "Azure, channel version with spaces", typ: relay.TypeAzure, other: " 2024-10-21 ", wantPath: "/openai/deployments/gpt-35-turbo/chat/completions", wantQuery: "2024-10-21", azure: true, usage: true},
		{name: "Azure, blank channel version", typ: relay.TypeAzure, other: "  ", wantPath: "/openai/deployments/gpt-35-turbo/chat/completions", wantQuery: relay.AzureDefaultAPIVersion, azure: true},
		{name: "Azure, client version", typ: relay.TypeAzure, other: "2024-02-01", query: "?api-version=2024-10-21", wantPath: "/openai/deployments/gpt-35-turbo/chat/completions", wantQuery: "2024-10-21", azure: true, usage: true},
		{name: "Ollama", typ: relay.TypeOllama, wantPath: "/v1/chat/completions", usage: true},
		{name: "custom, whole URL", typ: relay.TypeCustom, base: "/deploy/{model}/chat", wantPath: "/deploy/gpt-3.5-turbo/chat"},
		{name: "360", typ: relay.TypeAI360, wantPath: "/v1/chat/completions"},
		{name: "Moonshot", typ: relay.TypeMoonshot, wantPath: "/v1/chat/completions"},
		{name: "01.AI", typ: relay.TypeLingYi, wantPath: "/v1/chat/completions"},
		{name: "SiliconCloud", typ: relay.TypeSiliconFlow, wantPath: "/v1/chat/completions"},
		{name: "Mistral", typ: relay.TypeMistral, wantPath: "/v1/chat/completions"},
		// A base URL written as providers print it, with /v1, is not given another.
		{name: "Moonshot, base ending in /v1", typ: relay.TypeMoonshot, base: "/v1", wantPath: "/v1/chat/completions"},
		{name: "Ollama, base ending in /v1", typ: relay.TypeOllama, base: "/v1", wantPath: "/v1/chat/completions", usage: true},
		{name: "OpenAI, base with a path and /v1", typ: relay.TypeOpenAI, base: "/openai/v1", wantPath: "/openai/v1/chat/completions", usage: true},
		{name: "OpenAI, base with a path", typ: relay.TypeOpenAI, base: "/api", wantPath: "/api/v1/chat/completions", usage: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelRatio": `{"alias-3.5":0.75}`}})
			srv, requests := providerUpstream(t)
			c := &store.Channel{Type: tc.typ, Name: tc.name, Key: "sk-provider", BaseURL: srv.URL + tc.base, Other: tc.other,
				OpenAIOrganization: tc.org, Models: alias, Group: "default", ModelMapping: `{"alias-3.5":"gpt-3.5-turbo"}`}
			if err := g.st.CreateChannels([]*store.Channel{c}); err != nil {
				t.Fatal(err)
			}
			_, key := g.MustCreateToken(t, "alice", store.Token{})
			if res := g.post(t, key, "/v1/chat/completions"+tc.query, chat(alias, "hello")); res.Status != 200 {
				t.Fatalf("non-stream: %d %s", res.Status, res.Body)
			}
			res := g.post(t, key, "/v1/chat/completions"+tc.query, streamChat(alias, "hello", false))
			if res.Status != 200 {
				t.Fatalf("stream: %d %s", res.Status, res.Body)
			}
			events := relaytest.Events(res.Body)
			if len(events) < 2 || events[len(events)-1] != "[DONE]" || !strings.Contains(events[0], "Hi there") {
				t.Fatalf("stream events: %q", events)
			}
			got := requests()
			if len(got) != 2 {
				t.Fatalf("upstream saw %d requests", len(got))
			}
			for _, s := range got {
				if s.path != tc.wantPath {
					t.Errorf("path %q, want %q", s.path, tc.wantPath)
				}
				if v := s.query.Get("api-version"); v != tc.wantQuery {
					t.Errorf("api-version %q, want %q", v, tc.wantQuery)
				}
				if tc.azure && (s.key != "sk-provider" || s.auth != "") || !tc.azure && (s.auth != "Bearer sk-provider" || s.key != "") {
					t.Errorf("credentials: Authorization %q, api-key %q", s.auth, s.key)
				}
				if s.org != tc.org {
					t.Errorf("OpenAI-Organization %q, want %q", s.org, tc.org)
				}
				if s.body["model"] != model {
					t.Errorf("model %v", s.body["model"])
				}
			}
			_, asked := got[1].body["stream_options"]
			if asked != tc.usage {
				t.Errorf("stream_options sent upstream: %v, want %v (%v)", asked, tc.usage, got[1].body)
			}
			// With or without the provider's usage chunk, the stream is
			// charged once, and the non-stream call too.
			if logs := g.consumeLogs(t, "alice"); len(logs) != 2 || logs[0].CompletionTokens == 0 || logs[1].CompletionTokens != 2 {
				t.Errorf("consume logs: %+v", logs)
			}
		})
	}
}

// A provider without an endpoint is not asked: the call moves to a channel
// whose provider has it, and with none left the answer says so.
func TestProviderEndpoints(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "1", "ModelPrice": `{"sf-image":0.04}`}})
	moonshot, moonshotSeen := providerUpstream(t)
	openai := relaytest.New(t, "sk-openai", relaytest.Routes{"POST /v1/embeddings": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusOK, relaytest.Embedding(req.Model(), 1, relaytest.NewUsage(2, 0)))
	}})
	chs := []*store.Channel{
		{Type: relay.TypeMoonshot, Name: "moonshot", Key: "sk-m", BaseURL: moonshot.URL, Models: embedModel, Group: "default", Priority: 10},
		{Type: relay.TypeOpenAI, Name: "openai", Key: "sk-openai", BaseURL: openai.URL, Models: embedModel, Group: "default"},
	}
	if err := g.st.CreateChannels(chs); err != nil {
		t.Fatal(err)
	}
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	if res := g.post(t, key, "/v1/embeddings", map[string]any{"model": embedModel, "input": "embed me"}); res.Status != http.StatusOK {
		t.Fatalf("embeddings: %d %s", res.Status, res.Body)
	}
	if n := len(moonshotSeen()); n != 0 || openai.Hits() != 1 {
		t.Fatalf("moonshot asked %d times, openai %d", n, openai.Hits())
	}
	if _, err := g.st.DeleteChannels([]uint64{chs[1].ID}); err != nil {
		t.Fatal(err)
	}
	e := g.post(t, key, "/v1/embeddings", map[string]any{"model": embedModel, "input": "embed me"}).wantError(t, http.StatusNotImplemented, "endpoint_not_supported")
	if !strings.Contains(e.Error.Message, "不支持此接口") || len(moonshotSeen()) != 0 {
		t.Fatalf("message %q, moonshot asked %d times", e.Error.Message, len(moonshotSeen()))
	}

	// SiliconCloud's image API is its own (image_size, batch_size, an
	// images list): an OpenAI image request is not sent there to fail
	// after the provider charged for it.
	sf := &store.Channel{Type: relay.TypeSiliconFlow, Name: "siliconcloud", Key: "sk-s", BaseURL: moonshot.URL, Models: "sf-image", Group: "default"}
	if err := g.st.CreateChannels([]*store.Channel{sf}); err != nil {
		t.Fatal(err)
	}
	e = g.post(t, key, "/v1/images/generations", map[string]any{"model": "sf-image", "prompt": "a cat"}).wantError(t, http.StatusNotImplemented, "endpoint_not_supported")
	if !strings.Contains(e.Error.Message, "不支持此接口") || len(moonshotSeen()) != 0 {
		t.Fatalf("image on SiliconCloud: message %q, upstream asked %d times", e.Error.Message, len(moonshotSeen()))
	}
}

// Passing over a channel whose provider lacks the endpoint spends no
// attempt: with the default RetryTimes of 0, a call on a model that a
// chat-only channel shares with a serving one at the same priority is always
// answered by the serving one.
func TestProviderEndpointsWithoutRetries(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{})
	moonshot, moonshotSeen := providerUpstream(t)
	openai := relaytest.New(t, "sk-openai", relaytest.Routes{"POST /v1/embeddings": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusOK, relaytest.Embedding(req.Model(), 1, relaytest.NewUsage(2, 0)))
	}})
	chs := []*store.Channel{
		{Type: relay.TypeMoonshot, Name: "moonshot", Key: "sk-m", BaseURL: moonshot.URL, Models: embedModel, Group: "default"},
		{Type: relay.TypeOpenAI, Name: "openai", Key: "sk-openai", BaseURL: openai.URL, Models: embedModel, Group: "default"},
	}
	if err := g.st.CreateChannels(chs); err != nil {
		t.Fatal(err)
	}
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	const calls = 20
	for i := range calls {
		if res := g.post(t, key, "/v1/embeddings", map[string]any{"model": embedModel, "input": "embed me"}); res.Status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, res.Status, res.Body)
		}
	}
	if n := len(moonshotSeen()); n != 0 || openai.Hits() != calls {
		t.Fatalf("moonshot asked %d times, openai %d, want 0 and %d", n, openai.Hits(), calls)
	}
	passed := 0
	for _, l := range g.consumeLogs(t, "alice") {
		use := other(t, l).AdminInfo.UseChannel
		switch {
		case slices.Equal(use, []uint64{chs[1].ID}):
		case slices.Equal(use, []uint64{chs[0].ID, chs[1].ID}):
			passed++
		default:
			t.Errorf("use_channel = %v", use)
		}
	}
	if passed == 0 {
		t.Errorf("no call picked the chat-only channel first in %d calls (weights 10 and 10)", calls)
	}
}

// A channel passed over does not replace the answer of one that was asked:
// after the upstream's 500, the retry that finds only a chat-only channel
// answers with that 500, not with the chat-only channel's 501.
func TestProviderEndpointsKeepTheUpstreamsError(t *testing.T) {
	t.Parallel()
	g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"RetryTimes": "1"}})
	moonshot, moonshotSeen := providerUpstream(t)
	failing := relaytest.New(t, "sk-openai", relaytest.Routes{"POST /v1/embeddings": func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		relaytest.WriteJSON(w, http.StatusInternalServerError, map[string]any{"error": map[string]any{"message": "upstream broke", "type": "server_error"}})
	}})
	chs := []*store.Channel{
		{Type: relay.TypeOpenAI, Name: "openai", Key: "sk-openai", BaseURL: failing.URL, Models: embedModel, Group: "default", Priority: 10},
		{Type: relay.TypeMoonshot, Name: "moonshot", Key: "sk-m", BaseURL: moonshot.URL, Models: embedModel, Group: "default"},
	}
	if err := g.st.CreateChannels(chs); err != nil {
		t.Fatal(err)
	}
	_, key := g.MustCreateToken(t, "alice", store.Token{UnlimitedQuota: true})
	res := g.post(t, key, "/v1/embeddings", map[string]any{"model": embedModel, "input": "embed me"})
	if res.Status != http.StatusInternalServerError || !strings.Contains(string(res.Body), "upstream broke") {
		t.Fatalf("answer %d %s, want the upstream's 500", res.Status, res.Body)
	}
	if n := len(moonshotSeen()); n != 0 || failing.Hits() != 1 {
		t.Fatalf("moonshot asked %d times, openai %d", n, failing.Hits())
	}
}

// A client's own stream_options reach a custom channel's server as sent (it
// may or may not know them; the client asked), and are removed for the
// providers that refuse them; either way a client that asked for usage
// gets one usage chunk.
func TestClientStreamOptionsByType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		typ     int
		base    string
		forward bool
	}{
		{"custom", relay.TypeCustom, "/v1/chat/completions", true},
		{"Mistral", relay.TypeMistral, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{Options: map[string]string{"ModelRatio": `{"gpt-3.5-turbo":0.75}`}})
			srv, requests := providerUpstream(t)
			c := &store.Channel{Type: tc.typ, Name: tc.name, Key: "sk-provider", BaseURL: srv.URL + tc.base, Models: "gpt-3.5-turbo", Group: "default"}
			if err := g.st.CreateChannels([]*store.Channel{c}); err != nil {
				t.Fatal(err)
			}
			_, key := g.MustCreateToken(t, "alice", store.Token{})
			res := g.post(t, key, "/v1/chat/completions", streamChat("gpt-3.5-turbo", "hello", true))
			if res.Status != 200 {
				t.Fatalf("stream: %d %s", res.Status, res.Body)
			}
			opts, _ := requests()[0].body["stream_options"].(map[string]any)
			if forwarded := opts["include_usage"] == true; forwarded != tc.forward {
				t.Errorf("stream_options reached the upstream: %v, want %v", forwarded, tc.forward)
			}
			usageChunks := 0
			for _, e := range relaytest.Events(res.Body) {
				if strings.Contains(e, `"usage":{`) && strings.Contains(e, `"prompt_tokens"`) {
					usageChunks++
				}
			}
			if usageChunks != 1 {
				t.Errorf("usage chunks sent to the client: %d, want 1: %s", usageChunks, res.Body)
			}
		})
	}
}
