package api

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"gateway/store"
)

// Log routes. Administrators read every entry; users read their own, without
// the entry id, the channel and other.admin_info (which names the channels a
// call went through).
func (s *Server) registerLogRoutes() {
	s.handle("GET /api/log/{$}", s.listLogs)
	s.handle("DELETE /api/log/{$}", s.deleteLogs)
	s.handle("GET /api/log/stat", s.logStat)
	s.handle("GET /api/log/search", s.searchLogs)
	s.handle("GET /api/log/self/{$}", s.listSelfLogs)
	s.handle("GET /api/log/self", s.listSelfLogs)
	s.handle("GET /api/log/self/stat", s.selfLogStat)
	s.handle("GET /api/log/self/search", s.searchSelfLogs)
}

// Page-size caps of the log lists.
const (
	maxSelfLogPageSize  = 100
	maxAdminLogPageSize = 1000
	logSearchLimit      = 100
)

// logFilter reads the filters both roles share; admin adds username and
// channel.
func logFilter(r *http.Request, admin bool) (store.LogFilter, error) {
	q := r.URL.Query()
	f := store.LogFilter{
		TokenName: strings.TrimSpace(q.Get("token_name")),
		ModelName: strings.TrimSpace(q.Get("model_name")),
	}
	// A type that is no integer must not quietly mean "every type".
	typ, err := queryNum64(r, "type")
	if err != nil {
		return f, err
	}
	f.Type = int(max(min(typ, math.MaxInt32), math.MinInt32))
	if f.Start, f.End, err = queryRange(r); err != nil {
		return f, err
	}
	if admin {
		f.Username = strings.TrimSpace(q.Get("username"))
		// A channel that is not an id must not quietly mean "every channel".
		if v := strings.TrimSpace(q.Get("channel")); v != "" && v != "0" {
			id, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return f, store.Errorf(store.EINVALID, "渠道 ID 必须是正整数")
			}
			f.ChannelID = id
		}
	}
	return f, nil
}

// logPage reads p (1-based) and page_size (≤0 → 10, capped).
func logPage(r *http.Request, maxSize int) (page, size int) {
	page = pageNum(r, 1)
	size = queryNum(r, "page_size", 10)
	if size <= 0 {
		size = 10
	}
	return page, min(size, maxSize)
}

func (s *Server) listLogs(w http.ResponseWriter, r *http.Request) {
	page, size := logPage(r, maxAdminLogPageSize)
	f, err := logFilter(r, true)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out, err := s.store.LogsContext(r.Context(), f, page, size)
	writeResult(w, r, out, err)
}

func (s *Server) listSelfLogs(w http.ResponseWriter, r *http.Request) {
	page, size := logPage(r, maxSelfLogPageSize)
	f, err := logFilter(r, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	f.UserID = currentUser(r).ID
	out, err := s.store.LogsContext(r.Context(), f, page, size)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, selfLogPage{Items: viewSelfLogs(out.Items), Total: out.Total, Page: out.Page, PageSize: out.PageSize})
}

func (s *Server) searchLogs(w http.ResponseWriter, r *http.Request) {
	logs, err := s.store.SearchLogsContext(r.Context(), store.LogFilter{Keyword: strings.TrimSpace(r.URL.Query().Get("keyword"))}, logSearchLimit)
	writeResult(w, r, logs, err)
}

// searchSelfLogs finds the caller's own entries whose type is the keyword
// (S §8: unlike the admin search, not their content).
func (s *Server) searchSelfLogs(w http.ResponseWriter, r *http.Request) {
	typ, err := strconv.Atoi(strings.TrimSpace(r.URL.Query().Get("keyword")))
	if err != nil || typ <= 0 {
		writeJSON(w, []*store.Log{})
		return
	}
	logs, err := s.store.SearchLogsContext(r.Context(), store.LogFilter{UserID: currentUser(r).ID, Type: typ}, logSearchLimit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, viewSelfLogs(logs))
}

// logStatView is the answer of the stat routes.
type logStatView struct {
	Quota int64 `json:"quota"`
	RPM   int64 `json:"rpm"`
	TPM   int64 `json:"tpm"`
}

