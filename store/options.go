package store

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"

	json "github.com/goccy/go-json"
	"github.com/goccy/go-json/jsontext"
	jsonv2 "github.com/goccy/go-json/v2"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/text/width"
)

// OptionKind says how an option value is validated and parsed.
type OptionKind int

// Option kinds.
const (
	KindString   OptionKind = iota // free text, one line
	KindText                       // free text, several lines
	KindBool                       // "true" or "false"
	KindInt                        // integer with an optional minimum
	KindFloat                      // decimal with an optional minimum
	KindRatioMap                   // JSON object of name -> number
	KindLabelMap                   // JSON object of name -> string
	KindChats                      // JSON array of {name: url-template}
	KindEnum                       // one of Enum
	KindList                       // comma-separated list
)

// OptionDef describes one option key.
type OptionDef struct {
	Key       string
	Default   string
	Kind      OptionKind
	Secret    bool     // never sent to a client
	Min       float64  // for KindInt and KindFloat
	HasMin    bool     // Min applies
	Max       float64  // for KindInt and KindFloat: the largest value (every number has one)
	TrimSlash bool     // trailing slashes are stripped
	Enum      []string // for KindEnum
	Requires  string   // enabling (value "true") needs this option non-empty
	// AlsoRequires is a second such option: TurnstileCheckEnabled without
	// the secret key would fail every check, login included, and lock
	// everyone out (S §4.2 asks for the site key only).
	AlsoRequires string
	// Check, when set, validates each entry of a KindList option.
	Check func(entry string) error
}

