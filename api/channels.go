package api

import (
	"fmt"
	"gateway/relay"
	"net/http"
	"strconv"
	"strings"

	"gateway/store"
)

// Channel CRUD routes (administrators). Channel keys never leave the server:
// every answer goes through channelView. Tests, balances and model lists
// (/api/channel/test*, /update_balance*, /models, /fetch_models*) are
// registered by the relay side in channel_ops.go.
func (s *Server) registerChannelRoutes() {
	s.handle("GET /api/channel/{$}", s.listChannels)
	s.handle("GET /api/channel/search", s.searchChannels)
	s.handle("GET /api/channel/{id}", s.getChannel)
	s.handle("POST /api/channel/{$}", s.createChannels)
	s.handle("PUT /api/channel/{$}", s.updateChannel)
	s.handle("DELETE /api/channel/{id}", s.deleteChannel)
	s.handle("DELETE /api/channel/{id}/", s.deleteChannel)
	s.handle("DELETE /api/channel/disabled", s.deleteDisabledChannels)
	s.handle("POST /api/channel/batch", s.deleteChannelBatch)
	s.handle("POST /api/channel/fix", s.fixChannels)
	s.handle("POST /api/channel/copy/{id}", s.copyChannel)
}

// channelView is a channel as the console sees it. It is built field by
// field so that the key can never slip out.
type channelView struct {
	ID                 uint64  `json:"id"`
	Type               int     `json:"type"`
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
}

func viewChannel(c *store.Channel) channelView {
	return channelView{
		ID: c.ID, Type: c.Type, OpenAIOrganization: c.OpenAIOrganization, TestModel: c.TestModel,
		Status: c.Status, Name: c.Name, Weight: c.Weight, CreatedTime: c.CreatedTime, TestTime: c.TestTime,
		ResponseTime: c.ResponseTime, BaseURL: c.BaseURL, Other: c.Other, Balance: c.Balance,
		BalanceUpdatedTime: c.BalanceUpdatedTime, Models: c.Models, Group: c.Group, UsedQuota: c.UsedQuota,
		ModelMapping: c.ModelMapping, StatusCodeMapping: c.StatusCodeMapping, Priority: c.Priority,
		AutoBan: c.AutoBan, OtherInfo: c.OtherInfo,
	}
}

func viewChannels(chs []*store.Channel) []channelView {
	out := make([]channelView, 0, len(chs))
	for _, c := range chs {
		out = append(out, viewChannel(c))
	}
	return out
}

// listChannels answers one page: p is 0-based; page_size negative (or
// missing) gives 10 and 0 an empty page, as the reference's LIMIT 0 did.
func (s *Server) listChannels(w http.ResponseWriter, r *http.Request) {
	p := pageNum(r, 0)
	size := min(queryNum(r, "page_size", 10), maxPageNum)
	if size < 0 {
		size = 10
	}
	all, err := s.store.FindChannels(store.ChannelFilter{IDSort: idSort(r)})
	if err != nil {
		writeError(w, r, err)
		return
	}
	start := min(p*size, len(all))
	writeJSON(w, viewChannels(all[start:min(start+size, len(all))]))
}

// idSort reads id_sort as the reference does (strconv.ParseBool): 1, t,
// TRUE, True and true order by id; anything else, or nothing, by priority.
func idSort(r *http.Request) bool {
	v, _ := strconv.ParseBool(r.URL.Query().Get("id_sort"))
	return v
}

// searchChannels matches id, part of the name or the exact key, plus group
// and part of the model list; it is not paged.
func (s *Server) searchChannels(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.ChannelFilter{Keyword: q.Get("keyword"), Group: strings.TrimSpace(q.Get("group")),
		Model: strings.TrimSpace(q.Get("model")), IDSort: idSort(r)}
	chs, err := s.store.FindChannels(f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, viewChannels(chs))
}

func (s *Server) getChannel(w http.ResponseWriter, r *http.Request) {
	c, ok := routeRecord(w, r, s.store.Channel)
	if !ok {
		return
	}
	writeJSON(w, viewChannel(c))
}

