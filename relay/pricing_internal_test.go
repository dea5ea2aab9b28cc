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
