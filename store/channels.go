package store

import (
	stdjson "encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	json "github.com/goccy/go-json"
	bolt "go.etcd.io/bbolt"
)

// Channel statuses.
const (
	ChannelStatusUnknown      = 0
	ChannelStatusEnabled      = 1
	ChannelStatusManuallyOff  = 2
	ChannelStatusAutoDisabled = 3
)

// Channel is an upstream provider account.
type Channel struct {
	ID                 uint64  `json:"id"`
	Type               int     `json:"type"`
	Key                string  `json:"key"`
	OpenAIOrganization string  `json:"openai_organization"`
	TestModel          string  `json:"test_model"`
	Status             int     `json:"status"`
	Name               string  `json:"name"`
	Weight             int64   `json:"weight"`
	CreatedTime        int64   `json:"created_time"`
	TestTime           int64   `json:"test_time"`
	ResponseTime       int64   `json:"response_time"`
	BaseURL            string  `json:"base_url"`
	Other              string  `json:"other"`
	Balance            float64 `json:"balance"`
	BalanceUpdatedTime int64   `json:"balance_updated_time"`
	Models             string  `json:"models"`
	Group              string  `json:"group"`
	UsedQuota          int64   `json:"used_quota"`
	ModelMapping       string  `json:"model_mapping"`
	StatusCodeMapping  string  `json:"status_code_mapping"`
	Priority           int64   `json:"priority"`
	AutoBan            int     `json:"auto_ban"`
	OtherInfo          string  `json:"other_info"`
	// StatusRev counts the channel's status changes, an administrator's
	// and the automatic ones: a verdict reached on the channel as it was
	// before one of them is stale. Kept in the file only, never shown.
	StatusRev uint64 `json:"status_rev,omitempty"`
}

// ValidateBaseURL checks a channel's base URL: empty (the type's default)
// or an http or https address.
func ValidateBaseURL(base string) error {
	if base = strings.TrimSpace(base); base == "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Errorf(EINVALID, "代理（Base URL）必须是 http 或 https 地址")
	}
	return nil
}

// isStatusCode reports whether s is an HTTP status code, 100 to 599.
func isStatusCode(s string) bool {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return err == nil && n >= 100 && n <= 599
}

// repeatedKey returns the first key of a JSON object of strings (one a
// mapping check accepted) that another key repeats, both read through same.
func repeatedKey(text string, same func(string) string) (string, bool) {
	d := stdjson.NewDecoder(strings.NewReader(text))
	if t, err := d.Token(); err != nil || t != stdjson.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return "", false
		}
		k, _ := t.(string)
		if seen[same(k)] {
			return same(k), true
		}
		seen[same(k)] = true
		if _, err := d.Token(); err != nil { // the value: a string or null
			return "", false
		}
	}
	return "", false
}

// ModelList returns the channel's models, trimmed, without empties or repeats.
func (c *Channel) ModelList() []string { return csvList(c.Models) }

// GroupList returns the channel's groups, trimmed; "default" when none.
func (c *Channel) GroupList() []string {
	g := csvList(c.Group)
	if len(g) == 0 {
		return []string{"default"}
	}
	return g
}