// OptionDefs lists every option with its default. The order is the order
// GET /api/option/ returns them in.
var OptionDefs = []OptionDef{
	// Login and registration.
	{Key: "PasswordLoginEnabled", Default: "true", Kind: KindBool},
	{Key: "PasswordRegisterEnabled", Default: "true", Kind: KindBool},
	{Key: "RegisterEnabled", Default: "true", Kind: KindBool},
	{Key: "EmailVerificationEnabled", Default: "false", Kind: KindBool, Requires: "SMTPServer"},
	{Key: "GitHubOAuthEnabled", Default: "false", Kind: KindBool, Requires: "GitHubClientId"},
	{Key: "LinuxDOOAuthEnabled", Default: "false", Kind: KindBool, Requires: "LinuxDOClientId"},
	{Key: "WeChatAuthEnabled", Default: "false", Kind: KindBool, Requires: "WeChatServerAddress"},
	{Key: "TelegramOAuthEnabled", Default: "false", Kind: KindBool, Requires: "TelegramBotToken"},
	{Key: "TurnstileCheckEnabled", Default: "false", Kind: KindBool, Requires: "TurnstileSiteKey", AlsoRequires: "TurnstileSecretKey"},
	{Key: "EmailDomainRestrictionEnabled", Default: "false", Kind: KindBool, Requires: "EmailDomainWhitelist"},
	{Key: "EmailAliasRestrictionEnabled", Default: "false", Kind: KindBool},
	{Key: "EmailDomainWhitelist", Default: "gmail.com,163.com,126.com,qq.com,outlook.com,hotmail.com,icloud.com,yahoo.com,foxmail.com", Kind: KindList},

	// Server, proxy, provider credentials.
	{Key: "ServerAddress", Default: "", Kind: KindString, TrimSlash: true},
	{Key: "WorkerUrl", Default: "", Kind: KindString, TrimSlash: true},
	{Key: "WorkerValidKey", Default: "", Kind: KindString, Secret: true},
	{Key: "EgressAllowedHosts", Default: "", Kind: KindList, Check: checkEgressEntry},
	{Key: "GitHubClientId", Default: "", Kind: KindString},
	{Key: "GitHubClientSecret", Default: "", Kind: KindString, Secret: true},
	{Key: "LinuxDOClientId", Default: "", Kind: KindString},
	{Key: "LinuxDOClientSecret", Default: "", Kind: KindString, Secret: true},
	{Key: "WeChatServerAddress", Default: "", Kind: KindString, TrimSlash: true},
	{Key: "WeChatServerToken", Default: "", Kind: KindString, Secret: true},
	{Key: "WeChatAccountQRCodeImageURL", Default: "", Kind: KindString},
	{Key: "TelegramBotToken", Default: "", Kind: KindString, Secret: true},
	{Key: "TelegramBotName", Default: "", Kind: KindString},
	{Key: "TurnstileSiteKey", Default: "", Kind: KindString},
	{Key: "TurnstileSecretKey", Default: "", Kind: KindString, Secret: true},

	// Mail.
	{Key: "SMTPServer", Default: "", Kind: KindString},
	{Key: "SMTPPort", Default: "587", Kind: KindInt, Min: 1, HasMin: true, Max: 65535},
	{Key: "SMTPAccount", Default: "", Kind: KindString},
	{Key: "SMTPFrom", Default: "", Kind: KindString},
	{Key: "SMTPToken", Default: "", Kind: KindString, Secret: true},
	{Key: "SMTPSSLEnabled", Default: "false", Kind: KindBool},

	// Payment.
	{Key: "PayAddress", Default: "", Kind: KindString, TrimSlash: true},
	{Key: "EpayId", Default: "", Kind: KindString},
	{Key: "EpayKey", Default: "", Kind: KindString, Secret: true},
	{Key: "CustomCallbackAddress", Default: "", Kind: KindString, TrimSlash: true},
	{Key: "Price", Default: "7.3", Kind: KindFloat, Min: 0, HasMin: true, Max: 1e6},
	{Key: "MinTopUp", Default: "1", Kind: KindInt, Min: 1, HasMin: true, Max: 1e6},
	{Key: "TopupGroupRatio", Default: `{"default":1,"vip":1,"svip":1}`, Kind: KindRatioMap},

	// Pricing.
	{Key: "ModelPrice", Default: defaultModelPriceJSON, Kind: KindRatioMap},
	{Key: "ModelRatio", Default: defaultModelRatioJSON, Kind: KindRatioMap},
	{Key: "CompletionRatio", Default: `{"gpt-4-gizmo-*":2,"gpt-4o-gizmo-*":3,"gpt-4-all":2}`, Kind: KindRatioMap},
	{Key: "GroupRatio", Default: `{"default":1,"vip":1,"svip":1}`, Kind: KindRatioMap},
	{Key: "UserUsableGroups", Default: `{"default":"默认分组","vip":"vip分组"}`, Kind: KindLabelMap},

	// Quota.
	{Key: "QuotaForNewUser", Default: "0", Kind: KindInt, Min: 0, HasMin: true, Max: MaxQuota},
	{Key: "PreConsumedQuota", Default: "500", Kind: KindInt, Min: 0, HasMin: true, Max: MaxQuota},
	{Key: "QuotaForInviter", Default: "0", Kind: KindInt, Min: 0, HasMin: true, Max: MaxQuota},
	{Key: "QuotaForInvitee", Default: "0", Kind: KindInt, Min: 0, HasMin: true, Max: MaxQuota},
	{Key: "QuotaRemindThreshold", Default: "1000", Kind: KindInt, Min: 0, HasMin: true, Max: MaxQuota},
	{Key: "QuotaPerUnit", Default: "500000", Kind: KindFloat, Min: 1, HasMin: true, Max: 1e9},

	// Links and display.
	{Key: "TopUpLink", Default: "", Kind: KindString},
	{Key: "ChatLink", Default: "", Kind: KindString},
	{Key: "ChatLink2", Default: "", Kind: KindString},
	{Key: "Chats", Default: defaultChatsJSON, Kind: KindChats},
	{Key: "DisplayInCurrencyEnabled", Default: "true", Kind: KindBool},
	{Key: "DisplayTokenStatEnabled", Default: "true", Kind: KindBool},
	{Key: "DefaultCollapseSidebar", Default: "false", Kind: KindBool},
	{Key: "RetryTimes", Default: "0", Kind: KindInt, Min: 0, HasMin: true, Max: 100},

	// Features and drawing.
	{Key: "DrawingEnabled", Default: "true", Kind: KindBool},
	{Key: "TaskEnabled", Default: "true", Kind: KindBool},
	{Key: "DataExportEnabled", Default: "true", Kind: KindBool},
	{Key: "DataExportInterval", Default: "5", Kind: KindInt, Min: 1, HasMin: true, Max: 1440},
	{Key: "DataExportDefaultTime", Default: "hour", Kind: KindEnum, Enum: []string{"hour", "day", "week"}},
	{Key: "MjNotifyEnabled", Default: "false", Kind: KindBool},
	{Key: "MjAccountFilterEnabled", Default: "false", Kind: KindBool},
	{Key: "MjForwardUrlEnabled", Default: "true", Kind: KindBool},
	{Key: "MjModeClearEnabled", Default: "false", Kind: KindBool},
	{Key: "MjActionCheckSuccessEnabled", Default: "true", Kind: KindBool},

	// Sensitive words.
	{Key: "CheckSensitiveEnabled", Default: "true", Kind: KindBool},
	{Key: "CheckSensitiveOnPromptEnabled", Default: "true", Kind: KindBool},
	{Key: "SensitiveWords", Default: "test_sensitive", Kind: KindText},
	// Kept for clients that save them; S §4.1: they have no effect.
	{Key: "StopOnSensitiveEnabled", Default: "true", Kind: KindBool},
	{Key: "StreamCacheQueueLength", Default: "0", Kind: KindInt, Min: 0, HasMin: true, Max: 1e6},

	// Logging and monitoring.
	{Key: "LogConsumeEnabled", Default: "true", Kind: KindBool},
	{Key: "ChannelDisableThreshold", Default: "5", Kind: KindFloat, Min: 0, HasMin: true, Max: 1e6},
	{Key: "AutomaticDisableChannelEnabled", Default: "false", Kind: KindBool},
	{Key: "AutomaticEnableChannelEnabled", Default: "false", Kind: KindBool},
	{Key: "ChannelTestInterval", Default: "0", Kind: KindInt, Min: 0, HasMin: true, Max: 525600},
	{Key: "ChannelBalanceInterval", Default: "0", Kind: KindInt, Min: 0, HasMin: true, Max: 525600},

	// Site text.
	{Key: "Notice", Default: "", Kind: KindText},
	{Key: "SystemName", Default: "New API", Kind: KindString},
	{Key: "Logo", Default: "", Kind: KindString},
	{Key: "Footer", Default: "", Kind: KindText},
	{Key: "About", Default: "", Kind: KindText},
	{Key: "HomePageContent", Default: "", Kind: KindText},
}

