package api

import (
	"net/http"
	"sort"
	"strings"

	"gateway/store"
)

// registerAdminRoutes registers the administrators' user, redemption,
// top-up and dashboard routes, the wallet routes and the public pricing.
func (s *Server) registerAdminRoutes() {
	s.registerUserAdminRoutes()
	s.registerRedemptionRoutes()
	s.registerTopUpRoutes()
	s.registerPricingRoutes()
	s.registerDashboardRoutes()
}

// User administration (S §3.3, §7). Users are shown through userView, so
// password and access-token hashes never leave the server. The mux prefers
// the literal /api/user/self, /api/user/search … over /api/user/{id}.
func (s *Server) registerUserAdminRoutes() {
	s.handle("GET /api/user/{$}", s.listUsers)
	s.handle("GET /api/user/search", s.searchUsers)
	s.handle("GET /api/user/{id}", s.getUser)
	s.handle("POST /api/user/{$}", s.createUser)
	s.handle("PUT /api/user/{$}", s.updateUser)
	s.handle("POST /api/user/manage", s.manageUser)
	s.handle("DELETE /api/user/{id}", s.deleteUser)
	s.handle("GET /api/group/{$}", s.listGroups)
}

// userPageSize is the fixed page of the user list.
const userPageSize = 10

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) {
	users, err := s.store.Users(store.UserFilter{Offset: pageNum(r, 0) * userPageSize, Limit: userPageSize})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, viewUsers(users))
}

func (s *Server) searchUsers(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	users, err := s.store.Users(store.UserFilter{Keyword: q.Get("keyword"), Group: strings.TrimSpace(q.Get("group"))})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, viewUsers(users))
}

func viewUsers(users []*store.User) []userView {
	out := make([]userView, 0, len(users))
	for _, u := range users {
		out = append(out, viewUser(u))
	}
	return out
}

// errLowerRoleOnly refuses acting on a user of equal or higher role. Its
// message differs from the guard's, so a client can tell the two apart.
var errLowerRoleOnly = store.Errorf(store.EFORBIDDEN, "无权获取或更新同权限等级或更高权限等级的用户信息")

// mayAdminister reports whether actor may act on target: root on anyone,
// everyone else only on users of strictly lower role (S §7).
func mayAdminister(actor, target *store.User) bool {
	return actor.Role >= store.RoleRoot || actor.Role > target.Role
}

func (s *Server) getUser(w http.ResponseWriter, r *http.Request) {
	u, ok := routeRecord(w, r, s.store.User)
	if !ok {
		return
	}
	// Administrators may look at themselves too (the log page's user dialog).
	if me := currentUser(r); me.ID != u.ID && !mayAdminister(me, u) {
		writeError(w, r, errLowerRoleOnly)
		return
	}
	writeJSON(w, viewUser(u))
}

type createUserRequest struct {
	Username    string `json:"username"`
	DisplayName string `json:"display_name"`
	Password    string `json:"password"`
	// Role is only checked: a role at or above the caller's is refused
	// (S §3.3), any other is ignored.
	Role *int `json:"role"`
}

// createUser adds a common user (role 1 whatever the body asks) with
// QuotaForNewUser and no inviter.
func (s *Server) createUser(w http.ResponseWriter, r *http.Request) {
	var req createUserRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if strings.TrimSpace(req.Username) == "" || req.Password == "" {
		writeError(w, r, store.Errorf(store.EINVALID, "用户名和密码不能为空"))
		return
	}
	if req.Role != nil && *req.Role >= currentUser(r).Role {
		writeError(w, r, store.Errorf(store.EFORBIDDEN, "无法创建权限大于等于自己的用户"))
		return
	}
	u, err := s.store.CreateUser(store.NewUser{Username: req.Username, DisplayName: strings.TrimSpace(req.DisplayName),
		Password: req.Password, Role: store.RoleCommon})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeMessage(w, "用户账户创建成功！", viewUser(u))
}

