package store

import json "github.com/goccy/go-json"

// DefaultModelRatio is the built-in ModelRatio table: 1 = US$0.002 per 1K
// prompt tokens. POST /api/option/rest_model_ratio restores it.
var DefaultModelRatio = map[string]float64{
	"gpt-4": 15, "gpt-4-0613": 15, "gpt-4-32k": 30, "gpt-4-32k-0613": 30,
	"gpt-4-1106-preview": 5, "gpt-4-0125-preview": 5, "gpt-4-turbo-preview": 5,
	"gpt-4-vision-preview": 5, "gpt-4-1106-vision-preview": 5,
	"gpt-4-turbo": 5, "gpt-4-turbo-2024-04-09": 5,
	"gpt-4o": 1.25, "gpt-4o-2024-05-13": 2.5, "gpt-4o-2024-08-06": 1.25, "gpt-4o-2024-11-20": 1.25,
	"chatgpt-4o-latest": 2.5,
	// The default CompletionRatio prices their completions.
	"gpt-4-all": 15, "gpt-4o-all": 15, "gpt-4o-gizmo-*": 2.5,
	"gpt-4o-mini": 0.075, "gpt-4o-mini-2024-07-18": 0.075,
	"gpt-4o-audio-preview": 1.25, "gpt-4o-realtime-preview": 2.5, "gpt-4o-mini-realtime-preview": 0.3,
	"gpt-4.1": 1, "gpt-4.1-mini": 0.2, "gpt-4.1-nano": 0.05,
	"o1": 7.5, "o1-2024-12-17": 7.5, "o1-preview": 7.5, "o1-preview-2024-09-12": 7.5,
	"o1-mini": 1.5, "o1-mini-2024-09-12": 1.5, "o3-mini": 0.55,
	"gpt-3.5-turbo": 0.25, "gpt-3.5-turbo-0613": 0.75, "gpt-3.5-turbo-16k": 1.5,
	"gpt-3.5-turbo-16k-0613": 1.5, "gpt-3.5-turbo-instruct": 0.75,
	"gpt-3.5-turbo-1106": 0.5, "gpt-3.5-turbo-0125": 0.25,
	"babbage-002": 0.2, "davinci-002": 1,
	"text-ada-001": 0.2, "text-babbage-001": 0.25, "text-curie-001": 1, "text-davinci-002": 10, "text-davinci-003": 10,
	"text-embedding-ada-002": 0.05, "text-embedding-3-small": 0.01, "text-embedding-3-large": 0.065,
	"text-moderation-latest": 0.1, "text-moderation-stable": 0.1, "omni-moderation-latest": 0.1,
	"dall-e-2": 8, "dall-e-3": 20,
	"whisper-1": 15, "tts-1": 7.5, "tts-1-1106": 7.5, "tts-1-hd": 15, "tts-1-hd-1106": 15,
	"claude-instant-1": 0.4, "claude-2.0": 4, "claude-2.1": 4,
	"claude-3-haiku-20240307": 0.125, "claude-3-5-haiku-20241022": 0.5,
	"claude-3-sonnet-20240229": 1.5, "claude-3-5-sonnet-20240620": 1.5, "claude-3-5-sonnet-20241022": 1.5,
	"claude-3-opus-20240229": 7.5,
	"ERNIE-4.0-8K":           0.120 * 1000 / 7.3 / 2, "ERNIE-3.5-8K": 0.012 * 1000 / 7.3 / 2,
	"ERNIE-Speed-8K": 0.0001, "ERNIE-Lite-8K": 0.0001,
	"gemini-pro": 1, "gemini-1.0-pro": 1, "gemini-1.5-pro": 1.75, "gemini-1.5-flash": 0.0375,
	"gemini-2.0-flash": 0.05, "gemini-pro-vision": 1,
	"chatglm_turbo": 0.3572, "chatglm_pro": 0.7143, "chatglm_std": 0.3572, "chatglm_lite": 0.1429,
	"glm-4": 7.143, "glm-4v": 0.05 * 1000 / 7.3 / 2, "glm-3-turbo": 0.3572,
	"qwen-turbo": 0.8572, "qwen-plus": 10, "qwen-max": 1.4286, "text-embedding-v1": 0.05,
	"SparkDesk-v1.1": 1.2858, "SparkDesk-v2.1": 1.2858, "SparkDesk-v3.1": 1.2858,
	"SparkDesk-v3.5": 1.2858, "SparkDesk-v4.0": 1.2858,
	"360GPT_S2_V9": 0.8572, "embedding-bert-512-v1": 0.0715, "embedding_s1_v1": 0.0715, "semantic_similarity_s1_v1": 0.0715,
	"hunyuan":        7.143,
	"moonshot-v1-8k": 0.8572, "moonshot-v1-32k": 1.7143, "moonshot-v1-128k": 4.2857,
	"yi-large": 1.3699, "yi-medium": 0.1712, "yi-spark": 0.0685, "yi-large-turbo": 0.8219,
	"command": 0.5, "command-r": 0.25, "command-r-plus": 1.5, "command-r-08-2024": 0.075, "command-r-plus-08-2024": 1.25,
	"deepseek-chat": 0.07, "deepseek-coder": 0.07, "deepseek-reasoner": 0.275,
	"mistral-tiny": 0.125, "mistral-small-latest": 0.1, "mistral-medium-latest": 1.35, "mistral-large-latest": 1,
	"open-mistral-7b": 0.125, "open-mixtral-8x7b": 0.35, "open-mixtral-8x22b": 1, "codestral-latest": 0.1,
	"llama3-8b-8192": 0.025, "llama3-70b-8192": 0.295,
	"abab6.5s-chat": 0.0685, "abab6.5-chat": 2.0548,
	"jina-reranker-v2-base-multilingual": 0.01, "jina-embeddings-v2-base-en": 0.01,
	"BAAI/bge-reranker-v2-m3": 0.01, "Qwen/Qwen2.5-7B-Instruct": 0.0001,
	"@cf/meta/llama-3.1-8b-instruct": 0.1,
}