var optionIndex = func() map[string]*OptionDef {
	m := make(map[string]*OptionDef, len(OptionDefs))
	for i := range OptionDefs {
		m[OptionDefs[i].Key] = &OptionDefs[i]
	}
	return m
}()

// Option is one key/value pair as the API lists it.
type Option struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Settings is an immutable snapshot of every option with its JSON values
// parsed once. A new snapshot replaces the old one on every change, so
// readers never lock.
type Settings struct {
	values          map[string]string
	ModelRatio      map[string]float64
	ModelPrice      map[string]float64
	CompletionRatio map[string]float64
	GroupRatio      map[string]float64
	TopupGroupRatio map[string]float64
	UserUsable      map[string]string
	Chats           []map[string]string
	SensitiveWords  []string
}

type settingsPtr = atomic.Pointer[Settings]

// Get returns the raw value of key.
func (s *Settings) Get(key string) string { return s.values[key] }

// Bool reports whether key is "true".
func (s *Settings) Bool(key string) bool { return s.values[key] == "true" }

// Int returns key as an integer (0 when unparsable).
func (s *Settings) Int(key string) int64 {
	v, err := strconv.ParseInt(s.values[key], 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s.values[key], 64)
		if ferr != nil {
			return 0
		}
		return int64(f)
	}
	return v
}

