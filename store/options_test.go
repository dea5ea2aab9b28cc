package store_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/text/width"

	"gateway/store"
)

// secretOptions are the keys S §4.1 marks as secret: never listed to a client.
var secretOptions = []string{
	"SMTPToken", "WorkerValidKey", "EpayKey", "GitHubClientSecret", "LinuxDOClientSecret",
	"TelegramBotToken", "WeChatServerToken", "TurnstileSecretKey",
}

func TestOptionDefaults(t *testing.T) {
	t.Parallel()
	set := MustOpenStore(t).Settings()
	// S §4.1 and A §9.
	for key, want := range map[string]string{
		"PasswordLoginEnabled":           "true",
		"PasswordRegisterEnabled":        "true",
		"RegisterEnabled":                "true",
		"EmailVerificationEnabled":       "false",
		"GitHubOAuthEnabled":             "false",
		"LinuxDOOAuthEnabled":            "false",
		"WeChatAuthEnabled":              "false",
		"TelegramOAuthEnabled":           "false",
		"TurnstileCheckEnabled":          "false",
		"EmailDomainRestrictionEnabled":  "false",
		"EmailAliasRestrictionEnabled":   "false",
		"EmailDomainWhitelist":           "gmail.com,163.com,126.com,qq.com,outlook.com,hotmail.com,icloud.com,yahoo.com,foxmail.com",
		"SMTPServer":                     "",
		"SMTPPort":                       "587",
		"SMTPSSLEnabled":                 "false",
		"SystemName":                     "New API",
		"Notice":                         "",
		"ServerAddress":                  "",
		"Price":                          "7.3",
		"MinTopUp":                       "1",
		"TopupGroupRatio":                `{"default":1,"vip":1,"svip":1}`,
		"CompletionRatio":                `{"gpt-4-gizmo-*":2,"gpt-4o-gizmo-*":3,"gpt-4-all":2}`,
		"GroupRatio":                     `{"default":1,"vip":1,"svip":1}`,
		"UserUsableGroups":               `{"default":"默认分组","vip":"vip分组"}`,
		"QuotaForNewUser":                "0",
		"QuotaForInviter":                "0",
		"QuotaForInvitee":                "0",
		"QuotaRemindThreshold":           "1000",
		"PreConsumedQuota":               "500",
		"QuotaPerUnit":                   "500000",
		"DisplayInCurrencyEnabled":       "true",
		"DisplayTokenStatEnabled":        "true",
		"DefaultCollapseSidebar":         "false",
		"RetryTimes":                     "0",
		"DrawingEnabled":                 "true",
		"TaskEnabled":                    "true",
		"DataExportEnabled":              "true",
		"DataExportInterval":             "5",
		"DataExportDefaultTime":          "hour",
		"MjNotifyEnabled":                "false",
		"MjAccountFilterEnabled":         "false",
		"MjModeClearEnabled":             "false",
		"MjForwardUrlEnabled":            "true",
		"MjActionCheckSuccessEnabled":    "true",
		"CheckSensitiveEnabled":          "true",
		"CheckSensitiveOnPromptEnabled":  "true",
		"SensitiveWords":                 "test_sensitive",
		"ChannelDisableThreshold":        "5",
		"AutomaticDisableChannelEnabled": "false",
		"AutomaticEnableChannelEnabled":  "false",
		"LogConsumeEnabled":              "true",
	} {
		if store.OptionDefFor(key) == nil {
			t.Errorf("option %s is not defined", key)
			continue
		}
		if got := set.Get(key); got != want {
			t.Errorf("default %s = %q, want %q", key, got, want)
		}
	}
	if got := set.ServerAddress(); got != "http://localhost:3000" {
		t.Errorf("ServerAddress() before saving = %q", got)
	}
	if len(set.ModelRatio) != len(store.DefaultModelRatio) || set.ModelRatio["gpt-4"] != 15 {
		t.Errorf("ModelRatio has %d entries (gpt-4 = %v), want the %d built-ins", len(set.ModelRatio), set.ModelRatio["gpt-4"], len(store.DefaultModelRatio))
	}
	// Every model the default CompletionRatio names is priced out of the
	// box: a fresh install serves it instead of refusing it unpriced.
	for model := range set.CompletionRatio {
		_, ratio := set.ModelRatio[model]
		_, price := set.ModelPrice[model]
		if !ratio && !price {
			t.Errorf("the default CompletionRatio names %s, which has no default ratio or price", model)
		}
	}
	if len(set.Chats) != 4 {
		t.Errorf("Chats has %d entries, want 4", len(set.Chats))
	}
	if set.QuotaPerUnit() != 500000 || set.Int("PreConsumedQuota") != 500 || !set.Bool("RegisterEnabled") {
		t.Error("typed accessors disagree with the defaults")
	}
	if len(set.SensitiveWords) != 1 || set.SensitiveWords[0] != "test_sensitive" {
		t.Errorf("SensitiveWords = %q", set.SensitiveWords)
	}
	for _, key := range append([]string{"TurnstileSiteKey", "GitHubClientId", "LinuxDOClientId", "TelegramBotName",
		"WeChatServerAddress", "WeChatAccountQRCodeImageURL", "SMTPAccount", "SMTPFrom", "PayAddress", "EpayId",
		"CustomCallbackAddress", "WorkerUrl", "ModelPrice", "ModelRatio", "Chats", "TopUpLink", "ChatLink", "ChatLink2",
		"About", "HomePageContent", "Footer", "Logo"}, secretOptions...) {
		if store.OptionDefFor(key) == nil {
			t.Errorf("option %s is not defined", key)
		}
	}
}

