package api

import (
	"net/http"

	"gateway/store"
)

func (s *Server) getSelf(w http.ResponseWriter, r *http.Request) {
	u := currentUser(r)
	v := viewUser(u)
	v.BalanceSeq = u.BalanceSeq
	writeJSON(w, v)
}

type updateSelfRequest struct {
	Username         *string `json:"username"`
	DisplayName      *string `json:"display_name"`
	Password         *string `json:"password"`
	OriginalPassword string  `json:"original_password"`
}

func (s *Server) updateSelf(w http.ResponseWriter, r *http.Request) {
	var req updateSelfRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	u := currentUser(r)
	upd := store.UserUpdate{}
	if req.Username != nil && *req.Username != "" && *req.Username != u.Username {
		upd.Username = req.Username
	}
	if req.DisplayName != nil {
		upd.DisplayName = req.DisplayName // a blank one keeps the old
	}
	if req.Password != nil && *req.Password != "" {
		// An account without a password (made by a third-party login) sets
		// its first one without an old one.
		// A check of the old password is a guess at it, as a login is: the
		// same per-IP budget, so a stolen session cannot try them faster.
		if u.PasswordHash != "" && !s.critical.allow(s.ips.of(r)) {
			writeError(w, r, store.Errorf(store.ERATELIMIT, "请求过于频繁，请稍后再试"))
			return
		}
		if u.PasswordHash != "" && !store.CheckPassword(u, req.OriginalPassword) {
			writeError(w, r, store.Errorf(store.EINVALID, "原密码错误"))
			return
		}
		upd.Password = req.Password
		// Judged again on the record the change is made to: of two changes
		// racing with the same original password, the second finds it
		// replaced.
		checked := u.PasswordHash
		upd.Check = func(cur *store.User) error {
			if cur.PasswordHash != checked {
				return store.Errorf(store.EINVALID, "原密码错误")
			}
			return nil
		}
	}
	updated, err := s.store.UpdateUser(u.ID, upd)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// A password change ends every session of the account; the one that made
	// the change continues under a new session id.
	if upd.Password != nil {
		// The access token ended with the old password: only the session
		// that made the change keeps its sockets.
		id := identity(r)
		keep := ""
		if id.SessionID != "" {
			keep = sessionTag(id.SessionID)
		}
		s.hub.DisconnectOthers(u.ID, keep)
		if id.SessionID != "" {
			if err := s.startSession(w, r, updated); err != nil {
				writeError(w, r, err)
				return
			}
		}
	}
	msg := "用户信息更新成功！"
	if upd.Password != nil {
		msg = "密码修改成功！"
	}
	writeMessage(w, msg, viewUser(updated))
}

func (s *Server) deleteSelf(w http.ResponseWriter, r *http.Request) {
	u := currentUser(r)
	if u.Role >= store.RoleRoot {
		writeError(w, r, store.Errorf(store.EFORBIDDEN, "不能删除超级管理员账户"))
		return
	}
	if err := s.store.DeleteUser(u.ID); err != nil {
		writeError(w, r, err)
		return
	}
	s.hub.Disconnect(u.ID)
	s.clearSessionCookie(w, r)
	writeMessage(w, "账户已删除！", nil)
}

func (s *Server) resetAccessToken(w http.ResponseWriter, r *http.Request) {
	id := identity(r)
	u := id.User
	cred := store.Credential{SessionID: id.SessionID}
	if id.ViaToken {
		cred.TokenHash = u.AccessTokenHash
	}
	token, err := s.store.ResetAccessTokenWith(u.ID, cred)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// Sockets opened with the old token close with it.
	s.hub.DisconnectSession(accessTokenTag(u.AccessTokenHash))
	writeJSON(w, token)
}

func (s *Server) getAffCode(w http.ResponseWriter, r *http.Request) {
	code, err := s.store.EnsureAffCode(currentUser(r).ID)
	writeResult(w, r, code, err)
}

type affTransferRequest struct {
	Quota int64 `json:"quota"`
}

func (s *Server) transferAffQuota(w http.ResponseWriter, r *http.Request) {
	var req affTransferRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	u, err := s.store.TransferAffQuota(currentUser(r).ID, req.Quota)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeMessage(w, "划转成功", viewUser(u))
}

// usableGroups returns group -> label for the groups a user of userGroup may pick.
func usableGroups(set *store.Settings, userGroup string) map[string]string {
	return set.UsableGroups(userGroup)
}

func (s *Server) getSelfGroups(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, usableGroups(s.store.Settings(), currentUser(r).Group))
}

func (s *Server) getUsableGroups(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, usableGroups(s.store.Settings(), ""))
}
