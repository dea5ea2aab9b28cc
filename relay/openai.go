package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"gateway/store"
)

// openAI speaks the OpenAI wire format; most providers offer it.
type openAI struct{ typ int }

func (a openAI) Supports(k kind) bool {
	switch a.typ {
	case TypeOpenAI, TypeCustom:
		return true
	case TypeSiliconFlow:
		// Its image API has its own fields and answer (image_size,
		// batch_size, images[]), not OpenAI's: not relayed.
		return k == kindChat || k == kindEmbedding || k == kindRerank || k == kindCompletion
	case TypeOllama:
		return k == kindChat || k == kindCompletion || k == kindEmbedding
	case TypeMistral, TypeAI360:
		// Chat and embeddings; Mistral's completions are its own FIM API.
		return k == kindChat || k == kindEmbedding
	}
	// Moonshot and 01.AI serve chat only.
	return k == kindChat
}

func (a openAI) StreamUsage(*call, *store.Channel) streamUsage {
	switch a.typ {
	case TypeOpenAI, TypeOllama:
		// Ollama's OpenAI-compatible API documents include_usage.
		return usageAsked
	case TypeCustom:
		// Any server: some read the option, strict ones refuse it.
		return usageAsIs
	}
	return usageRefused
}

func (a openAI) url(ch *store.Channel, k kind, model string) string {
	if a.typ == TypeCustom {
		// A custom channel's base URL is the whole endpoint.
		return strings.ReplaceAll(baseURL(ch), "{model}", model)
	}
	if a.typ == TypeOpenAI && isCloudflareGateway(baseURL(ch)) {
		// .../v1/{account}/{gateway}/openai takes the path without /v1;
		// the gateway's other providers (mistral) keep their own paths.
		return baseURL(ch) + strings.TrimPrefix(upstreamPath[k], "/v1")
	}
	return endpointURL(baseURL(ch), upstreamPath[k])
}

// endpointURL joins a base URL and an OpenAI path (/v1/...). A base that
// already ends in /v1, as providers print their OpenAI-compatible address
// (https://api.moonshot.cn/v1, http://localhost:11434/v1), takes the path
// without its /v1 instead of calling /v1/v1/..., which no provider serves.
func endpointURL(base, path string) string {
	if strings.HasSuffix(base, "/v1") && strings.HasPrefix(path, "/v1/") {
		return base + strings.TrimPrefix(path, "/v1")
	}
	return base + path
}

// isCloudflareGateway reports whether base is a Cloudflare AI Gateway
// endpoint, whose provider paths are its own (S §5.13).
func isCloudflareGateway(base string) bool {
	const host = "gateway.ai.cloudflare.com"
	// Every call asks; only a base that mentions the host is parsed.
	if !strings.Contains(strings.ToLower(base), host) {
		return false
	}
	u, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), host)
}

// clientQueryKey carries the client's query string to the adapters that
// pass part of it on (Azure's api-version).
type clientQueryKey struct{}

func withClientQuery(ctx context.Context, q url.Values) context.Context {
	if len(q) == 0 {
		return ctx
	}
	return context.WithValue(ctx, clientQueryKey{}, q)
}

func clientQuery(ctx context.Context, name string) string {
	q, _ := ctx.Value(clientQueryKey{}).(url.Values)
	return q.Get(name)
}

func (a openAI) Request(ctx context.Context, ch *store.Channel, k kind, model string, body io.Reader, contentType string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.url(ch, k, model), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	if ch.Key != "" {
		req.Header.Set("Authorization", "Bearer "+ch.Key)
	}
	if a.typ == TypeOpenAI && ch.OpenAIOrganization != "" {
		req.Header.Set("OpenAI-Organization", ch.OpenAIOrganization)
	}
	return req, nil
}

func (a openAI) ConvertBody(k kind, body []byte, fields map[string][]byte, upstreamModel string, su streamUsage, stream bool) ([]byte, error) {
	fields, renamed := renameField(fields, a.typ, k, upstreamModel)
	// Providers without stream usage may refuse the option outright
	// (Mistral answers 422), so the client's is removed (S §5.8 step 8).
	return rewriteJSON(body, fields, upstreamModel, stream && su == usageAsked, su == usageRefused, renamed)
}

// renamedFields names the fields of a request body that a channel of type
// typ takes under other names when it calls upstreamModel, each as {from,
// to}: Mistral refuses fields it does not know (422), bounds an answer by
// max_tokens, seeds it with random_seed and sizes an embedding with
// output_dimension; OpenAI's reasoning models refuse max_tokens and take
// max_completion_tokens, on OpenAI and on Azure. An empty to drops the
// field: OpenAI's request-tagging fields that Mistral has no use for and
// refuses (user, store, ...), which OpenAI clients send whatever the
// provider.
func renamedFields(typ int, k kind, upstreamModel string) [][2]string {
	switch {
	case typ == TypeMistral && k == kindEmbedding:
		return [][2]string{{"dimensions", "output_dimension"}, {"user", ""}}
	case typ == TypeMistral:
		return [][2]string{{"max_completion_tokens", "max_tokens"}, {"seed", "random_seed"},
			{"user", ""}, {"store", ""}, {"service_tier", ""}, {"prompt_cache_key", ""}, {"safety_identifier", ""}}
	case (typ == TypeOpenAI || typ == TypeAzure) && k == kindChat && reasoningModel(upstreamModel):
		return [][2]string{{"max_tokens", "max_completion_tokens"}}
	}
	return nil
}

