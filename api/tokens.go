package api

import (
	"bytes"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"gateway/store"
)

// Token routes. Every query is scoped to the caller: another user's token id
// answers 404, exactly like a missing one. The owner sees full keys, stored
// and shown without the "sk-" prefix; the console adds it.
func (s *Server) registerTokenRoutes() {
	s.handle("GET /api/token/{$}", s.listTokens)
	s.handle("GET /api/token/search", s.searchTokens)
	s.handle("GET /api/token/{id}", s.getToken)
	s.handle("POST /api/token/{$}", s.createToken)
	s.handle("PUT /api/token/{$}", s.updateToken)
	s.handle("DELETE /api/token/{id}", s.deleteToken)
	s.handle("DELETE /api/token/{id}/", s.deleteToken)
}

// maxTokenPageSize bounds one page of the token list.
const maxTokenPageSize = 100

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) {
	p := pageNum(r, 0)
	size := queryNum(r, "size", 10)
	if size <= 0 {
		size = 10
	}
	size = min(size, maxTokenPageSize)
	tokens, err := s.store.Tokens(currentUser(r).ID, store.TokenFilter{Offset: p * size, Limit: size})
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.showTrueStatus(tokens...)
	writeJSON(w, nonNil(tokens))
}

// showTrueStatus shows an enabled token whose expiry has passed as expired,
// and a limited one without quota left as exhausted, which they are: the
// relay refuses them and records the status at their next use, but the
// list must not offer them as enabled until then.
func (s *Server) showTrueStatus(tokens ...*store.Token) {
	now := s.store.Now().Unix()
	for _, t := range tokens {
		switch {
		case t.Status != store.TokenStatusEnabled:
		case t.ExpiredTime != -1 && t.ExpiredTime < now:
			t.Status = store.TokenStatusExpired
		case !t.UnlimitedQuota && t.RemainQuota <= 0:
			t.Status = store.TokenStatusExhausted
		}
	}
}

func (s *Server) searchTokens(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	// The store strips a leading "sk-" as a prefix, never as a character set.
	tokens, err := s.store.Tokens(currentUser(r).ID, store.TokenFilter{Keyword: q.Get("keyword"), Key: q.Get("token")})
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.showTrueStatus(tokens...)
	writeJSON(w, nonNil(tokens))
}

