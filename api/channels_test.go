package api_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	bolt "go.etcd.io/bbolt"

	"gateway/store"
)

// channelOut is a channel as the API shows it; Key must always stay empty.
type channelOut struct {
	store.Channel
}

type channelFixture struct {
	*consoleEnv
	adminTok, userTok string
}

func newChannelFixture(t *testing.T) *channelFixture {
	t.Helper()
	f := &channelFixture{consoleEnv: newConsoleEnv(t)}
	_, f.adminTok = f.mustUser("chadmin", store.RoleAdmin)
	_, f.userTok = f.mustUser("chuser", store.RoleCommon)
	return f
}

// create posts a channel and returns the created channels.
func (f *channelFixture) create(body map[string]any) []channelOut {
	f.tb.Helper()
	r := f.mustOK("POST", "/api/channel/", f.adminTok, body)
	if r.Message != "渠道创建成功！" {
		f.tb.Fatalf("create message %q", r.Message)
	}
	// Test keys carry the word "secret"; no answer may contain it.
	if strings.Contains(r.Raw, "secret") || strings.Contains(r.Raw, `"key"`) {
		f.tb.Fatalf("create answer shows the key: %s", r.Raw)
	}
	return decodeData[[]channelOut](f.tb, r)
}

// stored reads a channel straight from the store, key included.
func (f *channelFixture) stored(id uint64) *store.Channel {
	f.tb.Helper()
	c, err := f.store.Channel(id)
	if err != nil {
		f.tb.Fatalf("channel %d: %v", id, err)
	}
	return c
}

// abilitiesOf returns the ability rows of channel id.
func (f *channelFixture) abilitiesOf(id uint64) []store.Ability {
	f.tb.Helper()
	all, err := f.store.Abilities()
	if err != nil {
		f.tb.Fatal(err)
	}
	var out []store.Ability
	for _, a := range all {
		if a.ChannelID == id {
			out = append(out, a)
		}
	}
	return out
}