// renamesFields reports whether ConvertBody renames a field of body.
func renamesFields(typ int, k kind, upstreamModel string, body []byte) bool {
	for _, r := range renamedFields(typ, k, upstreamModel) {
		if bytes.Contains(body, []byte(`"`+r[0]+`"`)) {
			return true
		}
	}
	return false
}

// renameField gives fields the provider's names for the fields
// renamedFields names; a body that holds both keeps the provider's own.
func renameField(fields map[string][]byte, typ int, k kind, upstreamModel string) (map[string][]byte, bool) {
	renamed := false
	for _, r := range renamedFields(typ, k, upstreamModel) {
		from, to := r[0], r[1]
		v, ok := fields[from]
		if !ok {
			continue
		}
		if !renamed {
			fields = maps.Clone(fields)
			renamed = true
		}
		delete(fields, from)
		if _, ok := fields[to]; !ok && to != "" {
			fields[to] = v
		}
	}
	return fields, renamed
}

// rewriteJSON sets "model" and, when asked, stream_options.include_usage or
// removes stream_options, keeping every other field as the client sent it.
// Without changes the client's bytes go upstream untouched.
func rewriteJSON(body []byte, fields map[string][]byte, upstreamModel string, addUsage, dropStreamOptions, changed bool) ([]byte, error) {
	if fields == nil {
		return body, nil
	}
	var cur string
	if raw, ok := fields["model"]; ok {
		_ = json.Unmarshal(raw, &cur)
	}
	out := make(map[string]json.RawMessage, len(fields)+1)
	for k, v := range fields {
		out[k] = v
	}
	if upstreamModel != "" && upstreamModel != cur {
		m, _ := json.Marshal(upstreamModel)
		out["model"] = m
		changed = true
	}
	if addUsage {
		opts := map[string]json.RawMessage{}
		if raw, ok := fields["stream_options"]; ok && len(raw) > 0 && string(raw) != "null" {
			_ = json.Unmarshal(raw, &opts)
		}
		if string(opts["include_usage"]) != "true" {
			opts["include_usage"] = json.RawMessage("true")
			b, _ := json.Marshal(opts)
			out["stream_options"] = b
			changed = true
		}
	} else if _, ok := out["stream_options"]; ok && dropStreamOptions {
		delete(out, "stream_options")
		changed = true
	}
	if !changed {
		return body, nil
	}
	return json.Marshal(out)
}

func (a openAI) ModelsRequest(ctx context.Context, ch *store.Channel) (*http.Request, error) {
	base := baseURL(ch)
	if a.typ == TypeCustom {
		u, err := url.Parse(base)
		if err != nil {
			return nil, err
		}
		base = u.Scheme + "://" + u.Host
	}
	path := "/v1/models"
	if a.typ == TypeOpenAI && isCloudflareGateway(base) {
		// Listed where the calls go: the gateway's path without /v1.
		path = "/models"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpointURL(base, path), nil)
	if err != nil {
		return nil, err
	}
	if ch.Key != "" {
		req.Header.Set("Authorization", "Bearer "+ch.Key)
	}
	if a.typ == TypeOpenAI && ch.OpenAIOrganization != "" {
		// The organization's models, fine-tuned ones included.
		req.Header.Set("OpenAI-Organization", ch.OpenAIOrganization)
	}
	return req, nil
}

// Balance reads OpenAI's billing endpoints: the hard limit from the
// subscription, minus this month's usage.
func (a openAI) Balance(ctx context.Context, client *http.Client, ch *store.Channel) (float64, error) {
	if a.typ != TypeOpenAI && a.typ != TypeCustom {
		return 0, errBalanceUnsupported
	}
	base := baseURL(ch)
	if a.typ == TypeCustom {
		if u, err := url.Parse(base); err == nil {
			base = u.Scheme + "://" + u.Host
		}
	}
	// A member missing is no balance: an answer without it (another
	// gateway's {"success":false,...}) must not be stored as 0.
	var sub struct {
		HasPaymentMethod bool     `json:"has_payment_method"`
		HardLimitUSD     *float64 `json:"hard_limit_usd"`
	}
	if err := getJSON(ctx, client, ch, endpointURL(base, "/v1/dashboard/billing/subscription"), &sub); err != nil {
		return 0, err
	}
	if sub.HardLimitUSD == nil {
		return 0, errors.New("上游返回中没有 hard_limit_usd")
	}
	// OpenAI's billing counts UTC days: the dates are UTC ones, whatever the server's zone.
	now := time.Now().UTC()
	start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	if !sub.HasPaymentMethod {
		start = now.AddDate(0, 0, -100)
	}
	var usage struct {
		TotalUsage *float64 `json:"total_usage"`
	}
	u := fmt.Sprintf("%s?start_date=%s&end_date=%s", endpointURL(base, "/v1/dashboard/billing/usage"), start.Format("2006-01-02"), now.AddDate(0, 0, 1).Format("2006-01-02"))
	if err := getJSON(ctx, client, ch, u, &usage); err != nil {
		return 0, err
	}
	if usage.TotalUsage == nil {
		return 0, errors.New("上游返回中没有 total_usage")
	}
	return *sub.HardLimitUSD - *usage.TotalUsage/100, nil
}