func TestUpdateOption_Refused(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	var changes atomic.Int32
	s.SetHooks(store.Hooks{SettingsChanged: func(*store.Settings) { changes.Add(1) }})

	cases := []struct {
		name, key, value, wantMsg string
	}{
		{"UnknownKey", "NoSuchOption", "1", "未知的配置项"},
		{"EmptyKey", "", "1", "请指定配置项（key）"},
		{"BoolWord", "RegisterEnabled", "yes", "true 或 false"},
		{"BoolCase", "RegisterEnabled", "True", "true 或 false"},
		{"IntWord", "SMTPPort", "abc", "必须是整数"},
		{"IntFraction", "QuotaForNewUser", "1.5", "必须是整数"},
		{"IntBelowMin", "QuotaForNewUser", "-1", "不能小于 0"},
		{"PortBelowMin", "SMTPPort", "0", "不能小于 1"},
		{"IntervalBelowMin", "DataExportInterval", "0", "不能小于 1"},
		{"MinTopUpBelowMin", "MinTopUp", "0", "不能小于 1"},
		{"FloatWord", "Price", "cheap", "必须是数字"},
		{"FloatBelowMin", "QuotaPerUnit", "0", "不能小于 1"},
		{"RatioJSON", "ModelRatio", `{"gpt-4": 15`, "ModelRatio 不是合法的 JSON 字符串"},
		{"RatioNotObject", "GroupRatio", `[1,2]`, "GroupRatio 不是合法的 JSON 字符串"},
		{"RatioString", "CompletionRatio", `{"a":"x"}`, "CompletionRatio 不是合法的 JSON 字符串"},
		{"RatioNegative", "ModelRatio", `{"gpt-4":-1}`, "不能为负数"},
		{"TopupRatioJSON", "TopupGroupRatio", `not json`, "TopupGroupRatio 不是合法的 JSON 字符串"},
		{"LabelsJSON", "UserUsableGroups", `{"default":1}`, "UserUsableGroups 不是合法的 JSON 字符串"},
		{"ChatsNotList", "Chats", `{"a":"b"}`, "Chats 不是合法的 JSON 字符串"},
		// An emptied box, null or text after the value would read as an empty
		// map and unprice every model (S §14.7).
		{"RatioEmpty", "ModelRatio", "  ", "ModelRatio 不是合法的 JSON 字符串"},
		{"RatioNull", "GroupRatio", "null", "GroupRatio 不是合法的 JSON 字符串"},
		{"RatioTrailing", "TopupGroupRatio", `{"default":1}} trailing`, "TopupGroupRatio 不是合法的 JSON 字符串"},
		{"RatioTwoValues", "ModelPrice", `{"a":1} {"b":2}`, "ModelPrice 不是合法的 JSON 字符串"},
		{"LabelsEmpty", "UserUsableGroups", "", "UserUsableGroups 不是合法的 JSON 字符串"},
		{"LabelsNull", "UserUsableGroups", "null", "UserUsableGroups 不是合法的 JSON 字符串"},
		{"ChatsEmpty", "Chats", "", "Chats 不是合法的 JSON 字符串"},
		{"ChatsNull", "Chats", "null", "Chats 不是合法的 JSON 字符串"},
		{"FloatNaN", "Price", "NaN", "Price 的值必须是数字"},
		{"FloatInf", "Price", "+Inf", "Price 的值必须是数字"},
		{"FloatAboveMax", "Price", "1e308", "Price 的值不能大于 1000000"},
		{"PortAboveMax", "SMTPPort", "65536", "SMTPPort 的值不能大于 65535"},
		{"QuotaAboveMax", "QuotaForNewUser", "9223372036854775807", "QuotaForNewUser 的值不能大于 9007199254740992"},
		{"QuotaJustAboveMax", "QuotaForNewUser", "9007199254740993", "QuotaForNewUser 的值不能大于 9007199254740992"},
		{"RetriesAboveMax", "RetryTimes", "1000000", "RetryTimes 的值不能大于 100"},
		{"RatioAboveMax", "TopupGroupRatio", `{"default":1e308}`, "default 的值不能大于 1000000"},
		{"Enum", "DataExportDefaultTime", "month", "hour、day、week"},
		{"NewlineInString", "ServerAddress", "https://a.example\nX: y", "不能包含换行"},
		{"AddressNotAURL", "ServerAddress", "not a url", "ServerAddress 必须是 http 或 https 地址"},
		{"AddressNotHTTP", "PayAddress", "ftp://pay.example", "PayAddress 必须是 http 或 https 地址"},
		{"AddressWithoutHost", "WorkerUrl", "https://", "WorkerUrl 必须是 http 或 https 地址"},
		{"AddressWithSpace", "ServerAddress", "http://x/ /", "ServerAddress 必须是 http 或 https 地址"},
		{"NullRatio", "ModelRatio", `{"gpt-4o":null}`, "ModelRatio 中 gpt-4o 的值不能为 null"},
		{"NullPrice", "ModelPrice", `{"dall-e-3":null}`, "的值不能为 null"},
		{"NullGroupLabel", "UserUsableGroups", `{"vip":null}`, "UserUsableGroups 中 vip 的值不能为 null"},
		{"NullChat", "Chats", `[null]`, "Chats 的每一项都必须是对象"},
		{"RatioNameTooLong", "GroupRatio", `{"` + strings.Repeat("g", 256) + `":1}`, "名称过长（最多 255 字节）"},
		{"RatioNameWithNUL", "ModelRatio", `{"a\u0000b":1}`, "名称不能包含控制字符"},
		{"RatioNameWithSpaceAfter", "ModelRatio", `{"my-model ":1}`, `ModelRatio 中的名称前后不能有空格："my-model "`},
		{"PriceNameWithSpaceBefore", "ModelPrice", `{" my-model":0.01}`, `ModelPrice 中的名称前后不能有空格：" my-model"`},
		{"GroupNameWithTab", "GroupRatio", `{"vip\t":2}`, "GroupRatio 中的名称前后不能有空格"},
		{"GroupNameWithComma", "GroupRatio", `{"default":1,"a,b":3}`, `GroupRatio 中的分组名称不能包含逗号："a,b"`},
		{"UsableGroupWithComma", "UserUsableGroups", `{"vip,svip":"both"}`, "UserUsableGroups 中的分组名称不能包含逗号"},
		{"TopupGroupWithComma", "TopupGroupRatio", `{"a,b":1}`, "TopupGroupRatio 中的分组名称不能包含逗号"},
		{"HexFloat", "Price", "0x1p3", "Price 的值必须是数字"},
		{"SeparatedFloat", "QuotaPerUnit", "1_000", "QuotaPerUnit 的值必须是数字"},
		{"ControlInString", "SystemName", "gate\x00way", "SystemName 不能包含控制字符"},
		{"EgressNotAHost", "EgressAllowedHosts", `{"a":-1}`, "EgressAllowedHosts 中的 {\"a\":-1} 不是合法的主机名、IP 地址或 CIDR"},
		{"EgressControl", "EgressAllowedHosts", "a\x00b", "不是合法的主机名、IP 地址或 CIDR"},
		{"EgressBadCIDR", "EgressAllowedHosts", "10.0.0.0/33", "不是合法的主机名、IP 地址或 CIDR"},
		{"EgressLeadingDot", "EgressAllowedHosts", ".corp.example", "请写作 *.corp.example"},
		{"EgressPortZero", "EgressAllowedHosts", "127.0.0.1:0", "EgressAllowedHosts 中的 127.0.0.1:0 的端口不在 1-65535 之间"},
		{"EgressNamePortTooLarge", "EgressAllowedHosts", "http://up.local:99999/v1", "的端口不在 1-65535 之间"},
		{"EgressOtherScheme", "EgressAllowedHosts", "smtp://mail.lan", "EgressAllowedHosts 中的 smtp://mail.lan 不是 http 或 https 地址"},
	}
	before := s.Settings()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			err := s.UpdateOption(tt.key, tt.value)
			wantCode(t, err, store.EINVALID, tt.wantMsg)
			if got := s.Settings().Get(tt.key); got != before.Get(tt.key) {
				t.Fatalf("live %s changed to %q", tt.key, got)
			}
		})
	}
	if s.Settings() != before {
		t.Fatal("a refused change replaced the live settings")
	}
	if s.Settings().ModelRatio["gpt-4"] != 15 || len(s.Settings().GroupRatio) != 3 {
		t.Fatal("a refused JSON option emptied its live map")
	}

	// All or nothing: one bad pair refuses the whole batch.
	err := s.UpdateOptions([]store.Option{{Key: "Notice", Value: "batched"}, {Key: "SMTPPort", Value: "x"}})
	wantCode(t, err, store.EINVALID, "SMTPPort")
	if got := s.Settings().Get("Notice"); got != "" {
		t.Fatalf("Notice = %q after a refused batch", got)
	}
	if n := changes.Load(); n != 0 {
		t.Fatalf("SettingsChanged ran %d times for refused changes", n)
	}

	// Nothing reached the file either.
	s = MustReopen(t, s)
	for _, tt := range append(cases, struct{ name, key, value, wantMsg string }{key: "Notice"}) {
		if d := store.OptionDefFor(tt.key); d != nil {
			if got := s.Settings().Get(tt.key); got != d.Default {
				t.Errorf("after reopen %s = %q, want the default", tt.key, got)
			}
		}
	}
	if s.Settings().ModelRatio["gpt-4"] != 15 {
		t.Error("ModelRatio lost after reopen")
	}
}

