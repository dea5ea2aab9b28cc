package relay

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptrace"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"
	"github.com/goccy/go-json/jsontext"
	jsonv2 "github.com/goccy/go-json/v2"

	"gateway/relay/tokenizer"
	"gateway/store"
)

// Config wires the relay.
type Config struct {
	Store *store.Store
	// Client is the guarded egress client; every upstream call uses it.
	Client *http.Client
	// ClientIP returns the caller's address under the trusted-proxy rule.
	ClientIP func(*http.Request) string
	// Events receives channel changes and per-call activity; may be nil.
	Events Events
	// StreamIdleTimeout ends a stream that sends nothing for this long (30 s).
	StreamIdleTimeout time.Duration
	// FirstByteTimeout moves a stream to the next channel when the upstream
	// sends nothing for this long before anything reached the client (60 s;
	// negative turns it off).
	FirstByteTimeout time.Duration
	// RelayTimeout bounds a whole non-stream upstream call (0 = none).
	RelayTimeout time.Duration
	// ClientWriteTimeout is how long a stream, or a non-stream answer too
	// large for the sockets' buffers (over 16 KiB), waits for a client that
	// does not read before it counts the client as gone (60 s).
	ClientWriteTimeout time.Duration
	// MaxBodyBytes limits request bodies (32 MiB).
	MaxBodyBytes int64
	// MaxAnswerBytes limits a non-stream answer, which is read whole
	// before it is charged and sent (256 MiB); a longer one fails the call.
	MaxAnswerBytes int64
}

// Events receives what the console shows live.
type Events interface {
	// ChannelChanged is called after a channel's status or test result changed.
	ChannelChanged(c *store.Channel)
	// ChannelDisabled is called, after ChannelChanged, when the relay or a
	// test has just disabled c automatically (status 3); c's other_info
	// holds the reason and time. It runs on the relay's path: it must not
	// block.
	ChannelDisabled(c *store.Channel)
	// Activity is called after each charged call.
	Activity(a Activity)
	// Logged is called after the relay wrote a consume log outside a
	// charge: a channel test's.
	Logged(l *store.Log)
}

// Activity describes one charged call for the rpm/tpm counters.
type Activity struct {
	Time      time.Time
	UserID    uint64
	TokenName string
	Model     string
	ChannelID uint64
	Tokens    int64
}

// Relay serves the OpenAI-compatible routes.
type Relay struct {
	cfg       Config
	store     *store.Store
	client    *http.Client
	testing   atomic.Bool // a test-all run is in progress
	balancing atomic.Bool // an update of every balance is in progress
	runMu     sync.Mutex
	testRun   TestRun // where the latest test-all run stands
	sensitive sensitiveWords
	// stop ends the background work Close waits for (a test-all run);
	// workMu orders a run's start before Close's wait.
	stop     context.Context
	stopWork context.CancelFunc
	workMu   sync.Mutex
	work     sync.WaitGroup
}

// New returns a relay.
func New(cfg Config) *Relay {
	if cfg.StreamIdleTimeout == 0 {
		cfg.StreamIdleTimeout = 30 * time.Second
	}
	if cfg.FirstByteTimeout == 0 {
		cfg.FirstByteTimeout = 60 * time.Second
	}
	if cfg.ClientWriteTimeout <= 0 {
		cfg.ClientWriteTimeout = 60 * time.Second
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 32 << 20
	}
	if cfg.MaxAnswerBytes == 0 {
		cfg.MaxAnswerBytes = 256 << 20
	}
	if cfg.ClientIP == nil {
		// RemoteAddr is "ip:port"; the allow lists hold addresses.
		cfg.ClientIP = func(r *http.Request) string {
			if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
				return host
			}
			return r.RemoteAddr
		}
	}
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	rl := &Relay{cfg: cfg, store: cfg.Store, client: cfg.Client}
	rl.stop, rl.stopWork = context.WithCancel(context.Background())
	return rl
}

// Close ends the relay's background work and waits for it: a test-all run
// stops after the test under way, whose outcome is not applied, so nothing
// is written to a store about to close.
func (rl *Relay) Close() {
	rl.workMu.Lock()
	rl.stopWork()
	rl.workMu.Unlock()
	rl.work.Wait()
}

// startWork counts a background job Close waits for; it refuses once the
// relay is closing.
func (rl *Relay) startWork() bool {
	rl.workMu.Lock()
	defer rl.workMu.Unlock()
	if rl.stop.Err() != nil {
		return false
	}
	rl.work.Add(1)
	return true
}

// Mux is where Register adds the routes: an *http.ServeMux, or a mux of the
// caller's that records them.
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// Register adds the relay routes to mux.
//
// allowBilling, when set, is asked before each billing read
// (/dashboard/billing/* and its /v1 twin): S §12 puts those under the
// console's per-IP API limit, whose owner answers. A refused read gets 429.
func (rl *Relay) Register(mux Mux, allowBilling func(*http.Request) bool) {
	h := func(k kind) http.Handler {
		return rl.CORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rl.serve(w, r, k, nil, time.Now()) }))
	}
	mux.Handle("POST /v1/chat/completions", h(kindChat))
	mux.Handle("POST /v1/completions", h(kindCompletion))
	mux.Handle("POST /v1/embeddings", h(kindEmbedding))
	mux.Handle("POST /v1/engines/{model}/embeddings", h(kindEmbedding))
	mux.Handle("POST /v1/moderations", h(kindModeration))
	mux.Handle("POST /v1/images/generations", h(kindImage))
	mux.Handle("POST /v1/audio/speech", h(kindSpeech))
	mux.Handle("POST /v1/audio/transcriptions", h(kindTranscription))
	mux.Handle("POST /v1/audio/translations", h(kindTranslation))
	mux.Handle("POST /v1/rerank", h(kindRerank))
	mux.Handle("GET /v1/models", rl.CORS(http.HandlerFunc(rl.listModels)))
	mux.Handle("GET /v1/models/{model...}", rl.CORS(http.HandlerFunc(rl.getModel)))
	limited := func(h http.HandlerFunc) http.Handler {
		if allowBilling == nil {
			return rl.CORS(h)
		}
		return rl.CORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !allowBilling(r) {
				writeError(w, requestID(w), localError(http.StatusTooManyRequests, "rate_limit_exceeded", "请求过于频繁，请稍后再试"))
				return
			}
			h(w, r)
		}))
	}
	for _, p := range []string{"/dashboard/billing", "/v1/dashboard/billing"} {
		mux.Handle("GET "+p+"/subscription", limited(rl.billingSubscription))
		mux.Handle("GET "+p+"/usage", limited(rl.billingUsage))
	}
	notImpl := rl.CORS(http.HandlerFunc(rl.notImplemented))
	for _, p := range []string{"POST /v1/edits", "POST /v1/images/edits", "POST /v1/images/variations",
		"GET /v1/files", "POST /v1/files", "GET /v1/files/{id}", "DELETE /v1/files/{id}", "GET /v1/files/{id}/content",
		"GET /v1/fine-tunes", "POST /v1/fine-tunes", "GET /v1/fine-tunes/{id}", "POST /v1/fine-tunes/{id}/cancel",
		"GET /v1/fine-tunes/{id}/events", "DELETE /v1/models/{model}"} {
		mux.Handle(p, notImpl)
	}
	preflight := rl.CORS(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	mux.Handle("OPTIONS /v1/", preflight)
	mux.Handle("OPTIONS /dashboard/billing/", preflight)
}

// The values of the CORS headers, made once: Header.Set makes a new
// one-element slice at every call. Their capacity is their length, so an
// Add to one of these headers copies instead of writing into them.
var (
	corsAllowOrigin  = []string{"*"}
	corsAllowMethods = []string{"GET, POST, DELETE, OPTIONS"}
	// The wildcard covers every header but Authorization, which the Fetch
	// standard requires to be named.
	corsAllowHeaders = []string{"Authorization, *"}
	// A page reads only the headers named here: the waits a 429 or 503
	// passes on are named, so an SDK in a browser waits as the provider
	// asked instead of retrying at its own pace.
	corsExposeHeaders = []string{"X-Oneapi-Request-Id, X-Request-Id, Retry-After, Retry-After-Ms"}
)