// Float returns key as a decimal (0 when unparsable).
func (s *Settings) Float(key string) float64 {
	v, _ := strconv.ParseFloat(s.values[key], 64)
	return v
}

// List returns a comma-separated option as trimmed, non-empty items.
func (s *Settings) List(key string) []string { return splitList(s.values[key]) }

// QuotaPerUnit returns the quota that equals one US dollar.
func (s *Settings) QuotaPerUnit() float64 {
	if v := s.Float("QuotaPerUnit"); v > 0 {
		return v
	}
	return 500000
}

// ServerAddress returns ServerAddress, or the local default until one is saved.
func (s *Settings) ServerAddress() string {
	if v := s.values["ServerAddress"]; v != "" {
		return v
	}
	return "http://localhost:3000"
}

// UsableGroups returns group -> label for the groups a user whose own group
// is userGroup may pick: UserUsableGroups plus their own group, limited to
// groups that have a ratio in GroupRatio.
func (s *Settings) UsableGroups(userGroup string) map[string]string {
	out := map[string]string{}
	for g, label := range s.UserUsable {
		if _, ok := s.GroupRatio[g]; ok {
			out[g] = label
		}
	}
	if userGroup != "" {
		if _, ok := out[userGroup]; !ok {
			if _, ok := s.GroupRatio[userGroup]; ok {
				out[userGroup] = "用户分组"
			}
		}
	}
	return out
}

// GroupRatioOf returns the ratio of group; a missing group counts as 1.
func (s *Settings) GroupRatioOf(group string) float64 {
	if r, ok := s.GroupRatio[group]; ok {
		return r
	}
	return 1
}

// Options returns every option, secrets excluded, in definition order.
func (s *Settings) Options() []Option {
	out := make([]Option, 0, len(OptionDefs))
	for _, d := range OptionDefs {
		if d.Secret {
			continue
		}
		out = append(out, Option{Key: d.Key, Value: s.values[d.Key]})
	}
	return out
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Settings returns the current settings snapshot.
func (s *Store) Settings() *Settings { return s.settings.Load() }

func (s *Store) loadSettings() error {
	values := make(map[string]string, len(OptionDefs))
	for _, d := range OptionDefs {
		values[d.Key] = d.Default
	}
	if err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOptions).ForEach(func(k, v []byte) error {
			if _, ok := optionIndex[string(k)]; ok {
				values[string(k)] = string(v)
			}
			return nil
		})
	}); err != nil {
		return err
	}
	set, err := buildSettings(values)
	if err != nil {
		// A stored value that no longer parses falls back to its default
		// rather than leaving the gateway without prices. Only those: the
		// others keep their values, even ones a save would refuse today.
		for _, d := range OptionDefs {
			if perr := parseError(&d, values[d.Key]); perr != nil {
				// Told: the prices (chats, groups) the operator set are
				// gone from the gateway, and would otherwise be taken
				// for the defaults shown.
				slog.Warn("a stored option cannot be read: its default applies until it is saved again", "key", d.Key, "err", perr)
				values[d.Key] = d.Default
			}
		}
		if set, err = buildSettings(values); err != nil {
			return err
		}
	}
	s.settings.Store(set)
	return nil
}

// parseError is why buildSettings cannot read value for d, nil when it can.
func parseError(d *OptionDef, value string) error {
	var err error
	switch d.Kind {
	case KindRatioMap:
		_, err = parseStoredRatioMap(value)
	case KindLabelMap:
		_, err = parseLabelMap(value)
	case KindChats:
		_, err = parseChats(value)
	}
	return err
}