func TestChannelCreate(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)

	// Three key lines make three channels with the same name.
	chs := f.create(map[string]any{"name": "multi", "type": 1, "key": "secret-line-1\n\n  secret-line-2\r\nsecret-line-3\n",
		"models": "gpt-4o,gpt-4o-mini", "base_url": "https://api.example.com/", "weight": -5})
	if len(chs) != 3 {
		t.Fatalf("created %d channels, want 3", len(chs))
	}
	for i, c := range chs {
		s := f.stored(c.ID)
		if s.Name != "multi" || s.Key != fmt.Sprintf("secret-line-%d", i+1) || s.BaseURL != "https://api.example.com" ||
			s.Weight != 0 || s.Status != store.ChannelStatusEnabled || s.AutoBan != 1 || s.Group != "default" {
			t.Fatalf("channel %d: %+v", i, s)
		}
		if len(f.abilitiesOf(c.ID)) != 2 {
			t.Fatalf("channel %d abilities: %v", i, f.abilitiesOf(c.ID))
		}
	}

	// Vertex AI keys are one JSON document and are not split.
	vertexKey := "{\n  \"type\": \"service_account\",\n  \"private_key\": \"vertex-secret\"\n}"
	chs = f.create(map[string]any{"name": "vertex", "type": 41, "key": vertexKey, "other": "us-central1", "models": []string{"gemini-1.5-pro"}})
	if len(chs) != 1 || f.stored(chs[0].ID).Key != vertexKey {
		t.Fatalf("vertex: %d channels", len(chs))
	}

	// Type defaults for other; models and group may come as lists.
	chs = f.create(map[string]any{"name": "azure", "type": 3, "key": "azure-secret", "models": []string{"gpt-4o"}, "group": []string{"default", "vip"}})
	if s := f.stored(chs[0].ID); s.Other != "2023-06-01-preview" || s.Group != "default,vip" || len(f.abilitiesOf(s.ID)) != 2 {
		t.Fatalf("azure: %+v", s)
	}
	chs = f.create(map[string]any{"name": "spark", "type": 18, "key": "a|b|c", "models": "SparkDesk", "auto_ban": 0, "priority": -999})
	if s := f.stored(chs[0].ID); s.Other != "v2.1" || s.AutoBan != 0 || s.Priority != -999 {
		t.Fatalf("spark: %+v", s)
	}

	before, _ := f.store.Channels()
	f.run(t, []consoleScenario{
		{name: "no key", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": " \n ", "models": "m"}, wantStatus: 400, wantContains: []string{"请填写渠道名称和渠道密钥！"}},
		{name: "no name", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"type": 1, "key": "k", "models": "m"}, wantStatus: 400, wantContains: []string{"请填写渠道名称和渠道密钥！"}},
		{name: "no models", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": " , "}, wantStatus: 400, wantContains: []string{"请至少选择一个模型！"}},
		{name: "priority below -999", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "priority": -1000}, wantStatus: 400},
		{name: "bad model mapping", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "model_mapping": "{"}, wantStatus: 400, wantContains: []string{"模型映射必须是合法的 JSON 格式！"}},
		{name: "vertex without region", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 41, "key": "{}", "models": "m"}, wantStatus: 400},
		{name: "one bad line fails all", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 0, "key": "k1\nk2", "models": "m"}, wantStatus: 400},
		{name: "vertex region without a default", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 41, "key": "{}", "models": "m", "other": `{"default":" "}`}, wantStatus: 400, wantContains: []string{"部署地区必须是地区名称，或包含 default 的合法 JSON！"}},
		{name: "vertex key not JSON", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 41, "key": "not-json", "models": "m", "other": "us-central1"}, wantStatus: 400, wantContains: []string{"鉴权 JSON 必须是合法的 JSON 格式！"}},
		{name: "weight above the limit", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "weight": 9000000000000000000}, wantStatus: 400, wantContains: []string{"权重不能大于 1000000"}},
		{name: "unknown status", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "status": 7}, wantStatus: 400, wantContains: []string{"无效的渠道状态"}},
		{name: "control character in the name", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x\a", "type": 1, "key": "k", "models": "m"}, wantStatus: 400, wantContains: []string{"渠道名称不能包含控制字符"}},
		{name: "unknown type", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 999, "key": "k", "models": "m"}, wantStatus: 400, wantContains: []string{"无效的渠道类型"}},
		{name: "auto_ban neither 0 nor 1", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "auto_ban": 7}, wantStatus: 400, wantContains: []string{"自动禁用只能是 0 或 1"}},
		{name: "base URL not http", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "base_url": "ftp://x"}, wantStatus: 400, wantContains: []string{"代理（Base URL）必须是 http 或 https 地址"}},
		{name: "base URL not a URL", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "base_url": "not a url"}, wantStatus: 400, wantContains: []string{"代理（Base URL）必须是 http 或 https 地址"}},
		{name: "status mapping to a non-status", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "status_code_mapping": `{"400":"abc"}`}, wantStatus: 400, wantContains: []string{"状态码复写的键和值必须是 100 到 599 之间的状态码"}},
		{name: "status mapping from a non-status", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "status_code_mapping": `{"abc":"500"}`}, wantStatus: 400, wantContains: []string{"状态码复写的键和值必须是 100 到 599 之间的状态码"}},
		{name: "status mapping to a number", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "status_code_mapping": `{"429": 500}`}, wantStatus: 400, wantContains: []string{"状态码复写的键和值必须是 100 到 599 之间的状态码"}},
		{name: "model mapping to a number", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "model_mapping": `{"gpt-4": 4}`}, wantStatus: 400, wantContains: []string{"模型映射的值必须是字符串（上游的模型名称）"}},
		{name: "model mapping naming a model twice", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "model_mapping": `{"gpt-4":"a","gpt-4":"b"}`}, wantStatus: 400, wantContains: []string{"模型映射中模型 gpt-4 出现了不止一次"}},
		{name: "status mapping repeating a key", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "status_code_mapping": `{"429":"500","429":"400"}`}, wantStatus: 400, wantContains: []string{"状态码复写中状态码 429 出现了不止一次"}},
		{name: "status mapping naming a code twice", method: "POST", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x", "type": 1, "key": "k", "models": "m", "status_code_mapping": `{"429":"500"," 429":"400"}`}, wantStatus: 400, wantContains: []string{"状态码复写中状态码 429 出现了不止一次"}},
	})
	after, _ := f.store.Channels()
	if len(after) != len(before) {
		t.Fatalf("refused creates wrote channels: %d -> %d", len(before), len(after))
	}
}