var errBalanceUnsupported = errors.New("该渠道类型不支持查询余额")

func getJSON(ctx context.Context, client *http.Client, ch *store.Channel, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+ch.Key)
	// The balance of the organisation the channel's calls are billed to.
	if ch.Type == TypeOpenAI && ch.OpenAIOrganization != "" {
		req.Header.Set("OpenAI-Organization", ch.OpenAIOrganization)
	}
	resp, err := client.Do(req)
	if err != nil {
		return transportError{err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return transportError{err}
	}
	if resp.StatusCode != http.StatusOK {
		msg := upstreamMessage(data, ch.Key)
		if msg == "" {
			msg = resp.Status
		}
		return fmt.Errorf("上游返回 %d：%s", resp.StatusCode, msg)
	}
	// Gateways of this kind answer a failed billing query with 200 and an
	// error object, or with {"success": false, "message": ...}.
	var probe struct {
		Success *bool `json:"success"`
	}
	failed := json.Unmarshal(data, &probe) == nil && probe.Success != nil && !*probe.Success
	if failed || errorIn(data) {
		msg := upstreamMessage(data, ch.Key)
		if msg == "" {
			msg = "error"
		}
		return fmt.Errorf("上游返回错误：%s", msg)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return errors.New("上游返回的余额格式错误")
	}
	return nil
}

// azure speaks Azure OpenAI: deployment URLs, an api-key header and an API
// version from the channel's other field.
type azure struct{}

// AzureDefaultAPIVersion is used when a channel sets none.
const AzureDefaultAPIVersion = "2023-06-01-preview"

// Azure OpenAI has no moderations or rerank endpoint.
func (azure) Supports(k kind) bool { return k != kindModeration && k != kindRerank }

// StreamUsage: Azure reads stream_options from API version
// 2024-09-01-preview on and refuses it before (400).
func (azure) StreamUsage(c *call, ch *store.Channel) streamUsage {
	version := ""
	if c != nil && c.r != nil && c.r.URL.RawQuery != "" {
		version = c.r.URL.Query().Get("api-version")
	}
	if version == "" {
		version = strings.TrimSpace(ch.Other)
	}
	if version == "" {
		version = AzureDefaultAPIVersion
	}
	if azureReadsStreamOptions(version) {
		return usageAsked
	}
	return usageRefused
}

// azureReadsStreamOptions reports whether an Azure API version, dated
// YYYY-MM-DD with an optional -preview, is 2024-09-01 or later.
func azureReadsStreamOptions(version string) bool {
	if len(version) < 10 {
		return false
	}
	if _, err := time.Parse("2006-01-02", version[:10]); err != nil || (len(version) > 10 && version[10] != '-') {
		return false
	}
	return version[:10] >= "2024-09-01"
}

func (azure) Request(ctx context.Context, ch *store.Channel, k kind, model string, body io.Reader, contentType string) (*http.Request, error) {
	// The client's api-version, else the channel's, else the default.
	version := clientQuery(ctx, "api-version")
	if version == "" {
		version = strings.TrimSpace(ch.Other)
	}
	if version == "" {
		version = AzureDefaultAPIVersion
	}
	deployment := strings.ReplaceAll(model, ".", "")
	path := strings.TrimPrefix(upstreamPath[k], "/v1/")
	deployments := "/openai/deployments/"
	if isCloudflareGateway(baseURL(ch)) {
		// .../v1/{account}/{gateway}/azure-openai/{resource} takes the
		// deployment right after it.
		deployments = "/"
	}
	u := fmt.Sprintf("%s%s%s/%s?api-version=%s", baseURL(ch), deployments, url.PathEscape(deployment), path, url.QueryEscape(version))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("api-key", ch.Key)
	return req, nil
}

func (azure) ConvertBody(k kind, body []byte, fields map[string][]byte, upstreamModel string, su streamUsage, stream bool) ([]byte, error) {
	fields, renamed := renameField(fields, TypeAzure, k, upstreamModel)
	return rewriteJSON(body, fields, upstreamModel, stream && su == usageAsked, su == usageRefused, renamed)
}

func (azure) Balance(context.Context, *http.Client, *store.Channel) (float64, error) {
	return 0, errBalanceUnsupported
}

func (azure) ModelsRequest(ctx context.Context, ch *store.Channel) (*http.Request, error) {
	return nil, errors.New("仅支持 OpenAI 接口格式")
}
