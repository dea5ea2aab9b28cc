package relay

import (
	"context"
	"io"
	"net/http"
	"strings"

	"gateway/store"
)

// Endpoint kinds the relay serves.
type kind int

const (
	kindChat kind = iota
	kindCompletion
	kindEmbedding
	kindModeration
	kindImage
	kindSpeech
	kindTranscription
	kindTranslation
	kindRerank
)

// upstreamPath is the OpenAI path of each kind.
var upstreamPath = map[kind]string{
	kindChat:          "/v1/chat/completions",
	kindCompletion:    "/v1/completions",
	kindEmbedding:     "/v1/embeddings",
	kindModeration:    "/v1/moderations",
	kindImage:         "/v1/images/generations",
	kindSpeech:        "/v1/audio/speech",
	kindTranscription: "/v1/audio/transcriptions",
	kindTranslation:   "/v1/audio/translations",
	kindRerank:        "/v1/rerank",
}

// streamUsage is what a provider does with stream_options.include_usage.
type streamUsage int

const (
	// usageRefused: the option is unknown to the provider, which may
	// refuse the request for it (Mistral answers 422): it is removed.
	usageRefused streamUsage = iota
	// usageAsked: the provider documents it; the gateway asks for usage on
	// every stream and hides the chunk from clients that did not ask.
	usageAsked
	// usageAsIs: unknown (a custom channel's server): the client's own
	// stream_options go as sent and none are added.
	usageAsIs
)

// Adapter speaks one provider family's protocol.
type Adapter interface {
	// Request builds the upstream request for a call on channel ch. body is
	// the request body already converted by ConvertBody.
	Request(ctx context.Context, ch *store.Channel, k kind, model string, body io.Reader, contentType string) (*http.Request, error)
	// ConvertBody rewrites the client's JSON body for the upstream: the
	// mapped model name, for streams what su says of stream_options, and
	// what the provider names otherwise. It returns the body unchanged when
	// nothing needs changing.
	ConvertBody(k kind, body []byte, fields map[string][]byte, upstreamModel string, su streamUsage, stream bool) ([]byte, error)
	// StreamUsage says what the provider does with
	// stream_options.include_usage on call c through channel ch.
	StreamUsage(c *call, ch *store.Channel) streamUsage
	// Supports reports whether the channel type serves kind k.
	Supports(k kind) bool
	// Balance reads the channel's remaining credit in US$, when the
	// provider has an endpoint for it.
	Balance(ctx context.Context, client *http.Client, ch *store.Channel) (float64, error)
	// ModelsURL is where the provider lists models, with the headers to send.
	ModelsRequest(ctx context.Context, ch *store.Channel) (*http.Request, error)
}

// Channel type codes.
const (
	TypeOpenAI      = 1
	TypeMidjourney  = 2
	TypeAzure       = 3
	TypeOllama      = 4
	TypeMJPlus      = 5
	TypeCustom      = 8
	TypeAI360       = 19
	TypeMoonshot    = 25
	TypeLingYi      = 31
	TypeSuno        = 36
	TypeSiliconFlow = 40
	TypeMistral     = 42
)

// ChannelTypeNames names every channel type the console offers.
var ChannelTypeNames = map[int]string{
	1: "OpenAI", 2: "Midjourney Proxy", 5: "Midjourney Proxy Plus", 36: "Suno API", 4: "Ollama",
	14: "Anthropic Claude", 33: "AWS Claude", 41: "Vertex AI", 3: "Azure OpenAI", 24: "Google Gemini",
	34: "Cohere", 15: "百度文心千帆", 17: "阿里通义千问", 18: "讯飞星火认知", 16: "智谱 ChatGLM",
	26: "智谱 GLM-4V", 11: "Google PaLM2", 39: "Cloudflare", 25: "Moonshot", 19: "360 智脑",
	23: "腾讯混元", 31: "零一万物", 35: "MiniMax", 37: "Dify", 38: "Jina", 40: "SiliconCloud",
	42: "Mistral AI", 8: "自定义渠道", 22: "知识库：FastGPT", 21: "知识库：AI Proxy",
}

// adapterFor returns the adapter of a channel type, or nil for types whose
// protocol the relay does not speak yet.
func adapterFor(t int) Adapter {
	switch t {
	case TypeOpenAI, TypeCustom, TypeAI360, TypeMoonshot, TypeLingYi, TypeSiliconFlow, TypeMistral, TypeOllama:
		return openAI{typ: t}
	case TypeAzure:
		return azure{}
	}
	return nil
}

// unsupportedType is the answer for channel types without an adapter.
func unsupportedType(t int) *Error {
	return &Error{Status: http.StatusNotImplemented, Type: "new_api_error", Code: "channel_type_not_supported",
		Message: "渠道类型 " + typeName(t) + " 尚未支持", Retry: true}
}

// typeName is a channel type's name for messages.
func typeName(t int) string {
	if name := ChannelTypeNames[t]; name != "" {
		return name
	}
	return "未知类型"
}

// unsupportedEndpoint is the answer of an implemented type whose provider
// has no such endpoint (Moonshot embeddings, say); the next channel is tried.
func unsupportedEndpoint(t int) *Error {
	return &Error{Status: http.StatusNotImplemented, Type: "new_api_error", Code: "endpoint_not_supported",
		Message: "渠道类型 " + typeName(t) + " 不支持此接口", Retry: true}
}

// defaultBaseURL is used when a channel has no base_url.
func defaultBaseURL(t int) string {
	switch t {
	case TypeOpenAI:
		return "https://api.openai.com"
	case TypeOllama:
		return "http://localhost:11434"
	case TypeAI360:
		return "https://ai.360.cn"
	case TypeMoonshot:
		return "https://api.moonshot.cn"
	case TypeLingYi:
		return "https://api.lingyiwanwu.com"
	case TypeSiliconFlow:
		return "https://api.siliconflow.cn"
	case TypeMistral:
		return "https://api.mistral.ai"
	}
	return ""
}

func baseURL(ch *store.Channel) string {
	if b := strings.TrimRight(ch.BaseURL, "/"); b != "" {
		return b
	}
	return defaultBaseURL(ch.Type)
}