// CORS lets browser clients call the relay from any origin; the relay is
// authenticated by bearer tokens, never by cookies.
func (rl *Relay) CORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Access-Control-Allow-Origin"] = corsAllowOrigin
		h["Access-Control-Allow-Methods"] = corsAllowMethods
		h["Access-Control-Allow-Headers"] = corsAllowHeaders
		h["Access-Control-Expose-Headers"] = corsExposeHeaders
		// OpenAI's SDKs read the request id from x-request-id (an error's
		// request_id, an answer's _request_id): the same id goes there.
		h.Set("X-Request-Id", requestID(w))
		next.ServeHTTP(w, r)
	})
}

func requestID(w http.ResponseWriter) string {
	if id := w.Header().Get("X-Oneapi-Request-Id"); id != "" {
		return id
	}
	id := time.Now().Format("20060102150405") + store.RandomString(8)
	w.Header().Set("X-Oneapi-Request-Id", id)
	return id
}

func (rl *Relay) notImplemented(w http.ResponseWriter, r *http.Request) {
	writeError(w, requestID(w), &Error{Status: http.StatusNotImplemented, Type: "new_api_error", Code: "not_implemented", Message: "API not implemented"})
}

// Caller is who pays for a call: a token and its owner, or a console user
// in the playground (Token nil).
type Caller struct {
	User    *store.User
	Token   *store.Token
	Group   string
	Pinned  uint64 // channel pinned by an admin key suffix
	IsAdmin bool
}

// call is one relayed request in progress.
type call struct {
	w         http.ResponseWriter
	r         *http.Request
	k         kind
	id        string
	start     time.Time
	answered  bool // a stream's headers went to the client
	caller    *Caller
	body      []byte
	ctype     string
	model     string
	bodyModel string // the model as the body names it ("" when it names none)
	stream    bool
	wantUsage bool
	maxTokens int
	prompt    int
	price     price
	res       *store.Reservation
	tried     []uint64
	parsed    chatRequest
	isJSON    bool
	fields    map[string][]byte // the body's top-level fields, decoded on demand
	format    string            // a transcription's response_format, for reading the transcript
	// Remote images downloaded for counting, and when that must end.
	imageFetches  int
	imageDecodes  int
	imageDeadline time.Time
}

// jsonFields decodes the body's top-level fields once.
func (c *call) jsonFields() (map[string][]byte, error) {
	if c.fields == nil {
		raw := map[string]json.RawMessage{}
		if err := json.Unmarshal(c.body, &raw); err != nil {
			return nil, err
		}
		c.fields = make(map[string][]byte, len(raw))
		for k, v := range raw {
			c.fields[k] = v
		}
	}
	return c.fields, nil
}