func buildSettings(values map[string]string) (*Settings, error) {
	set := &Settings{values: values}
	var err error
	parse := func(key string, dst *map[string]float64) {
		if err == nil {
			*dst, err = parseStoredRatioMap(values[key])
		}
	}
	parse("ModelRatio", &set.ModelRatio)
	parse("ModelPrice", &set.ModelPrice)
	parse("CompletionRatio", &set.CompletionRatio)
	parse("GroupRatio", &set.GroupRatio)
	parse("TopupGroupRatio", &set.TopupGroupRatio)
	if err != nil {
		return nil, err
	}
	if set.UserUsable, err = parseLabelMap(values["UserUsableGroups"]); err != nil {
		return nil, err
	}
	if set.Chats, err = parseChats(values["Chats"]); err != nil {
		return nil, err
	}
	for _, w := range strings.Split(values["SensitiveWords"], "\n") {
		if w = strings.TrimSpace(w); w != "" {
			set.SensitiveWords = append(set.SensitiveWords, FoldSensitive(w))
		}
	}
	return set, nil
}

// FoldSensitive is the form sensitive words are matched in, for the words
// and the prompt alike: lower case, and full-width letters, digits and
// punctuation (what a Chinese input method types) as their ASCII forms, so
// ＴＥＳＴ_ｓｅｎｓｉｔｉｖｅ is test_sensitive.
func FoldSensitive(s string) string {
	s = strings.ToLower(s)
	// The fold changes only U+3000 and the U+FF00–U+FFEF block, whose UTF-8
	// starts with 0xEF: a prompt without either is matched as it is,
	// without a copy of what may be megabytes.
	if strings.IndexByte(s, 0xEF) < 0 && !strings.Contains(s, "\u3000") {
		return s
	}
	return width.Fold.String(s)
}

// inRange checks a number against the option's bounds.
func (d *OptionDef) inRange(f float64) error {
	if d.HasMin && f < d.Min {
		return Errorf(EINVALID, "%s 的值不能小于 %s", d.Key, strconv.FormatFloat(d.Min, 'f', -1, 64))
	}
	if d.Max > 0 && f > d.Max {
		return Errorf(EINVALID, "%s 的值不能大于 %s", d.Key, strconv.FormatFloat(d.Max, 'f', -1, 64))
	}
	return nil
}

// maxRatio bounds every ratio and price of a ratio map: a million times the
// base price is beyond any model, and far from the float range where
// prices turn infinite.
const maxRatio = 1e6

// parseRatioMap reads a ratio map about to be saved: values from 0 to
// maxRatio.
func parseRatioMap(v string) (map[string]float64, error) {
	m, err := parseStoredRatioMap(v)
	if err != nil {
		return nil, err
	}
	for k, r := range m {
		if r > maxRatio {
			return nil, Errorf(EINVALID, "%s 的值不能大于 1000000", k)
		}
	}
	return m, nil
}

// parseStoredRatioMap reads a stored ratio map. The upper bound is a rule
// of saving only: a file written before it keeps the map it has (a single
// value above the bound must not reset the whole map to the defaults), and
// a price above it is bounded by the relay's maxQuota.
func parseStoredRatioMap(v string) (map[string]float64, error) {
	m := map[string]float64{}
	if strings.TrimSpace(v) == "" {
		return m, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	for k, r := range m {
		if r < 0 {
			return nil, Errorf(EINVALID, "%s 的值不能为负数", k)
		}
	}
	return m, nil
}

func parseLabelMap(v string) (map[string]string, error) {
	m := map[string]string{}
	if strings.TrimSpace(v) == "" {
		return m, nil
	}
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, err
	}
	return m, nil
}

func parseChats(v string) ([]map[string]string, error) {
	var list []map[string]string
	if strings.TrimSpace(v) == "" {
		return list, nil
	}
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return nil, err
	}
	return list, nil
}

// groupOption marks the options whose names are groups.
var groupOption = map[string]bool{"GroupRatio": true, "UserUsableGroups": true, "TopupGroupRatio": true}

