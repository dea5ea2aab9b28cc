package relay

import (
	"bytes"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"gateway/store"
)

// BuiltinModels lists the models each channel type is known to serve; the
// console suggests them when a channel's type changes.
var BuiltinModels = map[int][]string{
	TypeOpenAI: {"gpt-3.5-turbo", "gpt-3.5-turbo-0125", "gpt-3.5-turbo-1106", "gpt-3.5-turbo-instruct",
		"gpt-4", "gpt-4-turbo", "gpt-4-turbo-2024-04-09", "gpt-4o", "gpt-4o-2024-08-06", "gpt-4o-2024-11-20",
		"chatgpt-4o-latest", "gpt-4o-mini", "gpt-4o-mini-2024-07-18", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano",
		"o1", "o1-mini", "o1-preview", "o3-mini", "text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002",
		"text-moderation-latest", "text-moderation-stable", "omni-moderation-latest", "dall-e-2", "dall-e-3",
		"whisper-1", "tts-1", "tts-1-hd", "babbage-002", "davinci-002"},
	TypeAzure:       {"gpt-35-turbo", "gpt-4", "gpt-4o", "gpt-4o-mini", "text-embedding-ada-002", "dall-e-3", "whisper-1", "tts-1"},
	TypeOllama:      {"llama3.1", "llama3.2", "qwen2.5", "mistral", "nomic-embed-text"},
	TypeAI360:       {"360GPT_S2_V9", "embedding-bert-512-v1", "embedding_s1_v1", "semantic_similarity_s1_v1"},
	TypeMoonshot:    {"moonshot-v1-8k", "moonshot-v1-32k", "moonshot-v1-128k"},
	TypeLingYi:      {"yi-large", "yi-medium", "yi-spark", "yi-large-turbo"},
	TypeSiliconFlow: {"Qwen/Qwen2.5-7B-Instruct", "deepseek-ai/DeepSeek-V2.5", "BAAI/bge-reranker-v2-m3", "BAAI/bge-m3"},
	TypeMistral:     {"open-mistral-7b", "open-mixtral-8x7b", "open-mixtral-8x22b", "mistral-small-latest", "mistral-medium-latest", "mistral-large-latest", "codestral-latest", "mistral-embed"},
	14:              {"claude-3-haiku-20240307", "claude-3-5-haiku-20241022", "claude-3-5-sonnet-20241022", "claude-3-opus-20240229"},
	33:              {"claude-3-haiku-20240307", "claude-3-5-sonnet-20241022", "claude-3-opus-20240229"},
	41:              {"gemini-1.5-pro", "gemini-1.5-flash", "claude-3-5-sonnet@20240620"},
	24:              {"gemini-1.5-pro", "gemini-1.5-flash", "gemini-2.0-flash"},
	34:              {"command-r", "command-r-plus", "command-r-08-2024", "command-r-plus-08-2024"},
	15:              {"ERNIE-4.0-8K", "ERNIE-3.5-8K", "ERNIE-Speed-8K", "ERNIE-Lite-8K"},
	17:              {"qwen-turbo", "qwen-plus", "qwen-max", "text-embedding-v1"},
	18:              {"SparkDesk-v1.1", "SparkDesk-v2.1", "SparkDesk-v3.1", "SparkDesk-v3.5", "SparkDesk-v4.0"},
	16:              {"chatglm_turbo", "chatglm_pro", "chatglm_std", "chatglm_lite"},
	26:              {"glm-4", "glm-4v", "glm-3-turbo"},
	11:              {"PaLM-2"},
	39:              {"@cf/meta/llama-3.1-8b-instruct"},
	23:              {"hunyuan"},
	35:              {"abab6.5s-chat", "abab6.5-chat"},
	38:              {"jina-reranker-v2-base-multilingual", "jina-embeddings-v2-base-en"},
	2:               {"mj_imagine", "mj_variation", "mj_reroll", "mj_blend", "mj_upscale", "mj_describe"},
	5:               {"mj_imagine", "mj_variation", "mj_reroll", "mj_blend", "mj_upscale", "mj_describe", "mj_zoom", "mj_shorten", "mj_modal", "mj_inpaint", "mj_custom_zoom", "mj_high_variation", "mj_low_variation", "mj_pan", "swap_face"},
	36:              {"suno_music", "suno_lyrics"},
}

// modelObject is one entry of /v1/models.
type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func ownerOf(model string) string {
	// In type order, so a model several types list (OpenAI's are also
	// Azure's) always names the same owner: the lowest type.
	for _, t := range slices.Sorted(maps.Keys(BuiltinModels)) {
		for _, m := range BuiltinModels[t] {
			if m == model {
				switch t {
				case TypeOpenAI:
					return "openai"
				case 14, 33:
					return "anthropic"
				case 24, 41:
					return "google"
				}
				return strings.ToLower(strings.ReplaceAll(ChannelTypeNames[t], " ", "-"))
			}
		}
	}
	return "custom"
}

// ModelObjects returns OpenAI model objects for names.
func modelObjects(names []string) []modelObject {
	out := make([]modelObject, 0, len(names))
	for _, n := range names {
		out = append(out, modelObject{ID: n, Object: "model", Created: 1626777600, OwnedBy: ownerOf(n)})
	}
	return out
}