// chatRequest holds the fields the relay reads from a JSON body.
type chatRequest struct {
	Model               string               `json:"model"`
	Stream              bool                 `json:"stream"`
	MaxTokens           int                  `json:"max_tokens"`
	MaxCompletionTokens int                  `json:"max_completion_tokens"`
	Messages            []tokenizer.Message  `json:"messages"`
	Tools               []tokenizer.Tool     `json:"tools"`
	Functions           []tokenizer.Function `json:"functions"`
	Prompt              any                  `json:"prompt"`
	Input               any                  `json:"input"`
	Query               string               `json:"query"`
	Documents           any                  `json:"documents"`
	N                   int                  `json:"n"`
	BestOf              int                  `json:"best_of"`
	Size                string               `json:"size"`
	Quality             string               `json:"quality"`
	Group               string               `json:"group"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// serve runs the whole relay for one request. caller is nil for token
// calls (the token is read from the request) and set for the playground.
// start is when the request came in: the playground has read its body
// before, and a slow upload counts from there (recheckAfter).
func (rl *Relay) serve(w http.ResponseWriter, r *http.Request, k kind, caller *Caller, start time.Time) {
	c := &call{w: w, r: r, k: k, id: requestID(w), start: start, caller: caller}
	// A panic past the reservation (a bug) must not keep the held quota:
	// Refund does nothing once the call was settled or refunded. One after
	// the answer started cuts the connection: an error written after the
	// events would end the body cleanly, as if the answer were whole.
	defer func() {
		v := recover()
		if c.res != nil {
			rl.store.Refund(c.res)
		}
		if v == nil {
			return
		}
		if v != http.ErrAbortHandler && c.answered {
			slog.Error("panic after the answer started: connection aborted", "request_id", c.id, "panic", v, "stack", string(debug.Stack()))
			panic(http.ErrAbortHandler)
		}
		panic(v)
	}()
	if err := rl.run(c); err != nil {
		if c.res != nil {
			rl.store.Refund(c.res)
		}
		if err.Status == http.StatusTooManyRequests && !err.Local {
			err.Message = "当前分组上游负载已饱和，请稍后再试"
		}
		if err.Status == http.StatusUnauthorized && c.caller != nil && c.caller.Token == nil {
			// The playground is a console call, where a 401 means the
			// session ended (A §6): an upstream refusing the channel's key
			// is the gateway's failure, not the user's.
			err.Status = http.StatusBadGateway
		}
		if err.Cause != nil {
			slog.Warn("relay failed", "request_id", c.id, "err", err.Cause)
		}
		writeError(w, c.id, err)
	}
}

func (rl *Relay) run(c *call) *Error {
	if c.caller == nil {
		caller, err := rl.authenticate(c.r)
		if err != nil {
			return err
		}
		c.caller = caller
	}
	if err := rl.readBody(c); err != nil {
		return err
	}
	if time.Since(c.start) > recheckAfter {
		// A slow upload (a large audio file) leaves time to disable the
		// token or the account: what allowed the call is asked again.
		if err := rl.recheck(c); err != nil {
			return err
		}
	}
	set := rl.store.Settings()
	if err := rl.distribute(c, set); err != nil {
		return err
	}
	if set.Bool("CheckSensitiveEnabled") && set.Bool("CheckSensitiveOnPromptEnabled") {
		if w := sensitiveHit(rl.sensitive.matcher(set), c); w != "" {
			return &Error{Status: 400, Type: "new_api_error", Code: "sensitive_words_detected", Message: "敏感词检测失败: " + w, Local: true}
		}
	}
	p, perr := priceFor(set, c.model, c.caller.Group)
	if perr != nil {
		return perr
	}
	c.price = p
	c.prompt = rl.promptTokens(c)
	amount := p.reserve(c.k, c.prompt, c.maxTokens, set.Int("PreConsumedQuota"))
	if c.k == kindImage {
		amount = imageQuota(c, p)
	}
	// A call whose charge cannot be written would be paid to the upstream
	// and answered billing_failed: while the data file refuses writes (a
	// full disk), calls are refused before any upstream is asked.
	if err := rl.store.ChargesWritable(); err != nil {
		return &Error{Status: http.StatusServiceUnavailable, Type: "new_api_error", Code: "billing_unavailable", Message: store.ErrorMessage(err), Local: true}
	}
	var tokenID uint64
	if c.caller.Token != nil {
		tokenID = c.caller.Token.ID
	}
	res, err := rl.store.Reserve(c.caller.User.ID, tokenID, amount)
	if err != nil {
		msg := store.ErrorMessage(err)
		switch store.ErrorCode(err) {
		case store.EQUOTA:
			if strings.Contains(msg, "令牌") {
				return &Error{Status: http.StatusForbidden, Type: "new_api_error", Code: "insufficient_token_quota", Message: msg, Local: true}
			}
			// S §5.8 step 5: no quota at all is 403; some, but less than
			// this call reserves, is 400.
			status := http.StatusForbidden
			if b, berr := rl.store.LiveBalance(c.caller.User.ID); berr == nil && b.Quota > 0 {
				status = http.StatusBadRequest
			}
			return &Error{Status: status, Type: "new_api_error", Code: "insufficient_user_quota", Message: msg, Local: true}
		case store.ENOTFOUND:
			return unauthorized("无效的令牌")
		}
		return &Error{Status: http.StatusInternalServerError, Type: "new_api_error", Code: "reserve_failed", Message: "预扣额度失败，请稍后重试", Local: true, Cause: err}
	}
	c.res = res
	return rl.attempts(c, set)
}

// readBody reads and decodes what the relay needs from the request body.
func (rl *Relay) readBody(c *call) *Error {
	body, e := readRequestBody(c.w, c.r, rl.cfg.MaxBodyBytes)
	if e != nil {
		return e
	}
	c.body = body
	c.ctype = c.r.Header.Get("Content-Type")
	if c.k == kindTranscription || c.k == kindTranslation {
		if e := rl.readMultipart(c); e != nil {
			return e
		}
		return checkModelName(c.model)
	}
	if c.ctype == "" {
		c.ctype = "application/json"
	}
	c.isJSON = true
	// The body is read as a provider reads it: member names match exactly
	// and each appears once. A lenient reading (encoding/json's, which also
	// takes "Model" for "model", the last of two "model"s) would price, check
	// and route one request while the upstream serves another from the same
	// bytes.
	if err := jsonv2.Unmarshal(body, &c.parsed); err != nil {
		c.parsed = chatRequest{}
		var lenient chatRequest
		if lerr := json.Unmarshal(body, &lenient); lerr != nil {
			// Described as the rest of the API describes bad bodies.
			field, problem := store.DescribeDecodeError(body, lerr)
			if field == "" && !json.Valid(body) {
				return badRequest(problem)
			}
			e := badRequest("请求参数格式错误：" + problem)
			e.Param = field
			return e
		}
		var serr *jsontext.SyntacticError
		if errors.As(err, &serr) && serr.Err == jsontext.ErrDuplicateName {
			ptr := string(serr.JSONPointer)
			e := badRequest("请求参数格式错误：字段 " + strings.TrimPrefix(ptr, "/") + " 出现了不止一次")
			e.Param, _, _ = strings.Cut(strings.TrimPrefix(ptr, "/"), "/")
			return e
		}
		if errors.As(err, &serr) && strings.Contains(serr.Err.Error(), "UTF-8") {
			return badRequest("请求参数格式错误：字符串中有不合法的 UTF-8 字节")
		}
		return badRequest("请求体不是合法的 JSON")
	}
	if name, want := caseVariant(body); name != "" {
		e := badRequest("请求参数格式错误：字段 " + name + " 应写作 " + want)
		e.Param = name
		return e
	}
	p := &c.parsed
	c.model = p.Model
	c.bodyModel = p.Model
	c.stream = p.Stream && (c.k == kindChat || c.k == kindCompletion)
	if p.Stream && c.k == kindImage {
		// The relay reads an image answer whole: a streamed one would be
		// made upstream, refused here as no answer, and made again on the
		// next channel, with nobody charged.
		return badRequest("图片生成不支持流式响应（stream）")
	}
	c.wantUsage = p.StreamOptions != nil && p.StreamOptions.IncludeUsage
	if p.MaxTokens < 0 || p.MaxCompletionTokens < 0 || p.MaxTokens > 1<<30 || p.MaxCompletionTokens > 1<<30 {
		return badRequest("max_tokens 无效")
	}
	c.maxTokens = max(p.MaxTokens, p.MaxCompletionTokens)
	if p.N < 0 || p.BestOf < 0 {
		return badRequest("n 和 best_of 不能为负数")
	}
	if c.k == kindChat || c.k == kindCompletion {
		// Every choice (and every best_of candidate) may produce max_tokens:
		// the reservation covers them all.
		if p.N > 128 || p.BestOf > 128 {
			return badRequest("n 和 best_of 不能大于 128")
		}
		c.maxTokens *= max(1, p.N, p.BestOf)
		if c.k == kindCompletion {
			// Each prompt of a list gets its own choices.
			c.maxTokens *= promptCount(p.Prompt)
		}
	}
	switch c.k {
	case kindChat:
		if len(p.Messages) == 0 {
			return badRequest("messages 不能为空")
		}
	case kindCompletion:
		if p.Prompt == nil {
			return badRequest("prompt 不能为空")
		}
	case kindEmbedding:
		if c.model == "" {
			c.model = c.r.PathValue("model")
		}
		if p.Input == nil {
			return badRequest("input 不能为空")
		}
		if !isTextOrList(p.Input) {
			return badRequest("input 必须是字符串或数组")
		}
	case kindModeration:
		if c.model == "" {
			c.model = "omni-moderation-latest"
		}
		if p.Input == nil {
			return badRequest("input 不能为空")
		}
		if !isTextOrList(p.Input) {
			return badRequest("input 必须是字符串或数组")
		}
	case kindImage:
		if c.model == "" {
			c.model = "dall-e-2"
		}
		if err := checkImageSize(c.model, &c.parsed.Size); err != nil {
			return err
		}
		// OpenAI makes at most 10 images a call; the price multiplies by n.
		if p.N > 10 {
			return badRequest("n 不能大于 10")
		}
		// An image is charged in full once made: a request no upstream can
		// serve is refused here.
		if prompt, ok := p.Prompt.(string); !ok || strings.TrimSpace(prompt) == "" {
			return badRequest("prompt 不能为空")
		}
	case kindSpeech:
		if c.model == "" {
			c.model = "tts-1"
		}
		// Speech is priced by the characters of its input.
		if _, ok := p.Input.(string); !ok {
			return badRequest("input 必须是字符串")
		}
	}
	if c.model == "" {
		return badRequest("model 不能为空")
	}
	return checkModelName(c.model)
}

// checkModelName refuses a model name longer than any channel may list
// (store.MaxNameBytes) without echoing it: no channel could serve it, and
// an answer should not repeat a request's megabytes.
func checkModelName(model string) *Error {
	if len(model) > store.MaxNameBytes {
		return badRequest(fmt.Sprintf("model 过长：最多 %d 字节", store.MaxNameBytes))
	}
	return nil
}

func (rl *Relay) readMultipart(c *call) *Error {
	mt, params, err := mime.ParseMediaType(c.ctype)
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		return badRequest("请求体必须是 multipart/form-data")
	}
	mr := multipart.NewReader(bytes.NewReader(c.body), params["boundary"])
	form, err := mr.ReadForm(rl.cfg.MaxBodyBytes)
	if err != nil {
		return badRequest("无法解析 multipart 请求体")
	}
	defer form.RemoveAll()
	// As in a JSON body, a field given twice could be priced by one value
	// and served by the other; only list fields ("timestamp_granularities[]")
	// repeat.
	for name, v := range form.Value {
		if len(v)+len(form.File[name]) > 1 && !strings.HasSuffix(name, "[]") {
			return badRequest("请求参数格式错误：字段 " + name + " 出现了不止一次")
		}
	}
	for name, f := range form.File {
		if len(f) > 1 && !strings.HasSuffix(name, "[]") {
			return badRequest("请求参数格式错误：字段 " + name + " 出现了不止一次")
		}
	}
	for _, v := range form.Value {
		for _, s := range v {
			if !utf8.ValidString(s) {
				// As in a JSON body: the text fields are text.
				return badRequest("请求参数格式错误：字符串中有不合法的 UTF-8 字节")
			}
		}
	}
	if len(form.File["file"]) == 0 {
		return badRequest("file 不能为空")
	}
	if v := form.Value["model"]; len(v) > 0 {
		c.model = v[0]
		c.bodyModel = v[0]
	}
	if c.model == "" {
		c.model = "whisper-1"
	}
	if f := form.Value["response_format"]; len(f) > 0 {
		c.format = f[0]
	}
	return nil
}

// tokenGroup is the group a token's calls are priced and routed in: the
// user's own (which needs no ratio: a missing one counts as 1), or the
// token's, which must be usable by the user and still priced.
func tokenGroup(set *store.Settings, u *store.User, tok *store.Token) (string, *Error) {
	if tok == nil || tok.Group == "" {
		return u.Group, nil
	}
	g := tok.Group
	if _, ok := set.UserUsable[g]; !ok && g != u.Group {
		return "", localError(http.StatusForbidden, "group_not_allowed", "令牌分组 "+g+" 已被禁用")
	}
	if _, ok := set.GroupRatio[g]; !ok {
		return "", localError(http.StatusForbidden, "group_deprecated", "分组 "+g+" 已被弃用")
	}
	return g, nil
}

// distribute applies the IP allow list, resolves the group and checks the
// model limits (S §5.3).
func (rl *Relay) distribute(c *call, set *store.Settings) *Error {
	cl := c.caller
	if cl.Token != nil {
		if !cl.Token.AllowsIP(rl.cfg.ClientIP(c.r)) {
			return errIPNotAllowed()
		}
		if cl.Token.ModelLimitsEnabled {
			ok := false
			for _, m := range cl.Token.ModelLimitList() {
				ok = ok || m == c.model
			}
			if !ok {
				return localError(http.StatusForbidden, "model_not_allowed", "该令牌无权访问模型 "+c.model)
			}
		}
	}
	if cl.Group == "" {
		g, err := tokenGroup(set, cl.User, cl.Token)
		if err != nil {
			return err
		}
		cl.Group = g
	}
	if cl.Pinned != 0 {
		ch, err := rl.store.Channel(cl.Pinned)
		if err != nil {
			return badRequest("指定的渠道不存在")
		}
		if ch.Status != store.ChannelStatusEnabled {
			return localError(http.StatusForbidden, "channel_disabled", "指定的渠道已被禁用")
		}
	} else if rl.store.SelectChannel(cl.Group, c.model, 0, nil) == nil {
		return &Error{Status: http.StatusServiceUnavailable, Type: "new_api_error", Code: "model_not_found",
			Message: "当前分组 " + cl.Group + " 下对于模型 " + c.model + " 无可用渠道", Local: true}
	}
	return nil
}

// promptExactBytes is how much of a request's prompt text is tokenized, at
// about 0.45 µs a byte: 4 MiB is a million tokens and more, the largest
// context windows. The rest counts a token per four bytes, so that one
// request of many large texts cannot hold a CPU for seconds.
const promptExactBytes = 4 << 20

// promptTokens counts the prompt locally; it prices the reservation and is
// the fallback when the upstream reports no usage.
func (rl *Relay) promptTokens(c *call) int {
	p := &c.parsed
	switch c.k {
	case kindChat:
		counter := tokenizer.Counter{Images: func(url, detail string) (int, error) { return rl.imageTokens(c, url, detail) }, ExactBytes: promptExactBytes}
		tools := p.Tools
		for _, f := range p.Functions {
			// The deprecated form of a function tool.
			tools = append(tools[:len(tools):len(tools)], tokenizer.Tool{Type: "function", Function: f})
		}
		n, err := counter.CountChat(c.model, p.Messages, tools)
		if err != nil {
			slog.Debug("image tokens", "request_id", c.id, "err", err)
		}
		return n
	case kindCompletion:
		return tokenizer.Counter{ExactBytes: promptExactBytes}.CountInput(c.model, p.Prompt)
	case kindEmbedding, kindModeration:
		return tokenizer.Counter{ExactBytes: promptExactBytes}.CountInput(c.model, p.Input)
	case kindSpeech:
		if s, ok := p.Input.(string); ok {
			// S §5.8: tts* models by characters; the others (gpt-4o-mini-tts)
			// by the tokens of their input. A provider's prefix
			// (openai/tts-1) does not change the model.
			m := strings.ToLower(c.model)
			if i := strings.LastIndexByte(m, '/'); i >= 0 {
				m = m[i+1:]
			}
			if strings.HasPrefix(m, "tts") {
				return len([]rune(s))
			}
			return tokenizer.CountText(c.model, s)
		}
	case kindRerank:
		return tokenizer.CountText(c.model, p.Query) + tokenizer.Counter{ExactBytes: promptExactBytes}.CountInput(c.model, p.Documents)
	}
	return 0
}

// isTextOrList reports whether an input is a string or a list (of
// strings, token ids, token lists or content parts), the shapes OpenAI
// takes; anything else is refused before it is counted or sent.
func isTextOrList(v any) bool {
	switch v.(type) {
	case string, []any:
		return true
	}
	return false
}

// promptCount is how many prompts a completions request holds: a list of
// strings or of token lists is one prompt each; a string or one token list
// is one.
func promptCount(prompt any) int {
	list, ok := prompt.([]any)
	if !ok || len(list) == 0 {
		return 1
	}
	switch list[0].(type) {
	case string, []any:
		return len(list)
	}
	return 1
}

// imageQuota prices an image request by size, quality and count (S §5.8).
func imageQuota(c *call, p price) int64 {
	n := c.parsed.N
	if n <= 0 {
		n = 1
	}
	per := p.ModelPrice
	if !p.fixed() {
		per = 0.0025 * p.ModelRatio
	}
	size := c.parsed.Size
	factor := 1.0
	switch size {
	case "256x256":
		factor = 0.4
	case "512x512":
		factor = 0.45
	case "1024x1792", "1792x1024":
		factor = 2
	}
	quality := 1.0
	if c.model == "dall-e-3" && c.parsed.Quality == "hd" {
		quality = 2
		if size == "1024x1792" || size == "1792x1024" {
			quality = 1.5
		}
	}
	return moneyQuota(per * factor * quality * float64(n) * p.GroupRatio * p.qpu)
}

// mapModel applies the channel's model mapping; bad JSON is a local error.
func mapModel(ch *store.Channel, model string) (string, *Error) {
	m := strings.TrimSpace(ch.ModelMapping)
	if m == "" || m == "{}" {
		return model, nil
	}
	var mapping map[string]string
	if err := json.Unmarshal([]byte(m), &mapping); err != nil {
		return "", &Error{Status: 500, Type: "new_api_error", Code: "model_mapping_error", Message: "渠道的模型映射不是合法的 JSON", Local: true}
	}
	if to, ok := mapping[model]; ok && to != "" {
		return to, nil
	}
	return model, nil
}

// mapStatus applies the channel's status-code mapping.
func mapStatus(ch *store.Channel, status int) int {
	m := strings.TrimSpace(ch.StatusCodeMapping)
	if m == "" || m == "{}" {
		return status
	}
	var mapping map[string]string
	if json.Unmarshal([]byte(m), &mapping) != nil {
		return status
	}
	// Codes are read as the store validated them, as numbers with spaces
	// around them allowed ("+429" and "0429" are 429).
	for from, to := range mapping {
		if n, err := strconv.Atoi(strings.TrimSpace(from)); err != nil || n != status {
			continue
		}
		if v, err := strconv.Atoi(strings.TrimSpace(to)); err == nil && v >= 100 && v < 600 {
			return v
		}
	}
	return status
}

// attempts tries channels until one answers, following the retry rules.
func (rl *Relay) attempts(c *call, set *store.Settings) *Error {
	retries := int(set.Int("RetryTimes"))
	if c.caller.Pinned != 0 {
		retries = 0
	}
	exclude := map[uint64]bool{}
	var last *Error
	for attempt := 0; attempt <= retries; attempt++ {
		var ch *store.Channel
		if c.caller.Pinned != 0 {
			ch = rl.store.RoutingChannel(c.caller.Pinned)
		} else {
			ch, last = rl.selectServing(c, attempt, exclude, last)
		}
		if ch == nil {
			break
		}
		exclude[ch.ID] = true
		c.tried = append(c.tried, ch.ID)
		err := rl.try(c, ch, set)
		if err == nil {
			return nil
		}
		last = err
		if err.Local || !err.Retry {
			break
		}
		if c.r.Context().Err() != nil {
			break
		}
	}
	if last == nil {
		last = &Error{Status: http.StatusServiceUnavailable, Type: "new_api_error", Code: "model_not_found",
			Message: "当前分组 " + c.caller.Group + " 下对于模型 " + c.model + " 无可用渠道", Local: true}
	}
	return last
}

// selectServing picks the channel of an attempt among those that can serve
// the call: one whose type the relay does not speak, or whose provider lacks
// the endpoint, is passed over without spending the attempt (with the
// default RetryTimes of 0 it would otherwise answer 501 while another
// channel serves the model). A channel passed over is named in the log's
// use_channel, and its refusal is what the call answers when no channel is
// left and no upstream answered before.
func (rl *Relay) selectServing(c *call, attempt int, exclude map[uint64]bool, last *Error) (*store.Channel, *Error) {
	for {
		ch := rl.store.SelectChannel(c.caller.Group, c.model, attempt, exclude)
		if ch == nil {
			return nil, last
		}
		e := refusal(ch, c.k)
		if e == nil {
			return ch, last
		}
		exclude[ch.ID] = true
		c.tried = append(c.tried, ch.ID)
		if last == nil {
			last = e
		}
	}
}

// refusal is the error of a channel that cannot serve calls of kind k, or
// nil when it can.
func refusal(ch *store.Channel, k kind) *Error {
	ad := adapterFor(ch.Type)
	if ad == nil {
		return unsupportedType(ch.Type)
	}
	if !ad.Supports(k) {
		return unsupportedEndpoint(ch.Type)
	}
	return nil
}

// needsRewrite reports whether the body must change on its way upstream:
// another model name, stream usage to ask for, or stream options the
// provider refuses.
func needsRewrite(c *call, ch *store.Channel, su streamUsage, upstreamModel string) bool {
	// A model chosen by default (none in the body, or the engines path)
	// must be written into the body too.
	if upstreamModel != c.bodyModel || renamesFields(ch.Type, c.k, upstreamModel, c.body) {
		return true
	}
	switch su {
	case usageRefused:
		return bytes.Contains(c.body, []byte("stream_options"))
	case usageAsked:
		return c.stream && !c.wantUsage
	}
	return false
}

// errNoBytes marks an attempt that failed before anything reached the client.
var errFirstByte = errors.New("first byte timeout")

// try makes one upstream call on ch. A nil result means the call was
// answered and settled.
func (rl *Relay) try(c *call, ch *store.Channel, set *store.Settings) *Error {
	if e := refusal(ch, c.k); e != nil {
		// A pinned channel only: selection passes the others over.
		return e
	}
	ad := adapterFor(ch.Type)
	upstreamModel, merr := mapModel(ch, c.model)
	if merr != nil {
		return merr
	}
	body := c.body
	// The body is taken apart only when something in it may change; a plain
	// call goes upstream as the client's bytes.
	su := ad.StreamUsage(c, ch)
	if c.isJSON && needsRewrite(c, ch, su, upstreamModel) {
		fields, ferr := c.jsonFields()
		if ferr != nil {
			return badRequest("请求体不是合法的 JSON")
		}
		b, err := ad.ConvertBody(c.k, c.body, fields, upstreamModel, su, c.stream)
		if err != nil {
			return &Error{Status: 500, Type: "new_api_error", Code: "convert_request_failed", Message: "请求转换失败", Local: true, Cause: err}
		}
		body = b
	}
	ctype := c.ctype
	if c.isJSON {
		// The body was read as JSON whatever the client called it (curl
		// -d says form-urlencoded); providers refuse other types.
		ctype = "application/json"
	}
	if !c.isJSON && upstreamModel != c.bodyModel {
		// A multipart (audio) body carries the model as a form field.
		b, ct, err := rewriteMultipartModel(c.body, c.ctype, upstreamModel)
		if err != nil {
			return &Error{Status: 500, Type: "new_api_error", Code: "convert_request_failed", Message: "请求转换失败", Local: true, Cause: err}
		}
		body, ctype = b, ct
	}
	ctx, cancel := context.WithCancelCause(c.r.Context())
	defer cancel(nil)
	if rl.cfg.RelayTimeout > 0 && !c.stream {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, rl.cfg.RelayTimeout)
		defer stop()
	}
	reqCtx := ctx
	if c.r.URL.RawQuery != "" {
		reqCtx = withClientQuery(ctx, c.r.URL.Query())
	}
	// Whether the whole request reached the upstream: a client that leaves
	// after that, before the answer's headers, is billed its prompt, which
	// the provider processes (and charges) anyway.
	var wrote atomic.Bool
	reqCtx = httptrace.WithClientTrace(reqCtx, &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			wrote.Store(true)
		}
	}})
	req, err := ad.Request(reqCtx, ch, c.k, upstreamModel, bytes.NewReader(body), ctype)
	if err != nil {
		return &Error{Status: 500, Type: "new_api_error", Code: "build_request_failed", Message: "无法构造上游请求", Retry: true, Cause: err}
	}
	var watch *streamWatch
	if c.stream {
		watch = watchStream(cancel, rl.cfg.FirstByteTimeout, rl.cfg.StreamIdleTimeout)
		defer watch.stop()
	}
	resp, err := rl.client.Do(req)
	if err != nil {
		if errors.Is(context.Cause(ctx), errFirstByte) {
			return &Error{Status: http.StatusGatewayTimeout, Type: "upstream_error", Code: "first_byte_timeout", Message: "上游首字超时", Retry: true, Cause: err}
		}
		if c.r.Context().Err() != nil {
			if wrote.Load() {
				return rl.clientGone(c, ch, set)
			}
			return &Error{Status: 499, Type: "new_api_error", Code: "client_gone", Message: "客户端已断开", Local: true}
		}
		return &Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "do_request_failed", Message: "failed to request upstream", Retry: true, Cause: err}
	}
	defer resp.Body.Close()
	if watch != nil {
		// Until the first data the first-byte timeout is the one that
		// applies: an upstream that sends its headers at once and its first
		// token later is not cut by the (shorter) idle timeout. Either
		// clock bounds the reading of an error answer.
		watch.headers()
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		status := mapStatus(ch, resp.StatusCode)
		msg := upstreamMessage(data, ch.Key)
		if msg == "" {
			msg = "bad response status code " + strconv.Itoa(resp.StatusCode)
		}
		typ, code := upstreamErrorFields(data)
		e := &Error{Status: status, Type: "upstream_error", Code: "bad_response_status_code", Param: strconv.Itoa(status),
			Message: msg, Retry: shouldRetry(status)}
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			e.RetryAfter = retryAfter(resp.Header)
		}
		rl.maybeDisableFor(ch, status, resp.StatusCode, typ, code, msg, set)
		return e
	}
	if c.stream {
		if e := rl.notAStream(c, ch, resp, set); e != nil {
			return e
		}
		return rl.relayStream(c, ch, resp, ctx, cancel, watch, set)
	}
	return rl.relayBody(c, ch, resp, set)
}

// errorIn reports whether a 200 answer is in fact an error: a JSON object
// with an "error" member and no result beside it (the members a result
// has are missing, null or empty arrays). Some providers and proxies
// answer errors with 200, and some, refusing an image, send
// `"data": null` next to the error.
func errorIn(data []byte) bool {
	if !bytes.Contains(data, []byte(`"error"`)) {
		return false
	}
	var v struct {
		Error   json.RawMessage `json:"error"`
		Choices json.RawMessage `json:"choices"`
		Data    json.RawMessage `json:"data"`
		Results json.RawMessage `json:"results"`
		Text    json.RawMessage `json:"text"`
	}
	if json.Unmarshal(data, &v) != nil {
		return false
	}
	e := bytes.TrimSpace(v.Error)
	return len(e) > 0 && !bytes.Equal(e, []byte("null")) && !bytes.Equal(e, []byte(`""`)) && !bytes.Equal(e, []byte("false")) &&
		!holds(v.Choices) && !holds(v.Data) && !holds(v.Results) && !holds(v.Text)
}

// firstEvent returns the payload of an event stream's first data line; ok
// is false when it has none.
func firstEvent(data []byte) (payload []byte, ok bool) {
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if p, found := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data:")); found {
			return bytes.TrimSpace(p), true
		}
	}
	return nil, false
}

// holds reports whether a JSON member is there with something in it: not
// missing, not null, not an empty array.
func holds(raw json.RawMessage) bool {
	r := bytes.TrimSpace(raw)
	if len(r) == 0 || bytes.Equal(r, []byte("null")) {
		return false
	}
	return r[0] != '[' || len(r) < 2 || len(bytes.TrimSpace(r[1:len(r)-1])) > 0
}

// okButFailed is the error for a 200 answer that carries an error (or is
// no answer at all): nothing is charged, the next channel is tried, and the
// channel's disable rules apply to the upstream's message.
func (rl *Relay) okButFailed(ch *store.Channel, data []byte, set *store.Settings) *Error {
	if errorIn(data) {
		msg := upstreamMessage(data, ch.Key)
		if msg == "" {
			msg = "上游返回了错误"
		}
		typ, code := upstreamErrorFields(data)
		rl.maybeDisableFor(ch, http.StatusInternalServerError, http.StatusInternalServerError, typ, code, msg, set)
		return &Error{Status: http.StatusInternalServerError, Type: "upstream_error", Code: "bad_response", Message: msg, Retry: true}
	}
	return &Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "bad_response_body", Message: "上游返回了无法解析的响应", Retry: true}
}

// notAStream checks the answer to a stream request before anything is sent:
// a JSON or HTML document instead of an event stream is the upstream's
// failure (an error answered with 200, a wrong base URL), not a stream. An
// event stream mislabelled as JSON is still a stream: the upstream made the
// answer, and relaying it is what gets it billed.
func (rl *Relay) notAStream(c *call, ch *store.Channel, resp *http.Response, set *store.Settings) *Error {
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	if !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/html") {
		return nil
	}
	if strings.HasPrefix(ct, "application/json") {
		br := bufio.NewReaderSize(resp.Body, 512)
		resp.Body = struct {
			io.Reader
			io.Closer
		}{br, resp.Body}
		if startsAsEvents(br) {
			return nil
		}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil && c.r.Context().Err() != nil {
		return &Error{Status: 499, Type: "new_api_error", Code: "client_gone", Message: "客户端已断开", Local: true}
	}
	return rl.okButFailed(ch, data, set)
}

// startsAsEvents reports whether what r is about to read begins, after
// blank space, with an SSE field (data, event, id, retry) or comment. It
// reads nothing away from r.
func startsAsEvents(r *bufio.Reader) bool {
	for n := 1; n <= r.Size()-6; n++ {
		b, _ := r.Peek(n)
		if len(b) < n {
			return false
		}
		if c := b[n-1]; c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			continue
		}
		head, _ := r.Peek(n + 5)
		head = head[n-1:]
		for _, field := range [...]string{"data:", "event:", "id:", "retry:", ":"} {
			if bytes.HasPrefix(head, []byte(field)) {
				return true
			}
		}
		return false
	}
	return false
}

// clientGone bills a non-stream call whose client left after the request
// reached the upstream: its prompt, counted locally, as a stream that ends
// before its first event is billed. A transcription has no prompt to count
// while the provider transcribes the upload it received: it is billed its
// reservation's estimate, PreConsumedQuota tokens.
func (rl *Relay) clientGone(c *call, ch *store.Channel, set *store.Settings) *Error {
	u := usage{PromptTokens: c.prompt}
	if c.k == kindTranscription || c.k == kindTranslation {
		u.PromptTokens = int(min(set.Int("PreConsumedQuota"), maxUsageTokens))
	}
	if e := rl.settle(c, ch, u, -1, set); e != nil {
		return e
	}
	return &Error{Status: 499, Type: "new_api_error", Code: "client_gone", Message: "客户端已断开", Local: true}
}

// usage is the token usage a provider reports. The details say how many of
// the tokens were audio (gpt-4o-audio models bill those apart).
type usage struct {
	PromptTokens            int           `json:"prompt_tokens"`
	CompletionTokens        int           `json:"completion_tokens"`
	TotalTokens             int           `json:"total_tokens"`
	PromptTokensDetails     *tokenDetails `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *tokenDetails `json:"completion_tokens_details,omitempty"`
	// counted marks a completion counted here, by a tokenizer that may not
	// be the model's, because the upstream reported none.
	counted bool
}

