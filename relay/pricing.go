package relay

import (
	"math"
	"strings"

	"gateway/store"
)

// price is what a call costs: a fixed price per call, or ratios applied to
// tokens. QuotaPerUnit quota = US$1; model ratio 1 = US$0.002 per 1K tokens.
type price struct {
	ModelRatio      float64
	CompletionRatio float64
	GroupRatio      float64
	ModelPrice      float64 // US$ per call; -1 when ratios apply
	qpu             float64
	// Audio marks the audio-model variant (gpt-4o-audio*, S §5.8, and the
	// later audio chat models, see audioModel): audio tokens are priced at
	// AudioRatio, audio output also at AudioCompletionRatio.
	Audio                bool
	AudioRatio           float64
	AudioCompletionRatio float64
}

func (p price) fixed() bool { return p.ModelPrice >= 0 }

// priceFor looks up the price of model for group. A model with neither a
// price nor a ratio is refused rather than charged a made-up amount.
func priceFor(set *store.Settings, model, group string) (price, *Error) {
	p := price{GroupRatio: set.GroupRatioOf(group), ModelPrice: -1, qpu: set.QuotaPerUnit()}
	if audioModel(model) {
		p.Audio, p.AudioRatio, p.AudioCompletionRatio = true, audioRatio, audioCompletionRatio
	}
	name := store.GizmoName(model)
	if v, ok := set.ModelPrice[name]; ok {
		p.ModelPrice = v
		return p, nil
	}
	r, ok := set.ModelRatio[name]
	if !ok {
		return p, localError(400, "model_price_error", "模型 "+model+" 的倍率或价格未配置，请联系管理员设置")
	}
	p.ModelRatio = r
	p.CompletionRatio = completionRatio(set, name)
	return p, nil
}