func TestChannelReadsHideKey(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	low := f.create(map[string]any{"name": "low", "type": 1, "key": "secret-low", "models": "gpt-4o", "priority": 0})[0]
	high := f.create(map[string]any{"name": "high", "type": 1, "key": "secret-high", "models": "claude-3", "group": "vip", "priority": 10})[0]
	mid := f.create(map[string]any{"name": "mid", "type": 1, "key": "secret-mid", "models": "gpt-4o-mini", "priority": 5})[0]
	secrets := []string{"secret-low", "secret-high", "secret-mid", `"key"`}

	f.run(t, []consoleScenario{
		{name: "list", method: "GET", url: "/api/channel/?p=0&page_size=10", token: f.adminTok,
			wantStatus: 200, wantContains: []string{`"name":"low"`, `"name":"high"`}, wantNotContains: secrets},
		{name: "get", method: "GET", url: fmt.Sprintf("/api/channel/%d", high.ID), token: f.adminTok,
			wantStatus: 200, wantContains: []string{`"name":"high"`, `"models":"claude-3"`}, wantNotContains: secrets},
		{name: "get missing", method: "GET", url: "/api/channel/999", token: f.adminTok,
			wantStatus: 404, wantContains: []string{"渠道未找到，请刷新页面后重试。"}},
		{name: "search by exact key", method: "GET", url: "/api/channel/search?keyword=secret-mid", token: f.adminTok,
			wantStatus: 200, wantContains: []string{`"name":"mid"`}, wantNotContains: append(secrets, `"name":"low"`)},
		{name: "search by part of key finds nothing", method: "GET", url: "/api/channel/search?keyword=secret", token: f.adminTok,
			wantStatus: 200, wantContains: []string{`"data":[]`}},
		{name: "search by id", method: "GET", url: fmt.Sprintf("/api/channel/search?keyword=%d", low.ID), token: f.adminTok,
			wantStatus: 200, wantContains: []string{`"name":"low"`}, wantNotContains: append(secrets, `"name":"high"`)},
		{name: "search by group", method: "GET", url: "/api/channel/search?group=vip", token: f.adminTok,
			wantStatus: 200, wantContains: []string{`"name":"high"`}, wantNotContains: append(secrets, `"name":"low"`)},
		{name: "search by model part", method: "GET", url: "/api/channel/search?model=gpt-4o", token: f.adminTok,
			wantStatus: 200, wantContains: []string{`"name":"low"`, `"name":"mid"`}, wantNotContains: append(secrets, `"name":"high"`)},
		{name: "search by model ignores case", method: "GET", url: "/api/channel/search?model=GPT-4O", token: f.adminTok,
			wantStatus: 200, wantContains: []string{`"name":"low"`, `"name":"mid"`}, wantNotContains: append(secrets, `"name":"high"`)},
		{name: "built-in model objects", method: "GET", url: "/api/channel/models", token: f.adminTok,
			wantStatus: 200, wantContains: []string{`"id":"gpt-4o-mini","object":"model","created":1626777600,"owned_by":"openai","permission":[],"root":"gpt-4o-mini","parent":null`}},
		{name: "search null group is no filter", method: "GET", url: "/api/channel/search?group=null", token: f.adminTok,
			wantStatus: 200, wantContains: []string{`"name":"low"`, `"name":"high"`}, wantNotContains: secrets},
	})

	names := func(url string) []string {
		var out []string
		for _, c := range decodeData[[]channelOut](t, f.mustOK("GET", url, f.adminTok, nil)) {
			if c.Key != "" {
				t.Fatalf("key in list: %+v", c)
			}
			out = append(out, c.Name)
		}
		return out
	}
	for _, c := range []struct{ url, want string }{
		{"/api/channel/?p=0&page_size=10", "high,mid,low"},          // priority desc
		{"/api/channel/?id_sort=true&page_size=10", "mid,high,low"}, // id desc
		{"/api/channel/?id_sort=1&page_size=10", "mid,high,low"},    // read as a bool, as S's server does
		{"/api/channel/?id_sort=True&page_size=10", "mid,high,low"},
		{"/api/channel/?id_sort=0&page_size=10", "high,mid,low"},
		{"/api/channel/?id_sort=yes&page_size=10", "high,mid,low"},
		{"/api/channel/search?id_sort=1", "mid,high,low"},
		{"/api/channel/?p=0&page_size=2", "high,mid"},
		{"/api/channel/?p=1&page_size=2", "low"},
		{"/api/channel/?p=5&page_size=2", ""},
		{"/api/channel/?page_size=0", ""}, // LIMIT 0
		{"/api/channel/?page_size=-1", "high,mid,low"},
		{"/api/channel/?p=-1", "high,mid,low"},
		{"/api/channel/?p=9223372036854775807&page_size=9223372036854775807", ""},
		{"/api/channel/?p=1&page_size=9223372036854775807", ""},
	} {
		if got := strings.Join(names(c.url), ","); got != c.want {
			t.Errorf("%s: %q, want %q", c.url, got, c.want)
		}
	}
	if r := f.mustOK("GET", "/api/channel/?page_size=0", f.adminTok, nil); string(r.Data) != "[]" {
		t.Errorf("empty page data = %s, want []", r.Data)
	}
	_ = mid
}