// DefaultModelPrice is the built-in fixed price per call in US$ (S §5.7).
var DefaultModelPrice = map[string]float64{
	"suno_music": 0.1, "suno_lyrics": 0.01, "dall-e-3": 0.04, "gpt-4-gizmo-*": 0.1,
	"mj_imagine": 0.1, "mj_variation": 0.1, "mj_reroll": 0.1, "mj_blend": 0.1, "mj_modal": 0.1,
	"mj_zoom": 0.1, "mj_shorten": 0.1, "mj_high_variation": 0.1, "mj_low_variation": 0.1, "mj_pan": 0.1,
	"mj_inpaint": 0, "mj_custom_zoom": 0,
	"mj_describe": 0.05, "mj_upscale": 0.05, "swap_face": 0.05, "mj_upload": 0.05,
}

var defaultChats = []map[string]string{
	{"ChatGPT Next Web 官方示例": "https://app.nextchat.dev/#/?settings={\"key\":\"{key}\",\"url\":\"{address}\"}"},
	{"Lobe Chat 官方示例": "https://chat-preview.lobehub.com/?settings={\"keyVaults\":{\"openai\":{\"apiKey\":\"{key}\",\"baseURL\":\"{address}/v1\"}}}"},
	{"AMA 问天": "ama://set-api-key?server={address}&key={key}"},
	{"OpenCat": "opencat://team/join?domain={address}&token={key}"},
}

func mustJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(data)
}

var (
	defaultModelRatioJSON = mustJSON(DefaultModelRatio)
	defaultModelPriceJSON = mustJSON(DefaultModelPrice)
	defaultChatsJSON      = mustJSON(defaultChats)
)

// DefaultModelRatioJSON returns the built-in ModelRatio table as JSON.
func DefaultModelRatioJSON() string { return defaultModelRatioJSON }