// logStat: quota is the consume quota under the filters and time range (the
// type parameter is ignored); rpm and tpm always cover the last 60 seconds,
// with the same filters but not the range.
func (s *Server) logStat(w http.ResponseWriter, r *http.Request) {
	f, err := logFilter(r, true)
	if err != nil {
		writeError(w, r, err)
		return
	}
	quota, err := s.store.LogQuotaSumContext(r.Context(), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	af := ActivityFilter{TokenName: f.TokenName, Model: f.ModelName, ChannelID: f.ChannelID}
	if f.Username != "" {
		u, err := s.store.UserByUsername(f.Username)
		if err != nil {
			writeJSON(w, logStatView{Quota: quota})
			return
		}
		af.UserID = u.ID
	}
	rpm, tpm := recent.Stats(af)
	writeJSON(w, logStatView{Quota: quota, RPM: rpm, TPM: tpm})
}

// selfLogStat is logStat over the caller's own entries, by user id (the
// reference filtered by username, which a rename breaks).
func (s *Server) selfLogStat(w http.ResponseWriter, r *http.Request) {
	f, err := logFilter(r, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	f.UserID = currentUser(r).ID
	quota, err := s.store.LogQuotaSumContext(r.Context(), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	rpm, tpm := recent.Stats(ActivityFilter{UserID: f.UserID, TokenName: f.TokenName, Model: f.ModelName})
	writeJSON(w, logStatView{Quota: quota, RPM: rpm, TPM: tpm})
}

func (s *Server) deleteLogs(w http.ResponseWriter, r *http.Request) {
	ts, err := queryNum64(r, "target_timestamp")
	if err != nil {
		writeError(w, r, err)
		return
	}
	if ts <= 0 {
		writeError(w, r, store.Errorf(store.EINVALID, "请选择日志记录时间"))
		return
	}
	n, err := s.store.DeleteLogsBefore(r.Context(), ts)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// Stopped between transactions (a shutdown, or the caller left):
		// what was cleared stays cleared; say how much, to whoever is there.
		writeError(w, r, store.Errorf(store.EUNAVAILABLE, "日志清理被中断：已清理 %d 条，请重试以清理其余日志", n))
		return
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeMessage(w, fmt.Sprintf("%d 条日志已清理！", n), n)
}

// selfLog is a log entry as its owner sees it: no entry id, no channel, and
// other without admin_info.
type selfLog struct {
	UserID           uint64 `json:"user_id"`
	CreatedAt        int64  `json:"created_at"`
	Type             int    `json:"type"`
	Content          string `json:"content"`
	Username         string `json:"username"`
	TokenName        string `json:"token_name"`
	TokenID          uint64 `json:"token_id"`
	ModelName        string `json:"model_name"`
	Quota            int64  `json:"quota"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	UseTime          int64  `json:"use_time"`
	IsStream         bool   `json:"is_stream"`
	Group            string `json:"group,omitempty"`
	Other            string `json:"other"`
}

type selfLogPage struct {
	Items    []selfLog `json:"items"`
	Total    int       `json:"total"`
	Page     int       `json:"page"`
	PageSize int       `json:"page_size"`
}

func viewSelfLogs(logs []*store.Log) []selfLog {
	out := make([]selfLog, 0, len(logs))
	for _, l := range logs {
		out = append(out, selfLog{
			UserID: l.UserID, CreatedAt: l.CreatedAt, Type: l.Type, Content: l.Content, Username: l.Username,
			TokenName: l.TokenName, TokenID: l.TokenID, ModelName: l.ModelName, Quota: l.Quota,
			PromptTokens: l.PromptTokens, CompletionTokens: l.CompletionTokens, UseTime: l.UseTime,
			IsStream: l.IsStream, Group: l.Group, Other: stripAdminInfo(l.Other),
		})
	}
	return out
}

// adminOnlyOther are the members of a log's other that only administrators
// see: the channels tried, and the upstream model name a channel's mapping
// chose (channel configuration).
var adminOnlyOther = []string{"admin_info", "upstream_model"}

// stripAdminInfo removes the administrators' members from a log's other
// JSON object. Text that is not a JSON object is dropped entirely, since it
// cannot be shown to a user without risk of carrying admin detail.
func stripAdminInfo(other string) string {
	if strings.TrimSpace(other) == "" {
		return other
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(other), &obj); err != nil || obj == nil {
		return ""
	}
	found := false
	for _, k := range adminOnlyOther {
		if _, ok := obj[k]; ok {
			found = true
			delete(obj, k)
		}
	}
	if !found {
		return other
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return ""
	}
	return string(data)
}

// ---- recent activity: rpm and tpm of the stat routes ----

// activityWindow is how far back rpm and tpm look.
const activityWindow = 60

// ActivityEvent is one consumed relay call.
type ActivityEvent struct {
	Time      time.Time // zero means now
	UserID    uint64
	TokenName string
	Model     string
	ChannelID uint64
	Tokens    int64 // prompt + completion
}

// ActivityFilter selects events for Stats; zero fields do not filter. Model
// uses the log filter's LIKE syntax (% and _), exact without them.
type ActivityFilter struct {
	UserID    uint64
	TokenName string
	Model     string
	ChannelID uint64
}

type activityKey struct {
	user    uint64
	token   string
	model   string
	channel uint64
}

type activityCount struct{ calls, tokens int64 }

// activitySlot aggregates the events of one second.
type activitySlot struct {
	sec    int64
	counts map[activityKey]activityCount
}

// RecentActivity keeps the last 60 seconds of relay calls in memory for the
// log page's rpm and tpm. It is a ring of one-second slots, each aggregating
// its events by (user, token name, model, channel), so memory is bounded by
// the number of distinct combinations per second, not by the call rate, and
// Add costs one map update under a mutex. It is per process: on several
// nodes each reports its own traffic.
type RecentActivity struct {
	// Now returns the current time; tests replace it.
	Now func() time.Time

	mu    sync.Mutex
	slots [activityWindow]activitySlot
}

// NewRecentActivity returns an empty window.
func NewRecentActivity() *RecentActivity {
	return &RecentActivity{Now: time.Now}
}

// Add records one call. Events older than the window, or from a second a
// newer event has already reused the slot for, are ignored.
func (a *RecentActivity) Add(ev ActivityEvent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.Now().Unix()
	sec := now
	if !ev.Time.IsZero() {
		sec = ev.Time.Unix()
	}
	if sec <= now-activityWindow {
		return
	}
	slot := &a.slots[uint64(sec)%activityWindow]
	switch {
	case slot.sec > sec:
		return
	case slot.sec < sec:
		slot.sec = sec
		if slot.counts == nil {
			slot.counts = map[activityKey]activityCount{}
		}
		clear(slot.counts)
	}
	k := activityKey{user: ev.UserID, token: ev.TokenName, model: ev.Model, channel: ev.ChannelID}
	c := slot.counts[k]
	c.calls++
	c.tokens += ev.Tokens
	slot.counts[k] = c
}

// Stats returns the calls (rpm) and tokens (tpm) of the last 60 seconds that
// match f.
func (a *RecentActivity) Stats(f ActivityFilter) (rpm, tpm int64) {
	model := likeMatcher(f.Model)
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.Now().Unix()
	for i := range a.slots {
		slot := &a.slots[i]
		if slot.sec <= now-activityWindow || slot.sec > now {
			continue
		}
		for k, c := range slot.counts {
			if (f.UserID != 0 && k.user != f.UserID) || (f.TokenName != "" && k.token != f.TokenName) ||
				(f.ChannelID != 0 && k.channel != f.ChannelID) || !model(k.model) {
				continue
			}
			rpm += c.calls
			tpm += c.tokens
		}
	}
	return rpm, tpm
}

// likeMatcher returns a matcher for a log-filter model pattern, matching
// as the log list does: empty matches all, % and _ are SQL LIKE wildcards,
// anything else is exact.
func likeMatcher(pattern string) func(string) bool {
	if pattern == "" {
		return func(string) bool { return true }
	}
	return func(s string) bool { return store.LikeMatch(s, pattern) }
}

// recent is the process-wide activity window the stat routes read. It lives
// at package level because Server has no field for it yet; the relay feeds
// it through RecordActivity.
var recent = NewRecentActivity()

// RecordActivity records one consumed relay call for the log page's rpm and
// tpm. The relay wiring (main.go, or the relay's usage hook) calls it once per
// settled call; it is cheap and safe for concurrent use.
func RecordActivity(ev ActivityEvent) { recent.Add(ev) }
