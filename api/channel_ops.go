package api

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"gateway/relay"
	"gateway/store"
	"gateway/ws"
)

// Live topics for channels and tasks.
const (
	TopicChannelHealth = "channel.health"
	// TopicChannelList tells administrators' consoles that channels were
	// added or deleted: an open channel list reads its page again.
	TopicChannelList  = "channel.list"
	TopicTaskProgress = "task.progress"
	TopicLogTail      = "log.tail"
	// TopicDataCharged tells administrators' consoles that charges were
	// added to the dashboard without a log (consume logs off), so no
	// log.tail tells of them: an open dashboard reads its range again.
	TopicDataCharged = "data.charged"
)

func (s *Server) registerChannelOpsRoutes() {
	s.handle("GET /api/channel/test/{id}", s.testChannel)
	s.handle("GET /api/channel/test", s.testAllChannels)
	s.handle("GET /api/channel/test/progress", s.testAllProgress)
	s.handle("GET /api/channel/update_balance/{id}", s.updateChannelBalance)
	s.handle("GET /api/channel/update_balance/{id}/", s.updateChannelBalance)
	s.handle("GET /api/channel/update_balance", s.updateAllBalances)
	s.handle("GET /api/channel/models", s.listBuiltinModelObjects)
	s.handle("GET /api/channel/fetch_models/{id}", s.fetchChannelModels)
	s.handle("POST /api/channel/fetch_models", s.fetchModelsForForm)
	s.handle("GET /api/models", s.modelsByType)
	s.handle("GET /api/user/models", s.userModels)
	s.handle("POST /pg/chat/completions", s.playground)
}

func pathID(r *http.Request) (uint64, error) {
	id, err := strconv.ParseUint(strings.TrimSuffix(r.PathValue("id"), "/"), 10, 64)
	if err != nil || id == 0 {
		return 0, store.Errorf(store.EINVALID, "无效的 ID")
	}
	return id, nil
}