func (s *Server) getToken(w http.ResponseWriter, r *http.Request) {
	id, ok := routeID(w, r)
	if !ok {
		return
	}
	t, err := s.store.Token(currentUser(r).ID, id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.showTrueStatus(t)
	writeJSON(w, t)
}

// tokenRequest is the body of token create and edit. Pointer fields tell an
// omitted field (kept on edit) from a zero value (written).
type tokenRequest struct {
	ID                 wireID   `json:"id"`
	Name               *string  `json:"name"`
	Status             *int     `json:"status"`
	ExpiredTime        *int64   `json:"expired_time"`
	RemainQuota        *int64   `json:"remain_quota"`
	UnlimitedQuota     *bool    `json:"unlimited_quota"`
	ModelLimitsEnabled *bool    `json:"model_limits_enabled"`
	ModelLimits        *wireCSV `json:"model_limits"`
	AllowIPs           *string  `json:"allow_ips"`
	Group              *string  `json:"group"`
}

// checkTokenGroup refuses a group the user may not pick; empty means the
// user's own group at relay time.
func (s *Server) checkTokenGroup(u *store.User, group string) error {
	group = strings.TrimSpace(group)
	if group == "" {
		return nil
	}
	if _, ok := usableGroups(s.store.Settings(), u.Group)[group]; !ok {
		return store.Errorf(store.EINVALID, "分组 %s 不存在或无权使用", group)
	}
	return nil
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) {
	var req tokenRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	u := currentUser(r)
	t := &store.Token{
		UserID: u.ID, Name: deref(req.Name), Status: store.TokenStatusEnabled,
		ExpiredTime: deref(req.ExpiredTime), RemainQuota: deref(req.RemainQuota),
		UnlimitedQuota: deref(req.UnlimitedQuota), ModelLimitsEnabled: deref(req.ModelLimitsEnabled),
		ModelLimits: string(deref(req.ModelLimits)), AllowIPs: deref(req.AllowIPs), Group: strings.TrimSpace(deref(req.Group)),
	}
	// A new token starts enabled or disabled; expired and exhausted are
	// what time and use make of it.
	if req.Status != nil {
		switch *req.Status {
		case 0: // not given
		case store.TokenStatusEnabled, store.TokenStatusDisabled:
			t.Status = *req.Status
		default:
			writeError(w, r, store.Errorf(store.EINVALID, "新令牌的状态只能是启用（1）或禁用（2）"))
			return
		}
	}
	if err := t.Validate(); err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.checkTokenGroup(u, t.Group); err != nil {
		writeError(w, r, err)
		return
	}
	created, err := s.store.CreateToken(t)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.showTrueStatus(created)
	writeMessage(w, "令牌创建成功！", created)
}

// updateToken edits a token. With ?status_only=<anything> only the status is
// written; otherwise every field present in the body except the status. The
// store refuses to enable an expired or exhausted token.
func (s *Server) updateToken(w http.ResponseWriter, r *http.Request) {
	var req tokenRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if req.ID == 0 {
		writeError(w, r, errNoID)
		return
	}
	u := currentUser(r)
	var upd store.TokenUpdate
	if r.URL.Query().Get("status_only") != "" {
		if req.Status == nil {
			writeError(w, r, store.Errorf(store.EINVALID, "无效的令牌状态"))
			return
		}
		upd.Status = req.Status
	} else {
		upd = store.TokenUpdate{
			Name: req.Name, ExpiredTime: req.ExpiredTime, RemainQuota: req.RemainQuota,
			UnlimitedQuota: req.UnlimitedQuota, ModelLimitsEnabled: req.ModelLimitsEnabled,
			ModelLimits: (*string)(req.ModelLimits), AllowIPs: req.AllowIPs, Group: req.Group,
		}
		if err := s.checkTokenGroupChange(u, uint64(req.ID), req.Group); err != nil {
			writeError(w, r, err)
			return
		}
	}
	t, err := s.store.UpdateToken(u.ID, uint64(req.ID), upd)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.showTrueStatus(t)
	writeMessage(w, "令牌更新成功！", t)
}

// checkTokenGroupChange checks a group only when it changes, so a token whose
// group stopped being usable can still be edited in other ways.
func (s *Server) checkTokenGroupChange(u *store.User, id uint64, group *string) error {
	if group == nil {
		return nil
	}
	*group = strings.TrimSpace(*group)
	cur, err := s.store.Token(u.ID, id)
	if err != nil {
		return err
	}
	if cur.Group == *group {
		return nil
	}
	return s.checkTokenGroup(u, *group)
}

func (s *Server) deleteToken(w http.ResponseWriter, r *http.Request) {
	id, ok := routeID(w, r)
	if !ok {
		return
	}
	if err := s.store.DeleteToken(currentUser(r).ID, id); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, nil)
}

// ---- request helpers shared by the token, channel and log handlers ----

// wireID is an id in a JSON body; the console sends it as a number, some
// clients as a string.
type wireID uint64

// errNoID answers an edit whose body names no record.
var errNoID = store.Errorf(store.EINVALID, "缺少 id")

// UnmarshalJSON accepts 12, "12" and null.
func (id *wireID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(strings.TrimSpace(s))
		if len(b) == 0 {
			*id = 0
			return nil
		}
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return store.Errorf(store.EINVALID, "无效的 id")
	}
	*id = wireID(v)
	return nil
}

// wireCSV is a comma-joined list on the wire; a JSON array of strings is
// accepted too and joined with commas.
type wireCSV string