func TestChannelUpdate(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	c := f.create(map[string]any{"name": "edit-me", "type": 1, "key": "secret-edit", "models": "gpt-4o,gpt-4o-mini",
		"base_url": "https://up.example.com", "model_mapping": `{"a":"b"}`, "test_model": "gpt-4o", "priority": 3, "weight": 7})[0]

	// Present-but-empty strings clear; absent fields and an empty key stay.
	r := f.mustOK("PUT", "/api/channel/", f.adminTok, map[string]any{"id": c.ID, "model_mapping": "", "key": "", "name": "edited"})
	if r.Message != "渠道更新成功！" || strings.Contains(r.Raw, "secret-edit") || strings.Contains(r.Raw, `"key"`) {
		t.Fatalf("update answer: %s", r.Raw)
	}
	s := f.stored(c.ID)
	if s.BaseURL != "https://up.example.com" || s.ModelMapping != "" || s.Key != "secret-edit" || s.Name != "edited" ||
		s.TestModel != "gpt-4o" || s.Priority != 3 || s.Weight != 7 || s.Models != "gpt-4o,gpt-4o-mini" {
		t.Fatalf("after clear: %+v", s)
	}

	// The stored key goes only where it was saved for: a new base URL or
	// type without the key typed again is refused and changes nothing (an
	// administrator, who never sees keys, could otherwise point a channel at
	// a host of theirs and read its key there).
	f.run(t, []consoleScenario{
		{name: "base URL moved without the key", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "base_url": "https://elsewhere.example.com", "name": "moved"}, wantStatus: 400,
			wantContains: []string{"更换了类型或 Base URL，请重新填写密钥"}},
		{name: "base URL cleared with an empty key", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "base_url": "", "key": ""}, wantStatus: 400,
			wantContains: []string{"更换了类型或 Base URL，请重新填写密钥"}},
		{name: "type changed without the key", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "type": 25}, wantStatus: 400, wantContains: []string{"更换了类型或 Base URL，请重新填写密钥"}},
		{name: "same base URL with a trailing slash and spaces", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "base_url": " https://up.example.com/ "}, wantStatus: 200},
	})
	if s := f.stored(c.ID); s.BaseURL != "https://up.example.com" || s.Type != 1 || s.Name != "edited" || s.Key != "secret-edit" {
		t.Fatalf("a refused move was written: %+v", s)
	}
	f.mustOK("PUT", "/api/channel/", f.adminTok, map[string]any{"id": c.ID, "base_url": "", "key": "secret-edit"})
	if s := f.stored(c.ID); s.BaseURL != "" || s.Key != "secret-edit" {
		t.Fatalf("after clearing the base URL with the key: %+v", s)
	}

	// A status toggle with the id as a string touches nothing else and
	// disables the abilities.
	f.mustOK("PUT", "/api/channel/", f.adminTok, fmt.Sprintf(`{"id":"%d","status":2}`, c.ID))
	if s := f.stored(c.ID); s.Status != store.ChannelStatusManuallyOff || s.Name != "edited" || s.Key != "secret-edit" {
		t.Fatalf("after toggle: %+v", s)
	}
	for _, a := range f.abilitiesOf(c.ID) {
		if a.Enabled {
			t.Fatalf("ability still enabled: %+v", a)
		}
	}

	// A new key replaces the old one; models as a list rebuild abilities;
	// weight and priority may be written as zero.
	f.mustOK("PUT", "/api/channel/", f.adminTok, map[string]any{"id": c.ID, "key": "secret-new", "models": []string{"claude-3"}, "weight": 0, "priority": 0, "status": 1})
	s = f.stored(c.ID)
	if s.Key != "secret-new" || s.Models != "claude-3" || s.Weight != 0 || s.Priority != 0 || s.Status != 1 {
		t.Fatalf("after new key: %+v", s)
	}
	if ab := f.abilitiesOf(c.ID); len(ab) != 1 || ab[0].Model != "claude-3" || !ab[0].Enabled {
		t.Fatalf("abilities after models change: %+v", ab)
	}

	f.run(t, []consoleScenario{
		{name: "priority below -999", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "priority": -1000}, wantStatus: 400},
		{name: "clearing models", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "models": ""}, wantStatus: 400, wantContains: []string{"请至少选择一个模型！"}},
		{name: "negative weight becomes 0", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "weight": -3}, wantStatus: 200, wantContains: []string{`"weight":0`}, wantNotContains: []string{"secret-new"}},
		{name: "base_url slash trimmed", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "base_url": "https://x.example.com//", "key": "secret-new"}, wantStatus: 200, wantContains: []string{`"base_url":"https://x.example.com"`}},
		{name: "missing channel", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": 999, "name": "x"}, wantStatus: 404, wantContains: []string{"渠道未找到，请刷新页面后重试。"}},
		{name: "no id", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"name": "x"}, wantStatus: 400, wantContains: []string{`"message":"缺少 id"`}},
		{name: "weight above the limit", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "weight": 1000001}, wantStatus: 400, wantContains: []string{"权重不能大于 1000000"}},
		{name: "status 0", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "status": 0}, wantStatus: 400, wantContains: []string{"无效的渠道状态"}},
		{name: "status 7", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "status": 7}, wantStatus: 400, wantContains: []string{"无效的渠道状态"}},
		{name: "two keys on one channel", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "key": "new1\nnew2"}, wantStatus: 400, wantContains: []string{"一个渠道只能有一个密钥"}},
		{name: "two keys pasted into one line", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "key": "new1 new2"}, wantStatus: 400, wantContains: []string{"一个渠道只能有一个密钥，且密钥中不能有空白"}},
		{name: "unknown type", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "type": 999}, wantStatus: 400, wantContains: []string{"无效的渠道类型"}},
		// Model and group names are parts of index keys: bounded, and free
		// of the NUL that separates those parts.
		{name: "model name beyond 255 bytes", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "models": "gpt-4o," + strings.Repeat("m", 256)}, wantStatus: 400, wantContains: []string{"模型名称过长（最多 255 字节）"}},
		{name: "group name beyond 255 bytes", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "group": strings.Repeat("g", 40000)}, wantStatus: 400, wantContains: []string{"分组名称过长（最多 255 字节）"}},
		{name: "model name with NUL", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "models": "a\u0000b"}, wantStatus: 400, wantContains: []string{"模型名称不能包含控制字符"}},
		{name: "test model with a control character", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "test_model": "gpt\u0007"}, wantStatus: 400, wantContains: []string{"测试模型名称不能包含控制字符"}},
		// These go out as HTTP headers, which a control character breaks.
		{name: "key with a control character", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "key": "sk-a\u0001b"}, wantStatus: 400, wantContains: []string{"密钥不能包含控制字符"}},
		{name: "organization with a line break", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "openai_organization": "org\nX-Injected: 1"}, wantStatus: 400, wantContains: []string{"组织不能包含控制字符"}},
		{name: "priority beyond what the console reads exactly", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": c.ID, "priority": int64(1) << 53}, wantStatus: 400, wantContains: []string{"优先级不能大于 9007199254740991"}},
	})
	if s := f.stored(c.ID); s.Priority != 0 || s.Models != "claude-3" || s.Status != store.ChannelStatusEnabled || s.Weight != 0 || s.Key != "secret-new" || s.Type != 1 {
		t.Fatalf("refused edits were written: %+v", s)
	}

	// The largest weight routes; an emptied group joins default again.
	f.mustOK("PUT", "/api/channel/", f.adminTok, map[string]any{"id": c.ID, "weight": store.MaxChannelWeight, "group": ""})
	if s := f.stored(c.ID); s.Weight != store.MaxChannelWeight || s.Group != "default" {
		t.Fatalf("after max weight and empty group: %+v", s)
	}
	if ch := f.store.SelectChannel("default", "claude-3", 0, nil); ch == nil || ch.ID != c.ID {
		t.Fatalf("select with the largest weight: %+v", ch)
	}
}