// checkJSONMembers refuses, in a JSON option about to be stored, a null
// where a number or text belongs (read as 0 or "" otherwise: a model priced
// at nothing) and names that could not be model or group names.
func checkJSONMembers(d *OptionDef, value string) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(value), &raw); err != nil {
		return Errorf(EINVALID, "%s 不是合法的 JSON 字符串", d.Key)
	}
	names := make([]string, 0, len(raw))
	for k, v := range raw {
		if string(v) == "null" {
			return Errorf(EINVALID, "%s 中 %s 的值不能为 null", d.Key, ClipRunes(k, 32))
		}
		if k != strings.TrimSpace(k) {
			// A call names a model without them: "gpt-4o " would price none.
			return Errorf(EINVALID, "%s 中的名称前后不能有空格：\"%s\"", d.Key, ClipRunes(k, 32))
		}
		if groupOption[d.Key] && strings.Contains(k, ",") {
			// A channel's groups are a comma list: such a group is priced and
			// offered, but no channel can ever serve it.
			return Errorf(EINVALID, "%s 中的分组名称不能包含逗号：\"%s\"", d.Key, ClipRunes(k, 32))
		}
		names = append(names, k)
	}
	return checkNames(d.Key+" 中的", names)
}

// decimalNumber is how a number option is written: plain decimal, as the
// console's form reads it (no hex, no digit separators, no Inf).
var decimalNumber = regexp.MustCompile(`^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$`)

// hostEntry is a host name, optionally "*." for every name under it, with
// an optional port.
var hostEntry = regexp.MustCompile(`^(\*\.)?[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?)*\.?(:\d{1,5})?$`)

// checkEgressEntry accepts what the egress allow list reads: a host name
// ("*.corp.example" for every name under it), an IP address or CIDR
// prefix, with or without a port or a URL around it.
func checkEgressEntry(e string) error {
	host := e
	if i := strings.Index(host, "://"); i >= 0 {
		if scheme := strings.ToLower(host[:i]); scheme != "http" && scheme != "https" {
			return Errorf(EINVALID, "EgressAllowedHosts 中的 %s 不是 http 或 https 地址", ClipRunes(e, 64))
		}
		host = host[i+3:]
		if j := strings.IndexAny(host, "/?#"); j >= 0 {
			host = host[:j]
		}
	}
	if _, err := netip.ParsePrefix(host); err == nil {
		return nil
	}
	if j := strings.IndexAny(host, "/?#"); j >= 0 {
		if _, err := netip.ParseAddr(host[:j]); err == nil {
			// An address and a slash is a prefix, and not a valid one.
			return badEgressEntry(e)
		}
		host = host[:j] // host:port/path without a scheme
	}
	if strings.HasPrefix(host, ".") {
		return Errorf(EINVALID, "EgressAllowedHosts 中的 %s 不是合法的主机名；要放行其下所有子域名，请写作 *%s", ClipRunes(e, 64), ClipRunes(host, 64))
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return nil
	}
	if ap, err := netip.ParseAddrPort(host); err == nil {
		if ap.Port() == 0 {
			return badEgressPort(e)
		}
		return nil
	}
	if hostEntry.MatchString(host) {
		if i := strings.LastIndexByte(host, ':'); i >= 0 {
			if p, err := strconv.Atoi(host[i+1:]); err != nil || p < 1 || p > 65535 {
				return badEgressPort(e)
			}
		}
		return nil
	}
	return badEgressEntry(e)
}

func badEgressPort(e string) error {
	return Errorf(EINVALID, "EgressAllowedHosts 中的 %s 的端口不在 1-65535 之间", ClipRunes(e, 64))
}

func badEgressEntry(e string) error {
	return Errorf(EINVALID, "EgressAllowedHosts 中的 %s 不是合法的主机名、IP 地址或 CIDR", ClipRunes(e, 64))
}