// audioModel reports whether model is an audio chat model priced by the
// audio variant: S §5.8 names gpt-4o-audio*; OpenAI's later audio chat
// models (gpt-4o-mini-audio*, gpt-audio*) report their audio tokens the same
// way, and billed as text their audio would cost a fortieth of its price.
// As for the completion ratio, a provider's prefix (openai/gpt-4o-audio…)
// does not change the model.
func audioModel(model string) bool {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	for _, p := range []string{"gpt-4o-audio", "gpt-4o-mini-audio", "gpt-audio"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// completionRatio returns the configured CompletionRatio of model when there
// is one, else the built-in default for its family, else 1.
func completionRatio(set *store.Settings, model string) float64 {
	if v, ok := set.CompletionRatio[model]; ok {
		return v
	}
	return defaultCompletionRatio(model)
}

func defaultCompletionRatio(m string) float64 {
	// A provider's prefix (OpenRouter's openai/gpt-4o) does not change the
	// family; Claude is found anywhere in the name (Bedrock's
	// us.anthropic.claude-3-5-sonnet-…).
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	// A fine-tuned model (ft:gpt-4o-mini-2024-07-18:org::id) completes at
	// its base model's ratio.
	if base, ok := strings.CutPrefix(m, "ft:"); ok {
		m, _, _ = strings.Cut(base, ":")
	}
	has := strings.HasPrefix
	switch {
	case m == "gpt-4o-2024-05-13":
		return 3
	case m == "chatgpt-4o-latest":
		return 3
	case has(m, "gpt-4o"), has(m, "o1"), has(m, "o3"), has(m, "o4"), has(m, "gpt-4.1"), has(m, "gpt-audio"):
		return 4
	case has(m, "gpt-5"):
		return 8
	case has(m, "gpt-4.5"):
		return 2
	case has(m, "gpt-4-turbo"), strings.HasSuffix(m, "preview"):
		return 3
	case has(m, "gpt-4") && !strings.HasSuffix(m, "-all") && !strings.Contains(m, "gizmo"):
		return 2
	case has(m, "gpt-3.5"):
		if m == "gpt-3.5-turbo" || strings.HasSuffix(m, "0125") {
			return 3
		}
		if strings.HasSuffix(m, "1106") {
			return 2
		}
		return 4.0 / 3.0
	case strings.Contains(m, "claude-instant-1"), strings.Contains(m, "claude-2"):
		return 3
	case strings.Contains(m, "claude-"): // claude-3…, claude-sonnet-4…, claude-opus-4…
		return 5
	case has(m, "mistral-"):
		return 3
	case has(m, "gemini-"):
		return 4
	case has(m, "command-r-plus-08-2024"), has(m, "command-r-08-2024"):
		return 4
	case has(m, "command-r-plus"):
		return 5
	case has(m, "command-r"):
		return 3
	case has(m, "command"):
		return 2
	case has(strings.ToLower(m), "deepseek"): // SiliconCloud's deepseek-ai/DeepSeek-V3
		return 2
	case has(m, "ERNIE-Speed"), has(m, "ERNIE-Lite"), has(m, "ERNIE-Character"), has(m, "ERNIE-Functions"):
		return 2
	case m == "llama2-70b-4096":
		return 1.25
	case m == "llama3-8b-8192":
		return 2
	case m == "llama3-70b-8192":
		return 0.79 / 0.59
	}
	return 1
}

// The built-in audio ratios of gpt-4o-audio models (S §5.7); like the
// reference, they are not options.
const (
	audioRatio           = 40
	audioCompletionRatio = 2
)

// reserve is the quota held before the upstream call: the fixed price, or
// the prompt plus max_tokens (times the choices asked for; PreConsumedQuota
// tokens when unset) at the
// model's ratios. A rerank reserves its prompt only (S §5.8 step 4); speech,
// whose charge is its prompt (the input), known up front, reserves exactly
// that charge. An
// audio model's max_tokens are reserved at the dearer of the text and the
// audio output rate, so the completion of a call with max_tokens stays
// within its reservation whatever its modality.
func (p price) reserve(k kind, promptTokens, maxTokens int, preConsumed int64) int64 {
	if p.fixed() {
		return moneyQuota(p.ModelPrice * p.qpu * p.GroupRatio)
	}
	if k == kindSpeech {
		// Speech is charged its prompt alone, counted here before the call:
		// the hold is that very charge, rounded as the charge rounds.
		return p.quota(usage{PromptTokens: promptTokens}.sane())
	}
	t := float64(promptTokens)
	switch {
	case k == kindRerank:
	case maxTokens > 0:
		cr := p.CompletionRatio
		if p.Audio {
			cr = max(cr, p.AudioRatio*p.AudioCompletionRatio)
		}
		// Rounded up as the charge rounds the completion's weight; an
		// audio model's charge rounds its text and audio parts apart, which
		// may come to one more.
		t += math.Ceil(float64(maxTokens) * cr)
		if p.Audio {
			t++
		}
	default:
		t += float64(preConsumed)
	}
	// Rounded up: the final charge rounds and is at least 1, so a
	// truncated reservation could be exceeded by one.
	return toQuota(math.Ceil(t * p.ModelRatio * p.GroupRatio))
}

// audioSplit is a usage cut into its text and audio parts. The text parts
// are the totals minus the audio ones, so every token the upstream counted
// (image tokens too) is billed even when it reports no text_tokens. The
// audio parts are parts of those totals: an audio count above its total is
// the whole total, not more audio than the call used.
type audioSplit struct {
	TextIn, TextOut, AudioIn, AudioOut int
}

func splitAudio(u usage) audioSplit {
	var s audioSplit
	if d := u.PromptTokensDetails; d != nil {
		s.AudioIn = min(max(d.AudioTokens, 0), max(u.PromptTokens, 0))
	}
	if d := u.CompletionTokensDetails; d != nil {
		s.AudioOut = min(max(d.AudioTokens, 0), max(u.CompletionTokens, 0))
	}
	s.TextIn = max(u.PromptTokens-s.AudioIn, 0)
	s.TextOut = max(u.CompletionTokens-s.AudioOut, 0)
	return s
}

// quota is the final quota of a call with usage u: the audio variant for
// audio models, else charge.
func (p price) quota(u usage) int64 {
	if !p.Audio || p.fixed() {
		return p.charge(u.PromptTokens, u.CompletionTokens)
	}
	s := splitAudio(u)
	if s.TextIn+s.TextOut+s.AudioIn+s.AudioOut == 0 {
		return 0
	}
	// S §5.8: round(text_in + text_out×CR) + round(audio_in×AR +
	// audio_out×AR×ACR), then × model ratio × group ratio.
	text := math.Round(float64(s.TextIn) + float64(s.TextOut)*p.CompletionRatio)
	audio := math.Round(float64(s.AudioIn)*p.AudioRatio + float64(s.AudioOut)*p.AudioRatio*p.AudioCompletionRatio)
	q := math.Round((text + audio) * p.ModelRatio * p.GroupRatio)
	if q < 1 && p.ModelRatio != 0 && p.GroupRatio != 0 {
		q = 1
	}
	return toQuota(q)
}

// charge is the final quota of a call with the given usage. A call that
// used nothing costs nothing; any usage at a non-zero ratio costs at least 1.
func (p price) charge(prompt, completion int) int64 {
	if p.fixed() {
		return moneyQuota(p.ModelPrice * p.qpu * p.GroupRatio)
	}
	if prompt+completion == 0 {
		return 0
	}
	q := math.Round((float64(prompt) + math.Round(float64(completion)*p.CompletionRatio)) * p.ModelRatio * p.GroupRatio)
	if q < 1 && p.ModelRatio != 0 && p.GroupRatio != 0 {
		q = 1
	}
	return toQuota(q)
}

// moneyQuota converts a price in dollars times QuotaPerUnit to quota units,
// truncated as S §5.8 has it (int(price × QuotaPerUnit × GR)), but of the
// decimal amount the product stands for: a float product a rounding error
// short of a whole number (0.0157 × 500000 = 7849.999…) is that number, not
// one unit less than the price the pricing page shows.
func moneyQuota(f float64) int64 {
	if r := math.Round(f); r > 0 && math.Abs(f-r) <= r*1e-9 {
		f = r
	}
	return toQuota(f)
}

// maxQuota bounds any one price: far beyond any balance, so such a call is
// refused for want of quota, and far from int64's end, so sums of prices do
// not wrap around.
const maxQuota = int64(1) << 53

// toQuota converts a computed price to quota units, saturating instead of
// wrapping (a wrapped price would be negative, and so free).
func toQuota(f float64) int64 {
	switch {
	case f != f || f <= 0: // NaN or nothing
		return 0
	case f >= float64(maxQuota):
		return maxQuota
	}
	return int64(f)
}