func TestChannelDelete(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	var ids []uint64
	for i := range 6 {
		c := f.create(map[string]any{"name": fmt.Sprintf("c%d", i), "type": 1, "key": fmt.Sprintf("k%d", i), "models": "m1,m2"})[0]
		ids = append(ids, c.ID)
	}
	// c0 by id, c1 by the slash twin.
	f.mustOK("DELETE", fmt.Sprintf("/api/channel/%d", ids[0]), f.adminTok, nil)
	f.mustOK("DELETE", fmt.Sprintf("/api/channel/%d/", ids[1]), f.adminTok, nil)
	f.run(t, []consoleScenario{
		{name: "delete missing", method: "DELETE", url: fmt.Sprintf("/api/channel/%d", ids[0]), token: f.adminTok,
			wantStatus: 404, wantContains: []string{"渠道未找到，请刷新页面后重试。"}},
		{name: "delete bad id", method: "DELETE", url: "/api/channel/abc/", token: f.adminTok, wantStatus: 400},
	})
	for _, id := range ids[:2] {
		if len(f.abilitiesOf(id)) != 0 {
			t.Fatalf("abilities of deleted channel %d remain", id)
		}
	}

	// c2 manually off, c3 automatically off: "delete disabled" takes both
	// with their abilities.
	f.mustOK("PUT", "/api/channel/", f.adminTok, map[string]any{"id": ids[2], "status": 2})
	if _, _, err := f.store.SetChannelStatusAuto(ids[3], store.ChannelStatusAutoDisabled, "test"); err != nil {
		t.Fatal(err)
	}
	r := f.mustOK("DELETE", "/api/channel/disabled", f.adminTok, nil)
	if r.Message != "已删除所有禁用渠道，共计 2 个" || string(r.Data) != "2" {
		t.Fatalf("delete disabled: %s", r.Raw)
	}
	for _, id := range ids[2:4] {
		if len(f.abilitiesOf(id)) != 0 {
			t.Fatalf("abilities of disabled channel %d remain", id)
		}
	}
	if len(f.abilitiesOf(ids[4])) != 2 {
		t.Fatal("enabled channel lost abilities")
	}

	// Batch: the count is what was actually deleted.
	f.run(t, []consoleScenario{
		{name: "batch empty", method: "POST", url: "/api/channel/batch", token: f.adminTok,
			body: map[string]any{"ids": []int{}}, wantStatus: 400},
		{name: "batch", method: "POST", url: "/api/channel/batch", token: f.adminTok,
			body: fmt.Sprintf(`{"ids":[%d,"%d",9999,%d]}`, ids[4], ids[5], ids[0]), wantStatus: 200,
			wantContains: []string{"已删除 2 个通道！", `"data":2`}},
	})
	if all, _ := f.store.Channels(); len(all) != 0 {
		t.Fatalf("%d channels left", len(all))
	}
	if ab, _ := f.store.Abilities(); len(ab) != 0 {
		t.Fatalf("%d abilities left", len(ab))
	}
}