// maxUsageTokens bounds each count an upstream reports: far beyond any
// call, and far from where sums of counts wrap around.
const maxUsageTokens = 1 << 40

// sane is u with every count an upstream reported that is below 0 or
// beyond maxUsageTokens read as none, as a count written as a string or a
// decimal is: a negative count would lower a charge (a negative prompt
// beside a positive completion), a huge one wrap a sum around or charge a
// trillion tokens no call produced. A count read as none is filled in as a
// missing one is.
func (u usage) sane() usage {
	clamp := func(n int) int {
		if n < 0 || n > maxUsageTokens {
			return 0
		}
		return n
	}
	u.PromptTokens, u.CompletionTokens, u.TotalTokens = clamp(u.PromptTokens), clamp(u.CompletionTokens), clamp(u.TotalTokens)
	for _, d := range []**tokenDetails{&u.PromptTokensDetails, &u.CompletionTokensDetails} {
		if *d != nil {
			v := **d
			v.AudioTokens = clamp(v.AudioTokens)
			*d = &v
		}
	}
	return u
}

// promptFilled is u with a prompt when the upstream named a completion but
// no prompt: the total's remainder, else the local count.
func (u usage) promptFilled(local int) usage {
	if u.PromptTokens == 0 && u.CompletionTokens > 0 {
		if u.TotalTokens > u.CompletionTokens {
			u.PromptTokens = u.TotalTokens - u.CompletionTokens
		} else {
			u.PromptTokens = local
		}
	}
	return u
}