func TestUpdateOption_Saved(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	var notified atomic.Pointer[store.Settings]
	s.SetHooks(store.Hooks{SettingsChanged: func(set *store.Settings) { notified.Store(set) }})

	for _, tt := range []struct{ key, value, want string }{
		{"ServerAddress", "https://gw.example.com///", "https://gw.example.com"},
		{"WorkerUrl", " https://worker.example.com/ ", "https://worker.example.com"},
		{"PayAddress", "https://pay.example.com/", "https://pay.example.com"},
		{"WeChatServerAddress", "https://wx.example.com/", "https://wx.example.com"},
		{"SMTPPort", " 465 ", "465"},
		{"QuotaForNewUser", "0", "0"},
		{"Price", "8.5", "8.5"},
		{"EmailDomainWhitelist", " a.com, ,b.com ,", "a.com,b.com"},
		{"ModelRatio", `{"my-model":2.5}`, `{"my-model":2.5}`},
		{"Chats", `[{"Web":"https://chat.example.com/?key={key}"}]`, `[{"Web":"https://chat.example.com/?key={key}"}]`},
		{"Notice", "line one\nline two", "line one\nline two"},
		{"RegisterEnabled", "false", "false"},
		{"DataExportDefaultTime", "week", "week"},
		{"RetryTimes", "+3", "3"},
		{"QuotaForNewUser", "-0", "0"},
		{"Price", "1e1", "1e1"},
		{"Price", ".5", ".5"},
		{"EgressAllowedHosts", " 10.0.0.0/8, 127.0.0.1:9100 ,[::1]:8080,*.corp.example,http://up.local:8080/v1,::1,ollama.lan:11434/v1", "10.0.0.0/8,127.0.0.1:9100,[::1]:8080,*.corp.example,http://up.local:8080/v1,::1,ollama.lan:11434/v1"},
	} {
		if err := s.UpdateOption(tt.key, tt.value); err != nil {
			t.Fatalf("UpdateOption(%s, %q): %v", tt.key, tt.value, err)
		}
		if got := s.Settings().Get(tt.key); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.key, got, tt.want)
		}
	}
	if notified.Load() != s.Settings() {
		t.Error("SettingsChanged was not called with the new settings")
	}
	check := func(set *store.Settings) {
		t.Helper()
		if set.ServerAddress() != "https://gw.example.com" || set.Bool("RegisterEnabled") || set.Int("SMTPPort") != 465 {
			t.Errorf("settings = server %q register %v port %d", set.ServerAddress(), set.Bool("RegisterEnabled"), set.Int("SMTPPort"))
		}
		if len(set.ModelRatio) != 1 || set.ModelRatio["my-model"] != 2.5 {
			t.Errorf("ModelRatio = %v", set.ModelRatio)
		}
		if len(set.Chats) != 1 || len(set.List("EmailDomainWhitelist")) != 2 {
			t.Errorf("Chats = %v, whitelist = %v", set.Chats, set.List("EmailDomainWhitelist"))
		}
	}
	check(s.Settings())
	s = MustReopen(t, s)
	check(s.Settings())
}

