package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"gateway/api"
	"gateway/policy"
	"gateway/store"
	"gateway/ws"
)

// The bad-input generator: every console route that reads a JSON body, a
// path id or query parameters gets malformed and hostile input from a role
// allowed to call it. Each answer must be a 4xx with the failure envelope
// (or a success envelope: some input is fine), never a 5xx or a panic, and a
// refused write must leave the data file's records as they were.

// kind is what a body field holds.
type kind int

const (
	kString kind = iota
	kNumber
	kBool
	kList // a comma list (or an array of strings), or a list of ids
)

// badRoute is one route of the generator and how to call it.
type badRoute struct {
	pattern string // "METHOD /path" as registered
	url     string // the concrete URL
	as      string // policy role
	fields  map[string]kind
	base    func() map[string]any // a valid body, fresh per call
	query   []string              // query parameters it reads
	topUp   bool                  // answers {message, data}, no success key
	// write marks a route that changes records when it succeeds.
	write bool
}

// localUpstream answers every outbound call of the generator's server, to
// whatever host it was addressed, as an OpenAI-compatible provider: the
// calls go through a real http.Transport (which checks what goes into
// headers), but never leave the machine.
type localUpstream struct {
	srv *httptest.Server
	rt  http.RoundTripper
}

func newLocalUpstream(tb testing.TB) *localUpstream {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/models"):
			fmt.Fprint(w, `{"object":"list","data":[{"id":"gpt-4o"}]}`)
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			fmt.Fprint(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
		case strings.HasSuffix(r.URL.Path, "/subscription"):
			fmt.Fprint(w, `{"hard_limit_usd":10,"has_payment_method":true}`)
		case strings.HasSuffix(r.URL.Path, "/usage"):
			fmt.Fprint(w, `{"total_usage":100}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`)
		}
	}))
	tb.Cleanup(srv.Close)
	return &localUpstream{srv: srv, rt: srv.Client().Transport}
}

func (u *localUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = "http", u.srv.Listener.Addr().String()
	return u.rt.RoundTrip(r)
}

// errorCatcher keeps the records logged at error level (a recovered panic,
// an internal error).
type errorCatcher struct {
	mu   sync.Mutex
	msgs []string
}

func (h *errorCatcher) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (h *errorCatcher) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "stack" {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	})
	h.mu.Lock()
	h.msgs = append(h.msgs, b.String())
	h.mu.Unlock()
	return nil
}
func (h *errorCatcher) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *errorCatcher) WithGroup(string) slog.Handler      { return h }

func (h *errorCatcher) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.msgs
	h.msgs = nil
	return out
}

// volatileBuckets are not records, or are written in the background: the
// sessions, the codes, the file's meta, and the log indexes (the indexer
// adds an entry to them after its transaction; the logs bucket tells
// whether one was written).
var volatileBuckets = map[string]bool{"sessions": true, "idx_session_by_user": true, "codes": true, "meta": true,
	"idx_log_by_user": true, "idx_log_by_token": true, "idx_log_by_channel": true, "idx_log_by_model": true,
	"idx_log_by_type": true, "idx_log_by_token_name": true, "log_counts": true, "log_unindexed": true}

// records hashes every record bucket of the store's file. A copy of the
// file identical to the last one has the same records: only a file that
// changed is walked.
func (e *badEnv) records(tb testing.TB) map[string][32]byte {
	tb.Helper()
	e.buf.Reset()
	if err := e.store.Backup(context.Background(), &e.buf, nil); err != nil {
		tb.Fatal(err)
	}
	if e.last != nil && bytes.Equal(e.buf.Bytes(), e.lastRaw) {
		return e.last
	}
	path := filepath.Join(e.dir, "snapshot.db")
	if err := os.WriteFile(path, e.buf.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	out := map[string][32]byte{}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if volatileBuckets[string(name)] {
				return nil
			}
			h := sha256.New()
			var walk func(b *bolt.Bucket)
			walk = func(b *bolt.Bucket) {
				b.ForEach(func(k, v []byte) error {
					var n [16]byte
					binary.LittleEndian.PutUint64(n[:8], uint64(len(k)))
					binary.LittleEndian.PutUint64(n[8:], uint64(len(v)))
					h.Write(n[:])
					h.Write(k)
					h.Write(v)
					if v == nil {
						if nb := b.Bucket(k); nb != nil {
							walk(nb)
						}
					}
					return nil
				})
			}
			walk(b)
			var sum [32]byte
			copy(sum[:], h.Sum(nil))
			out[string(name)] = sum
			return nil
		})
	})
	if err != nil {
		tb.Fatal(err)
	}
	e.last, e.lastRaw = out, append(e.lastRaw[:0], e.buf.Bytes()...)
	return out
}

