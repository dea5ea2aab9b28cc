package store

import (
	"math/rand/v2"
	"sort"
	"strings"

	json "github.com/goccy/go-json"
	bolt "go.etcd.io/bbolt"
)

// routing is an immutable index of enabled channels for selection:
// group -> model -> priority tiers (highest first). It is rebuilt after every
// channel change, so an edit routes at once.
type routing struct {
	tiers  map[string]map[string][][]*Channel
	byID   map[uint64]*Channel
	models map[string][]string // group -> sorted model names
}

// rebuildRouting reads every channel and replaces the routing index. Called
// after each channel change has committed; rebuilds run one at a time, each
// reading the file after the one before stored its index, so the index
// stored last holds every committed change (two rebuilds racing could
// otherwise store an older read last).
func (s *Store) rebuildRouting() error {
	s.routingMu.Lock()
	defer s.routingMu.Unlock()
	r := &routing{tiers: map[string]map[string][][]*Channel{}, byID: map[uint64]*Channel{}, models: map[string][]string{}}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketChannels).ForEach(func(k, v []byte) error {
			var c Channel
			if err := json.Unmarshal(v, &c); err != nil {
				return err
			}
			cp := c
			r.byID[c.ID] = &cp
			return nil
		})
	})
	if err != nil {
		return Internal(err)
	}
	flat := map[string]map[string][]*Channel{}
	for _, c := range r.byID {
		if c.Status != ChannelStatusEnabled {
			continue
		}
		for _, g := range c.GroupList() {
			if flat[g] == nil {
				flat[g] = map[string][]*Channel{}
			}
			for _, m := range c.ModelList() {
				flat[g][m] = append(flat[g][m], c)
			}
		}
	}
	for g, models := range flat {
		r.tiers[g] = map[string][][]*Channel{}
		for m, chs := range models {
			sort.Slice(chs, func(i, j int) bool {
				if chs[i].Priority != chs[j].Priority {
					return chs[i].Priority > chs[j].Priority
				}
				return chs[i].ID < chs[j].ID
			})
			var tiers [][]*Channel
			for i := 0; i < len(chs); {
				j := i
				for j < len(chs) && chs[j].Priority == chs[i].Priority {
					j++
				}
				tiers = append(tiers, chs[i:j])
				i = j
			}
			r.tiers[g][m] = tiers
			r.models[g] = append(r.models[g], m)
		}
		sort.Strings(r.models[g])
	}
	s.routing.Store(r)
	return nil
}

// GizmoName collapses a GPT gizmo's model name to the wildcard of its family,
// the name it is routed, priced and logged by (S §5.4, §5.7, §5.8).
func GizmoName(model string) string {
	switch {
	case strings.HasPrefix(model, "gpt-4-gizmo"):
		return "gpt-4-gizmo-*"
	case strings.HasPrefix(model, "gpt-4o-gizmo"):
		return "gpt-4o-gizmo-*"
	}
	return model
}

// SelectChannel picks an enabled channel for (group, model): it walks the
// priority tiers from the highest, starting at tier index `tier` (clamped to
// the lowest), skips channels in exclude, and picks at random within a tier
// with probability proportional to weight + 10. It returns nil when no
// channel is left.
func (s *Store) SelectChannel(group, model string, tier int, exclude map[uint64]bool) *Channel {
	r := s.routing.Load()
	if r == nil {
		return nil
	}
	tiers := r.tiers[group][GizmoName(model)]
	if len(tiers) == 0 {
		return nil
	}
	if tier >= len(tiers) {
		tier = len(tiers) - 1
	}
	if tier < 0 {
		tier = 0
	}
	// Try the requested tier, then lower ones, then higher ones, so a retry
	// never repeats a channel while another is available.
	order := make([]int, 0, len(tiers))
	for i := tier; i < len(tiers); i++ {
		order = append(order, i)
	}
	for i := tier - 1; i >= 0; i-- {
		order = append(order, i)
	}
	for _, i := range order {
		var total int64
		for _, c := range tiers[i] {
			if !exclude[c.ID] {
				total += c.Weight + 10
			}
		}
		if total == 0 {
			continue
		}
		pick := rand.Int64N(total)
		for _, c := range tiers[i] {
			if exclude[c.ID] {
				continue
			}
			pick -= c.Weight + 10
			if pick < 0 {
				return c
			}
		}
	}
	return nil
}

// RoutingChannel returns the routing copy of a channel, enabled or not.
func (s *Store) RoutingChannel(id uint64) *Channel {
	r := s.routing.Load()
	if r == nil {
		return nil
	}
	return r.byID[id]
}

// GroupModels returns the models with an enabled channel in group.
func (s *Store) GroupModels(group string) []string {
	r := s.routing.Load()
	if r == nil {
		return nil
	}
	return r.models[group]
}

// EnabledModels returns every model with an enabled channel, with the groups
// that serve it.
func (s *Store) EnabledModels() map[string][]string {
	out := map[string][]string{}
	r := s.routing.Load()
	if r == nil {
		return out
	}
	for g, models := range r.models {
		for _, m := range models {
			out[m] = append(out[m], g)
		}
	}
	for m := range out {
		sort.Strings(out[m])
	}
	return out
}
