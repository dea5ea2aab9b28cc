package relay

import "gateway/store"

// PriceInfo reports how billing prices model under set, for the public
// pricing page, with the same lookups a call goes through (GPTs names
// collapse to their wildcard; the configured completion ratio wins over the
// built-in rule). A fixed-price model has fixed true and modelPrice in US$
// per call, with both ratios 0; a ratio-priced one has its model and
// completion ratios and modelPrice 0. ok is false for a model with neither a
// price nor a ratio: the relay refuses such calls.
func PriceInfo(set *store.Settings, model string) (modelRatio, completionRatio, modelPrice float64, fixed, ok bool) {
	p, err := priceFor(set, model, "")
	if err != nil {
		return 0, 0, 0, false, false
	}
	if p.fixed() {
		return 0, 0, p.ModelPrice, true, true
	}
	return p.ModelRatio, p.CompletionRatio, 0, false, true
}