func changedBuckets(before, after map[string][32]byte) []string {
	var out []string
	for k, v := range after {
		if before[k] != v {
			out = append(out, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// badEnv is the generator's server: a real store, outbound calls answered
// on the machine.
type badEnv struct {
	tb      testing.TB
	dir     string
	store   *store.Store
	srv     *api.Server
	tokens  map[string]string // role -> access token
	buf     bytes.Buffer
	last    map[string][32]byte // the records as last read
	lastRaw []byte              // the copy they were read from
}

// snapshot returns the records as they are now.
func (e *badEnv) snapshot(tb testing.TB) map[string][32]byte { return e.records(tb) }

func newBadEnv(tb testing.TB) *badEnv {
	tb.Helper()
	dir := tb.TempDir()
	st, err := store.Open(filepath.Join(dir, "data.db"), store.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	pol, err := policy.New()
	if err != nil {
		tb.Fatal(err)
	}
	srv := api.New(api.Config{Store: st, Policy: pol, Hub: ws.NewHub(),
		HTTPClient: &http.Client{Transport: newLocalUpstream(tb)}})
	tb.Cleanup(func() { srv.Close(); st.Close() })
	e := &badEnv{tb: tb, dir: dir, store: st, srv: srv, tokens: map[string]string{}}
	for role, r := range map[string]int{policy.User: store.RoleCommon, policy.Admin: store.RoleAdmin, policy.Root: store.RoleRoot} {
		u, err := st.CreateUser(store.NewUser{Username: "bad" + role, Password: "password-" + role, Role: r})
		if err != nil {
			tb.Fatal(err)
		}
		tok, err := st.ResetAccessToken(u.ID)
		if err != nil {
			tb.Fatal(err)
		}
		e.tokens[role] = tok
	}
	return e
}

type badReply struct {
	status int
	raw    []byte
}

func (e *badEnv) send(method, url, as string, body []byte, hasBody bool) badReply {
	var req *http.Request
	if hasBody {
		req = httptest.NewRequest(method, "http://gateway.test/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, "http://gateway.test/", nil)
	}
	// The URL is set raw, so that bad escapes and bytes reach the server.
	req.URL.Path, req.URL.RawPath, req.URL.RawQuery = "", "", ""
	if p, q, ok := strings.Cut(url, "?"); ok {
		req.URL.RawQuery = q
		url = p
	}
	req.URL.Path = url
	req.RequestURI = url
	if tok := e.tokens[as]; tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return badReply{status: rec.Code, raw: rec.Body.Bytes()}
}

// badBody is one body of the generator.
type badBody struct {
	name string
	raw  []byte
}

func rawJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// withField is base with field set to the raw JSON value.
func withField(base map[string]any, field string, raw string) []byte {
	m := map[string]json.RawMessage{}
	for k, v := range base {
		m[k] = rawJSON(v)
	}
	m[field] = json.RawMessage(raw)
	return rawJSON(m)
}

// bodiesFor generates the bad bodies of a route.
func bodiesFor(rt badRoute) []badBody {
	out := []badBody{
		{"malformed", []byte(`{"a":`)},
		{"malformed-trailing-comma", []byte(`{"a":1,}`)},
		{"malformed-garbage-after", []byte(`{} x`)},
		{"empty", nil},
		{"blank", []byte("  \n")},
		{"array", []byte(`[]`)},
		{"array-of-object", []byte(`[{}]`)},
		{"string", []byte(`"x"`)},
		{"null", []byte(`null`)},
		{"number", []byte(`12`)},
		{"bool", []byte(`true`)},
		{"empty-object", []byte(`{}`)},
		{"invalid-utf8-key", append(append([]byte(`{"`), 0xff, 0xfe), []byte(`":1}`)...)},
		{"deep-nesting", []byte(strings.Repeat("[", 100000) + strings.Repeat("]", 100000))},
	}
	base := rt.base
	if base == nil {
		base = func() map[string]any { return map[string]any{} }
	}
	out = append(out, badBody{"unknown-field", withField(base(), "zz_unknown", `{"a":[1,2]}`)})
	names := make([]string, 0, len(rt.fields))
	for f := range rt.fields {
		names = append(names, f)
	}
	sort.Strings(names)
	strs := map[string]string{
		"empty":       `""`,
		"long":        strconv.Quote(strings.Repeat("a", 10000)),
		"long-lines":  strconv.Quote(strings.Repeat("ab\n", 60)),
		"nul":         `"a\u0000b"`,
		"lone-surr":   `"a\ud800b"`,
		"rtl":         `"\u202eabc"`,
		"zero-width":  `"a\u200bb"`,
		"spaces":      `"   "`,
		"newline":     `"a\nb"`,
		"numeric-str": `"12"`,
	}
	nums := map[string]string{
		"zero":        `0`,
		"neg":         `-1`,
		"neg-big":     `-9007199254740993`,
		"over-2^53":   `9007199254740993`,
		"max-int64":   `9223372036854775807`,
		"min-int64":   `-9223372036854775808`,
		"over-int64":  `9223372036854775808`,
		"under-int64": `-9223372036854775809`,
		"over-uint64": `18446744073709551616`,
		"fraction":    `1.5`,
		"exp":         `1e3`,
		"exp-huge":    `1e400`,
		"exp-neg":     `1e-7`,
		"neg-zero":    `-0`,
		"int-max32":   `2147483648`,
	}
	wrong := map[string]string{
		"bool":   `true`,
		"null":   `null`,
		"object": `{"a":1}`,
		"array":  `[1,"a",null]`,
		"str":    `"abc"`,
		"num":    `12`,
	}
	for _, f := range names {
		k := rt.fields[f]
		for _, n := range sortedKeys(wrong) {
			out = append(out, badBody{f + "/wrong-" + n, withField(base(), f, wrong[n])})
		}
		if k == kString || k == kList {
			for _, n := range sortedKeys(strs) {
				out = append(out, badBody{f + "/str-" + n, withField(base(), f, strs[n])})
			}
			// Invalid UTF-8 inside the value.
			b := withField(base(), f, `"a__b"`)
			b = bytes.Replace(b, []byte("__"), []byte{0xc3, 0x28}, 1)
			out = append(out, badBody{f + "/str-invalid-utf8", b})
		}
		if k == kNumber || k == kList {
			for _, n := range sortedKeys(nums) {
				out = append(out, badBody{f + "/num-" + n, withField(base(), f, nums[n])})
			}
		}
		if k == kList {
			lists := map[string]string{"empty": `[]`, "nested": `[[1]]`, "nulls": `[null]`, "zeros": `[0,-1]`,
				"huge": "[" + strings.Repeat("987654,", 50000) + "987654]"}
			for _, n := range sortedKeys(lists) {
				out = append(out, badBody{f + "/list-" + n, withField(base(), f, lists[n])})
			}
		}
		// The field twice, with different values.
		b := withField(base(), f, `"__DUP__"`)
		alt := `1`
		if k == kNumber {
			alt = `"x"`
		}
		b = bytes.Replace(b, []byte(`"__DUP__"`), []byte(alt+`,`+strconv.Quote(f)+`:`+`""`), 1)
		out = append(out, badBody{f + "/duplicate", b})
	}
	return out
}

var badQueryValues = map[string]string{
	"neg":         "-1",
	"zero":        "0",
	"huge":        "99999999999999999999999",
	"max-int64":   "9223372036854775807",
	"min-int64":   "-9223372036854775808",
	"non-numeric": "abc",
	"fraction":    "1.5",
	"exp":         "1e3",
	"empty":       "",
	"long":        strings.Repeat("a", 10000),
	"huge-string": strings.Repeat("b", 40000), // longer than a bbolt key
	"nul":         "a%00b",
	"bad-utf8":    "%ff%fe",
	"bad-escape":  "%zz",
	"percent":     "%25_%25",
	"spaces":      "%20%20",
	"rtl":         "%E2%80%AEx",
	"plus":        "+1",
}

var badIDs = map[string]string{
	"zero":        "0",
	"neg":         "-1",
	"over-uint64": "18446744073709551616",
	"max-uint64":  "18446744073709551615",
	"non-numeric": "abc",
	"fraction":    "1.5",
	"exp":         "1e3",
	"hex":         "0x1",
	"plus":        "+1",
	"leading0":    "01",
	"nul":         "%00",
	"space":       "%201",
	"long":        strings.Repeat("9", 5000),
	"missing":     "987654",
}

// check judges one answer.
func (e *badEnv) check(t *testing.T, rt badRoute, what string, r badReply, before map[string][32]byte, logs []string) {
	t.Helper()
	label := fmt.Sprintf("%s [%s]", rt.pattern, what)
	for _, l := range logs {
		t.Errorf("%s: logged %s", label, l)
	}
	if r.status >= 500 {
		t.Errorf("%s: status %d: %.300s", label, r.status, r.raw)
		return
	}
	if rt.topUp {
		var env struct {
			Message string `json:"message"`
			Data    any    `json:"data"`
		}
		if err := json.Unmarshal(r.raw, &env); err != nil {
			t.Errorf("%s: body is not the top-up shape: %.300s", label, r.raw)
			return
		}
		if r.status >= 400 && (env.Message != "error" || env.Data == nil || env.Data == "") {
			t.Errorf("%s: refusal without a reason: %.300s", label, r.raw)
		}
	} else if r.status != http.StatusNotFound || !bytes.Contains(r.raw, []byte("invalid_request_error")) {
		var env struct {
			Success *bool   `json:"success"`
			Message *string `json:"message"`
		}
		if err := json.Unmarshal(r.raw, &env); err != nil || env.Success == nil || env.Message == nil {
			t.Errorf("%s: status %d, not an envelope: %.300s", label, r.status, r.raw)
			return
		}
		if r.status >= 400 && (*env.Success || strings.TrimSpace(*env.Message) == "") {
			t.Errorf("%s: status %d with success %v, message %q", label, r.status, *env.Success, *env.Message)
		}
		if r.status < 300 && !*env.Success {
			t.Errorf("%s: status %d with success false: %.300s", label, r.status, r.raw)
		}
	}
	if before != nil {
		after := e.records(t)
		if ch := changedBuckets(before, after); len(ch) > 0 && r.status >= 400 {
			t.Errorf("%s: refused with %d (%.200s) but changed %v", label, r.status, r.raw, ch)
		}
	}
}

// badRoutes is the generator's table; setup has created the records the
// bodies name.
func (e *badEnv) badRoutes(tb testing.TB) []badRoute {
	tb.Helper()
	st := e.store
	userID := func(role string) uint64 {
		u, err := st.UserByUsername("bad" + role)
		if err != nil {
			tb.Fatal(err)
		}
		return u.ID
	}
	victim, err := st.CreateUser(store.NewUser{Username: "victim", Password: "victim-pass-1"})
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := st.CreateToken(&store.Token{UserID: userID(policy.User), Name: "tok", ExpiredTime: -1, RemainQuota: 1000, Status: store.TokenStatusEnabled})
	if err != nil {
		tb.Fatal(err)
	}
	// The second channel is only tested: no edit or delete of the generator
	// reaches it.
	chs := []*store.Channel{{Type: 1, Key: "sk-channel", Name: "ch", Models: "gpt-4o", Group: "default", Status: 1, AutoBan: 1},
		{Type: 1, Key: "sk-tested", Name: "tested", Models: "gpt-4o", Group: "default", Status: 1, AutoBan: 1}}
	if err := st.CreateChannels(chs); err != nil {
		tb.Fatal(err)
	}
	reds, err := st.CreateRedemptions(userID(policy.Admin), "red", 100, 1)
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	unique := func(p string) string { n++; return fmt.Sprintf("%s%d", p, n) }
	id := func(v uint64) string { return strconv.FormatUint(v, 10) }
	logQuery := []string{"p", "page_size", "type", "start_timestamp", "end_timestamp", "token_name", "model_name", "username", "channel"}
	return []badRoute{
		{pattern: "POST /api/user/register", url: "/api/user/register", as: policy.Guest, write: true,
			fields: map[string]kind{"username": kString, "password": kString, "password2": kString, "email": kString, "verification_code": kString, "aff_code": kString},
			base:   func() map[string]any { return map[string]any{"username": unique("reg"), "password": "password-1"} }},
		{pattern: "POST /api/user/login", url: "/api/user/login", as: policy.Guest,
			fields: map[string]kind{"username": kString, "password": kString},
			base:   func() map[string]any { return map[string]any{"username": "victim", "password": "wrong-pass-1"} }},
		{pattern: "POST /api/user/reset", url: "/api/user/reset", as: policy.Guest, write: true,
			fields: map[string]kind{"email": kString, "token": kString},
			base:   func() map[string]any { return map[string]any{"email": "a@example.com", "token": "x"} }},
		{pattern: "PUT /api/user/self", url: "/api/user/self", as: policy.User, write: true,
			fields: map[string]kind{"username": kString, "display_name": kString, "password": kString, "original_password": kString},
			base:   func() map[string]any { return map[string]any{"display_name": unique("Bad")} }},
		{pattern: "POST /api/user/aff_transfer", url: "/api/user/aff_transfer", as: policy.User, write: true,
			fields: map[string]kind{"quota": kNumber},
			base:   func() map[string]any { return map[string]any{"quota": 1000000} }},
		{pattern: "POST /api/user/topup", url: "/api/user/topup", as: policy.User, write: true,
			fields: map[string]kind{"key": kString},
			base:   func() map[string]any { return map[string]any{"key": "0123456789abcdef0123456789abcdef"} }},
		{pattern: "POST /api/token/{$}", url: "/api/token/", as: policy.User, write: true,
			fields: map[string]kind{"name": kString, "status": kNumber, "expired_time": kNumber, "remain_quota": kNumber, "unlimited_quota": kBool,
				"model_limits_enabled": kBool, "model_limits": kList, "allow_ips": kString, "group": kString, "id": kNumber},
			base: func() map[string]any {
				return map[string]any{"name": "t", "expired_time": -1, "remain_quota": 1000, "unlimited_quota": false}
			}},
		{pattern: "PUT /api/token/{$}", url: "/api/token/", as: policy.User, write: true,
			fields: map[string]kind{"id": kNumber, "name": kString, "status": kNumber, "expired_time": kNumber, "remain_quota": kNumber, "unlimited_quota": kBool,
				"model_limits_enabled": kBool, "model_limits": kList, "allow_ips": kString, "group": kString},
			base: func() map[string]any { return map[string]any{"id": tok.ID, "name": unique("tok")} }},
		{pattern: "PUT /api/token/{$}", url: "/api/token/?status_only=1", as: policy.User, write: true,
			fields: map[string]kind{"id": kNumber, "status": kNumber},
			base:   func() map[string]any { return map[string]any{"id": tok.ID, "status": 1} }},
		{pattern: "POST /api/channel/{$}", url: "/api/channel/", as: policy.Admin, write: true,
			fields: map[string]kind{"type": kNumber, "key": kString, "openai_organization": kString, "test_model": kString, "status": kNumber,
				"name": kString, "weight": kNumber, "base_url": kString, "other": kString, "models": kList, "group": kList,
				"model_mapping": kString, "status_code_mapping": kString, "priority": kNumber, "auto_ban": kNumber, "id": kNumber},
			base: func() map[string]any {
				return map[string]any{"type": 1, "key": "sk-x", "name": unique("c"), "models": "gpt-4o", "group": "default"}
			}},
		{pattern: "PUT /api/channel/{$}", url: "/api/channel/", as: policy.Admin, write: true,
			fields: map[string]kind{"id": kNumber, "type": kNumber, "key": kString, "openai_organization": kString, "test_model": kString, "status": kNumber,
				"name": kString, "weight": kNumber, "base_url": kString, "other": kString, "models": kList, "group": kList,
				"model_mapping": kString, "status_code_mapping": kString, "priority": kNumber, "auto_ban": kNumber},
			base: func() map[string]any { return map[string]any{"id": chs[0].ID, "name": unique("ch")} }},
		{pattern: "POST /api/channel/batch", url: "/api/channel/batch", as: policy.Admin, write: true,
			fields: map[string]kind{"ids": kList},
			base:   func() map[string]any { return map[string]any{"ids": []int{987654}} }},
		{pattern: "POST /api/channel/fetch_models", url: "/api/channel/fetch_models", as: policy.Admin,
			fields: map[string]kind{"type": kNumber, "base_url": kString, "key": kString, "id": kNumber},
			base: func() map[string]any {
				return map[string]any{"type": 1, "base_url": "https://api.example.com", "key": "sk-x"}
			}},
		{pattern: "POST /api/redemption/{$}", url: "/api/redemption/", as: policy.Admin, write: true,
			fields: map[string]kind{"name": kString, "quota": kNumber, "count": kNumber},
			base:   func() map[string]any { return map[string]any{"name": "r", "quota": 100, "count": 1} }},
		{pattern: "PUT /api/redemption/{$}", url: "/api/redemption/", as: policy.Admin, write: true,
			fields: map[string]kind{"id": kNumber, "name": kString, "quota": kNumber, "status": kNumber},
			base:   func() map[string]any { return map[string]any{"id": reds[0].ID, "name": unique("red")} }},
		{pattern: "PUT /api/redemption/{$}", url: "/api/redemption/?status_only=1", as: policy.Admin, write: true,
			fields: map[string]kind{"id": kNumber, "status": kNumber},
			base:   func() map[string]any { return map[string]any{"id": reds[0].ID, "status": 1} }},
		{pattern: "POST /api/user/{$}", url: "/api/user/", as: policy.Admin, write: true,
			fields: map[string]kind{"username": kString, "display_name": kString, "password": kString, "role": kNumber},
			base:   func() map[string]any { return map[string]any{"username": unique("new"), "password": "password-1"} }},
		{pattern: "PUT /api/user/{$}", url: "/api/user/", as: policy.Admin, write: true,
			fields: map[string]kind{"id": kNumber, "username": kString, "display_name": kString, "password": kString, "group": kString,
				"quota": kNumber, "add_quota": kNumber, "role": kNumber},
			base: func() map[string]any { return map[string]any{"id": victim.ID, "display_name": unique("V")} }},
		{pattern: "POST /api/user/manage", url: "/api/user/manage", as: policy.Admin, write: true,
			fields: map[string]kind{"id": kNumber, "action": kString},
			base:   func() map[string]any { return map[string]any{"id": victim.ID, "action": "enable"} }},
		{pattern: "PUT /api/option/{$}", url: "/api/option/", as: policy.Root, write: true,
			fields: map[string]kind{"key": kString, "value": kString},
			base:   func() map[string]any { return map[string]any{"key": "Notice", "value": unique("hello")} }},
		{pattern: "POST /api/user/amount", url: "/api/user/amount", as: policy.User, topUp: true,
			fields: map[string]kind{"amount": kNumber, "top_up_code": kString, "payment_method": kString},
			base:   func() map[string]any { return map[string]any{"amount": 10, "payment_method": "zfb"} }},
		{pattern: "POST /api/user/pay", url: "/api/user/pay", as: policy.User, topUp: true, write: true,
			fields: map[string]kind{"amount": kNumber, "top_up_code": kString, "payment_method": kString},
			base:   func() map[string]any { return map[string]any{"amount": 10, "payment_method": "zfb"} }},

		// Query parameters.
		{pattern: "GET /api/token/{$}", url: "/api/token/", as: policy.User, query: []string{"p", "size"}},
		{pattern: "GET /api/token/search", url: "/api/token/search", as: policy.User, query: []string{"keyword", "token"}},
		{pattern: "GET /api/channel/{$}", url: "/api/channel/", as: policy.Admin, query: []string{"p", "page_size", "id_sort"}},
		{pattern: "GET /api/channel/search", url: "/api/channel/search", as: policy.Admin, query: []string{"keyword", "group", "model", "id_sort"}},
		{pattern: "GET /api/log/{$}", url: "/api/log/", as: policy.Admin, query: logQuery},
		{pattern: "GET /api/log/stat", url: "/api/log/stat", as: policy.Admin, query: logQuery},
		{pattern: "GET /api/log/search", url: "/api/log/search", as: policy.Admin, query: []string{"keyword"}},
		{pattern: "GET /api/log/self", url: "/api/log/self", as: policy.User, query: logQuery},
		{pattern: "GET /api/log/self/stat", url: "/api/log/self/stat", as: policy.User, query: logQuery},
		{pattern: "GET /api/log/self/search", url: "/api/log/self/search", as: policy.User, query: []string{"keyword"}},
		{pattern: "DELETE /api/log/{$}", url: "/api/log/", as: policy.Admin, query: []string{"target_timestamp"}},
		{pattern: "GET /api/data/{$}", url: "/api/data/", as: policy.Admin, query: []string{"start_timestamp", "end_timestamp", "username"}},
		{pattern: "GET /api/data/self", url: "/api/data/self", as: policy.User, query: []string{"start_timestamp", "end_timestamp"}},
		{pattern: "GET /api/user/{$}", url: "/api/user/", as: policy.Admin, query: []string{"p"}},
		{pattern: "GET /api/user/search", url: "/api/user/search", as: policy.Admin, query: []string{"keyword", "group"}},
		{pattern: "GET /api/redemption/{$}", url: "/api/redemption/", as: policy.Admin, query: []string{"p"}},
		{pattern: "GET /api/redemption/search", url: "/api/redemption/search", as: policy.Admin, query: []string{"keyword"}},
		{pattern: "GET /api/topup/{$}", url: "/api/topup/", as: policy.Root, query: []string{"p"}},
		{pattern: "GET /api/user/models", url: "/api/user/models", as: policy.User, query: []string{"group"}},
		{pattern: "GET /api/oauth/state", url: "/api/oauth/state", as: policy.Guest, query: []string{"aff"}},
		{pattern: "GET /api/oauth/email/bind", url: "/api/oauth/email/bind", as: policy.User, query: []string{"email", "code"}},
		{pattern: "GET /api/verification", url: "/api/verification", as: policy.Guest, query: []string{"email"}},
		{pattern: "GET /api/reset_password", url: "/api/reset_password", as: policy.Guest, query: []string{"email"}},
		{pattern: "GET /api/channel/test/{id}", url: "/api/channel/test/" + id(chs[1].ID), as: policy.Admin, query: []string{"model"}, write: true},

		// Path ids.
		{pattern: "GET /api/token/{id}", url: "/api/token/%s", as: policy.User},
		{pattern: "DELETE /api/token/{id}", url: "/api/token/%s", as: policy.User},
		{pattern: "DELETE /api/token/{id}/", url: "/api/token/%s/", as: policy.User},
		{pattern: "GET /api/channel/{id}", url: "/api/channel/%s", as: policy.Admin},
		{pattern: "DELETE /api/channel/{id}", url: "/api/channel/%s", as: policy.Admin},
		{pattern: "DELETE /api/channel/{id}/", url: "/api/channel/%s/", as: policy.Admin},
		{pattern: "POST /api/channel/copy/{id}", url: "/api/channel/copy/%s", as: policy.Admin},
		{pattern: "GET /api/channel/test/{id}", url: "/api/channel/test/%s", as: policy.Admin, write: true},
		{pattern: "GET /api/channel/update_balance/{id}", url: "/api/channel/update_balance/%s", as: policy.Admin, write: true},
		{pattern: "GET /api/channel/update_balance/{id}/", url: "/api/channel/update_balance/%s/", as: policy.Admin, write: true},
		{pattern: "GET /api/channel/fetch_models/{id}", url: "/api/channel/fetch_models/%s", as: policy.Admin},
		{pattern: "GET /api/redemption/{id}", url: "/api/redemption/%s", as: policy.Admin},
		{pattern: "DELETE /api/redemption/{id}", url: "/api/redemption/%s", as: policy.Admin},
		{pattern: "DELETE /api/redemption/{id}/", url: "/api/redemption/%s/", as: policy.Admin},
		{pattern: "GET /api/user/{id}", url: "/api/user/%s", as: policy.Admin},
		{pattern: "DELETE /api/user/{id}", url: "/api/user/%s", as: policy.Admin},
	}
}

func TestBadInputOnEveryConsoleRoute(t *testing.T) {
	catcher := &errorCatcher{}
	prev := slog.Default()
	slog.SetDefault(slog.New(catcher))
	t.Cleanup(func() { slog.SetDefault(prev) })

	e := newBadEnv(t)
	// Online top-up is configured, so that its routes judge their input.
	if err := e.store.UpdateOptions([]store.Option{{Key: "PayAddress", Value: "https://pay.example.com"}, {Key: "EpayId", Value: "1000"},
		{Key: "EpayKey", Value: "epay-key"}, {Key: "ServerAddress", Value: "https://gateway.example.com"}}); err != nil {
		t.Fatal(err)
	}
	routes := e.badRoutes(t)

	// Every route that reads input is in the table.
	covered := map[string]bool{}
	for _, rt := range routes {
		covered[rt.pattern] = true
	}
	for _, r := range e.srv.Routes() {
		p := r.Method + " " + r.Path
		if covered[p] {
			continue
		}
		switch {
		case strings.Contains(r.Path, "{id}") && !covered[p]:
			t.Errorf("route %s takes a path id but is not in the generator's table", p)
		case (r.Method == "POST" || r.Method == "PUT") && !noBodyRoutes[p]:
			t.Errorf("route %s may read a body but is not in the generator's table", p)
		}
	}
	catcher.take()

	for _, rt := range routes {
		method, _, _ := strings.Cut(rt.pattern, " ")
		switch {
		case rt.fields != nil:
			for _, b := range bodiesFor(rt) {
				before := e.snapshot(t)
				r := e.send(method, rt.url, rt.as, b.raw, true)
				e.check(t, rt, b.name, r, before, catcher.take())
			}
		case rt.query != nil:
			for _, q := range rt.query {
				for _, n := range sortedKeys(badQueryValues) {
					v := badQueryValues[n]
					var before map[string][32]byte
					if method != http.MethodGet || rt.write {
						before = e.snapshot(t)
					}
					url := rt.url + "?" + q + "=" + v
					if strings.Contains(rt.url, "?") {
						url = rt.url + "&" + q + "=" + v
					}
					r := e.send(method, url, rt.as, nil, false)
					e.check(t, rt, q+"="+n, r, before, catcher.take())
				}
			}
		default:
			for _, n := range sortedKeys(badIDs) {
				v := badIDs[n]
				var before map[string][32]byte
				if method != http.MethodGet || rt.write {
					before = e.snapshot(t)
				}
				r := e.send(method, fmt.Sprintf(rt.url, v), rt.as, nil, false)
				e.check(t, rt, "id="+n, r, before, catcher.take())
			}
		}
	}

	// Whatever was accepted, every log entry written reaches the indexes:
	// a name no index key can hold stops the background indexer for good.
	deadline := time.Now().Add(3 * time.Second)
	for unindexedLogs(t, e.store) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d log entries never reached the indexes", unindexedLogs(t, e.store))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// noBodyRoutes take no input: a body is ignored.
var noBodyRoutes = map[string]bool{
	"POST /api/user/logout":             true,
	"POST /api/channel/fix":             true,
	"POST /api/option/rest_model_ratio": true,
	"POST /api/user/epay/notify":        true, // a form, checked by its signature
	"POST /pg/chat/completions":         true, // the relay's, OpenAI's error shape
}