func csvList(v string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// MaxChannelWeight bounds a channel's weight, so the weights of a tier
// always add up without overflow.
const MaxChannelWeight = 1_000_000

// MaxChannelPriority is the largest priority: the console reads numbers as
// doubles, exact up to 2^53.
const MaxChannelPriority = 1<<53 - 1

// MaxNameBytes bounds a model or group name: names are parts of index keys,
// which the file bounds, and no provider names a model at such length.
const MaxNameBytes = 255

// checkNames refuses a model or group name that is too long or carries a
// control character (NUL separates the parts of the routing keys).
func checkNames(what string, names []string) error {
	for _, n := range names {
		if len(n) > MaxNameBytes {
			return Errorf(EINVALID, "%s名称过长（最多 %d 字节）：%s…", what, MaxNameBytes, ClipRunes(n, 32))
		}
		if hasControl(n) {
			return Errorf(EINVALID, "%s名称不能包含控制字符", what)
		}
	}
	return nil
}

// ValidateModelName checks a model name that a request names for a channel
// (a channel test's ?model=) as the channel's own model names are checked:
// it becomes part of the log's index keys.
func ValidateModelName(name string) error { return checkNames("模型", []string{name}) }

// isControlInDocument reports a control character other than the white
// space a JSON document may be laid out with.
func isControlInDocument(r rune) bool {
	return unicode.IsControl(r) && r != '\t' && r != '\r' && r != '\n'
}

// ClipRunes returns the first n characters of s.
func ClipRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// Validate checks a channel before it is written; a channel without status
// becomes enabled and one without group joins default.
func (c *Channel) Validate() error { return c.validate(nil) }

// MaxChannelNameLen bounds a channel's name (characters): a name is a
// label in tables and logs, and the copy suffix fits after any name.
const MaxChannelNameLen = 100

// validate is Validate for an edit of old: the bounds added over time
// (name lengths, control characters, the priority's maximum) judge the
// fields the edit changes, so a channel stored before them can still be
// disabled or re-prioritised.
func (c *Channel) validate(old *Channel) error {
	changed := func(now, before string) bool { return old == nil || now != before }
	var was Channel
	if old != nil {
		was = *old
	}
	if strings.TrimSpace(c.Name) == "" {
		return Errorf(EINVALID, "请填写渠道名称和渠道密钥！")
	}
	if hasControl(c.Name) {
		return Errorf(EINVALID, "渠道名称不能包含控制字符")
	}
	if changed(c.Name, was.Name) && utf8.RuneCountInString(c.Name) > MaxChannelNameLen {
		return Errorf(EINVALID, "渠道名称长度不得超过 %d 个字符", MaxChannelNameLen)
	}
	if c.Type <= 0 {
		return Errorf(EINVALID, "请选择渠道类型")
	}
	if len(c.ModelList()) == 0 {
		return Errorf(EINVALID, "请至少选择一个模型！")
	}
	if c.Priority < -999 {
		return Errorf(EINVALID, "优先级不能小于 -999")
	}
	if c.Priority > MaxChannelPriority && (old == nil || c.Priority != was.Priority) {
		return Errorf(EINVALID, "优先级不能大于 %d", int64(MaxChannelPriority))
	}
	if changed(c.Models, was.Models) {
		if err := checkNames("模型", c.ModelList()); err != nil {
			return err
		}
	}
	if changed(c.Group, was.Group) {
		if err := checkNames("分组", csvList(c.Group)); err != nil {
			return err
		}
	}
	if changed(c.TestModel, was.TestModel) {
		if err := checkNames("测试模型", []string{c.TestModel}); err != nil {
			return err
		}
	}
	// These travel as HTTP headers, where a control character makes every
	// request fail.
	if changed(c.OpenAIOrganization, was.OpenAIOrganization) && hasControl(c.OpenAIOrganization) {
		return Errorf(EINVALID, "组织不能包含控制字符")
	}
	if changed(c.Key, was.Key) && strings.IndexFunc(c.Key, isControlInDocument) >= 0 { // line breaks and tabs: see below
		return Errorf(EINVALID, "密钥不能包含控制字符")
	}
	if c.Weight < 0 {
		c.Weight = 0
	}
	if c.Weight > MaxChannelWeight {
		return Errorf(EINVALID, "权重不能大于 %d", MaxChannelWeight)
	}
	if c.Status < ChannelStatusEnabled || c.Status > ChannelStatusAutoDisabled {
		return Errorf(EINVALID, "无效的渠道状态")
	}
	if c.AutoBan != 0 && c.AutoBan != 1 {
		return Errorf(EINVALID, "自动禁用只能是 0 或 1")
	}
	if len(csvList(c.Group)) == 0 {
		c.Group = "default"
	}
	for _, m := range []struct{ name, v string }{{"模型映射", c.ModelMapping}, {"状态码复写", c.StatusCodeMapping}} {
		if strings.TrimSpace(m.v) == "" {
			continue
		}
		var obj map[string]string
		if err := json.Unmarshal([]byte(m.v), &obj); err != nil {
			// A JSON object with a number or an object as a value is
			// valid JSON: what is wrong is the value.
			var fields map[string]json.RawMessage
			isObject := json.Unmarshal([]byte(m.v), &fields) == nil
			if isObject && m.name == "模型映射" {
				return Errorf(EINVALID, "模型映射的值必须是字符串（上游的模型名称）")
			}
			if isObject {
				return Errorf(EINVALID, "状态码复写的键和值必须是 100 到 599 之间的状态码")
			}
			if m.name == "模型映射" {
				return Errorf(EINVALID, "模型映射必须是合法的 JSON 格式！")
			}
			return Errorf(EINVALID, "状态码复写必须是合法的 JSON 格式！")
		}
		if m.name == "状态码复写" {
			for from, to := range obj {
				if !isStatusCode(from) || !isStatusCode(to) {
					return Errorf(EINVALID, "状态码复写的键和值必须是 100 到 599 之间的状态码")
				}
			}
		}
	}
	// A model or code named twice ("gpt-4" twice, "429" and " 429") keeps
	// one of its values and drops the other unseen.
	if changed(c.ModelMapping, was.ModelMapping) {
		if k, ok := repeatedKey(c.ModelMapping, func(k string) string { return k }); ok {
			return Errorf(EINVALID, "模型映射中模型 %s 出现了不止一次", k)
		}
	}
	if changed(c.StatusCodeMapping, was.StatusCodeMapping) {
		code := func(k string) string { n, _ := strconv.Atoi(strings.TrimSpace(k)); return strconv.Itoa(n) }
		if k, ok := repeatedKey(c.StatusCodeMapping, code); ok {
			return Errorf(EINVALID, "状态码复写中状态码 %s 出现了不止一次", k)
		}
	}
	// One channel holds one key, without white space inside (a Vertex key
	// is one JSON document, over lines): keys are split into channels only
	// when they are created, and a single-line field turns a pasted line
	// break into a space.
	if c.Type != 41 && strings.ContainsAny(strings.TrimSpace(c.Key), " \t\r\n") {
		return Errorf(EINVALID, "一个渠道只能有一个密钥，且密钥中不能有空白；多个密钥请在添加渠道时每行填写一个")
	}
	if err := ValidateBaseURL(c.BaseURL); err != nil {
		return err
	}
	if c.Type == 41 {
		// A region name, or a JSON object of region names with a default.
		other := strings.TrimSpace(c.Other)
		if other == "" {
			return Errorf(EINVALID, "部署地区必须是地区名称，或包含 default 的合法 JSON！")
		}
		if strings.HasPrefix(other, "{") {
			var regions map[string]string
			if err := json.Unmarshal([]byte(other), &regions); err != nil || strings.TrimSpace(regions["default"]) == "" {
				return Errorf(EINVALID, "部署地区必须是地区名称，或包含 default 的合法 JSON！")
			}
		}
		// The key is one service-account JSON document (empty on an edit
		// that keeps the stored one).
		if key := strings.TrimSpace(c.Key); key != "" {
			var doc map[string]any
			if err := json.Unmarshal([]byte(key), &doc); err != nil {
				return Errorf(EINVALID, "鉴权 JSON 必须是合法的 JSON 格式！")
			}
		}
	}
	c.BaseURL = strings.TrimRight(strings.TrimSpace(c.BaseURL), "/")
	return nil
}

func getChannel(tx *bolt.Tx, id uint64) (*Channel, error) {
	var c Channel
	ok, err := getJSON(tx.Bucket(bucketChannels), itob(id), &c)
	if err != nil {
		return nil, Internal(err)
	}
	if !ok {
		return nil, Errorf(ENOTFOUND, "渠道未找到，请刷新页面后重试。")
	}
	return &c, nil
}

// abilityKey is group \x00 model \x00 channel id.
func abilityKey(group, model string, id uint64) []byte {
	k := make([]byte, 0, len(group)+len(model)+10)
	k = append(k, group...)
	k = append(k, 0)
	k = append(k, model...)
	k = append(k, 0)
	return append(k, itob(id)...)
}

// Ability is one (group, model, channel) routing row.
type Ability struct {
	Group     string `json:"group"`
	Model     string `json:"model"`
	ChannelID uint64 `json:"channel_id"`
	Enabled   bool   `json:"enabled"`
	Priority  int64  `json:"priority"`
	Weight    int64  `json:"weight"`
}

// putChannel writes c and replaces its ability rows in the same transaction.
func putChannel(tx *bolt.Tx, old, c *Channel) error {
	if err := deleteAbilities(tx, old); err != nil {
		return err
	}
	ab := tx.Bucket(bucketAbilities)
	for _, g := range c.GroupList() {
		for _, m := range c.ModelList() {
			a := Ability{Group: g, Model: m, ChannelID: c.ID, Enabled: c.Status == ChannelStatusEnabled, Priority: c.Priority, Weight: c.Weight}
			if err := putJSON(ab, abilityKey(g, m, c.ID), a); err != nil {
				return err
			}
		}
	}
	return putJSON(tx.Bucket(bucketChannels), itob(c.ID), c)
}

func deleteAbilities(tx *bolt.Tx, c *Channel) error {
	if c == nil {
		return nil
	}
	ab := tx.Bucket(bucketAbilities)
	for _, g := range c.GroupList() {
		for _, m := range c.ModelList() {
			if err := ab.Delete(abilityKey(g, m, c.ID)); err != nil {
				return err
			}
		}
	}
	return nil
}

// CreateChannels creates channels in one transaction: all or none.
// Errors: EINVALID.
func (s *Store) CreateChannels(chs []*Channel) error {
	for _, c := range chs {
		if c.Status == ChannelStatusUnknown {
			c.Status = ChannelStatusEnabled
		}
		if err := c.Validate(); err != nil {
			return err
		}
		if strings.TrimSpace(c.Key) == "" {
			return Errorf(EINVALID, "请填写渠道名称和渠道密钥！")
		}
	}
	now := s.nowUnix()
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketChannels)
		for _, c := range chs {
			id, _ := b.NextSequence()
			c.ID = id
			c.CreatedTime = now
			if c.Status == 0 {
				c.Status = ChannelStatusEnabled
			}
			c.UsedQuota = 0
			if err := putChannel(tx, nil, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return wrapTx(err)
	}
	return s.rebuildRouting()
}

// Channel returns one channel, its key included; callers decide what to show.
// Errors: ENOTFOUND.
func (s *Store) Channel(id uint64) (*Channel, error) {
	var c *Channel
	err := s.db.View(func(tx *bolt.Tx) (err error) { c, err = getChannel(tx, id); return })
	if err != nil {
		return nil, err
	}
	s.ledger.overlayChannel(c)
	return c, nil
}

// ChannelUpdate lists the fields to change; nil fields stay as they are. A
// non-nil empty string clears the field, except Key: an empty key keeps the
// stored one.
type ChannelUpdate struct {
	Type               *int    `json:"type"`
	Key                *string `json:"key"`
	OpenAIOrganization *string `json:"openai_organization"`
	TestModel          *string `json:"test_model"`
	Status             *int    `json:"status"`
	Name               *string `json:"name"`
	Weight             *int64  `json:"weight"`
	BaseURL            *string `json:"base_url"`
	Other              *string `json:"other"`
	Models             *string `json:"models"`
	Group              *string `json:"group"`
	ModelMapping       *string `json:"model_mapping"`
	StatusCodeMapping  *string `json:"status_code_mapping"`
	Priority           *int64  `json:"priority"`
	AutoBan            *int    `json:"auto_ban"`
}

// ErrKeyForNewDestination refuses to send a stored channel key to a type or
// base URL other than the one it was saved with.
var ErrKeyForNewDestination = Errorf(EINVALID, "更换了类型或 Base URL，请重新填写密钥")

// SendsKeyTo reports whether a request of type typ to baseURL goes where the
// channel sends its stored key: the key, never shown, may only be used there,
// so moving a channel (or a form) elsewhere takes the key typed again.
func (c *Channel) SendsKeyTo(typ int, baseURL string) bool {
	norm := func(u string) string { return strings.TrimRight(strings.TrimSpace(u), "/") }
	return typ == c.Type && norm(baseURL) == norm(c.BaseURL)
}

// UpdateChannel applies upd and rebuilds the channel's abilities in one
// transaction; routing sees the change at once. A manual status change clears
// the automatic-status note. A new type or base URL needs a new key
// (ErrKeyForNewDestination). Errors: ENOTFOUND, EINVALID.
func (s *Store) UpdateChannel(id uint64, upd ChannelUpdate) (*Channel, error) {
	var out *Channel
	err := s.update(func(tx *bolt.Tx) error {
		c, err := getChannel(tx, id)
		if err != nil {
			return err
		}
		old := *c
		if upd.Type != nil {
			c.Type = *upd.Type
		}
		newKey := upd.Key != nil && strings.TrimSpace(*upd.Key) != ""
		if newKey {
			c.Key = strings.TrimSpace(*upd.Key)
		}
		setIf(&c.OpenAIOrganization, upd.OpenAIOrganization)
		setIf(&c.TestModel, upd.TestModel)
		if upd.Name != nil {
			// Kept without the spaces around it, as on create.
			c.Name = strings.TrimSpace(*upd.Name)
		}
		setIf(&c.BaseURL, upd.BaseURL)
		if !newKey && !old.SendsKeyTo(c.Type, c.BaseURL) {
			return ErrKeyForNewDestination
		}
		setIf(&c.Other, upd.Other)
		setIf(&c.Models, upd.Models)
		setIf(&c.Group, upd.Group)
		setIf(&c.ModelMapping, upd.ModelMapping)
		setIf(&c.StatusCodeMapping, upd.StatusCodeMapping)
		if upd.Weight != nil {
			c.Weight = *upd.Weight
		}
		if upd.Priority != nil {
			c.Priority = *upd.Priority
		}
		if upd.AutoBan != nil {
			c.AutoBan = *upd.AutoBan
		}
		if upd.Status != nil && *upd.Status != c.Status {
			c.Status = *upd.Status
			c.OtherInfo = ""
			c.StatusRev++
		}
		if err := c.validate(&old); err != nil {
			return err
		}
		if err := putChannel(tx, &old, c); err != nil {
			return err
		}
		out = c
		return nil
	})
	if err != nil {
		return nil, wrapTx(err)
	}
	s.ledger.overlayChannel(out)
	return out, s.rebuildRouting()
}

// ChannelStatusInfo is the note kept in other_info for automatic changes.
type ChannelStatusInfo struct {
	StatusReason string `json:"status_reason"`
	StatusTime   int64  `json:"status_time"`
}

// SetChannelStatusAuto changes the status of a channel automatically and
// records why. It never touches a manually disabled channel (status 2), and
// only enables a channel that was disabled automatically. It reports whether
// the status changed.
func (s *Store) SetChannelStatusAuto(id uint64, status int, reason string) (bool, *Channel, error) {
	return s.SetChannelStatusAutoAfter(id, status, reason, nil)
}

// SetChannelStatusAutoAfter is SetChannelStatusAuto for a verdict reached on
// seen, the channel as a call or a test used it: nothing changes when the
// channel has since been given another key, base URL, type or settings (an
// administrator fixed it while a test-all run or a call was under way), when
// its status has changed since (an administrator enabled it again, or
// another verdict came first), or, for a disable, when it no longer allows
// automatic disabling.
func (s *Store) SetChannelStatusAutoAfter(id uint64, status int, reason string, seen *Channel) (bool, *Channel, error) {
	changed := false
	var out *Channel
	err := s.update(func(tx *bolt.Tx) error {
		c, err := getChannel(tx, id)
		if err != nil {
			return err
		}
		// What the verdict was reached with: the key, where it went and how
		// (the organization header is sent, the status-code mapping decides
		// whether an answer counts at all).
		if seen != nil && (c.Key != seen.Key || c.BaseURL != seen.BaseURL || c.Type != seen.Type || c.Other != seen.Other ||
			c.OpenAIOrganization != seen.OpenAIOrganization || c.StatusCodeMapping != seen.StatusCodeMapping ||
			c.StatusRev != seen.StatusRev || (status == ChannelStatusAutoDisabled && c.AutoBan != 1)) {
			out = c
			return nil
		}
		switch {
		case c.Status == ChannelStatusManuallyOff, c.Status == status:
			out = c
			return nil
		case status == ChannelStatusEnabled && c.Status != ChannelStatusAutoDisabled:
			out = c
			return nil
		}
		old := *c
		c.Status = status
		c.StatusRev++
		info, _ := json.Marshal(ChannelStatusInfo{StatusReason: reason, StatusTime: s.nowUnix()})
		c.OtherInfo = string(info)
		if err := putChannel(tx, &old, c); err != nil {
			return err
		}
		changed = true
		out = c
		return nil
	})
	if err != nil {
		return false, nil, wrapTx(err)
	}
	if changed {
		if err := s.rebuildRouting(); err != nil {
			return changed, out, err
		}
	}
	s.ledger.overlayChannel(out)
	return changed, out, nil
}

// RecordChannelTest stores the outcome of a test: response time in ms.
func (s *Store) RecordChannelTest(id uint64, responseMs int64) error {
	return s.patchChannel(id, func(c *Channel) { c.ResponseTime = responseMs; c.TestTime = s.nowUnix() })
}

// RecordChannelBalance stores a balance read from the upstream.
func (s *Store) RecordChannelBalance(id uint64, balance float64) error {
	return s.patchChannel(id, func(c *Channel) { c.Balance = balance; c.BalanceUpdatedTime = s.nowUnix() })
}

// patchChannel changes fields that do not affect routing.
func (s *Store) patchChannel(id uint64, fn func(c *Channel)) error {
	return wrapTx(s.update(func(tx *bolt.Tx) error {
		c, err := getChannel(tx, id)
		if err != nil {
			return err
		}
		fn(c)
		return putJSON(tx.Bucket(bucketChannels), itob(id), c)
	}))
}

// DeleteChannels deletes channels and their abilities in one transaction and
// returns how many existed. Errors: none for missing ids.
func (s *Store) DeleteChannels(ids []uint64) (int, error) {
	return s.deleteChannelsIf(ids, nil)
}

// deleteChannelsIf deletes the channels of ids that keep, judged inside the
// transaction, allows (nil: all of them).
func (s *Store) deleteChannelsIf(ids []uint64, keep func(*Channel) bool) (int, error) {
	n := 0
	err := s.update(func(tx *bolt.Tx) error {
		n = 0
		for _, id := range ids {
			c, err := getChannel(tx, id)
			if ErrorCode(err) == ENOTFOUND {
				continue
			}
			if err != nil {
				return err
			}
			if keep != nil && !keep(c) {
				continue
			}
			if err := deleteAbilities(tx, c); err != nil {
				return err
			}
			if err := tx.Bucket(bucketChannels).Delete(itob(id)); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, wrapTx(err)
	}
	return n, s.rebuildRouting()
}

// DeleteDisabledChannels deletes every channel with status 2 or 3, with its
// abilities, and returns the count.
func (s *Store) DeleteDisabledChannels() (int, error) {
	all, err := s.Channels()
	if err != nil {
		return 0, err
	}
	disabled := func(c *Channel) bool {
		return c.Status == ChannelStatusManuallyOff || c.Status == ChannelStatusAutoDisabled
	}
	var ids []uint64
	for _, c := range all {
		if disabled(c) {
			ids = append(ids, c.ID)
		}
	}
	// Judged again in the deleting transaction: a channel enabled since the
	// list was read (by an administrator, or a test's automatic enable)
	// stays.
	return s.deleteChannelsIf(ids, disabled)
}

// FixAbilities drops ability rows whose channel is gone or that do not match
// their channel, and writes the rows every channel should have. It returns
// how many rows it removed and how many it added.
func (s *Store) FixAbilities() (removed, added int, err error) {
	err = s.update(func(tx *bolt.Tx) error {
		removed, added = 0, 0
		want := map[string]Ability{}
		if err := tx.Bucket(bucketChannels).ForEach(func(k, v []byte) error {
			var c Channel
			if err := json.Unmarshal(v, &c); err != nil {
				return err
			}
			for _, g := range c.GroupList() {
				for _, m := range c.ModelList() {
					want[string(abilityKey(g, m, c.ID))] = Ability{Group: g, Model: m, ChannelID: c.ID,
						Enabled: c.Status == ChannelStatusEnabled, Priority: c.Priority, Weight: c.Weight}
				}
			}
			return nil
		}); err != nil {
			return err
		}
		ab := tx.Bucket(bucketAbilities)
		var stale [][]byte
		have := map[string]bool{}
		if err := ab.ForEach(func(k, v []byte) error {
			var a Ability
			w, ok := want[string(k)]
			if ok && json.Unmarshal(v, &a) == nil && a == w {
				have[string(k)] = true
				return nil
			}
			stale = append(stale, append([]byte(nil), k...))
			return nil
		}); err != nil {
			return err
		}
		for _, k := range stale {
			if err := ab.Delete(k); err != nil {
				return err
			}
			removed++
		}
		for k, a := range want {
			if have[k] {
				continue
			}
			if err := putJSON(ab, []byte(k), a); err != nil {
				return err
			}
			added++
		}
		return nil
	})
	if err != nil {
		return 0, 0, wrapTx(err)
	}
	return removed, added, s.rebuildRouting()
}

// Abilities returns every ability row (for checks and tests).
func (s *Store) Abilities() ([]Ability, error) {
	var out []Ability
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAbilities).ForEach(func(k, v []byte) error {
			var a Ability
			if err := json.Unmarshal(v, &a); err != nil {
				return err
			}
			out = append(out, a)
			return nil
		})
	})
	return out, Internal(err)
}

