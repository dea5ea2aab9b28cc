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
}

func (p price) fixed() bool { return p.ModelPrice >= 0 }

// priceFor looks up the price of model for group. A model with neither a
// price nor a ratio is refused rather than charged a made-up amount.
func priceFor(set *store.Settings, model, group string) (price, *Error) {
	p := price{GroupRatio: set.GroupRatioOf(group), ModelPrice: -1, qpu: set.QuotaPerUnit()}
	name := model
	if strings.HasPrefix(name, "gpt-4-gizmo") {
		name = "gpt-4-gizmo-*"
	} else if strings.HasPrefix(name, "gpt-4o-gizmo") {
		name = "gpt-4o-gizmo-*"
	}
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

// completionRatio returns the configured CompletionRatio of model when there
// is one, else the built-in default for its family, else 1.
func completionRatio(set *store.Settings, model string) float64 {
	if v, ok := set.CompletionRatio[model]; ok {
		return v
	}
	return defaultCompletionRatio(model)
}

func defaultCompletionRatio(m string) float64 {
	has := strings.HasPrefix
	switch {
	case m == "gpt-4o-2024-05-13":
		return 3
	case m == "chatgpt-4o-latest":
		return 3
	case has(m, "gpt-4o"), has(m, "o1"), has(m, "o3"), has(m, "gpt-4.1"):
		return 4
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
	case has(m, "claude-instant-1"), has(m, "claude-2"):
		return 3
	case has(m, "claude-3"):
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
	case has(m, "deepseek"):
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

// reserve is the quota held before the upstream call: the fixed price, or
// the prompt plus max_tokens (PreConsumedQuota tokens when unset) at the
// model's ratios.
func (p price) reserve(promptTokens, maxTokens int, preConsumed int64) int64 {
	if p.fixed() {
		return int64(p.ModelPrice * p.qpu * p.GroupRatio)
	}
	t := float64(promptTokens)
	if maxTokens > 0 {
		t += float64(maxTokens) * p.CompletionRatio
	} else {
		t += float64(preConsumed)
	}
	return int64(t * p.ModelRatio * p.GroupRatio)
}

// charge is the final quota of a call with the given usage. A call that
// used nothing costs nothing; any usage at a non-zero ratio costs at least 1.
func (p price) charge(prompt, completion int) int64 {
	if p.fixed() {
		return int64(p.ModelPrice * p.qpu * p.GroupRatio)
	}
	if prompt+completion == 0 {
		return 0
	}
	q := math.Round((float64(prompt) + math.Round(float64(completion)*p.CompletionRatio)) * p.ModelRatio * p.GroupRatio)
	if q < 1 && p.ModelRatio != 0 && p.GroupRatio != 0 {
		q = 1
	}
	return int64(q)
}
