package api

import (
	"net/http"
	"sort"
	"strings"

	"gateway/store"
)

// The data dashboard (S §8): hourly rows of (user, model) written by the
// ledger inside its charge transactions. The client buckets them.
func (s *Server) registerDashboardRoutes() {
	s.handle("GET /api/data/{$}", s.getAllQuotaData)
	s.handle("GET /api/data/self", s.getSelfQuotaData)
	s.handle("GET /api/data/self/{$}", s.getSelfQuotaData)
}

// maxSelfDataSpan is the longest range a user may ask for: 30 days.
const maxSelfDataSpan = 30 * 24 * 3600

// getAllQuotaData answers one user's rows with ?username=, otherwise every
// user's rows summed per (model_name, created_at). An unknown username has
// no rows.
func (s *Server) getAllQuotaData(w http.ResponseWriter, r *http.Request) {
	start, end, err := queryRange(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if name := strings.TrimSpace(r.URL.Query().Get("username")); name != "" {
		u, err := s.store.UserByUsername(name)
		if store.ErrorCode(err) == store.ENOTFOUND {
			writeJSON(w, []store.QuotaDatum{})
			return
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		rows, err := s.store.QuotaData(start, end, u.ID)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, rows)
		return
	}
	rows, err := s.store.QuotaData(start, end, 0)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, sumByModelHour(rows))
}

// sumByModelHour folds rows of many users into one row per (model, hour),
// ordered by hour then model; user fields are left empty.
func sumByModelHour(rows []store.QuotaDatum) []store.QuotaDatum {
	type key struct {
		model string
		hour  int64
	}
	idx := map[key]int{}
	out := []store.QuotaDatum{}
	for _, d := range rows {
		k := key{d.ModelName, d.CreatedAt}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, store.QuotaDatum{ModelName: d.ModelName, CreatedAt: d.CreatedAt})
		}
		out[i].Count += d.Count
		out[i].Quota += d.Quota
		out[i].TokenUsed += d.TokenUsed
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt < out[j].CreatedAt
		}
		return out[i].ModelName < out[j].ModelName
	})
	return out
}

// getSelfQuotaData answers the caller's rows. A missing end is now and a
// missing start is 30 days before the end; a longer span is refused.
func (s *Server) getSelfQuotaData(w http.ResponseWriter, r *http.Request) {
	start, end, err := queryRange(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if end <= 0 {
		end = s.store.Now().Unix()
	}
	if start <= 0 {
		start = end - maxSelfDataSpan
	}
	if end-start > maxSelfDataSpan {
		writeError(w, r, store.Errorf(store.EINVALID, "时间跨度不能超过 1 个月"))
		return
	}
	rows, err := s.store.QuotaData(start, end, currentUser(r).ID)
	writeResult(w, r, rows, err)
}
