package relay

import "testing"

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
