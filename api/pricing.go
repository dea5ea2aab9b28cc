package api

import (
	"net/http"
	"sort"

	"gateway/relay"
)

func (s *Server) registerPricingRoutes() {
	s.handle("GET /api/pricing", s.getPricing)
}

// pricingItem is one model of the public pricing page (S §4.4).
type pricingItem struct {
	ModelName       string   `json:"model_name"`
	QuotaType       int      `json:"quota_type"` // 1 fixed price per call, 0 ratios
	ModelRatio      float64  `json:"model_ratio"`
	ModelPrice      float64  `json:"model_price"`
	OwnerBy         string   `json:"owner_by"`
	CompletionRatio float64  `json:"completion_ratio"`
	EnableGroups    []string `json:"enable_groups"`
}

// pricingReply carries group_ratio at the top level, beside data.
type pricingReply struct {
	Success    bool               `json:"success"`
	Message    string             `json:"message"`
	Data       []pricingItem      `json:"data"`
	GroupRatio map[string]float64 `json:"group_ratio"`
}

// getPricing lists every model an enabled channel serves, priced exactly as
// billing prices it (relay.PriceInfo), sorted by name. A model with neither
// a price nor a ratio is left out: the relay refuses calls to it. It is
// computed per request from the in-memory routing and settings, so no cache
// is needed and an option change shows at once.
func (s *Server) getPricing(w http.ResponseWriter, r *http.Request) {
	set := s.store.Settings()
	models := s.store.EnabledModels()
	items := make([]pricingItem, 0, len(models))
	for name, groups := range models {
		ratio, completion, price, fixed, ok := relay.PriceInfo(set, name)
		if !ok {
			continue
		}
		it := pricingItem{ModelName: name, ModelRatio: ratio, ModelPrice: price, CompletionRatio: completion, EnableGroups: groups}
		if fixed {
			it.QuotaType = 1
		}
		items = append(items, it)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ModelName < items[j].ModelName })
	writeRaw(w, http.StatusOK, pricingReply{Success: true, Data: items, GroupRatio: set.GroupRatio})
}
