package api_test

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"gateway/store"
)

// The log routes against a plain scan: random entries of every type for
// several users, read through the admin and self lists (every filter the
// route takes, pages up to and past the last), the two stats' quota and
// the two searches. Users' own views hold only their rows, without id,
// channel or admin detail.

func diffLike(s, pattern string) bool {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for _, r := range pattern {
		switch r {
		case '%':
			b.WriteString(`.*`)
		case '_':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String()).MatchString(s)
}

type diffQuery struct {
	typ                  int
	tokenName, modelName string
	start, end           int64
	userID, channel      uint64
	username             string
	ignoreType           bool
}

func (q diffQuery) matches(l *store.Log) bool {
	if q.typ != 0 && !q.ignoreType && l.Type != q.typ {
		return false
	}
	if q.userID != 0 && l.UserID != q.userID {
		return false
	}
	if q.tokenName != "" && l.TokenName != q.tokenName {
		return false
	}
	if q.modelName != "" && !diffLike(l.ModelName, q.modelName) {
		return false
	}
	if q.channel != 0 && l.ChannelID != q.channel {
		return false
	}
	if q.start != 0 && l.CreatedAt < q.start || q.end != 0 && l.CreatedAt > q.end {
		return false
	}
	return true
}

func (q diffQuery) values() url.Values {
	v := url.Values{}
	if q.typ != 0 {
		v.Set("type", strconv.Itoa(q.typ))
	}
	if q.tokenName != "" {
		v.Set("token_name", q.tokenName)
	}
	if q.modelName != "" {
		v.Set("model_name", q.modelName)
	}
	if q.start != 0 {
		v.Set("start_timestamp", strconv.FormatInt(q.start, 10))
	}
	if q.end != 0 {
		v.Set("end_timestamp", strconv.FormatInt(q.end, 10))
	}
	if q.username != "" {
		v.Set("username", q.username)
	}
	if q.channel != 0 {
		v.Set("channel", strconv.FormatUint(q.channel, 10))
	}
	return v
}

func newestFirst(ls []*store.Log) {
	slices.SortFunc(ls, func(a, b *store.Log) int {
		if a.CreatedAt != b.CreatedAt {
			if a.CreatedAt > b.CreatedAt {
				return -1
			}
			return 1
		}
		if a.ID > b.ID {
			return -1
		}
		return 1
	})
}

func TestLogRoutesAgainstPlainScan(t *testing.T) {
	t.Parallel()
	e := newConsoleEnv(t)
	admin, adminTok := e.mustUser("diffadmin", store.RoleAdmin)
	type account struct {
		u   *store.User
		tok string
	}
	var users []account
	for _, n := range []string{"ann", "Ben", "cid"} {
		u, tok := e.mustUser(n, store.RoleCommon)
		users = append(users, account{u, tok})
	}
	users = append(users, account{admin, adminTok})
	rng := rand.New(rand.NewPCG(30, 2))
	const base = 1_700_000_000
	var all []*store.Log
	tokens := []string{"main", "side", "shared", "playground-default"}
	models := []string{"gpt-4o", "gpt-4o-mini", "claude_3", "o3"}
	for i := range 600 {
		a := users[rng.IntN(len(users))]
		l := &store.Log{UserID: a.u.ID, Username: a.u.Username, CreatedAt: base + int64(rng.IntN(500)), Type: 1 + rng.IntN(4)}
		if l.Type == store.LogTypeConsume || rng.IntN(3) == 0 {
			l.Type = store.LogTypeConsume
			l.TokenName = tokens[rng.IntN(len(tokens))]
			l.TokenID = uint64(1 + rng.IntN(5))
			l.ModelName = models[rng.IntN(len(models))]
			l.ChannelID = uint64(1 + rng.IntN(3))
			l.Quota = int64(rng.IntN(1000))
			l.Other = fmt.Sprintf(`{"admin_info":{"use_channel":[%d]},"upstream_model":"up","model_ratio":1}`, l.ChannelID)
			l.Content = []string{"模型倍率 1", "模型价格 $0.1", "call"}[rng.IntN(3)]
		} else {
			l.Content = []string{"通过兑换码充值", "管理员修改额度", "新用户注册赠送"}[rng.IntN(3)]
			l.Quota = int64(rng.IntN(100))
		}
		if err := e.store.AppendLog(l); err != nil {
			t.Fatal(err)
		}
		all = append(all, l)
		if i == 300 {
			// The background indexer takes the first half (it runs every
			// 200 ms); the rest may still wait when the queries run.
			time.Sleep(300 * time.Millisecond)
		}
	}
	newestFirst(all)
	scan := func(q diffQuery) []*store.Log {
		var out []*store.Log
		for _, l := range all {
			if q.matches(l) {
				out = append(out, l)
			}
		}
		return out
	}
	randQuery := func() diffQuery {
		var q diffQuery
		if rng.IntN(3) == 0 {
			q.typ = 1 + rng.IntN(4)
		}
		if rng.IntN(3) == 0 {
			q.tokenName = tokens[rng.IntN(len(tokens))]
		}
		if rng.IntN(3) == 0 {
			q.modelName = append(slices.Clone(models), "gpt-4o%", "%o%", "claude_%", "_3")[rng.IntN(len(models)+4)]
		}
		if rng.IntN(3) == 0 {
			q.start = base + int64(rng.IntN(500))
		}
		if rng.IntN(3) == 0 {
			q.end = base + int64(rng.IntN(500))
		}
		if rng.IntN(4) == 0 {
			q.channel = uint64(1 + rng.IntN(3))
		}
		return q
	}
	for range 60 {
		q := randQuery()
		// The admin list, with a username now and then.
		aq := q
		if rng.IntN(2) == 0 {
			a := users[rng.IntN(len(users))]
			aq.userID, aq.username = a.u.ID, strings.ToUpper(a.u.Username)
		}
		want := scan(aq)
		for _, size := range []int{7, 100} {
			last := (len(want) + size - 1) / size
			for _, page := range []int{1, last, last + 1} {
				if page < 1 {
					continue
				}
				v := aq.values()
				v.Set("p", strconv.Itoa(page))
				v.Set("page_size", strconv.Itoa(size))
				p := decodeData[struct {
					Items    []*store.Log `json:"items"`
					Total    int          `json:"total"`
					Page     int          `json:"page"`
					PageSize int          `json:"page_size"`
				}](t, e.mustOK("GET", "/api/log/?"+v.Encode(), adminTok, nil))
				lo := min((page-1)*size, len(want))
				hi := min(lo+size, len(want))
				got, exp := []uint64{}, []uint64{}
				for _, l := range p.Items {
					got = append(got, l.ID)
				}
				for _, l := range want[lo:hi] {
					exp = append(exp, l.ID)
				}
				if p.Total != len(want) || !slices.Equal(got, exp) || p.Page != page || p.PageSize != size {
					t.Fatalf("admin %s: total %d ids %v (page %d/%d), want total %d ids %v", v.Encode(), p.Total, got, p.Page, p.PageSize, len(want), exp)
				}
			}
		}
		// The admin stat: consume quota whatever the type asked.
		sq := aq
		sq.typ, sq.ignoreType = store.LogTypeConsume, false
		var wantQuota int64
		for _, l := range scan(sq) {
			wantQuota += l.Quota
		}
		st := decodeData[struct {
			Quota int64 `json:"quota"`
		}](t, e.mustOK("GET", "/api/log/stat?"+aq.values().Encode(), adminTok, nil))
		if st.Quota != wantQuota {
			t.Fatalf("admin stat %s: quota %d, want %d", aq.values().Encode(), st.Quota, wantQuota)
		}
		// Each user's own list and stat: the username and channel they
		// send are no filters.
		a := users[rng.IntN(len(users))]
		sq = q
		sq.channel = 0
		sq.userID = a.u.ID
		v := q.values()
		v.Set("username", users[0].u.Username)
		v.Set("page_size", "100")
		want = scan(sq)
		raw := e.mustOK("GET", "/api/log/self/?"+v.Encode(), a.tok, nil)
		p := decodeData[struct {
			Items []map[string]any `json:"items"`
			Total int              `json:"total"`
		}](t, raw)
		if p.Total != len(want) || len(p.Items) != min(len(want), 100) {
			t.Fatalf("self %s of %s: total %d, %d items, want %d", v.Encode(), a.u.Username, p.Total, len(p.Items), len(want))
		}
		for i, it := range p.Items {
			if _, ok := it["id"]; ok {
				t.Fatalf("self item has an id: %v", it)
			}
			if _, ok := it["channel"]; ok {
				t.Fatalf("self item has a channel: %v", it)
			}
			if uint64(it["user_id"].(float64)) != a.u.ID || int64(it["created_at"].(float64)) != want[i].CreatedAt || it["content"] != want[i].Content {
				t.Fatalf("self item %d of %s: %v, want %+v", i, a.u.Username, it, want[i])
			}
			if o, _ := it["other"].(string); strings.Contains(o, "admin_info") || strings.Contains(o, "upstream_model") {
				t.Fatalf("self item shows admin detail: %s", o)
			}
		}
		wantQuota = 0
		sq.typ = store.LogTypeConsume
		for _, l := range scan(sq) {
			wantQuota += l.Quota
		}
		st = decodeData[struct {
			Quota int64 `json:"quota"`
		}](t, e.mustOK("GET", "/api/log/self/stat?"+v.Encode(), a.tok, nil))
		if st.Quota != wantQuota {
			t.Fatalf("self stat %s of %s: quota %d, want %d", v.Encode(), a.u.Username, st.Quota, wantQuota)
		}
	}
	// The admin search: type or content start, 100 newest.
	for _, kw := range []string{"1", "2", "3", "4", "模型", "模型_格", "通过%", "call", "nothing", ""} {
		var want []uint64
		for _, l := range all {
			if n, err := strconv.Atoi(kw); err == nil && n == l.Type || diffLike(l.Content, kw+"%") {
				want = append(want, l.ID)
			}
		}
		want = want[:min(len(want), 100)]
		got := []uint64{}
		for _, l := range decodeData[[]*store.Log](t, e.mustOK("GET", "/api/log/search?keyword="+url.QueryEscape(kw), adminTok, nil)) {
			got = append(got, l.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("search %q: %v, want %v", kw, got, want)
		}
	}
	// A user's own search: the type only, own rows, no admin detail.
	for _, a := range users {
		for typ := 1; typ <= 4; typ++ {
			want := scan(diffQuery{userID: a.u.ID, typ: typ})
			r := e.mustOK("GET", "/api/log/self/search?keyword="+strconv.Itoa(typ), a.tok, nil)
			items := decodeData[[]map[string]any](t, r)
			if len(items) != min(len(want), 100) || strings.Contains(r.Raw, "admin_info") || strings.Contains(r.Raw, `"id":`) {
				t.Fatalf("self search %d of %s: %d items, want %d: %s", typ, a.u.Username, len(items), len(want), r.Raw)
			}
			for i, it := range items {
				var l store.Log
				data, _ := json.Marshal(it)
				_ = json.Unmarshal(data, &l)
				if l.UserID != a.u.ID || l.CreatedAt != want[i].CreatedAt || l.Type != typ {
					t.Fatalf("self search %d of %s: item %d %+v", typ, a.u.Username, i, l)
				}
			}
		}
	}
}