// UnmarshalJSON accepts "a,b", ["a","b"] and null.
func (c *wireCSV) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var list []string
		if err := json.Unmarshal(b, &list); err != nil {
			return errNotAList
		}
		*c = wireCSV(strings.Join(list, ","))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errNotAList
	}
	*c = wireCSV(s)
	return nil
}

// errNotAList is a wireCSV value that is neither a string nor an array of
// strings. The decoder does not say which field held it; listField does.
var errNotAList = errors.New("not a list")

var wireCSVType = reflect.TypeFor[*wireCSV]()

// listField names the member of the JSON object data, decoded into the
// struct v points to, whose wireCSV value does not decode.
func listField(data []byte, v any) string {
	var top map[string]json.RawMessage
	t := reflect.TypeOf(v)
	if json.Unmarshal(data, &top) != nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return ""
	}
	var lists []string
	for i := range t.Elem().NumField() {
		f := t.Elem().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Type == wireCSVType {
			lists = append(lists, name)
		}
		for key, raw := range top {
			// Member names match fields whatever their case, as the decoder has it.
			var c wireCSV
			if f.Type == wireCSVType && strings.EqualFold(key, name) && c.UnmarshalJSON(raw) != nil {
				return key
			}
		}
	}
	// A member given twice, the first of them bad: the map holds the last.
	return strings.Join(lists, "/")
}

// routeID parses the {id} path value. A trailing-slash pattern such as
// "/api/token/{id}/" also matches deeper paths; those answer 404 here.
func routeID(w http.ResponseWriter, r *http.Request) (uint64, bool) {
	raw := r.PathValue("id")
	if strings.HasSuffix(r.Pattern, "/") {
		// The path must be the pattern's with the id and the slash, and
		// nothing after them.
		pat := r.Pattern[strings.IndexByte(r.Pattern, '/'):]
		if i := strings.Index(pat, "{id}"); i < 0 || r.URL.Path != pat[:i]+raw+"/" {
			writeNotFoundURL(w, r)
			return 0, false
		}
	}
	id, err := strconv.ParseUint(raw, 10, 64)
	if err != nil || id == 0 {
		writeError(w, r, store.Errorf(store.EINVALID, "无效的 id"))
		return 0, false
	}
	return id, true
}

// routeRecord is the record get finds under the route's {id} (routeID);
// ok is false, and the failure written, when the id is not valid or get
// fails.
func routeRecord[T any](w http.ResponseWriter, r *http.Request, get func(id uint64) (T, error)) (rec T, ok bool) {
	id, ok := routeID(w, r)
	if !ok {
		return rec, false
	}
	rec, err := get(id)
	if err != nil {
		writeError(w, r, err)
		return rec, false
	}
	return rec, true
}

// maxPageNum bounds page numbers so that page × size cannot overflow.
const maxPageNum = 1 << 24

// pageNum reads the page number p, clamped to [min, maxPageNum].
func pageNum(r *http.Request, min_ int) int {
	return min(max(queryNum(r, "p", min_), min_), maxPageNum)
}

// queryNum reads an integer query parameter; missing or malformed gives def.
func queryNum(r *http.Request, name string, def int) int {
	v, err := strconv.Atoi(strings.TrimSpace(r.URL.Query().Get(name)))
	if err != nil {
		return def
	}
	return v
}

// queryNum64 reads an int64 query parameter; missing or empty gives 0, and
// one that is not an integer in int64's range is refused rather than read
// as 0 or as the range's end (a timestamp of 2^63 would clear every log).
func queryNum64(r *http.Request, name string) (int64, error) {
	raw := strings.TrimSpace(r.URL.Query().Get(name))
	if raw == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, store.Errorf(store.EINVALID, "参数 %s 必须是整数", name)
	}
	return v, nil
}

// queryRange reads start_timestamp and end_timestamp.
func queryRange(r *http.Request) (start, end int64, err error) {
	if start, err = queryNum64(r, "start_timestamp"); err != nil {
		return 0, 0, err
	}
	end, err = queryNum64(r, "end_timestamp")
	return start, end, err
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