// tokenDetails is the part of OpenAI's prompt_tokens_details and
// completion_tokens_details the relay reads.
type tokenDetails struct {
	AudioTokens int `json:"audio_tokens"`
}

// relayBody handles a non-stream answer: read it, find the usage, charge,
// and only then send it.
func (rl *Relay) relayBody(c *call, ch *store.Channel, resp *http.Response, set *store.Settings) *Error {
	data, err := readAll(io.LimitReader(resp.Body, rl.cfg.MaxAnswerBytes+1), resp.ContentLength)
	if err != nil {
		if c.r.Context().Err() != nil {
			return rl.clientGone(c, ch, set)
		}
		return &Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "read_response_failed", Message: "failed to read upstream response", Retry: true, Cause: err}
	}
	if int64(len(data)) > rl.cfg.MaxAnswerBytes {
		// Cut, it would be charged and sent as if whole (a sound file is
		// not checked as a document is).
		return &Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: "response_too_large",
			Message: "上游返回的内容过大"}
	}
	if errorIn(data) {
		return rl.okButFailed(ch, data, set)
	}
	u, ok := rl.bodyUsage(c, data, resp.Header.Get("Content-Type"))
	if !ok {
		return rl.okButFailed(ch, data, set)
	}
	if err := rl.settle(c, ch, u, -1, set); err != nil {
		return err
	}
	if c.asksBase64() {
		data = base64Embeddings(data)
	}
	h := c.w.Header()
	for _, k := range []string{"Content-Type", "Content-Disposition"} {
		if v := resp.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	if ct := strings.ToLower(h.Get("Content-Type")); c.answersJSON() && !strings.Contains(ct, "json") && !strings.HasPrefix(ct, "text/event-stream") {
		// The answer was read above as the endpoint's JSON document: an
		// upstream that did not say so (no Content-Type, which the server
		// would sniff as text/plain, or text/plain itself) must not make
		// it text to the client, whose SDK (OpenAI's) refuses a charged
		// answer that is not labelled JSON.
		h.Set("Content-Type", "application/json")
	}
	h.Set("Content-Length", strconv.Itoa(len(data)))
	c.w.WriteHeader(http.StatusOK)
	if len(data) <= 16<<10 {
		// Fits in the sockets' buffers whether the client reads or not.
		c.w.Write(data)
		return nil
	}
	// A client that does not read counts as gone after ClientWriteTimeout,
	// as a stream's does; one that reads, however slowly, keeps the
	// deadline moving piece by piece.
	wd := writeDeadline{w: c.w, timeout: rl.cfg.ClientWriteTimeout}
	for len(data) > 0 {
		n := min(len(data), 64<<10)
		wd.extend()
		if _, err := c.w.Write(data[:n]); err != nil {
			break
		}
		data = data[n:]
	}
	return nil
}