func TestChannelFix(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data.db")
	// Prepare a file whose abilities drifted: one row missing, one row
	// stale, one orphan.
	st, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	a := &store.Channel{Name: "a", Type: 1, Key: "ka", Models: "m1,m2"}
	b := &store.Channel{Name: "b", Type: 1, Key: "kb", Models: "m1"}
	if err := st.CreateChannels([]*store.Channel{a, b}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := func(group, model string, id uint64) []byte {
		k := append([]byte(group), 0)
		k = append(append(k, model...), 0)
		return binary.BigEndian.AppendUint64(k, id)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		ab := tx.Bucket([]byte("abilities"))
		if err := ab.Delete(key("default", "m2", a.ID)); err != nil {
			return err
		}
		stale, _ := json.Marshal(store.Ability{Group: "default", Model: "m1", ChannelID: b.ID, Enabled: true, Priority: 5})
		if err := ab.Put(key("default", "m1", b.ID), stale); err != nil {
			return err
		}
		orphan, _ := json.Marshal(store.Ability{Group: "default", Model: "m1", ChannelID: 999, Enabled: true})
		return ab.Put(key("default", "m1", 999), orphan)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	e := newConsoleEnvAt(t, path)
	_, admin := e.mustUser("fixer", store.RoleAdmin)
	e.run(t, []consoleScenario{
		{name: "fix", method: "POST", url: "/api/channel/fix", token: admin, wantStatus: 200,
			wantContains: []string{`"message":"已修复 4 个通道！","data":4}`}},
		{name: "nothing left to fix", method: "POST", url: "/api/channel/fix", token: admin, wantStatus: 200,
			wantContains: []string{`"message":"已修复 0 个通道！","data":0}`}},
	})
	all, _ := e.store.Abilities()
	if len(all) != 3 {
		t.Fatalf("abilities after fix: %+v", all)
	}
}

func TestChannelCopy(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	src := f.create(map[string]any{"name": "orig", "type": 1, "key": "secret-copy", "models": "gpt-4o", "group": "default,vip",
		"priority": 4, "weight": 9, "base_url": "https://up.example.com", "model_mapping": `{"a":"b"}`})[0]
	f.mustOK("PUT", "/api/channel/", f.adminTok, map[string]any{"id": src.ID, "status": 2})
	if err := f.store.RecordChannelTest(src.ID, 1234); err != nil {
		t.Fatal(err)
	}
	if err := f.store.RecordChannelBalance(src.ID, 42.5); err != nil {
		t.Fatal(err)
	}

	r := f.mustOK("POST", fmt.Sprintf("/api/channel/copy/%d", src.ID), f.adminTok, nil)
	if r.Message != "渠道复制成功" || strings.Contains(r.Raw, "secret-copy") || strings.Contains(r.Raw, `"key"`) {
		t.Fatalf("copy answer: %s", r.Raw)
	}
	cp := decodeData[channelOut](t, r)
	s := f.stored(cp.ID)
	if cp.ID == src.ID || s.Name != "orig_复制" || s.Key != "secret-copy" || s.Status != store.ChannelStatusManuallyOff ||
		s.Priority != 4 || s.Weight != 9 || s.Group != "default,vip" || s.BaseURL != "https://up.example.com" ||
		s.ModelMapping != `{"a":"b"}` || s.ResponseTime != 0 || s.TestTime != 0 || s.Balance != 0 || s.UsedQuota != 0 {
		t.Fatalf("copy: %+v", s)
	}
	if ab := f.abilitiesOf(cp.ID); len(ab) != 2 {
		t.Fatalf("copy abilities: %+v", ab)
	}
	f.run(t, []consoleScenario{
		{name: "copy missing", method: "POST", url: "/api/channel/copy/999", token: f.adminTok,
			wantStatus: 404, wantContains: []string{"渠道未找到，请刷新页面后重试。"}},
		// The copy keeps the key for the same destination only.
		{name: "copy moved without the key", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": cp.ID, "base_url": "https://attacker.example.com"}, wantStatus: 400,
			wantContains: []string{"更换了类型或 Base URL，请重新填写密钥"}},
	})
	if s := f.stored(cp.ID); s.BaseURL != "https://up.example.com" || s.Key != "secret-copy" {
		t.Fatalf("the copy moved with its key: %+v", s)
	}
	// Names: trimmed on edit as on create, at most 100 characters; a copy of
	// a name that long still fits.
	long := strings.Repeat("名", store.MaxChannelNameLen)
	f.mustOK("PUT", "/api/channel/", f.adminTok, map[string]any{"id": src.ID, "name": "  spaced  "})
	if got := f.stored(src.ID).Name; got != "spaced" {
		t.Fatalf("name %q after an edit with spaces around it", got)
	}
	f.run(t, []consoleScenario{
		{name: "name too long", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": src.ID, "name": long + "x"}, wantStatus: 400, wantContains: []string{"渠道名称长度不得超过 100 个字符"}},
		{name: "longest name", method: "PUT", url: "/api/channel/", token: f.adminTok,
			body: map[string]any{"id": src.ID, "name": long}, wantStatus: 200},
	})
	if got := f.stored(src.ID).Name; got != long {
		t.Fatalf("name %q", got)
	}
	r = f.mustOK("POST", fmt.Sprintf("/api/channel/copy/%d", src.ID), f.adminTok, nil)
	if got := f.stored(decodeData[channelOut](t, r).ID).Name; got != strings.Repeat("名", store.MaxChannelNameLen-3)+"_复制" {
		t.Fatalf("copy of the longest name: %q", got)
	}
}

func TestChannelRoutesRefusedForUsers(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	c := f.create(map[string]any{"name": "guarded", "type": 1, "key": "secret-guarded", "models": "m"})[0]
	id := fmt.Sprint(c.ID)
	routes := []struct {
		method, url string
		body        any
	}{
		{"GET", "/api/channel/", nil},
		{"GET", "/api/channel/search?keyword=guarded", nil},
		{"GET", "/api/channel/" + id, nil},
		{"POST", "/api/channel/", map[string]any{"name": "x", "type": 1, "key": "k", "models": "m"}},
		{"PUT", "/api/channel/", map[string]any{"id": c.ID, "name": "hacked"}},
		{"DELETE", "/api/channel/" + id, nil},
		{"DELETE", "/api/channel/" + id + "/", nil},
		{"DELETE", "/api/channel/disabled", nil},
		{"POST", "/api/channel/batch", map[string]any{"ids": []uint64{c.ID}}},
		{"POST", "/api/channel/fix", nil},
		{"POST", "/api/channel/copy/" + id, nil},
	}
	var scenarios []consoleScenario
	for _, rt := range routes {
		scenarios = append(scenarios,
			consoleScenario{name: "user " + rt.method + " " + rt.url, method: rt.method, url: rt.url, token: f.userTok, body: rt.body,
				wantStatus: 403, wantNotContains: []string{"guarded", "secret-guarded"}},
			consoleScenario{name: "guest " + rt.method + " " + rt.url, method: rt.method, url: rt.url, body: rt.body,
				wantStatus: 401, wantNotContains: []string{"guarded"}})
	}
	f.run(t, scenarios)
	if all, _ := f.store.Channels(); len(all) != 1 || all[0].Name != "guarded" {
		t.Fatalf("refused requests changed channels: %+v", all)
	}
}

// unindexedLogs counts the log entries still waiting for the background
// indexer (the log_unindexed bucket of a copy of the file).
func unindexedLogs(tb testing.TB, st *store.Store) int {
	tb.Helper()
	var buf bytes.Buffer
	if err := st.Backup(context.Background(), &buf, nil); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "copy.db")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	n := 0
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("log_unindexed")).ForEach(func(_, _ []byte) error { n++; return nil })
	}); err != nil {
		tb.Fatal(err)
	}
	return n
}