// channelRequest is the body of channel create and edit. Pointer fields tell
// an omitted field (kept on edit) from an empty one (cleared on edit).
type channelRequest struct {
	ID                 wireID   `json:"id"`
	Type               *int     `json:"type"`
	Key                *string  `json:"key"`
	OpenAIOrganization *string  `json:"openai_organization"`
	TestModel          *string  `json:"test_model"`
	Status             *int     `json:"status"`
	Name               *string  `json:"name"`
	Weight             *int64   `json:"weight"`
	BaseURL            *string  `json:"base_url"`
	Other              *string  `json:"other"`
	Models             *wireCSV `json:"models"`
	Group              *wireCSV `json:"group"`
	ModelMapping       *string  `json:"model_mapping"`
	StatusCodeMapping  *string  `json:"status_code_mapping"`
	Priority           *int64   `json:"priority"`
	AutoBan            *int     `json:"auto_ban"`
}

// Channel types with create-time defaults or key rules.
const (
	channelTypeAzure  = 3
	channelTypeSpark  = 18
	channelTypeVertex = 41
)

// newChannels builds the channels of a create request: one per non-empty key
// line, except Vertex AI, whose key is one JSON document.
func (req *channelRequest) newChannels() []*store.Channel {
	base := store.Channel{
		Type: deref(req.Type), OpenAIOrganization: deref(req.OpenAIOrganization), TestModel: deref(req.TestModel),
		Status: deref(req.Status), Name: strings.TrimSpace(deref(req.Name)), Weight: deref(req.Weight),
		BaseURL: deref(req.BaseURL), Other: deref(req.Other), Models: string(deref(req.Models)),
		Group: string(deref(req.Group)), ModelMapping: deref(req.ModelMapping),
		StatusCodeMapping: deref(req.StatusCodeMapping), Priority: deref(req.Priority), AutoBan: 1,
	}
	if req.AutoBan != nil {
		base.AutoBan = *req.AutoBan
	}
	if base.Group == "" {
		base.Group = "default"
	}
	if strings.TrimSpace(base.Other) == "" {
		switch base.Type {
		case channelTypeAzure:
			base.Other = "2023-06-01-preview"
		case channelTypeSpark:
			base.Other = "v2.1"
		}
	}
	key := strings.TrimSpace(deref(req.Key))
	keys := []string{key}
	if base.Type != channelTypeVertex {
		keys = keys[:0]
		for _, line := range strings.Split(key, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				keys = append(keys, line)
			}
		}
	}
	out := make([]*store.Channel, 0, len(keys))
	for _, k := range keys {
		c := base
		c.Key = k
		out = append(out, &c)
	}
	return out
}

// knownType refuses a channel type the console does not offer; nil (a
// field left out) and 0 (the store asks for a type) pass.
func knownType(t *int) error {
	if t != nil && *t != 0 && relay.ChannelTypeNames[*t] == "" {
		return store.Errorf(store.EINVALID, "无效的渠道类型")
	}
	return nil
}

func (s *Server) createChannels(w http.ResponseWriter, r *http.Request) {
	var req channelRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	chs := req.newChannels()
	if len(chs) == 0 || chs[0].Key == "" {
		writeError(w, r, store.Errorf(store.EINVALID, "请填写渠道名称和渠道密钥！"))
		return
	}
	if err := knownType(req.Type); err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.store.CreateChannels(chs); err != nil {
		writeError(w, r, err)
		return
	}
	s.publishChannelList()
	writeMessage(w, "渠道创建成功！", viewChannels(chs))
}

// updateChannel writes the fields present in the body: an empty string
// clears a field, an absent one stays, and an empty key keeps the stored key.
func (s *Server) updateChannel(w http.ResponseWriter, r *http.Request) {
	var req channelRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if req.ID == 0 {
		writeError(w, r, errNoID)
		return
	}
	if err := knownType(req.Type); err != nil {
		writeError(w, r, err)
		return
	}
	upd := store.ChannelUpdate{
		Type: req.Type, Key: req.Key, OpenAIOrganization: req.OpenAIOrganization, TestModel: req.TestModel,
		Status: req.Status, Name: req.Name, Weight: req.Weight, BaseURL: req.BaseURL, Other: req.Other,
		Models: (*string)(req.Models), Group: (*string)(req.Group), ModelMapping: req.ModelMapping,
		StatusCodeMapping: req.StatusCodeMapping, Priority: req.Priority, AutoBan: req.AutoBan,
	}
	c, err := s.store.UpdateChannel(uint64(req.ID), upd)
	if err != nil {
		writeError(w, r, err)
		return
	}
	PublishChannel(s.hub, s.store, c.ID) // other consoles see status toggles at once
	writeMessage(w, "渠道更新成功！", viewChannel(c))
}