// wholeJSON refuses, for a JSON option, anything but one JSON object (open
// '{') or array (open '['): an empty value, null, or text after the value.
// Any of these would otherwise be read as an empty map, and one save of an
// emptied ModelRatio box would leave every ratio-priced model unpriced
// (S §4.2, §14.7).
func wholeJSON(d *OptionDef, value string, open byte) error {
	v := strings.TrimSpace(value)
	if v == "" || v[0] != open || !json.Valid([]byte(v)) {
		return Errorf(EINVALID, "%s 不是合法的 JSON 字符串", d.Key)
	}
	// A name given twice would be stored as written and read as its last
	// value: {"gpt-4":1,"gpt-4":2} shows one price and charges another.
	var serr *jsontext.SyntacticError
	if err := jsonv2.Unmarshal([]byte(v), new(jsontext.Value)); errors.As(err, &serr) && serr.Err == jsontext.ErrDuplicateName {
		name := strings.NewReplacer("~1", "/", "~0", "~").Replace(strings.TrimPrefix(string(serr.JSONPointer), "/"))
		return Errorf(EINVALID, "%s 中的 %s 出现了不止一次", d.Key, ClipRunes(name, 64))
	}
	return nil
}

// normalizeOption validates value for d and returns the value to store.
func normalizeOption(d *OptionDef, value string) (string, error) {
	switch d.Kind {
	case KindBool:
		if value != "true" && value != "false" {
			return "", Errorf(EINVALID, "%s 的值必须是 true 或 false", d.Key)
		}
	case KindInt:
		value = strings.TrimSpace(value)
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return "", Errorf(EINVALID, "%s 的值必须是整数", d.Key)
		}
		value = strconv.FormatInt(n, 10) // "+5" and "-0" are kept as 5 and 0
		if err := d.inRange(float64(n)); err != nil {
			return "", err
		}
		// Compared again as integers: 2^53+1 reads as 2^53 in a float.
		if d.Max > 0 && n > int64(d.Max) {
			return "", Errorf(EINVALID, "%s 的值不能大于 %s", d.Key, strconv.FormatFloat(d.Max, 'f', -1, 64))
		}
	case KindFloat:
		value = strings.TrimSpace(value)
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || !decimalNumber.MatchString(value) {
			return "", Errorf(EINVALID, "%s 的值必须是数字", d.Key)
		}
		if err := d.inRange(f); err != nil {
			return "", err
		}
	case KindRatioMap:
		if err := wholeJSON(d, value, '{'); err != nil {
			return "", err
		}
		if _, err := parseRatioMap(value); err != nil {
			if e, ok := err.(*Error); ok {
				return "", e
			}
			return "", Errorf(EINVALID, "%s 不是合法的 JSON 字符串", d.Key)
		}
		if err := checkJSONMembers(d, value); err != nil {
			return "", err
		}
	case KindLabelMap:
		if err := wholeJSON(d, value, '{'); err != nil {
			return "", err
		}
		if _, err := parseLabelMap(value); err != nil {
			return "", Errorf(EINVALID, "%s 不是合法的 JSON 字符串", d.Key)
		}
		if err := checkJSONMembers(d, value); err != nil {
			return "", err
		}
	case KindChats:
		if err := wholeJSON(d, value, '['); err != nil {
			return "", err
		}
		list, err := parseChats(value)
		if err != nil {
			return "", Errorf(EINVALID, "%s 不是合法的 JSON 字符串", d.Key)
		}
		for _, c := range list {
			if c == nil {
				return "", Errorf(EINVALID, "%s 的每一项都必须是对象", d.Key)
			}
		}
		// A null address would be read as an empty link.
		var raw []map[string]json.RawMessage
		if err := json.Unmarshal([]byte(value), &raw); err != nil {
			return "", Errorf(EINVALID, "%s 不是合法的 JSON 字符串", d.Key)
		}
		for _, c := range raw {
			for k, v := range c {
				if string(v) == "null" {
					return "", Errorf(EINVALID, "%s 中 %s 的值不能为 null", d.Key, ClipRunes(k, 32))
				}
			}
		}
	case KindEnum:
		ok := false
		for _, e := range d.Enum {
			ok = ok || e == value
		}
		if !ok {
			return "", Errorf(EINVALID, "%s 的值必须是 %s 之一", d.Key, strings.Join(d.Enum, "、"))
		}
	case KindList:
		list := splitList(value)
		for _, e := range list {
			if d.Check != nil {
				if err := d.Check(e); err != nil {
					return "", err
				}
			} else if hasControl(e) {
				return "", Errorf(EINVALID, "%s 不能包含控制字符", d.Key)
			}
		}
		value = strings.Join(list, ",")
	case KindString:
		if strings.ContainsAny(value, "\r\n") {
			return "", Errorf(EINVALID, "%s 不能包含换行", d.Key)
		}
		if hasControl(value) {
			return "", Errorf(EINVALID, "%s 不能包含控制字符", d.Key)
		}
		value = strings.TrimSpace(value)
	}
	if d.TrimSlash {
		// The options whose trailing slash goes are addresses that links,
		// callbacks and requests are built from.
		value = strings.TrimRight(value, "/")
		if value != "" {
			u, err := url.Parse(value)
			// A base that paths are appended to: a query or fragment would
			// swallow them, and credentials would be public in /api/status.
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsFunc(value, unicode.IsSpace) ||
				strings.ContainsAny(value, "?#") || u.User != nil {
				return "", Errorf(EINVALID, "%s 必须是 http 或 https 地址", d.Key)
			}
		}
	}
	return value, nil
}

