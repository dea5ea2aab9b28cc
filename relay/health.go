package relay

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	json "github.com/goccy/go-json"

	"gateway/egress"
	"gateway/relay/tokenizer"
	"gateway/store"
)

// disableRule reports whether an upstream failure means the channel's key
// or account is unusable (S §5.9). status is the one the channel's mapping
// made of the upstream's own, upstream.
func disableRule(chType, status, upstream int, typ, code, msg string) bool {
	if status == http.StatusUnauthorized || (status == http.StatusForbidden && chType == 24) {
		return true
	}
	switch code {
	case "invalid_api_key", "account_deactivated", "billing_not_active":
		return true
	}
	switch typ {
	case "insufficient_quota", "insufficient_user_quota", "authentication_error", "permission_error", "forbidden":
		return true
	}
	for _, p := range []string{"Your credit balance is too low", "This organization has been disabled.", "You exceeded your current quota", "Permission denied"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	switch upstream {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		// An answer refusing the request itself quotes what the client
		// sent ("Invalid value: '…'"): a phrase anywhere in it would let
		// any token holder disable the channels one by one. The upstream's
		// own status says so, whatever a mapping (400 to 500) makes of it.
		return false
	}
	for _, p := range []string{"The security token included in the request is invalid", "Operation not allowed", "Your account is not authorized"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// maybeDisableFor disables a channel after a relay failure that shows its
// credentials are unusable, when automatic disabling is on and the channel
// allows it.
func (rl *Relay) maybeDisableFor(ch *store.Channel, status, upstream int, typ, code, msg string, set *store.Settings) {
	if ch.AutoBan != 1 || !set.Bool("AutomaticDisableChannelEnabled") || !disableRule(ch.Type, status, upstream, typ, code, msg) {
		return
	}
	rl.setStatus(ch, store.ChannelStatusAutoDisabled, fmt.Sprintf("上游返回 %d：%s", status, msg))
}

// setStatus changes a channel's status automatically on a verdict reached
// on seen (the channel as the call or test used it; a channel changed since
// keeps its status), publishes the change and, for a channel it disabled,
// tells Events so root is mailed. It reports whether the status changed.
func (rl *Relay) setStatus(seen *store.Channel, status int, reason string) bool {
	changed, c, err := rl.store.SetChannelStatusAutoAfter(seen.ID, status, reason, seen)
	if err != nil {
		slog.Error("channel status", "channel", seen.ID, "err", err)
		return false
	}
	if changed {
		slog.Warn("channel status changed", "channel", seen.ID, "status", status, "reason", reason)
		if rl.cfg.Events != nil {
			rl.cfg.Events.ChannelChanged(c)
			if status == store.ChannelStatusAutoDisabled {
				rl.cfg.Events.ChannelDisabled(c)
			}
		}
	}
	return changed
}

// TestResult is the outcome of one channel test.
type TestResult struct {
	ChannelID uint64
	Model     string
	Duration  time.Duration
	Err       error
	Status    int // upstream status as the channel's status-code mapping makes it, 0 for transport errors
	Upstream  int // the upstream's own status, before the mapping
	Type      string
	Code      string
	// Message is the upstream's own error message (empty when the failure
	// is not an upstream answer). The disable rules match it, not Err,
	// whose text adds the status for the console.
	Message string
}

// TestChannel sends a minimal request through the same adapter the relay
// uses (a chat completion, or the endpoint of an embedding, rerank or
// moderation model: see testKind), records the response time and writes a
// log that charges nobody, attributed to by (the administrator who asked;
// nil for the periodic test). model empty means the channel's test model or first model.
func (rl *Relay) TestChannel(ctx context.Context, ch *store.Channel, model string, by *store.User) TestResult {
	res := TestResult{ChannelID: ch.ID}
	if ch.Type == TypeMidjourney || ch.Type == TypeMJPlus || ch.Type == TypeSuno {
		res.Err = errors.New("该渠道类型不支持测试")
		return res
	}
	ad := adapterFor(ch.Type)
	if ad == nil {
		res.Err = errors.New(unsupportedType(ch.Type).Message)
		return res
	}
	if model == "" {
		model = ch.TestModel
	}
	if model == "" {
		if ms := ch.ModelList(); len(ms) > 0 {
			model = ms[0]
		} else {
			model = "gpt-3.5-turbo"
		}
	}
	res.Model = model
	upstream, merr := mapModel(ch, model)
	if merr != nil {
		res.Err = merr
		return res
	}
	k := testKind(upstream)
	if !ad.Supports(k) {
		res.Err = errors.New(unsupportedEndpoint(ch.Type).Message)
		return res
	}
	var body map[string]any
	switch k {
	case kindEmbedding, kindModeration:
		body = map[string]any{"model": upstream, "input": "hi"}
	case kindRerank:
		body = map[string]any{"model": upstream, "query": "hi", "documents": []string{"hi"}}
	default:
		body = map[string]any{"model": upstream, "messages": []map[string]string{{"role": "user", "content": "hi"}}}
		if reasoningModel(upstream) {
			body["max_completion_tokens"] = 1
		} else {
			body["max_tokens"] = 1
		}
	}
	data, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	start := time.Now()
	req, err := ad.Request(ctx, ch, k, upstream, bytes.NewReader(data), "application/json")
	if err != nil {
		res.Err = err
		return res
	}
	resp, err := rl.client.Do(req)
	if err != nil {
		res.Duration = time.Since(start)
		res.Err = transportError{err}
		return res
	}
	defer resp.Body.Close()
	out, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	res.Duration = time.Since(start)
	if resp.StatusCode != http.StatusOK {
		// Judged by the status the channel's mapping makes of it, as the
		// relay judges its calls (S §5.6); the console is told the
		// upstream's own.
		res.Status, res.Upstream = mapStatus(ch, resp.StatusCode), resp.StatusCode
		res.Type, res.Code = upstreamErrorFields(out)
		res.Message = upstreamMessage(out, ch.Key)
		msg := res.Message
		if msg == "" {
			msg = resp.Status
		}
		res.Err = fmt.Errorf("状态码 %d：%s", resp.StatusCode, msg)
		return res
	}
	if rerr != nil {
		// An answer cut off is no answer, even when what arrived reads as
		// a whole one: a call gets read_response_failed from it.
		res.Err = fmt.Errorf("读取上游返回失败：%s", describeTransport(rerr))
		return res
	}
	if errorIn(out) {
		// An error answered with 200 is judged as the relay judges it (a
		// 500 with the upstream's type, code and message).
		res.Status, res.Upstream = http.StatusInternalServerError, http.StatusInternalServerError
		res.Type, res.Code = upstreamErrorFields(out)
		res.Message = upstreamMessage(out, ch.Key)
		if res.Message == "" {
			res.Message = "上游返回了错误"
		}
		res.Err = fmt.Errorf("上游返回了错误：%s", res.Message)
		return res
	}
	var v struct {
		Usage *usage `json:"usage"`
	}
	if k != kindChat {
		// Embeddings, reranks and moderations are read as a call's answer is
		// (a moderation reports no usage, and rerank usage comes in the
		// providers' own shapes), counting locally what is not reported.
		u, ok := rl.bodyUsage(&call{k: k, model: upstream, prompt: tokenizer.CountText(upstream, "hi")}, out, resp.Header.Get("Content-Type"))
		if !ok {
			res.Err = errors.New("上游返回的答复无法读取")
			return res
		}
		v.Usage = &u
	} else if json.Unmarshal(out, &v) != nil {
		// Counts written as decimals or strings fail the decode: the usage
		// is read again leniently, as a call's is.
		var loose struct {
			Usage *looseUsage `json:"usage"`
		}
		v.Usage = nil
		if json.Unmarshal(out, &loose) == nil {
			v.Usage = loose.Usage.usage()
		}
	}
	if v.Usage == nil {
		res.Err = errors.New("上游返回中没有 usage")
		return res
	}
	// Within the bounds a call's usage is charged in.
	*v.Usage = v.Usage.sane()
	// A response time of 0 means "never tested" (A §3): a test that took
	// under a millisecond records 1.
	_ = rl.store.RecordChannelTest(ch.ID, max(1, res.Duration.Milliseconds()))
	set := rl.store.Settings()
	p, perr := priceFor(set, model, "default")
	var quota int64
	// The pricing the quota was computed with, as a call's log carries it
	// (B §3), so the log page explains the quota it shows.
	o := logOther{ModelPrice: -1, FRT: -1000}
	if perr == nil {
		quota = p.quota(*v.Usage)
		o = pricedOther(p, *v.Usage)
	}
	if upstream != model {
		// Both names, as a call's log carries them.
		o.UpstreamModel = upstream
	}
	o.AdminInfo.UseChannel = []uint64{ch.ID}
	other, _ := json.Marshal(o)
	var uid uint64
	uname := "系统"
	if by != nil {
		uid, uname = by.ID, by.Username
	}
	l := &store.Log{UserID: uid, Username: uname, Type: store.LogTypeConsume, ModelName: model, TokenName: "模型测试", ChannelID: ch.ID,
		Content: "模型测试", Quota: quota, PromptTokens: int64(v.Usage.PromptTokens), CompletionTokens: int64(v.Usage.CompletionTokens),
		UseTime: int64(res.Duration.Seconds()), Other: string(other)}
	// Written only while consume logging is on, as the calls' logs are.
	if set.Bool("LogConsumeEnabled") && rl.store.AppendLog(l) == nil && rl.cfg.Events != nil {
		rl.cfg.Events.Logged(l)
	}
	if fresh, err := rl.store.Channel(ch.ID); err == nil && rl.cfg.Events != nil {
		rl.cfg.Events.ChannelChanged(fresh)
	}
	return res
}

// testKind is the endpoint a channel test of model asks: embedding, rerank
// and moderation models on their own, which a channel serving only such
// models answers (asked for a chat completion, such a channel failed every
// test and was never enabled again automatically); any other model is asked
// for a chat completion (S §5.10).
func testKind(model string) kind {
	m := strings.ToLower(model)
	name := m
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	switch {
	case strings.Contains(m, "rerank"):
		return kindRerank
	case strings.Contains(m, "embed"), strings.HasPrefix(name, "bge-"), strings.HasPrefix(name, "m3e"):
		return kindEmbedding
	case strings.Contains(m, "moderation"):
		return kindModeration
	}
	return kindChat
}

// reasoningModel reports whether model is one of OpenAI's reasoning models
// (o1, o3, o4-mini, gpt-5 and their versions, also behind a provider/
// prefix), which refuse max_tokens and take max_completion_tokens.
func reasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if strings.HasPrefix(m, "gpt-5") {
		return true
	}
	return len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9'
}

// ApplyTestOutcome runs the auto-disable and auto-enable rules on a test
// result: disable on a credential failure or a response slower than
// ChannelDisableThreshold (only when automatic disabling is on), enable a
// channel that was disabled automatically once a test passes cleanly (only
// when automatic enabling is on). A manually disabled channel is never
// enabled. It returns the status it set, or 0 when nothing changed.
func (rl *Relay) ApplyTestOutcome(ch *store.Channel, r TestResult) int {
	set := rl.store.Settings()
	threshold := time.Duration(set.Float("ChannelDisableThreshold") * float64(time.Second))
	slow := threshold > 0 && r.Duration > threshold
	if ch.Status == store.ChannelStatusEnabled && ch.AutoBan == 1 && set.Bool("AutomaticDisableChannelEnabled") {
		var reason string
		switch {
		case r.Err != nil && disableRule(ch.Type, r.Status, r.Upstream, r.Type, r.Code, r.Message):
			reason = "测试失败：" + r.Err.Error()
		case slow:
			reason = fmt.Sprintf("响应时间 %.2fs 超过阈值 %.2fs", r.Duration.Seconds(), threshold.Seconds())
		default:
			return 0
		}
		if rl.setStatus(ch, store.ChannelStatusAutoDisabled, reason) {
			return store.ChannelStatusAutoDisabled
		}
		return 0
	}
	if ch.Status == store.ChannelStatusAutoDisabled && r.Err == nil && !slow && set.Bool("AutomaticEnableChannelEnabled") {
		if rl.setStatus(ch, store.ChannelStatusEnabled, "测试通过，自动启用") {
			return store.ChannelStatusEnabled
		}
	}
	return 0
}

// Progress reports a test-all run.
type Progress struct {
	Done, Total int
	Result      *TestResult
	// Status is the status the health rules set on the channel just
	// tested, 0 when they changed nothing.
	Status int
	// Skipped marks a channel deleted since the run began: not tested, and
	// no failure either.
	Skipped bool
}

// TestRun is where a test-all run stands: the number of channels, those
// tested (or skipped), and of those the failures and the channels the health
// rules disabled.
type TestRun struct {
	Running  bool
	Periodic bool // started by the test interval, not by an administrator
	Done     int
	Total    int
	Failed   int
	Disabled int
}

// TestRunState reports the run in progress, or the last one (Running false).
func (rl *Relay) TestRunState() TestRun {
	rl.runMu.Lock()
	defer rl.runMu.Unlock()
	return rl.testRun
}

func (rl *Relay) setRun(f func(*TestRun)) {
	rl.runMu.Lock()
	f(&rl.testRun)
	rl.runMu.Unlock()
}

// TestAll tests every channel in the background, one after another,
// applying the health rules, and reports progress through report: first
// the number of channels (Done 0), then each result. by is the
// administrator who started the run (its test logs name them), nil for the
// periodic run. It refuses to start while another run is going.
func (rl *Relay) TestAll(by *store.User, report func(Progress)) error {
	if !rl.testing.CompareAndSwap(false, true) {
		return errors.New("已有一个测试任务正在运行，请稍后再试")
	}
	chs, err := rl.store.Channels()
	if err != nil {
		rl.testing.Store(false)
		return err
	}
	if !rl.startWork() {
		rl.testing.Store(false)
		return errors.New("网关正在停止，请稍后再试")
	}
	rl.setRun(func(r *TestRun) { *r = TestRun{Running: true, Periodic: by == nil, Total: len(chs)} })
	go func() {
		defer rl.work.Done()
		// The state reads as ended before another run may start.
		defer rl.testing.Store(false)
		defer rl.setRun(func(r *TestRun) { r.Running = false })
		if report != nil && len(chs) > 0 {
			report(Progress{Total: len(chs)})
		}
		for i, listed := range chs {
			if rl.stop.Err() != nil {
				return
			}
			// Each channel as it is now: one edited or deleted since the
			// run began is tested (or skipped) as it is, not as listed.
			ch, err := rl.store.Channel(listed.ID)
			if store.ErrorCode(err) == store.ENOTFOUND {
				rl.setRun(func(r *TestRun) { r.Done = i + 1 })
				if report != nil {
					report(Progress{Done: i + 1, Total: len(chs), Result: &TestResult{ChannelID: listed.ID, Err: errors.New("渠道已删除")}, Skipped: true})
				}
				continue
			}
			if err != nil {
				// A channel that could not be read was not tested: a
				// failure of the run, not a deletion to pass over.
				rl.setRun(func(r *TestRun) { r.Done, r.Failed = i+1, r.Failed+1 })
				if report != nil {
					report(Progress{Done: i + 1, Total: len(chs), Result: &TestResult{ChannelID: listed.ID, Err: errors.New("读取渠道失败：" + store.ErrorMessage(err))}})
				}
				continue
			}
			r := rl.TestChannel(rl.stop, ch, "", by)
			if rl.stop.Err() != nil {
				// The gateway is stopping: a test it cut short says
				// nothing of the channel.
				return
			}
			status := rl.ApplyTestOutcome(ch, r)
			// The state moves before the push, so a console that reads it
			// after a push sees that push's step at least.
			rl.setRun(func(run *TestRun) {
				run.Done = i + 1
				if r.Err != nil {
					run.Failed++
				}
				if status == store.ChannelStatusAutoDisabled {
					run.Disabled++
				}
			})
			if report != nil {
				rr := r
				report(Progress{Done: i + 1, Total: len(chs), Result: &rr, Status: status})
			}
		}
		if report != nil && len(chs) == 0 {
			report(Progress{})
		}
	}()
	return nil
}

// Testing reports whether a test-all run is in progress.
func (rl *Relay) Testing() bool { return rl.testing.Load() }

// UpdateBalance reads a channel's balance from its provider and stores it.
func (rl *Relay) UpdateBalance(ctx context.Context, ch *store.Channel) (float64, error) {
	ad := adapterFor(ch.Type)
	if ad == nil {
		return 0, errBalanceUnsupported
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, err := ad.Balance(ctx, rl.client, ch)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(b) || math.IsInf(b, 0) || math.Abs(b) > 1e15 {
		// Numbers no account holds: nothing worth storing, or showing.
		return 0, errors.New("上游返回的余额无法读取")
	}
	if err := rl.store.RecordChannelBalance(ch.ID, b); err != nil {
		return 0, store.Internal(err)
	}
	return b, nil
}

// BalanceErrorText is a failed balance query as an administrator reads it:
// the upstream's answer or what kept it from answering, in words; a failure
// of the gateway's own (storing the balance) reads as the store's message,
// its cause going to the log only.
func BalanceErrorText(err error) string {
	var se *store.Error
	if errors.As(err, &se) {
		if se.Code == store.EINTERNAL {
			slog.Error("balance update", "err", err)
		}
		return store.ErrorMessage(err)
	}
	return err.Error()
}

// ErrBalanceUnsupported is returned for channel types without a balance endpoint.
var ErrBalanceUnsupported = errBalanceUnsupported

// BalanceResult is what UpdateAllBalances did to one channel.
type BalanceResult struct {
	ID      uint64  `json:"id"`
	Balance float64 `json:"balance"`
	Error   string  `json:"error,omitempty"`
}

// ErrBalancesRunning is UpdateAllBalances' answer while another update of
// every balance is going.
var ErrBalancesRunning = errors.New("已有一个余额更新任务正在运行，请稍后再试")

// UpdateAllBalances refreshes, one after another, every enabled channel whose
// type has a balance endpoint, tells Events of each stored balance and
// reports what happened to each. Channels of other types are left out. One
// update runs at a time (the console's, another administrator's or the
// periodic one): another is refused with ErrBalancesRunning, so the
// providers are never asked twice over at once.
func (rl *Relay) UpdateAllBalances(ctx context.Context) ([]BalanceResult, error) {
	if !rl.balancing.CompareAndSwap(false, true) {
		return nil, ErrBalancesRunning
	}
	defer rl.balancing.Store(false)
	chs, err := rl.store.Channels()
	if err != nil {
		return nil, err
	}
	out := []BalanceResult{}
	for _, listed := range chs {
		if listed.Status != store.ChannelStatusEnabled {
			continue
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		// Read again at its turn: a key rotated, or a channel disabled or
		// deleted, since the run began is queried as it is now, or not.
		ch, err := rl.store.Channel(listed.ID)
		if err != nil || ch.Status != store.ChannelStatusEnabled {
			continue
		}
		b, err := rl.UpdateBalance(ctx, ch)
		if errors.Is(err, errBalanceUnsupported) {
			continue
		}
		res := BalanceResult{ID: ch.ID, Balance: b}
		if err != nil {
			res.Error = BalanceErrorText(err)
		}
		out = append(out, res)
		if rl.cfg.Events != nil {
			if fresh, err := rl.store.Channel(ch.ID); err == nil {
				rl.cfg.Events.ChannelChanged(fresh)
			}
		}
	}
	return out, nil
}

// ErrFetchUnsupported is FetchModels' answer for a type whose provider does
// not list models at /v1/models; no request is made.
var ErrFetchUnsupported = errors.New("仅支持 OpenAI 接口格式")

// ListsModels reports whether FetchModels can ask a channel of type t: its
// provider lists models at /v1/models, OpenAI's way.
func ListsModels(t int) bool {
	switch t {
	case TypeOpenAI, TypeCustom, TypeOllama, TypeSiliconFlow, TypeMistral, TypeMoonshot, TypeLingYi, TypeAI360:
		return true
	}
	return false
}

// FetchModels lists the model ids the channel's provider offers.
func (rl *Relay) FetchModels(ctx context.Context, ch *store.Channel) ([]string, error) {
	if !ListsModels(ch.Type) {
		return nil, ErrFetchUnsupported
	}
	ad := adapterFor(ch.Type)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := ad.ModelsRequest(ctx, ch)
	if err != nil {
		return nil, err
	}
	resp, err := rl.client.Do(req)
	if err != nil {
		return nil, transportError{err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, transportError{err}
	}
	if resp.StatusCode != http.StatusOK {
		msg := upstreamMessage(data, ch.Key)
		if msg == "" {
			msg = resp.Status
		}
		return nil, fmt.Errorf("上游返回 %d：%s", resp.StatusCode, msg)
	}
	var v struct {
		Data *[]struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &v); err != nil || v.Data == nil && !nullList(data) {
		// A 200 without a list is no list, empty or not: an error some
		// gateways answer with 200 ({"error":...}, {"success":false,...})
		// read as "no models" and cleared the form's suggestion.
		if msg := upstreamMessage(data, ch.Key); msg != "" {
			return nil, fmt.Errorf("上游返回了错误：%s", msg)
		}
		return nil, errors.New("上游返回的模型列表格式错误")
	}
	out := []string{}
	if v.Data != nil {
		for _, m := range *v.Data {
			if m.ID != "" {
				out = append(out, m.ID)
			}
		}
	}
	return out, nil
}

// nullList reports whether a model list answer is a list whose data is
// null, as Ollama answers while it has no model pulled: an empty list.
func nullList(data []byte) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(data, &v) == nil && string(v["object"]) == `"list"` && string(v["data"]) == "null"
}

// periodDue reports whether a job run last at last and due every every
// (0: never) runs at the tick of now. Ticks arrive a little early or late,
// so half a tick counts as on time: comparing with every exactly skipped
// every other run whenever a tick came a moment early.
func periodDue(now, last time.Time, every, tick time.Duration) bool {
	return every > 0 && now.Sub(last) >= every-tick/2
}

// RunPeriodicTests tests every channel each ChannelTestInterval minutes and
// refreshes the balances each ChannelBalanceInterval minutes (the options are
// read every tick, so a change applies without a restart) until ctx ends.
// tick is the check period: a minute in the gateway. Both jobs run in the
// background, so a slow one (a balance update waits up to 30 s on each
// channel's provider) does not hold the other back; it returns once the
// balance update it started has ended.
func (rl *Relay) RunPeriodicTests(ctx context.Context, tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	var balances sync.WaitGroup
	defer balances.Wait()
	var lastTest, lastBalance time.Time
	due := func(now time.Time, last *time.Time, option string) bool {
		every := time.Duration(rl.store.Settings().Int(option)) * tick
		if !periodDue(now, *last, every, tick) {
			return false
		}
		*last = now
		return true
	}
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if due(now, &lastTest, "ChannelTestInterval") {
				if err := rl.TestAll(nil, nil); err != nil {
					slog.Info("periodic channel test skipped", "err", err)
				}
			}
			if due(now, &lastBalance, "ChannelBalanceInterval") {
				balances.Go(func() {
					if res, err := rl.UpdateAllBalances(ctx); errors.Is(err, ErrBalancesRunning) {
						slog.Info("periodic balance update skipped", "err", err)
					} else if err != nil && ctx.Err() == nil {
						slog.Error("periodic balance update", "err", err)
					} else {
						// Nobody sees the run's answer: a channel whose
						// balance was not read is told here, or its stale
						// balance passes for a fresh one.
						failed := 0
						for _, r := range res {
							if r.Error != "" {
								failed++
								slog.Warn("periodic balance update: a channel's balance was not read", "channel", r.ID, "err", r.Error)
							}
						}
						slog.Info("periodic balance update", "channels", len(res), "failed", failed)
					}
				})
			}
		}
	}
}

// transportError is a request that got no answer, as an administrator
// reads it (the cause stays wrapped for the checks that look for it).
type transportError struct{ err error }

func (e transportError) Error() string { return "请求上游失败：" + describeTransport(e.err) }
func (e transportError) Unwrap() error { return e.err }

// describeTransport says in words why an upstream request got no answer,
// for the administrator who tested a channel or fetched its models: no Go
// error chain, and not the address of the gateway's own DNS server.
func describeTransport(err error) string {
	var blocked *egress.BlockedError
	var redirect *egress.RedirectError
	var dnsErr *net.DNSError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.As(err, &blocked):
		return "目标地址 " + blocked.Host + " 不允许访问（可在 EgressAllowedHosts 中放行，或以 --allow-private-upstreams 启动）"
	case errors.As(err, &redirect):
		return fmt.Sprintf("上游以 %d 把请求重定向到 %s，重定向后的请求会丢掉请求体，请把渠道的地址改为重定向后的地址", redirect.Status, redirect.Location)
	case errors.As(err, &dnsErr):
		return "无法解析上游域名 " + dnsErr.Name
	case errors.Is(err, syscall.ECONNREFUSED):
		return "上游拒绝连接"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "连接上游超时"
	case errors.As(err, &certErr):
		return "上游的 TLS 证书无法验证：" + certErr.Err.Error()
	case strings.Contains(err.Error(), "invalid header field"):
		return "渠道的密钥或组织中有不能放进请求头的字符"
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err.Error()
	}
	return err.Error()
}