func (s *Server) deleteChannel(w http.ResponseWriter, r *http.Request) {
	id, ok := routeID(w, r)
	if !ok {
		return
	}
	n, err := s.store.DeleteChannels([]uint64{id})
	if err != nil {
		writeError(w, r, err)
		return
	}
	if n == 0 {
		writeError(w, r, store.Errorf(store.ENOTFOUND, "渠道未找到，请刷新页面后重试。"))
		return
	}
	s.publishChannelList()
	writeJSON(w, nil)
}

// deleteDisabledChannels removes channels with status 2 or 3 together with
// their abilities (the reference left the abilities behind).
func (s *Server) deleteDisabledChannels(w http.ResponseWriter, r *http.Request) {
	n, err := s.store.DeleteDisabledChannels()
	if err != nil {
		writeError(w, r, err)
		return
	}
	if n > 0 {
		s.publishChannelList()
	}
	writeMessage(w, fmt.Sprintf("已删除所有禁用渠道，共计 %d 个", n), n)
}

type channelBatchRequest struct {
	IDs []wireID `json:"ids"`
}

// deleteChannelBatch answers the number of channels actually deleted, not
// the number of ids sent.
func (s *Server) deleteChannelBatch(w http.ResponseWriter, r *http.Request) {
	var req channelBatchRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if len(req.IDs) == 0 {
		writeError(w, r, store.Errorf(store.EINVALID, "请先选择要删除的通道！"))
		return
	}
	ids := make([]uint64, len(req.IDs))
	for i, id := range req.IDs {
		ids[i] = uint64(id)
	}
	n, err := s.store.DeleteChannels(ids)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if n > 0 {
		s.publishChannelList()
	}
	writeMessage(w, fmt.Sprintf("已删除 %d 个通道！", n), n)
}

// fixChannels repairs the ability rows. data is a number as S has it, but
// an honest one: the rows removed plus the rows added.
func (s *Server) fixChannels(w http.ResponseWriter, r *http.Request) {
	removed, added, err := s.store.FixAbilities()
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeMessage(w, fmt.Sprintf("已修复 %d 个通道！", removed+added), removed+added)
}

// copyChannel duplicates a channel on the server, key included, so the
// console never needs the key. Usage, test and balance state start afresh.
func (s *Server) copyChannel(w http.ResponseWriter, r *http.Request) {
	src, ok := routeRecord(w, r, s.store.Channel)
	if !ok {
		return
	}
	status := src.Status
	if status == store.ChannelStatusAutoDisabled {
		// The copy did not fail: it starts disabled by hand, not as a
		// channel an automatic test may enable without a reason on record.
		status = store.ChannelStatusManuallyOff
	}
	c := &store.Channel{
		Type: src.Type, Key: src.Key, OpenAIOrganization: src.OpenAIOrganization, TestModel: src.TestModel,
		Status: status, Name: store.ClipRunes(src.Name, store.MaxChannelNameLen-len([]rune("_复制"))) + "_复制", Weight: src.Weight, BaseURL: src.BaseURL, Other: src.Other,
		Models: src.Models, Group: src.Group, ModelMapping: src.ModelMapping,
		StatusCodeMapping: src.StatusCodeMapping, Priority: src.Priority, AutoBan: src.AutoBan,
	}
	if err := s.store.CreateChannels([]*store.Channel{c}); err != nil {
		writeError(w, r, err)
		return
	}
	s.publishChannelList()
	writeMessage(w, "渠道复制成功", viewChannel(c))
}