// testChannel answers {success, message, time} with time in seconds at the
// top level, as existing consoles expect.
func (s *Server) testChannel(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// The model is logged and indexed under its name: it is bounded as the
	// channel's own model names are.
	model := r.URL.Query().Get("model")
	if model != "" {
		if err := store.ValidateModelName(model); err != nil {
			writeError(w, r, err)
			return
		}
	}
	ch, err := s.store.Channel(id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	res := s.cfg.Relay.TestChannel(r.Context(), ch, model, currentUser(r))
	s.cfg.Relay.ApplyTestOutcome(ch, res)
	if res.Err != nil {
		writeRaw(w, http.StatusOK, map[string]any{"success": false, "message": res.Err.Error(), "time": res.Duration.Seconds()})
		return
	}
	writeRaw(w, http.StatusOK, map[string]any{"success": true, "message": "", "time": res.Duration.Seconds()})
}

// testAllChannels starts a background run; each result is pushed live and
// root gets a summary mail when the run ends (S §5.10: only a run started
// here, not the periodic one).
func (s *Server) testAllChannels(w http.ResponseWriter, r *http.Request) {
	hub, mailer := s.hub, s.cfg.ChannelMail
	var sum TestSummary // report is called from one goroutine, in order
	err := s.cfg.Relay.TestAll(currentUser(r), func(p relay.Progress) {
		msg := map[string]any{"task": "channel_test", "done": p.Done, "total": p.Total}
		if p.Result != nil && p.Skipped {
			// Deleted since the run began: neither passed nor failed.
			msg["channel_id"] = p.Result.ChannelID
			msg["skipped"] = true
		} else if p.Result != nil {
			msg["channel_id"] = p.Result.ChannelID
			msg["ok"] = p.Result.Err == nil
			msg["time"] = p.Result.Duration.Seconds()
			if p.Result.Err != nil {
				msg["message"] = p.Result.Err.Error()
			}
			// A slow answer is no failure, but the rules may still have
			// disabled the channel for it.
			msg["disabled"] = p.Status == store.ChannelStatusAutoDisabled
		}
		hub.Publish(ws.Audience{MinRole: store.RoleAdmin}, TopicTaskProgress, msg)
		if p.Result != nil && !p.Skipped {
			sum.Tested++
			if p.Result.Err != nil {
				sum.Failed++
			}
			switch p.Status {
			case store.ChannelStatusAutoDisabled:
				sum.Disabled++
			case store.ChannelStatusEnabled:
				sum.Enabled++
			}
		}
		if p.Done == p.Total && (p.Result != nil || p.Total == 0) {
			mailer.TestAllFinished(sum)
		}
	})
	if err != nil {
		writeError(w, r, store.Errorf(store.ECONFLICT, "%s", err.Error()))
		return
	}
	writeMessage(w, "已开始测试所有渠道，结果将实时更新", nil)
}

// testAllProgress tells where a test-all run stands, so a console that opens
// the channel page (or reconnects) during a run shows it at once instead of
// at the run's next push. running is false when no run is going; done,
// total, failed and disabled then describe the last run since the start.
// periodic marks a run of the test interval, which pushes nothing.
func (s *Server) testAllProgress(w http.ResponseWriter, r *http.Request) {
	run := s.cfg.Relay.TestRunState()
	writeJSON(w, map[string]any{
		"task":     "channel_test",
		"running":  run.Running,
		"periodic": run.Periodic,
		"done":     run.Done,
		"total":    run.Total,
		"failed":   run.Failed,
		"disabled": run.Disabled,
	})
}

// updateChannelBalance answers {success, message, balance} at the top level.
func (s *Server) updateChannelBalance(w http.ResponseWriter, r *http.Request) {
	// The {id}/ pattern also matches deeper paths: those answer 404.
	ch, ok := routeRecord(w, r, s.store.Channel)
	if !ok {
		return
	}
	b, err := s.cfg.Relay.UpdateBalance(r.Context(), ch)
	if err != nil {
		if errors.Is(err, relay.ErrBalanceUnsupported) {
			writeError(w, r, store.Errorf(store.EUNSUPPORTED, "%s", err.Error()))
			return
		}
		var se *store.Error
		if errors.As(err, &se) {
			writeError(w, r, err) // the gateway's own failure, not the upstream's
			return
		}
		writeError(w, r, &store.Error{Code: store.EUPSTREAM, Message: "刷新失败：" + relay.BalanceErrorText(err), Err: err})
		return
	}
	PublishChannel(s.hub, s.store, ch.ID)
	writeRaw(w, http.StatusOK, map[string]any{"success": true, "message": "", "balance": b})
}

// updateAllBalances refreshes every enabled channel whose type has a balance
// endpoint, one after another, and reports what happened to each; the
// message says how many failed (the reasons are in the list). While another
// update of every balance runs it answers 409, as a second test-all does.
func (s *Server) updateAllBalances(w http.ResponseWriter, r *http.Request) {
	out, err := s.cfg.Relay.UpdateAllBalances(r.Context())
	if errors.Is(err, relay.ErrBalancesRunning) {
		writeError(w, r, store.Errorf(store.ECONFLICT, "%s", err.Error()))
		return
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	failed := 0
	for _, b := range out {
		if b.Error != "" {
			failed++
		}
	}
	msg := "已更新所有已启用渠道的余额"
	if failed > 0 {
		msg = fmt.Sprintf("已更新 %d 个渠道的余额，%d 个更新失败", len(out)-failed, failed)
	}
	writeMessage(w, msg, out)
}

func (s *Server) listBuiltinModelObjects(w http.ResponseWriter, r *http.Request) {
	seen := map[string]bool{}
	type obj struct {
		ID         string  `json:"id"`
		Object     string  `json:"object"`
		Created    int64   `json:"created"`
		OwnedBy    string  `json:"owned_by"`
		Permission []any   `json:"permission"`
		Root       string  `json:"root"`
		Parent     *string `json:"parent"`
	}
	out := []obj{}
	// Types in order, so a model several types list is owned by the first
	// (OpenAI before Azure), the same on every call.
	types := slices.Sorted(maps.Keys(relay.BuiltinModels))
	for _, t := range types {
		list := relay.BuiltinModels[t]
		for _, m := range list {
			if seen[m] {
				continue
			}
			seen[m] = true
			out = append(out, obj{ID: m, Object: "model", Created: 1626777600, OwnedBy: strings.ToLower(relay.ChannelTypeNames[t]),
				Permission: []any{}, Root: m})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	writeJSON(w, out)
}

func (s *Server) modelsByType(w http.ResponseWriter, r *http.Request) {
	out := map[string][]string{}
	for t, list := range relay.BuiltinModels {
		out[strconv.Itoa(t)] = list
	}
	writeJSON(w, out)
}

// userModels answers the model names of the caller's group or, with
// ?group=, of another group the caller may use (the playground's choice).
func (s *Server) userModels(w http.ResponseWriter, r *http.Request) {
	group := currentUser(r).Group
	if g := r.URL.Query().Get("group"); g != "" && g != group {
		if _, ok := s.store.Settings().UsableGroups(group)[g]; !ok {
			writeError(w, r, store.Errorf(store.EFORBIDDEN, "无权使用分组 %s", g))
			return
		}
		group = g
	}
	models := s.store.GroupModels(group)
	if models == nil {
		models = []string{}
	}
	writeJSON(w, models)
}

func (s *Server) fetchChannelModels(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ch, err := s.store.Channel(id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.writeFetchedModels(w, r, ch)
}

type fetchModelsRequest struct {
	Type    int    `json:"type"`
	BaseURL string `json:"base_url"`
	Key     string `json:"key"`
	// ID names a saved channel whose stored key is used when Key is empty,
	// so an edit form asks with its current type and base URL.
	ID uint64 `json:"id"`
}

// fetchModelsForForm lists a provider's models for a channel form, saved or
// not: the server asks, through the guarded client, so the key never goes
// from the browser to a third party.
func (s *Server) fetchModelsForForm(w http.ResponseWriter, r *http.Request) {
	var req fetchModelsRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	var stored *store.Channel
	if strings.TrimSpace(req.Key) == "" && req.ID != 0 {
		ch, err := s.store.Channel(req.ID)
		if err != nil {
			writeError(w, r, err)
			return
		}
		stored = ch
		if req.Type == 0 {
			req.Type = ch.Type
		}
	}
	if req.Type == 0 {
		req.Type = relay.TypeOpenAI
	}
	// The type first (A §5): a form of a type whose provider lists no
	// models hears so whether or not it holds a key.
	if !relay.ListsModels(req.Type) {
		writeError(w, r, store.Errorf(store.EINVALID, "%s", relay.ErrFetchUnsupported.Error()))
		return
	}
	if stored != nil {
		// The stored key goes only where the channel sends it: a form that
		// points elsewhere brings its key, so that no edit that was never
		// saved carries a key to another host.
		if !stored.SendsKeyTo(req.Type, req.BaseURL) {
			writeError(w, r, store.ErrKeyForNewDestination)
			return
		}
		req.Key = stored.Key
	}
	if strings.TrimSpace(req.Key) == "" {
		writeError(w, r, store.Errorf(store.EINVALID, "请填写密钥"))
		return
	}
	if err := store.ValidateBaseURL(req.BaseURL); err != nil {
		writeError(w, r, err)
		return
	}
	key := strings.TrimSpace(strings.Split(req.Key, "\n")[0])
	// A typed key is judged as a saved channel's is: a control character
	// cannot go into the request's header, and is the form's mistake.
	if stored == nil && strings.IndexFunc(key, unicode.IsControl) >= 0 {
		writeError(w, r, store.Errorf(store.EINVALID, "密钥不能包含控制字符"))
		return
	}
	s.writeFetchedModels(w, r, &store.Channel{Type: req.Type, BaseURL: strings.TrimRight(strings.TrimSpace(req.BaseURL), "/"), Key: key})
}

func (s *Server) writeFetchedModels(w http.ResponseWriter, r *http.Request, ch *store.Channel) {
	models, err := s.cfg.Relay.FetchModels(r.Context(), ch)
	if errors.Is(err, relay.ErrFetchUnsupported) {
		writeError(w, r, store.Errorf(store.EINVALID, "%s", err.Error()))
		return
	}
	if err != nil {
		writeError(w, r, &store.Error{Code: store.EUPSTREAM, Message: "获取模型列表失败：" + err.Error(), Err: err})
		return
	}
	writeJSON(w, models)
}

func (s *Server) playground(w http.ResponseWriter, r *http.Request) {
	id := identity(r)
	if id.ViaToken {
		writeError(w, r, store.Errorf(store.EINVALID, "游乐场不支持使用访问令牌"))
		return
	}
	s.cfg.Relay.Playground(w, r, id.User)
}

// channelHealth is the live view of a channel's health.
type channelHealth struct {
	ID                 uint64  `json:"id"`
	Status             int     `json:"status"`
	ResponseTime       int64   `json:"response_time"`
	TestTime           int64   `json:"test_time"`
	Balance            float64 `json:"balance"`
	BalanceUpdatedTime int64   `json:"balance_updated_time"`
	UsedQuota          int64   `json:"used_quota"`
	OtherInfo          string  `json:"other_info"`
}

// channelPushes orders channel.health pushes. Each reads the channel as
// committed when its turn comes, so two changes racing to publish cannot
// leave consoles showing the older state after the newer one.
var channelPushes sync.Mutex

// PublishChannel pushes channel id's health, as stored now, to
// administrators. Callers publish after their change is committed; a
// channel deleted since is not pushed.
func PublishChannel(hub *ws.Hub, st *store.Store, id uint64) {
	if st == nil {
		return
	}
	channelPushes.Lock()
	defer channelPushes.Unlock()
	c, err := st.Channel(id)
	if err != nil {
		return
	}
	hub.Publish(ws.Audience{MinRole: store.RoleAdmin}, TopicChannelHealth, channelHealth{
		ID: c.ID, Status: c.Status, ResponseTime: c.ResponseTime, TestTime: c.TestTime, Balance: c.Balance,
		BalanceUpdatedTime: c.BalanceUpdatedTime, UsedQuota: c.UsedQuota, OtherInfo: c.OtherInfo,
	})
}

// publishChannelList tells administrators' consoles that channels were
// added or deleted, after the change was committed.
func (s *Server) publishChannelList() {
	s.hub.Publish(ws.Audience{MinRole: store.RoleAdmin}, TopicChannelList, struct{}{})
}

// PublishLogs pushes new consume logs, oldest first, to each console that
// sees some: administrators all of them, each other user their own without
// admin detail. A message carries up to liveBatch entries, so that a burst
// of charges stays within a socket's backlog.
func PublishLogs(hub *ws.Hub, logs []*store.Log) {
	for chunk := range slices.Chunk(logs, liveBatch) {
		hub.Publish(ws.Audience{MinRole: store.RoleAdmin}, TopicLogTail, chunk)
	}
	var own map[uint64][]*store.Log
	for _, l := range logs {
		// A log of nobody's (a scheduled channel test's) is the
		// administrators' alone: an audience of user 0 is everyone.
		if l.UserID != 0 && hub.Wants(selfAudience(l.UserID)) {
			if own == nil {
				own = map[uint64][]*store.Log{}
			}
			own[l.UserID] = append(own[l.UserID], l)
		}
	}
	for id, ls := range own {
		// The owner sees them as the self log list shows them.
		for chunk := range slices.Chunk(ls, liveBatch) {
			hub.Publish(selfAudience(id), TopicLogTail, viewSelfLogs(chunk))
		}
	}
}

// liveBatch bounds the entries of one log.tail or token.usage message: a
// commit of the most charges (2 048) makes 8 messages of a few hundred KB
// at most.
const liveBatch = 256

// selfAudience is a user's consoles unless they are an administrator's,
// which get every log anyway.
func selfAudience(userID uint64) ws.Audience {
	return ws.Audience{UserID: userID, MaxRole: store.RoleAdmin - 1}
}

// PublishCharges pushes the new consume logs of a committed batch (see
// PublishLogs) and the new balances of the users and tokens charged.
func PublishCharges(hub *ws.Hub, b store.ChargeBatch) {
	PublishLogs(hub, b.Logs)
	if b.Unlogged {
		hub.Publish(ws.Audience{MinRole: store.RoleAdmin}, TopicDataCharged, struct{}{})
	}
	for _, bal := range b.Balances {
		if bal.UserID == 0 {
			continue // an audience of user 0 is every console
		}
		hub.Publish(ws.Audience{UserID: bal.UserID}, TopicUserSelf, map[string]any{
			"id": bal.UserID, "quota": bal.Quota, "used_quota": bal.UsedQuota, "request_count": bal.RequestCount, "balance_seq": bal.Seq})
	}
	// Tokens are their owner's alone (an administrator's list shows only
	// their own too): each owner gets the tokens of the batch together.
	var usage map[uint64][]tokenUsage
	for _, t := range b.Tokens {
		if t.UserID != 0 && hub.Wants(ws.Audience{UserID: t.UserID}) {
			if usage == nil {
				usage = map[uint64][]tokenUsage{}
			}
			usage[t.UserID] = append(usage[t.UserID], tokenUsage{ID: t.TokenID, RemainQuota: t.RemainQuota, UsedQuota: t.UsedQuota, Unlimited: t.Unlimited})
		}
	}
	for owner, us := range usage {
		for chunk := range slices.Chunk(us, liveBatch) {
			hub.Publish(ws.Audience{UserID: owner}, TopicTokenUsage, chunk)
		}
	}
}

// tokenUsage is a token's quota after a charge, as token.usage carries it.
type tokenUsage struct {
	ID          uint64 `json:"id"`
	RemainQuota int64  `json:"remain_quota"`
	UsedQuota   int64  `json:"used_quota"`
	Unlimited   bool   `json:"unlimited_quota"`
}
