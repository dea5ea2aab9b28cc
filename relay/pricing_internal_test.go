package relay

import (
	"math"
	"testing"
	"time"

	"gateway/store"
)

// An absurd ratio or price saturates instead of wrapping around to a
// negative, and so free, call.
func TestPricesSaturate(t *testing.T) {
	ratio := price{ModelRatio: 1e300, CompletionRatio: 1e10, GroupRatio: 1, ModelPrice: -1, qpu: 500000}
	if got := ratio.reserve(kindChat, 10, 1000, 0); got != maxQuota {
		t.Errorf("reserve = %d, want %d", got, maxQuota)
	}
	if got := ratio.charge(10, 10); got != maxQuota {
		t.Errorf("charge = %d, want %d", got, maxQuota)
	}
	fixed := price{ModelRatio: 1, CompletionRatio: 1, GroupRatio: 1e300, ModelPrice: 1e10, qpu: 500000}
	if got := fixed.reserve(kindChat, 10, 0, 0); got != maxQuota {
		t.Errorf("fixed reserve = %d, want %d", got, maxQuota)
	}
	if got := fixed.charge(1, 1); got != maxQuota {
		t.Errorf("fixed charge = %d, want %d", got, maxQuota)
	}
	// Ordinary prices are untouched.
	if got := (price{ModelRatio: 1.5, CompletionRatio: 2, GroupRatio: 1, ModelPrice: -1, qpu: 500000}).charge(100, 50); got != 300 {
		t.Errorf("ordinary charge = %d, want 300", got)
	}
}

// With max_tokens set, no completion up to it costs more than was
// reserved, however the completion ratio rounds (10 tokens + 1 × 1.5
// reserved 115 and charged 120), audio models included.
func TestReserveCoversTheCharge(t *testing.T) {
	for _, p := range []price{
		{ModelRatio: 10, CompletionRatio: 1.5, GroupRatio: 1, ModelPrice: -1, qpu: 500000},
		{ModelRatio: 0.075, CompletionRatio: 4, GroupRatio: 0.5, ModelPrice: -1, qpu: 500000},
		{ModelRatio: 3, CompletionRatio: 1.25, GroupRatio: 1.3, ModelPrice: -1, qpu: 500000},
		{ModelRatio: 1, CompletionRatio: 1.5, GroupRatio: 1, ModelPrice: -1, qpu: 500000, Audio: true, AudioRatio: 0.5, AudioCompletionRatio: 1.5},
		// Text and audio parts that each round up: one text and one audio
		// token cost 2 + 2.
		{ModelRatio: 1, CompletionRatio: 1.5, GroupRatio: 1, ModelPrice: -1, qpu: 500000, Audio: true, AudioRatio: 1, AudioCompletionRatio: 1.5},
	} {
		for prompt := 0; prompt <= 12; prompt++ {
			for maxTokens := 1; maxTokens <= 12; maxTokens++ {
				reserved := p.reserve(kindChat, prompt, maxTokens, 500)
				for c := 0; c <= maxTokens; c++ {
					for audio := 0; audio <= c; audio++ {
						u := usage{PromptTokens: prompt, CompletionTokens: c, CompletionTokensDetails: &tokenDetails{AudioTokens: audio}}
						if got := p.quota(u); got > reserved {
							t.Fatalf("%+v: prompt %d, max_tokens %d: reserved %d, charged %d for completion %d (audio %d)", p, prompt, maxTokens, reserved, got, c, audio)
						}
					}
				}
			}
		}
	}
}