// Channels returns every channel, newest first.
func (s *Store) Channels() ([]*Channel, error) {
	var out []*Channel
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketChannels).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			var ch Channel
			if err := json.Unmarshal(v, &ch); err != nil {
				return err
			}
			out = append(out, &ch)
		}
		return nil
	})
	if err != nil {
		return nil, Internal(err)
	}
	for _, c := range out {
		s.ledger.overlayChannel(c)
	}
	return out, nil
}

// ChannelFilter selects channels for the console list and search.
type ChannelFilter struct {
	Keyword string // id, part of the name, or the exact key
	Group   string
	Model   string // part of the model list
	IDSort  bool   // id desc instead of priority desc
}

// FindChannels returns the channels matching f, sorted for the console.
func (s *Store) FindChannels(f ChannelFilter) ([]*Channel, error) {
	all, err := s.Channels()
	if err != nil {
		return nil, err
	}
	kw := strings.TrimSpace(f.Keyword)
	// S §3.4: name LIKE %kw% and models LIKE %model%, with the LIKE of the
	// databases S runs on (as the token search): ASCII case does not count
	// and % and _ are wildcards.
	namePattern := "%" + strings.ToLower(kw) + "%"
	modelPattern := "%" + strings.ToLower(f.Model) + "%"
	var out []*Channel
	for _, c := range all {
		if kw != "" {
			id, perr := strconv.ParseUint(kw, 10, 64)
			if !(perr == nil && id == c.ID) && !likeMatch(strings.ToLower(c.Name), namePattern) && c.Key != kw {
				continue
			}
		}
		if f.Model != "" && !likeMatch(strings.ToLower(c.Models), modelPattern) {
			continue
		}
		if f.Group != "" && f.Group != "null" {
			found := false
			for _, g := range c.GroupList() {
				found = found || g == f.Group
			}
			if !found {
				continue
			}
		}
		out = append(out, c)
	}
	if !f.IDSort {
		sort.SliceStable(out, func(i, j int) bool {
			if out[i].Priority != out[j].Priority {
				return out[i].Priority > out[j].Priority
			}
			return out[i].ID > out[j].ID
		})
	}
	return out, nil
}