// answersJSON reports whether the call is answered with a JSON document,
// which bodyUsage reads as such: speech is sound, and a transcript is JSON
// only in the formats read as JSON (json, the default, and verbose_json).
func (c *call) answersJSON() bool {
	switch c.k {
	case kindChat, kindCompletion, kindEmbedding, kindModeration, kindImage, kindRerank:
		return true
	case kindTranscription, kindTranslation:
		switch strings.ToLower(strings.TrimSpace(c.format)) {
		case "", "json", "verbose_json":
			return true
		}
	}
	return false
}

// bodyUsage reads the usage of a complete answer, counting locally what the
// provider did not report. ok is false when the answer is none: JSON that
// is not (an HTML page from a wrong base URL, a cut body), an image answer
// without images, sound that is a web page or a JSON document (or an event
// stream without events or beginning with an error), a transcript that is
// a web page.
func (rl *Relay) bodyUsage(c *call, data []byte, ctype string) (u usage, ok bool) {
	ctype = strings.ToLower(ctype)
	switch c.k {
	case kindSpeech:
		isDoc := strings.HasPrefix(ctype, "text/html") || strings.HasPrefix(ctype, "application/json")
		if strings.HasPrefix(ctype, "text/event-stream") {
			// Speech asked as events (stream_format "sse"): a stream
			// without an event, or whose first event is an error, is none.
			ev, ok := firstEvent(data)
			return usage{PromptTokens: c.prompt}, ok && !errorIn(ev) && string(ev) != "[DONE]"
		}
		return usage{PromptTokens: c.prompt}, len(data) > 0 && !isDoc
	case kindImage:
		var v struct {
			Data []json.RawMessage `json:"data"`
		}
		return usage{}, json.Unmarshal(data, &v) == nil && len(v.Data) > 0
	case kindTranscription, kindTranslation:
		text, ok := transcriptText(c.format, ctype, data)
		return usage{CompletionTokens: tokenizer.CountText(c.model, text)}, ok && !strings.HasPrefix(ctype, "text/html")
	}
	var v answer
	// The decode is the validity check: only a failed one (a body that is
	// not JSON, or JSON of an unexpected shape) is scanned again.
	if json.Unmarshal(data, &v) != nil {
		if !json.Valid(data) {
			return usage{}, false
		}
		// Counts written as decimals or strings fail the decode: the usage
		// is read again, leniently.
		var loose struct {
			Usage *looseUsage `json:"usage"`
		}
		if json.Unmarshal(data, &loose) == nil && loose.Usage != nil {
			v.Usage = loose.Usage.usage()
		}
	}
	// JSON that holds no result (null, a number, {}) is no answer either. A
	// member of an unexpected type does not stop the decode (it goes on
	// with the others), so the result members are read whatever the shape.
	switch c.k {
	case kindChat, kindCompletion:
		if len(v.Choices) == 0 {
			return usage{}, false
		}
	case kindEmbedding:
		if !holds(v.Data) {
			return usage{}, false
		}
	case kindModeration:
		if !holds(v.Results) {
			return usage{}, false
		}
	case kindRerank:
		if !holds(v.Results) && !holds(v.Data) {
			return usage{}, false
		}
	}
	if v.Usage != nil {
		// A count below zero is none, and a huge one bounded, before the
		// counts are read together: the missing ones are then filled in.
		su := v.Usage.sane()
		v.Usage = &su
	}
	if v.Usage != nil && v.Usage.PromptTokens+v.Usage.CompletionTokens+v.Usage.TotalTokens > 0 {
		u := *v.Usage
		if u.PromptTokens == 0 && u.CompletionTokens == 0 {
			// A total alone: it holds the completion, which is counted
			// here and charged as such; the rest is the prompt.
			u.PromptTokens = u.TotalTokens
			if c.k == kindChat || c.k == kindCompletion {
				if n := v.completionTokens(c.model); n > 0 && n < u.TotalTokens {
					u.PromptTokens, u.CompletionTokens, u.counted = u.TotalTokens-n, n, true
				}
			}
			return u, true
		}
		if u.CompletionTokens == 0 && u.TotalTokens > u.PromptTokens {
			// A usage without completion_tokens: the total tells it.
			u.CompletionTokens = u.TotalTokens - u.PromptTokens
		}
		if u.CompletionTokens == 0 && (c.k == kindChat || c.k == kindCompletion) {
			// Nor does the total: what the answer holds is counted, as a
			// stream's would be.
			if n := v.completionTokens(c.model); n > 0 {
				u.CompletionTokens, u.counted = n, true
			}
		}
		return u.promptFilled(c.prompt), true
	}
	for _, t := range []rerankTokens{v.Meta.Tokens, v.Tokens} {
		// Made safe before they are added, as usage's counts are: a
		// negative input beside an output is a missing one, filled in.
		if u := (usage{PromptTokens: int(t.InputTokens), CompletionTokens: int(t.OutputTokens)}).sane(); u.PromptTokens+u.CompletionTokens > 0 {
			return u.promptFilled(c.prompt), true
		}
	}
	// No usage reported: count locally.
	return usage{PromptTokens: c.prompt, CompletionTokens: v.completionTokens(c.model), counted: true}, true
}