func TestUpdateOption_EnablePrechecks(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ enable, requires, value, other string }{
		{"GitHubOAuthEnabled", "GitHubClientId", "client-id", ""},
		{"LinuxDOOAuthEnabled", "LinuxDOClientId", "client-id", ""},
		{"WeChatAuthEnabled", "WeChatServerAddress", "https://wx.example.com", ""},
		// Turnstile needs both keys: without the secret every check fails,
		// login included.
		{"TurnstileCheckEnabled", "TurnstileSiteKey", "site-key", "TurnstileSecretKey"},
		{"TurnstileCheckEnabled", "TurnstileSecretKey", "secret-key", "TurnstileSiteKey"},
		{"EmailDomainRestrictionEnabled", "EmailDomainWhitelist", "example.com", ""},
		// Without a mail server no code can be sent: registration would be closed.
		{"EmailVerificationEnabled", "SMTPServer", "smtp.example.com", ""},
	} {
		t.Run(tt.requires, func(t *testing.T) {
			t.Parallel()
			s := MustOpenStore(t)
			if tt.other != "" {
				if err := s.UpdateOption(tt.other, "set"); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.UpdateOption(tt.requires, " "); err != nil {
				t.Fatal(err)
			}
			wantCode(t, s.UpdateOption(tt.enable, "true"), store.EINVALID, tt.requires)
			if s.Settings().Bool(tt.enable) {
				t.Fatal("enabled without its prerequisite")
			}
			if err := s.UpdateOption(tt.enable, "false"); err != nil {
				t.Fatalf("disabling is always allowed: %v", err)
			}
			if err := s.UpdateOption(tt.requires, tt.value); err != nil {
				t.Fatal(err)
			}
			if err := s.UpdateOption(tt.enable, "true"); err != nil {
				t.Fatalf("enable after the prerequisite: %v", err)
			}
			if !s.Settings().Bool(tt.enable) {
				t.Fatal("not enabled")
			}
			// While enabled, its prerequisite cannot be cleared...
			wantCode(t, s.UpdateOption(tt.requires, ""), store.EINVALID, tt.enable)
			if got := s.Settings().Get(tt.requires); got != tt.value {
				t.Fatalf("%s = %q after a refused clear", tt.requires, got)
			}
			// ...but it can be changed, or cleared together with disabling.
			if err := s.UpdateOption(tt.requires, tt.value+"2"); err != nil {
				t.Fatalf("change the prerequisite: %v", err)
			}
			if err := s.UpdateOptions([]store.Option{{Key: tt.enable, Value: "false"}, {Key: tt.requires, Value: ""}}); err != nil {
				t.Fatalf("disable and clear together: %v", err)
			}
		})
	}
	t.Run("OneBatch", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		// The check sees the final state of the whole change.
		if err := s.UpdateOptions([]store.Option{{Key: "GitHubOAuthEnabled", Value: "true"}, {Key: "GitHubClientId", Value: "id"}}); err != nil {
			t.Fatal(err)
		}
		if !s.Settings().Bool("GitHubOAuthEnabled") {
			t.Fatal("not enabled")
		}
	})
}