// updateUserRequest is the admin edit. Pointer fields: an omitted field
// keeps its value (S §3.3 zeroes them; that is the bug not kept). The role
// is never written here; POST /api/user/manage changes it.
type updateUserRequest struct {
	ID          wireID  `json:"id"`
	Username    *string `json:"username"`
	DisplayName *string `json:"display_name"`
	Password    *string `json:"password"`
	Group       *string `json:"group"`
	Quota       *int64  `json:"quota"`
	// AddQuota adds to the live quota instead of setting it (the console's
	// add-quota button), so that a charge or a top-up made meanwhile stays.
	AddQuota *int64 `json:"add_quota"`
	// Role is only checked, as on create: a role at or above the caller's
	// is refused unless the caller is root (S §3.3); it is never written.
	Role *int `json:"role"`
}

func (s *Server) updateUser(w http.ResponseWriter, r *http.Request) {
	var req updateUserRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if req.ID == 0 {
		writeError(w, r, errNoID)
		return
	}
	me := currentUser(r)
	target, err := s.store.User(uint64(req.ID))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if target.Deleted() {
		writeError(w, r, store.Errorf(store.EINVALID, "该用户已注销"))
		return
	}
	if !mayAdminister(me, target) {
		writeError(w, r, errLowerRoleOnly)
		return
	}
	if req.Role != nil && *req.Role >= me.Role && me.Role < store.RoleRoot {
		writeError(w, r, store.Errorf(store.EFORBIDDEN, "无权将其他用户权限等级提升到大于等于自己的权限等级"))
		return
	}
	upd, err := adminUserUpdate(s.store.Settings(), &req, target.Group)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// One's own password is changed in the personal settings, which ask for
	// the current one; this route would set it without.
	if upd.Password != nil && target.ID == me.ID {
		writeError(w, r, store.Errorf(store.EFORBIDDEN, "请在个人设置中修改自己的密码"))
		return
	}
	// The rights are judged again on the record the change is made to.
	upd.Check = func(u *store.User) error {
		if u.Deleted() {
			return store.Errorf(store.EINVALID, "该用户已注销")
		}
		if !mayAdminister(me, u) {
			return errLowerRoleOnly
		}
		return nil
	}
	// The fields and the quota are saved in one transaction: whole or not at all.
	updated, err := s.store.EditUserAsAdmin(me.Username, target.ID, upd, store.QuotaChange{Set: req.Quota, Add: req.AddQuota})
	if err != nil {
		writeError(w, r, err)
		return
	}
	if upd.Password != nil {
		// The store ended their sessions; their open consoles go too.
		s.hub.Disconnect(target.ID)
	}
	writeMessage(w, "用户信息更新成功！", viewUser(updated))
}

// adminUserUpdate turns the edit body into a store update: an empty
// password, display name or group keeps the old one, and a new group must have a
// ratio in GroupRatio (the user's current group passes even when its ratio
// has since been removed, so other fields stay editable).
func adminUserUpdate(set *store.Settings, req *updateUserRequest, current string) (store.UserUpdate, error) {
	upd := store.UserUpdate{Username: req.Username}
	if req.DisplayName != nil && strings.TrimSpace(*req.DisplayName) != "" {
		upd.DisplayName = req.DisplayName
	}
	if req.Password != nil && *req.Password != "" {
		upd.Password = req.Password
	}
	if req.Group != nil && strings.TrimSpace(*req.Group) != "" {
		g := strings.TrimSpace(*req.Group)
		if _, ok := set.GroupRatio[g]; !ok && g != current {
			return upd, store.Errorf(store.EINVALID, "分组 %s 不存在", g)
		}
		upd.Group = &g
	}
	return upd, nil
}

type manageUserRequest struct {
	ID     wireID `json:"id"`
	Action string `json:"action"`
}