// answer is what the relay reads of a complete (non-stream) JSON answer.
type answer struct {
	Usage   *usage `json:"usage"`
	Choices []struct {
		Text    string     `json:"text"`
		Message completion `json:"message"`
	} `json:"choices"`
	Data    json.RawMessage `json:"data"`
	Results json.RawMessage `json:"results"`
	Meta    struct {
		Tokens rerankTokens `json:"tokens"`
	} `json:"meta"`
	Tokens rerankTokens `json:"tokens"` // SiliconCloud's rerank
}

// completionTokens counts locally what the answer's choices hold.
func (v *answer) completionTokens(model string) int {
	sc := tokenizer.NewStreamCounter(model)
	for _, ch := range v.Choices {
		sc.Add(ch.Text)
		ch.Message.addTo(sc)
	}
	return sc.Tokens()
}

// rerankTokens is the token count of a rerank answer: Cohere's and Jina's
// under meta, SiliconCloud's at the top. Its counts are read as a usage's
// are when written as decimals or strings.
type rerankTokens struct {
	InputTokens  looseCount `json:"input_tokens"`
	OutputTokens looseCount `json:"output_tokens"`
}

// settle charges the call and writes its log; frt is the time to first
// byte in ms (-1 when not streamed).
func (rl *Relay) settle(c *call, ch *store.Channel, u usage, frt int64, set *store.Settings) *Error {
	p := c.price
	u = c.billable(u)
	prompt, completion := u.PromptTokens, u.CompletionTokens
	quota := p.quota(u)
	if c.k == kindImage {
		quota = c.res.Amount
	}
	// The store writes the log when consume logging is on and feeds the
	// dashboard from it when data export is on.
	log := rl.consumeLog(c, ch, u, quota, frt)
	if err := rl.store.Settle(c.res, ch.ID, quota, log); err != nil {
		return &Error{Status: 500, Type: "new_api_error", Code: "billing_failed", Message: "计费失败，请稍后重试", Local: true, Cause: err}
	}
	c.res = nil
	if rl.cfg.Events != nil {
		a := Activity{Time: time.Now(), UserID: c.caller.User.ID, Model: store.GizmoName(c.model), ChannelID: ch.ID, Tokens: int64(prompt + completion)}
		if c.caller.Token != nil {
			a.TokenName = c.caller.Token.Name
		} else {
			a.TokenName = "playground-" + c.caller.Group
		}
		rl.cfg.Events.Activity(a)
	}
	return nil
}