func TestOptions_SecretsHidden(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	var opts []store.Option
	for _, key := range secretOptions {
		opts = append(opts, store.Option{Key: key, Value: "s3cret-" + key})
	}
	if err := s.UpdateOptions(opts); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, o := range s.Settings().Options() {
		listed[o.Key] = true
		if strings.Contains(o.Value, "s3cret-") {
			t.Errorf("option %s lists a secret value %q", o.Key, o.Value)
		}
	}
	for _, key := range secretOptions {
		if listed[key] {
			t.Errorf("secret option %s is listed", key)
		}
		if got := s.Settings().Get(key); got != "s3cret-"+key {
			t.Errorf("secret %s = %q; the server itself still needs it", key, got)
		}
	}
	// Everything that is not secret is listed, in definition order.
	var want []string
	for _, d := range store.OptionDefs {
		if !d.Secret {
			want = append(want, d.Key)
		}
	}
	got := s.Settings().Options()
	if len(got) != len(want) {
		t.Fatalf("Options() lists %d keys, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Key != want[i] {
			t.Fatalf("Options()[%d] = %s, want %s", i, got[i].Key, want[i])
		}
	}
	if !listed["TurnstileSiteKey"] || !listed["GitHubClientId"] || !listed["SystemName"] {
		t.Error("public keys missing from Options()")
	}
}