// manageUser promotes, demotes, disables, enables or deletes a user and
// answers the new {role, status}. Every change but enable ends the user's
// sessions (in the store's transaction) and closes their live sockets here;
// their API tokens stop at once because the relay reads the owner on every
// call.
func (s *Server) manageUser(w http.ResponseWriter, r *http.Request) {
	var req manageUserRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if req.ID == 0 {
		writeError(w, r, errNoID)
		return
	}
	target, err := s.store.User(uint64(req.ID))
	if err != nil {
		writeError(w, r, err)
		return
	}
	me := currentUser(r)
	upd, del, err := manageChange(me, target, req.Action)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// The rules are applied again to the record the change is made to.
	check := func(u *store.User) error {
		_, _, err := manageChange(me, u, req.Action)
		return err
	}
	if del {
		err = s.store.DeleteUserIf(target.ID, check)
	} else {
		upd.Check = check
		_, err = s.store.UpdateUser(target.ID, upd)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	if req.Action != "enable" {
		s.hub.Disconnect(target.ID)
	}
	u, err := s.store.User(target.ID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, map[string]int{"role": u.Role, "status": u.Status})
}

// deleteUser answers DELETE /api/user/{id} (S §3.3) with the rules and the
// effect of the manage action delete: a soft delete, so the user's logs,
// orders and in-flight charges keep their owner (docs/decisions.md). It
// answers the envelope, success or not.
func (s *Server) deleteUser(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	target, err := s.store.User(id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	me := currentUser(r)
	check := func(u *store.User) error {
		_, _, err := manageChange(me, u, "delete")
		return err
	}
	if err := check(target); err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.store.DeleteUserIf(target.ID, check); err != nil {
		writeError(w, r, err)
		return
	}
	s.hub.Disconnect(target.ID)
	writeMessage(w, "", nil)
}

// manageChange applies the rules of S §3.3 and §7 to one action: actor acts
// only on users of strictly lower role (root on anyone); root is never
// disabled, demoted or deleted; only root promotes. It returns the update to
// write, or del for a soft delete.
func manageChange(actor, target *store.User, action string) (upd store.UserUpdate, del bool, err error) {
	if target.Deleted() {
		return upd, false, store.Errorf(store.EINVALID, "该用户已注销")
	}
	if !mayAdminister(actor, target) {
		return upd, false, errLowerRoleOnly
	}
	isRoot := target.Role >= store.RoleRoot
	switch action {
	case "disable":
		if isRoot {
			return upd, false, store.Errorf(store.EFORBIDDEN, "无法禁用超级管理员用户")
		}
		upd.Status = ptr(store.UserStatusDisabled)
	case "enable":
		upd.Status = ptr(store.UserStatusEnabled)
	case "delete":
		if isRoot {
			return upd, false, store.Errorf(store.EFORBIDDEN, "无法删除超级管理员用户")
		}
		return upd, true, nil
	case "promote":
		if actor.Role < store.RoleRoot {
			return upd, false, store.Errorf(store.EFORBIDDEN, "普通管理员用户无法提升其他用户为管理员")
		}
		if target.Role >= store.RoleAdmin {
			return upd, false, store.Errorf(store.EINVALID, "该用户已经是管理员")
		}
		upd.Role = ptr(store.RoleAdmin)
	case "demote":
		if isRoot {
			return upd, false, store.Errorf(store.EFORBIDDEN, "无法降级超级管理员用户")
		}
		if target.Role <= store.RoleCommon {
			return upd, false, store.Errorf(store.EINVALID, "该用户已经是普通用户")
		}
		upd.Role = ptr(store.RoleCommon)
	case "":
		return upd, false, store.Errorf(store.EINVALID, "请指定操作（disable、enable、delete、promote 或 demote）")
	default:
		return upd, false, store.Errorf(store.EINVALID, "无效的操作：%s", action)
	}
	return upd, false, nil
}

func ptr[T any](v T) *T { return &v }

// listGroups answers the group names that have a ratio, sorted.
func (s *Server) listGroups(w http.ResponseWriter, r *http.Request) {
	ratios := s.store.Settings().GroupRatio
	out := make([]string, 0, len(ratios))
	for g := range ratios {
		out = append(out, g)
	}
	sort.Strings(out)
	writeJSON(w, out)
}