// UpdateOption validates and stores one option, then swaps the live settings.
// A value that does not validate never reaches the file or the live settings.
// Errors: EINVALID (unknown key, bad value, missing prerequisite).
func (s *Store) UpdateOption(key, value string) error {
	return s.UpdateOptions([]Option{{Key: key, Value: value}})
}

// UpdateOptions validates every pair, then stores them all in one transaction
// and swaps the live settings: all or nothing.
// Errors: EINVALID.
func (s *Store) UpdateOptions(opts []Option) error {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	cur := s.settings.Load()
	values := make(map[string]string, len(cur.values))
	for k, v := range cur.values {
		values[k] = v
	}
	for _, o := range opts {
		d := optionIndex[o.Key]
		if strings.TrimSpace(o.Key) == "" {
			return Errorf(EINVALID, "请指定配置项（key）")
		}
		if d == nil {
			return Errorf(EINVALID, "未知的配置项：%s", o.Key)
		}
		v, err := normalizeOption(d, o.Value)
		if err != nil {
			return err
		}
		values[o.Key] = v
	}
	// Enable pre-checks see the final state of the whole change. They also
	// hold the other way round: clearing the prerequisite of an enabled
	// option (the Turnstile site key, the e-mail whitelist) would lock
	// everyone out of login or registration.
	for _, o := range opts {
		d := optionIndex[o.Key]
		for _, req := range []string{d.Requires, d.AlsoRequires} {
			if req != "" && values[o.Key] == "true" && strings.TrimSpace(values[req]) == "" {
				return Errorf(EINVALID, "无法启用 %s，请先填入 %s", o.Key, req)
			}
		}
		for i := range OptionDefs {
			dep := &OptionDefs[i]
			if (dep.Requires == o.Key || dep.AlsoRequires == o.Key) && values[dep.Key] == "true" && strings.TrimSpace(values[o.Key]) == "" {
				return Errorf(EINVALID, "无法清空 %s，请先关闭 %s", o.Key, dep.Key)
			}
		}
	}
	set, err := buildSettings(values)
	if err != nil {
		return Errorf(EINVALID, "配置不是合法的 JSON 字符串")
	}
	if err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketOptions)
		for _, o := range opts {
			if err := b.Put([]byte(o.Key), []byte(values[o.Key])); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return Internal(err)
	}
	s.settings.Store(set)
	if s.hooks.SettingsChanged != nil {
		s.hooks.SettingsChanged(set)
	}
	return nil
}