// The model a channel test names (?model=) is judged as the channel's own
// model names are: at most 255 bytes and no control character. The test's
// log is indexed under it, and a name longer than a bbolt key may be
// (32 KiB) failed every later pass of the log indexer: no entry written
// after it, of any call, ever reached the indexes.
func TestChannelTestModelIsBounded(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	t.Cleanup(up.Close)
	c := f.create(map[string]any{"name": "tested", "type": 1, "key": "secret-test", "models": "gpt-4o-mini", "base_url": up.URL})[0]
	testURL := func(model string) string {
		return fmt.Sprintf("/api/channel/test/%d?model=%s", c.ID, url.QueryEscape(model))
	}
	for name, model := range map[string]string{
		"longer than an index key": strings.Repeat("m", 40000),
		"256 bytes":                strings.Repeat("m", 256),
		"a control character":      "gpt-4o-mini\x00x",
	} {
		r := f.call("GET", testURL(model), f.adminTok, nil)
		if r.Status != http.StatusBadRequest || r.Success || r.Message == "" {
			t.Errorf("%s: status %d, body %.300s; want 400 with a message", name, r.Status, r.Raw)
		}
	}
	// A test of a model the channel serves is logged, and its entry reaches
	// the indexes.
	if r := f.call("GET", testURL("gpt-4o-mini"), f.adminTok, nil); r.Status != http.StatusOK || !r.Success {
		t.Fatalf("test of the channel's model: %d %s", r.Status, r.Raw)
	}
	deadline := time.Now().Add(3 * time.Second)
	for unindexedLogs(t, f.store) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d log entries never reached the indexes", unindexedLogs(t, f.store))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// S §3.4: the channel search is `name LIKE %kw%` AND `models LIKE %model%`:
// % and _ are wildcards (as in the token and redemption searches), _ one
// character however many bytes it takes.
func TestChannelSearchIsLike(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	f.create(map[string]any{"name": "文心渠道-主", "type": 1, "key": "k-wx", "models": "ernie-4.0,文心一言🙂"})
	f.create(map[string]any{"name": "other", "type": 1, "key": "k-o", "models": "gpt-4o"})
	names := func(url string) []string {
		var out []string
		for _, c := range decodeData[[]channelOut](t, f.mustOK("GET", url, f.adminTok, nil)) {
			out = append(out, c.Name)
		}
		return out
	}
	for _, url := range []string{
		"/api/channel/search?keyword=" + "%E6%96%87%E5%BF%83_%E9%81%93",        // 文心_道
		"/api/channel/search?keyword=" + "%E6%96%87%25%E4%B8%BB",               // 文%主
		"/api/channel/search?model=" + "%E6%96%87%E5%BF%83%E4%B8%80%E8%A8%80_", // 文心一言_
		"/api/channel/search?model=ERNIE%25%E4%B8%80%E8%A8%80",                 // ERNIE%一言
	} {
		if got := names(url); len(got) != 1 || got[0] != "文心渠道-主" {
			t.Errorf("%s: %q, want the 文心 channel", url, got)
		}
	}
}