// tokenModels returns what a token may call: its model limits when set,
// otherwise every model its group has an enabled channel for.
func (rl *Relay) tokenModels(c *Caller) ([]string, *Error) {
	// A token whose group its calls are refused in lists nothing either:
	// it answers as its calls would.
	group, err := tokenGroup(rl.store.Settings(), c.User, c.Token)
	if err != nil {
		return nil, err
	}
	if c.Token != nil && c.Token.ModelLimitsEnabled {
		return c.Token.ModelLimitList(), nil
	}
	return rl.store.GroupModels(group), nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

func (rl *Relay) listModels(w http.ResponseWriter, r *http.Request) {
	c, err := rl.authenticateBound(r)
	if err != nil {
		writeError(w, requestID(w), err)
		return
	}
	names, err := rl.tokenModels(c)
	if err != nil {
		writeError(w, requestID(w), err)
		return
	}
	sort.Strings(names)
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "object": "list", "data": modelObjects(names)})
}

func (rl *Relay) getModel(w http.ResponseWriter, r *http.Request) {
	c, err := rl.authenticateBound(r)
	if err != nil {
		writeError(w, requestID(w), err)
		return
	}
	want := r.PathValue("model")
	names, err := rl.tokenModels(c)
	if err != nil {
		writeError(w, requestID(w), err)
		return
	}
	for _, m := range names {
		if m == want {
			writeJSON(w, http.StatusOK, modelObjects([]string{m})[0])
			return
		}
	}
	writeError(w, requestID(w), &Error{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found",
		Param: "model", Message: "The model '" + want + "' does not exist", Local: true})
}

// billingAmount is the token's (or, with token stats off, the user's) total
// and used quota, in dollars when currency display is on (S §5.12).
func (rl *Relay) billingAmount(c *Caller) (total, used float64, expires int64) {
	set := rl.store.Settings()
	unlimited := false
	if set.Bool("DisplayTokenStatEnabled") {
		t := c.Token
		unlimited = t.UnlimitedQuota
		total = float64(t.RemainQuota + t.UsedQuota)
		used = float64(t.UsedQuota)
		if t.ExpiredTime > 0 {
			expires = t.ExpiredTime
		}
	} else {
		total = float64(c.User.Quota + c.User.UsedQuota)
		used = float64(c.User.UsedQuota)
	}
	if set.Bool("DisplayInCurrencyEnabled") {
		total /= set.QuotaPerUnit()
		used /= set.QuotaPerUnit()
	}
	// An unlimited token shows 100 000 000 whatever the unit, not that
	// figure divided into dollars (200 at the default rate).
	if unlimited {
		total = 100000000
	}
	return
}

func (rl *Relay) billingSubscription(w http.ResponseWriter, r *http.Request) {
	c, err := rl.authenticateBound(r)
	if err != nil {
		writeError(w, requestID(w), err)
		return
	}
	total, _, expires := rl.billingAmount(c)
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "billing_subscription", "has_payment_method": true, "soft_limit_usd": total,
		"hard_limit_usd": total, "system_hard_limit_usd": total, "access_until": expires,
	})
}

func (rl *Relay) billingUsage(w http.ResponseWriter, r *http.Request) {
	c, err := rl.authenticateBound(r)
	if err != nil {
		writeError(w, requestID(w), err)
		return
	}
	_, used, _ := rl.billingAmount(c)
	// Rounded to a millionth, so the binary fraction of a dollar amount
	// does not show (0.0048, not 0.0048000000000000004).
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "total_usage": math.Round(used*100*1e6) / 1e6})
}

// Playground relays a console user's chat request, billed to the user at
// the chosen group's ratio (S §11). The group must be one the user may use.
func (rl *Relay) Playground(w http.ResponseWriter, r *http.Request, u *store.User) {
	start := time.Now()
	id := requestID(w)
	body, e := readRequestBody(w, r, rl.cfg.MaxBodyBytes)
	if e != nil {
		writeError(w, id, e)
		return
	}
	// group is the gateway's own field: read here, never sent upstream
	// (providers may refuse fields they do not know).
	var fields map[string]json.RawMessage
	var group string
	if json.Unmarshal(body, &fields) == nil {
		if raw, ok := fields["group"]; ok {
			if json.Unmarshal(raw, &group) != nil && string(bytes.TrimSpace(raw)) != "null" {
				e := badRequest("请求参数格式错误：字段 group 应为字符串")
				e.Param = "group"
				writeError(w, id, e)
				return
			}
			delete(fields, "group")
			if b, err := json.Marshal(fields); err == nil {
				body = b
			}
		}
	}
	// The account as it is now, once the body is in: a group changed while
	// a slow body arrived prices the call (its status is asked again by
	// serve).
	if fresh, err := rl.store.User(u.ID); err == nil {
		u = fresh
	}
	set := rl.store.Settings()
	if group == "" {
		group = u.Group
	} else if _, ok := set.UsableGroups(u.Group)[group]; !ok && group != u.Group {
		// Offered groups only, as for tokens: listed as usable and priced.
		writeError(w, id, localError(http.StatusForbidden, "group_not_allowed", "无权使用分组 "+group))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rl.serve(w, r, kindChat, &Caller{User: u, Group: group, IsAdmin: u.Role >= store.RoleAdmin}, start)
}