// billable is the usage a call is charged for: u within sane bounds, and a
// local count above max_tokens held at the bound. The upstream produced at
// most max_tokens for each choice; a local count above that is the
// tokenizer's (another than the model's). What an upstream reports is what
// it bills, reasoning included, and is charged as reported. A stream's
// usage chunk shows these figures.
func (c *call) billable(u usage) usage {
	u = u.sane()
	if u.counted && (c.k == kindChat || c.k == kindCompletion) && c.maxTokens > 0 && u.CompletionTokens > c.maxTokens {
		u.CompletionTokens = c.maxTokens
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}

// logOther is the JSON kept in a consume log's other field.
type logOther struct {
	ModelRatio      float64 `json:"model_ratio"`
	GroupRatio      float64 `json:"group_ratio"`
	CompletionRatio float64 `json:"completion_ratio"`
	ModelPrice      float64 `json:"model_price"`
	// QuotaPerUnit is the rate a fixed price was turned into quota at: the
	// log page's billing process ends on the quota charged even after the
	// option changed.
	QuotaPerUnit  float64 `json:"quota_per_unit,omitempty"`
	FRT           int64   `json:"frt"`
	UpstreamModel string  `json:"upstream_model,omitempty"`
	RequestID     string  `json:"request_id"`
	AdminInfo     struct {
		UseChannel []uint64 `json:"use_channel"`
	} `json:"admin_info"`
	*audioOther // audio models only
	*imageOther // image generations only
}

// audioOther is what an audio model's log adds to other (S §5.8).
type audioOther struct {
	Audio                bool    `json:"audio"`
	AudioInput           int     `json:"audio_input"`
	AudioOutput          int     `json:"audio_output"`
	TextInput            int     `json:"text_input"`
	TextOutput           int     `json:"text_output"`
	AudioRatio           float64 `json:"audio_ratio"`
	AudioCompletionRatio float64 `json:"audio_completion_ratio"`
}

// imageOther is what an image generation's log adds to other: the size,
// quality and count it was priced by (imageQuota), which its zero token
// counts cannot show.
type imageOther struct {
	Image   bool   `json:"image"`
	Size    string `json:"size"`
	Quality string `json:"quality,omitempty"`
	N       int    `json:"n"`
}

// pricedOther is a log's other with the pricing p charged u at (B §3), and
// no first-byte time.
func pricedOther(p price, u usage) logOther {
	o := logOther{ModelRatio: p.ModelRatio, GroupRatio: p.GroupRatio, CompletionRatio: p.CompletionRatio, ModelPrice: p.ModelPrice, FRT: -1000}
	if p.fixed() {
		o.QuotaPerUnit = p.qpu
	}
	if p.Audio {
		s := splitAudio(u)
		o.audioOther = &audioOther{Audio: true, AudioInput: s.AudioIn, AudioOutput: s.AudioOut, TextInput: s.TextIn, TextOutput: s.TextOut,
			AudioRatio: p.AudioRatio, AudioCompletionRatio: p.AudioCompletionRatio}
	}
	return o
}

func (rl *Relay) consumeLog(c *call, ch *store.Channel, u usage, quota, frt int64) *store.Log {
	p := c.price
	prompt, completion := u.PromptTokens, u.CompletionTokens
	o := pricedOther(p, u)
	o.RequestID = c.id
	if frt >= 0 {
		o.FRT = frt
	}
	if c.k == kindImage {
		o.imageOther = &imageOther{Image: true, Size: c.parsed.Size, Quality: c.parsed.Quality, N: max(c.parsed.N, 1)}
	}
	if up, _ := mapModel(ch, c.model); up != c.model {
		o.UpstreamModel = up
	}
	o.AdminInfo.UseChannel = c.tried
	other, _ := json.Marshal(o)
	var content string
	if p.fixed() {
		content = "模型价格 $" + strconv.FormatFloat(p.ModelPrice, 'f', -1, 64) + "，分组倍率 " + strconv.FormatFloat(p.GroupRatio, 'f', -1, 64)
	} else {
		content = "模型倍率 " + strconv.FormatFloat(p.ModelRatio, 'f', -1, 64) + "，补全倍率 " + strconv.FormatFloat(p.CompletionRatio, 'f', -1, 64)
		if p.Audio {
			content += "，音频倍率 " + strconv.FormatFloat(p.AudioRatio, 'f', -1, 64) + "，音频补全倍率 " + strconv.FormatFloat(p.AudioCompletionRatio, 'f', -1, 64)
		}
		content += "，分组倍率 " + strconv.FormatFloat(p.GroupRatio, 'f', -1, 64)
	}
	if prompt+completion == 0 && !p.fixed() && c.k != kindImage {
		content += "（可能是上游超时）"
	}
	// A gizmo is logged under its family's name, the one it is priced by,
	// with its own name in the content (S §5.8).
	model := store.GizmoName(c.model)
	if model != c.model {
		content += "，模型 " + c.model
	}
	l := &store.Log{
		UserID: c.caller.User.ID, Username: c.caller.User.Username, Type: store.LogTypeConsume, Content: content,
		ModelName: model, Quota: quota, PromptTokens: int64(prompt), CompletionTokens: int64(completion),
		UseTime: int64(time.Since(c.start).Seconds()), IsStream: c.stream, ChannelID: ch.ID, Group: c.caller.Group,
		Other: string(other), CreatedAt: time.Now().Unix(),
	}
	if c.caller.Token != nil {
		l.TokenID, l.TokenName = c.caller.Token.ID, c.caller.Token.Name
	} else {
		l.TokenName = "playground-" + c.caller.Group
	}
	return l
}

// sensitiveHit returns the first configured word found in the prompt.
func sensitiveHit(m *wordMatcher, c *call) string {
	if len(m.words) == 0 {
		return ""
	}
	var b strings.Builder
	p := &c.parsed
	for _, m := range p.Messages {
		switch v := m.Content.(type) {
		case string:
			b.WriteString(v)
			b.WriteByte('\n')
		case []any:
			for _, part := range v {
				if obj, ok := part.(map[string]any); ok {
					if t, ok := obj["text"].(string); ok {
						b.WriteString(t)
						b.WriteByte('\n')
					}
				}
			}
		case []tokenizer.ContentPart:
			for _, part := range v {
				b.WriteString(part.Text)
				b.WriteByte('\n')
			}
		}
	}
	for _, v := range []any{p.Prompt, p.Input} {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n') // a word split across prompt and input is no hit
		case []any:
			// Strings, or content parts (omni-moderation's input).
			for _, e := range x {
				s, ok := e.(string)
				if obj, isObj := e.(map[string]any); isObj {
					s, ok = obj["text"].(string)
				}
				if ok {
					b.WriteString(s)
					b.WriteByte('\n')
				}
			}
		}
	}
	return m.first(store.FoldSensitive(b.String()))
}