// An address option is a base that paths are appended to ({PayAddress}/submit.php,
// {ServerAddress}/topup, {WeChatServerAddress}/api/wechat/user): a query or
// fragment would swallow the appended path, and credentials would be handed
// to every visitor in GET /api/status. Refused, and nothing changes.
func TestUpdateOption_AddressWithQueryOrFragmentRefused(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	for _, tt := range []struct{ key, value string }{
		{"PayAddress", "https://pay.example#x"},
		{"PayAddress", "https://pay.example/?a=1"},
		{"ServerAddress", "https://gw.example/?x"},
		{"ServerAddress", "https://user:pw@gw.example"},
		{"WeChatServerAddress", "https://wx.example/#"},
		{"CustomCallbackAddress", "https://cb.example?"},
	} {
		err := s.UpdateOption(tt.key, tt.value)
		wantCode(t, err, store.EINVALID, tt.key+" 必须是 http 或 https 地址")
		if got := s.Settings().Get(tt.key); got != "" {
			t.Errorf("%s = %q after a refused save", tt.key, got)
		}
	}
	// A path stays allowed (a gateway behind a prefix).
	if err := s.UpdateOption("ServerAddress", "https://gw.example/api-gw/"); err != nil {
		t.Fatal(err)
	}
	if got := s.Settings().ServerAddress(); got != "https://gw.example/api-gw" {
		t.Fatalf("ServerAddress = %q", got)
	}
}

// A Chats entry whose address is null would be read as an empty link: a
// sidebar entry that opens nothing. docs/options.md: a map member may not be
// null. Refused, and the list is unchanged.
func TestUpdateOption_ChatsNullMemberRefused(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	before := s.Settings().Get("Chats")
	err := s.UpdateOption("Chats", `[{"ChatGPT Next Web":null}]`)
	wantCode(t, err, store.EINVALID, "不能为 null")
	if got := s.Settings().Get("Chats"); got != before {
		t.Fatalf("Chats = %q after a refused save", got)
	}
}

// FoldSensitive folds every character the width fold changes, though it
// leaves text without such characters uncopied: each rune, alone and in a
// sentence, folds as width.Fold folds it.
func TestFoldSensitiveEveryRune(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		s := "Ab " + string(r) + " 中"
		if got, want := store.FoldSensitive(s), width.Fold.String(strings.ToLower(s)); got != want {
			t.Fatalf("FoldSensitive(%q) = %q, want %q", s, got, want)
		}
	}
}