// What a call reserves (docs/billing.md): the prompt and PreConsumedQuota
// tokens without max_tokens, the prompt and max_tokens at the completion
// ratio with it, the prompt alone for a rerank, the fixed price; rounded up.
func TestReserveAmounts(t *testing.T) {
	ratio := price{ModelRatio: 2.5, CompletionRatio: 3, GroupRatio: 0.5, ModelPrice: -1, qpu: 500000}
	fixed := price{ModelRatio: 2.5, CompletionRatio: 3, GroupRatio: 0.5, ModelPrice: 0.02, qpu: 500000}
	for _, tc := range []struct {
		name              string
		p                 price
		k                 kind
		prompt, maxTokens int
		want              int64
	}{
		{"no max_tokens", ratio, kindChat, 11, 0, 639},         // ceil((11 + 500) × 1.25)
		{"max_tokens", ratio, kindChat, 12, 7, 42},             // ceil((12 + 21) × 1.25)
		{"completion", ratio, kindCompletion, 12, 7, 42},       // likewise
		{"rerank", ratio, kindRerank, 11, 7, 14},               // ceil(11 × 1.25)
		{"fixed price", fixed, kindChat, 11, 7, 5000},          // 0.02 × 500 000 × 0.5
		{"fixed, no max_tokens", fixed, kindChat, 11, 0, 5000}, // likewise
	} {
		if got := tc.p.reserve(tc.k, tc.prompt, tc.maxTokens, 500); got != tc.want {
			t.Errorf("%s: reserved %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A call that used anything costs at least 1, an audio model's too
// (gpt-4o-mini-audio's ratio makes a few tokens round to 0); one that used
// nothing costs nothing.
func TestChargeAtLeastOne(t *testing.T) {
	text := price{ModelRatio: 0.075, CompletionRatio: 4, GroupRatio: 1, ModelPrice: -1, qpu: 500000}
	audio := text
	audio.Audio, audio.AudioRatio, audio.AudioCompletionRatio = true, 40, 2
	for _, p := range []price{text, audio} {
		if got := p.quota(usage{PromptTokens: 1}); got != 1 {
			t.Errorf("audio %v: one prompt token charged %d, want 1", p.Audio, got)
		}
		if got := p.quota(usage{}); got != 0 {
			t.Errorf("audio %v: nothing used charged %d, want 0", p.Audio, got)
		}
	}
}

// Counts an upstream reports are bounded before they are priced: a
// negative prompt does not lower the charge, a huge count does not wrap.
func TestUsageSane(t *testing.T) {
	p := price{ModelRatio: 1, CompletionRatio: 1, GroupRatio: 1, ModelPrice: -1, qpu: 500000}
	u := usage{PromptTokens: -1000, CompletionTokens: 500, TotalTokens: -500, CompletionTokensDetails: &tokenDetails{AudioTokens: -3}}.sane()
	if u.PromptTokens != 0 || u.CompletionTokens != 500 || u.TotalTokens != 0 || u.CompletionTokensDetails.AudioTokens != 0 {
		t.Fatalf("sane = %+v", u)
	}
	if got := p.quota(u); got != 500 {
		t.Fatalf("charge %d, want 500", got)
	}
	huge := usage{PromptTokens: math.MaxInt, CompletionTokens: maxUsageTokens + 1, TotalTokens: maxUsageTokens}.sane()
	if huge.PromptTokens != 0 || huge.CompletionTokens != 0 || huge.TotalTokens != maxUsageTokens {
		t.Fatalf("sane = %+v: counts beyond the bound read as none, the bound itself kept", huge)
	}
}

// The built-in completion ratios: S §5.7's table, and the later families
// at their providers' output-to-input price ratio (docs/billing.md).
func TestAudioModel(t *testing.T) {
	for model, want := range map[string]bool{
		"gpt-4o-audio-preview":              true,
		"gpt-4o-mini-audio-preview":         true,
		"gpt-audio":                         true,
		"gpt-audio-mini":                    true,
		"openai/gpt-4o-audio-preview":       true,
		"azure/openai/gpt-audio-2025-08-28": true,
		"gpt-4o":                            false,
		"gpt-4o-mini-tts":                   false,
		"openai/gpt-4o-mini":                false,
	} {
		if got := audioModel(model); got != want {
			t.Errorf("%s: %v, want %v", model, got, want)
		}
	}
}

func TestDefaultCompletionRatio(t *testing.T) {
	for model, want := range map[string]float64{
		"gpt-4o":                    4,
		"gpt-4o-mini":               4,
		"gpt-4o-2024-05-13":         3,
		"chatgpt-4o-latest":         3,
		"gpt-4o-audio-preview":      4,
		"gpt-audio":                 4,
		"gpt-audio-mini-2025-10-06": 4,
		"o1":                        4,
		"o1-preview":                4,
		"o1-mini":                   4,
		"o3-mini":                   4,
		"gpt-4.1":                   4,
		"gpt-4.1-nano":              4,
		"o4-mini":                   4,
		"gpt-5":                     8,
		"gpt-5-mini":                8,
		"gpt-5-chat-latest":         8,
		"gpt-4.5-preview":           2,
		"claude-sonnet-4-20250514":  5,
		"claude-opus-4-1-20250805":  5,
		"claude-3-7-sonnet-latest":  5,
		"us.anthropic.claude-sonnet-4-20250514-v1:0": 5,
		"gpt-4-turbo":              3,
		"gpt-4-0125-preview":       3,
		"gemini-2.5-pro-preview":   3,
		"gpt-4":                    2,
		"gpt-4-all":                1,
		"gpt-3.5-turbo":            3,
		"gpt-3.5-turbo-1106":       2,
		"claude-3-haiku":           5,
		"anthropic/claude-3-haiku": 5,
		"us.anthropic.claude-3-5-sonnet-20241022-v2:0": 5,
		"openrouter/claude-2.1":                        3,
		"openai/gpt-4o":                                4,
		"ft:gpt-4o-mini-2024-07-18:acme::9xYz":         4,
		"ft:gpt-4.1-2025-04-14:acme:bot:abc":           4,
		"ft:gpt-3.5-turbo-0125:acme::abc":              3,
		"ft:gpt-4-0613:acme::abc":                      2,
		"deepseek-ai/DeepSeek-V3":                      2,
		"gemini-1.5-pro":                               4,
		"deepseek-chat":                                2,
		"text-embedding-3-small":                       1,
	} {
		if got := defaultCompletionRatio(model); got != want {
			t.Errorf("%s: %v, want %v", model, got, want)
		}
	}
}

// A consume log's content names the price it was charged at, with the
// upstream-timeout note of an empty ratio call and a gizmo's own name; the
// console translates it by these shapes (ui/src/i18n/server.en.json).
func TestConsumeLogContent(t *testing.T) {
	caller := &Caller{User: &store.User{ID: 1, Username: "alice"}, Token: &store.Token{ID: 2, Name: "t"}, Group: "default"}
	ch := &store.Channel{ID: 3}
	ratios := price{ModelRatio: 2.5, CompletionRatio: 4, GroupRatio: 0.8, ModelPrice: -1}
	audio := ratios
	audio.Audio, audio.AudioRatio, audio.AudioCompletionRatio = true, 16, 2
	fixed := price{GroupRatio: 1.5, ModelPrice: 0.04}
	used := usage{PromptTokens: 10, CompletionTokens: 3}
	for _, tc := range []struct {
		model string
		p     price
		u     usage
		want  string
	}{
		{"gpt-4o-mini", ratios, used, "模型倍率 2.5，补全倍率 4，分组倍率 0.8"},
		{"gpt-4o-audio-preview", audio, used, "模型倍率 2.5，补全倍率 4，音频倍率 16，音频补全倍率 2，分组倍率 0.8"},
		{"gpt-4o-mini", ratios, usage{}, "模型倍率 2.5，补全倍率 4，分组倍率 0.8（可能是上游超时）"},
		{"dall-e-3", fixed, usage{}, "模型价格 $0.04，分组倍率 1.5"},
		{"gpt-4-gizmo-g-abc", ratios, used, "模型倍率 2.5，补全倍率 4，分组倍率 0.8，模型 gpt-4-gizmo-g-abc"},
	} {
		c := &call{k: kindChat, id: "req", start: time.Now(), caller: caller, model: tc.model, price: tc.p}
		if got := (&Relay{}).consumeLog(c, ch, tc.u, 100, -1).Content; got != tc.want {
			t.Errorf("%s: content %q, want %q", tc.model, got, tc.want)
		}
	}
}
