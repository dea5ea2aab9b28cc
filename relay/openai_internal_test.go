package relay

import (
	"context"
	"net/url"
	"testing"

	"gateway/store"
)

// A Cloudflare AI Gateway base takes the provider's path without /v1, and
// for Azure without /openai/deployments (S §5.13); other bases are kept.
func TestCloudflareGatewayURLs(t *testing.T) {
	for _, tc := range []struct{ base, want string }{
		{"https://gateway.ai.cloudflare.com/v1/acct/gw/openai", "https://gateway.ai.cloudflare.com/v1/acct/gw/openai/chat/completions"},
		{"https://gateway.ai.cloudflare.com/v1/acct/gw/openai/", "https://gateway.ai.cloudflare.com/v1/acct/gw/openai/chat/completions"},
		{"https://Gateway.AI.Cloudflare.com/v1/acct/gw/openai", "https://Gateway.AI.Cloudflare.com/v1/acct/gw/openai/chat/completions"},
		{"https://api.openai.com", "https://api.openai.com/v1/chat/completions"},
		{"https://proxy.example/gateway.ai.cloudflare.com", "https://proxy.example/gateway.ai.cloudflare.com/v1/chat/completions"},
	} {
		if got := (openAI{typ: TypeOpenAI}).url(&store.Channel{BaseURL: tc.base}, kindChat, "m"); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.base, got, tc.want)
		}
	}
	for _, tc := range []struct{ base, query, want string }{
		{"https://gateway.ai.cloudflare.com/v1/acct/gw/azure-openai/res", "",
			"https://gateway.ai.cloudflare.com/v1/acct/gw/azure-openai/res/gpt-41/chat/completions?api-version=2024-02-01"},
		{"https://res.openai.azure.com", "api-version=2024-10-21",
			"https://res.openai.azure.com/openai/deployments/gpt-41/chat/completions?api-version=2024-10-21"},
	} {
		q, _ := url.ParseQuery(tc.query)
		req, err := azure{}.Request(withClientQuery(context.Background(), q), &store.Channel{BaseURL: tc.base, Other: "2024-02-01", Key: "k"}, kindChat, "gpt-4.1", nil, "application/json")
		if err != nil || req.URL.String() != tc.want {
			t.Errorf("azure %s: %v %v, want %s", tc.base, req.URL, err, tc.want)
		}
	}
}

// Only OpenAI's path loses /v1 behind a Cloudflare AI Gateway (S §5.13):
// the gateway's Mistral endpoint is {base}/mistral/v1/chat/completions.
func TestCloudflareGatewayKeepsV1ForMistral(t *testing.T) {
	const base = "https://gateway.ai.cloudflare.com/v1/acct/gw/mistral"
	want := base + "/v1/chat/completions"
	if got := (openAI{typ: TypeMistral}).url(&store.Channel{Type: TypeMistral, BaseURL: base}, kindChat, "m"); got != want {
		t.Errorf("Mistral behind Cloudflare: %s, want %s", got, want)
	}
}

// The model list of an OpenAI channel behind a Cloudflare AI Gateway is at
// {base}/models, as its calls are at {base}/chat/completions (S §5.13).
func TestCloudflareGatewayModelsURL(t *testing.T) {
	const base = "https://gateway.ai.cloudflare.com/v1/acct/gw/openai"
	req, err := (openAI{typ: TypeOpenAI}).ModelsRequest(context.Background(), &store.Channel{Type: TypeOpenAI, BaseURL: base, Key: "k"})
	if err != nil || req.URL.String() != base+"/models" {
		t.Errorf("models URL %v %v, want %s", req.URL, err, base+"/models")
	}
}

// An OpenAI channel's model list is its organization's (S §5.13: type 1
// adds OpenAI-Organization), as its calls and its balance are.
func TestModelsRequestSendsOrganization(t *testing.T) {
	req, err := (openAI{typ: TypeOpenAI}).ModelsRequest(context.Background(), &store.Channel{Type: TypeOpenAI, BaseURL: "https://api.openai.com", Key: "k", OpenAIOrganization: "org-7"})
	if err != nil || req.Header.Get("OpenAI-Organization") != "org-7" {
		t.Errorf("OpenAI-Organization %q (%v), want org-7", req.Header.Get("OpenAI-Organization"), err)
	}
}
