package api

import (
	"net/http"

	"gateway/store"
)

// Redemption codes (S §3.6) for administrators, and redeeming one (S §6.2)
// for any signed-in user.
func (s *Server) registerRedemptionRoutes() {
	s.handle("GET /api/redemption/{$}", s.listRedemptions)
	s.handle("GET /api/redemption/search", s.searchRedemptions)
	s.handle("GET /api/redemption/{id}", s.getRedemption)
	s.handle("POST /api/redemption/{$}", s.createRedemptions)
	s.handle("PUT /api/redemption/{$}", s.updateRedemption)
	s.handle("DELETE /api/redemption/{id}", s.deleteRedemption)
	s.handle("DELETE /api/redemption/{id}/", s.deleteRedemption)
	s.handleCritical("POST /api/user/topup", s.redeem)
}

// redemptionPageSize is the fixed page of the redemption list.
const redemptionPageSize = 10

func (s *Server) listRedemptions(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.Redemptions("", pageNum(r, 0)*redemptionPageSize, redemptionPageSize)
	writeResult(w, r, list, err)
}

func (s *Server) searchRedemptions(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.Redemptions(r.URL.Query().Get("keyword"), 0, 0)
	writeResult(w, r, list, err)
}

func (s *Server) getRedemption(w http.ResponseWriter, r *http.Request) {
	red, ok := routeRecord(w, r, s.store.Redemption)
	if !ok {
		return
	}
	writeJSON(w, red)
}

// redemptionRequest is the body of create (name, quota, count) and edit
// (id plus the fields to change).
type redemptionRequest struct {
	ID     wireID  `json:"id"`
	Name   *string `json:"name"`
	Quota  *int64  `json:"quota"`
	Count  int     `json:"count"`
	Status *int    `json:"status"`
}

// createRedemptions creates count codes in one transaction (all or none)
// and answers their keys.
func (s *Server) createRedemptions(w http.ResponseWriter, r *http.Request) {
	var req redemptionRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	quota := int64(100) // the column's default (S §3.6) when the body names none
	if req.Quota != nil {
		quota = *req.Quota
	}
	list, err := s.store.CreateRedemptions(currentUser(r).ID, deref(req.Name), quota, req.Count)
	if err != nil {
		writeError(w, r, err)
		return
	}
	keys := make([]string, len(list))
	for i, red := range list {
		keys[i] = red.Key
	}
	writeMessage(w, "兑换码创建成功！", keys)
}

// updateRedemption edits name and quota, or with ?status_only=<anything>
// only the status. The store keeps a used code as it is.
func (s *Server) updateRedemption(w http.ResponseWriter, r *http.Request) {
	var req redemptionRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if req.ID == 0 {
		writeError(w, r, errNoID)
		return
	}
	upd := store.RedemptionUpdate{Name: req.Name, Quota: req.Quota}
	if r.URL.Query().Get("status_only") != "" {
		if req.Status == nil {
			writeError(w, r, store.Errorf(store.EINVALID, "无效的兑换码状态"))
			return
		}
		upd = store.RedemptionUpdate{Status: req.Status}
	}
	red, err := s.store.UpdateRedemption(uint64(req.ID), upd)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeMessage(w, "兑换码更新成功！", red)
}

func (s *Server) deleteRedemption(w http.ResponseWriter, r *http.Request) {
	id, ok := routeID(w, r)
	if !ok {
		return
	}
	if err := s.store.DeleteRedemption(id); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, nil)
}

type redeemRequest struct {
	Key string `json:"key"`
}

// redeem credits a code to the caller. The store claims the code and
// credits the quota in one transaction, so of any number of concurrent
// attempts on one code exactly one succeeds; no process-wide lock or random
// sleep is needed (S §6.2).
func (s *Server) redeem(w http.ResponseWriter, r *http.Request) {
	var req redeemRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	quota, err := s.store.Redeem(currentUser(r).ID, req.Key)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeMessage(w, "兑换成功，充值额度 "+s.store.FormatQuota(quota), quota)
}
