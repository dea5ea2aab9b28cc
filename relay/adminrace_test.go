package relay_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/relay/relaytest"
	"gateway/store"

	bolt "go.etcd.io/bbolt"
)

func itob(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

// Administrators' and users' changes land while many calls (non-stream,
// stream, slow streams, failures) are in flight: every answered call is
// logged once, under the user, token and channel it ran with, and every
// book moves by exactly what the logs show.
func TestMoney_AdminChangesRaceCalls(t *testing.T) {
	t.Parallel()
	for _, m := range []propMode{{name: "memory"}, {name: "durable", durable: true}, {name: "sync 5ms", sync: 5 * time.Millisecond}} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			adminRace(t, m)
		})
	}
}

func adminRace(t *testing.T, mode propMode) {
	g := MustOpenGateway(t, gatewayConfig{Durable: mode.durable})
	if mode.sync > 0 {
		g.st.SetSyncInterval(mode.sync)
	}
	callOf := func(req *relaytest.Request) int {
		msgs, _ := req.JSON["messages"].([]any)
		first, _ := msgs[0].(map[string]any)
		s, _ := first["content"].(string)
		i, _ := strconv.Atoi(strings.TrimPrefix(s, "call-"))
		return i
	}
	handler := func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
		i := callOf(req)
		p, c := 10+i%7, 1+i%5
		model := req.Model()
		if i%11 == 0 {
			relaytest.WriteError(w, 500, "server_error", "", "boom")
			return
		}
		if !req.Stream() {
			time.Sleep(time.Duration(i%20) * time.Millisecond)
			relaytest.WriteJSON(w, 200, relaytest.Completion(model, "n", relaytest.NewUsage(p, c)))
			return
		}
		sse := relaytest.NewSSE(w)
		for range c {
			if sse.Send(relaytest.Chunk(model, " word")) != nil {
				return
			}
			if i%3 == 2 {
				time.Sleep(15 * time.Millisecond)
			}
		}
		sse.Send(relaytest.FinishChunk(model, "stop"))
		if req.IncludeUsage() {
			sse.Send(relaytest.UsageChunk(model, p, c))
		}
		sse.Done()
	}
	var channels []*store.Channel
	for i := range 3 {
		up := relaytest.NewChat(t, "sk-race-"+strconv.Itoa(i), handler)
		channels = append(channels, g.MustCreateChannel(t, up, ratioModel, func(c *store.Channel) {
			c.Name = "race-" + strconv.Itoa(i)
			c.AutoBan = 0
		}))
	}
	// fifty gets some quota to spend.
	add := int64(50_000_000)
	if _, err := g.st.EditUserAsAdmin("root", fixture.IDs["fifty"], store.UserUpdate{}, store.QuotaChange{Add: &add}); err != nil {
		t.Fatal(err)
	}
	type tk struct {
		user string
		tok  *store.Token
		key  string
	}
	var toks []tk
	for _, spec := range []struct {
		user string
		t    store.Token
	}{
		{"alice", store.Token{Name: "lim", RemainQuota: 50_000_000}},
		{"alice", store.Token{Name: "unl", UnlimitedQuota: true}},
		{"alice", store.Token{Name: "del", RemainQuota: 50_000_000}},
		{"alice", store.Token{Name: "flip", RemainQuota: 50_000_000}},
		{"fifty", store.Token{Name: "gone", UnlimitedQuota: true}},
	} {
		tok, key := g.MustCreateToken(t, spec.user, spec.t)
		toks = append(toks, tk{spec.user, tok, key})
	}
	type snap struct {
		quota, used, count int64
	}
	userSnap := func(name string) snap {
		u, err := g.st.User(fixture.IDs[name])
		if err != nil {
			t.Fatal(err)
		}
		return snap{u.Quota, u.UsedQuota, u.RequestCount}
	}
	tokSnap := func(id uint64) (remain, used int64) {
		tt, err := g.st.Token(0, id)
		if store.ErrorCode(err) == store.ENOTFOUND {
			return -1, -1 // deleted: read from the file at the end
		}
		if err != nil {
			t.Fatal(err)
		}
		return tt.RemainQuota, tt.UsedQuota
	}
	chUsed := func(id uint64) int64 {
		c, err := g.st.Channel(id)
		if err != nil {
			t.Fatal(err)
		}
		return c.UsedQuota
	}
	beforeU := map[string]snap{"alice": userSnap("alice"), "fifty": userSnap("fifty")}
	beforeT := map[uint64]int64{}
	for _, x := range toks {
		_, u := tokSnap(x.tok.ID)
		beforeT[x.tok.ID] = u
	}
	beforeC := map[uint64]int64{}
	for _, c := range channels {
		beforeC[c.ID] = chUsed(c.ID)
	}

	const calls = 150
	type out struct {
		status int
		reqID  string
		tok    int
	}
	outs := make([]out, calls)
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: calls}}
	defer client.CloseIdleConnections()
	gc := *g
	gc.client = client
	start := make(chan struct{})
	for i := range calls {
		wg.Go(func() {
			<-start
			time.Sleep(time.Duration(i%10) * 5 * time.Millisecond)
			ti := i % len(toks)
			var body map[string]any
			switch i % 3 {
			case 0:
				body = chat(ratioModel, "call-"+strconv.Itoa(i))
			default:
				body = streamChat(ratioModel, "call-"+strconv.Itoa(i), true)
			}
			body["max_tokens"] = 50
			ctx := context.Background()
			if i%7 == 3 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(5+i%40)*time.Millisecond)
				defer cancel()
			}
			res, err := gc.do(ctx, toks[ti].key, "/v1/chat/completions", body)
			if err != nil && i%7 != 3 {
				t.Errorf("call %d: %v", i, err)
			}
			if err != nil {
				res.Status = -1
			}
			outs[i] = out{status: res.Status, reqID: res.Header.Get("X-Oneapi-Request-Id"), tok: ti}
		})
	}
	close(start)
	// The changes, while the calls are in flight.
	time.Sleep(20 * time.Millisecond)
	set := int64(40_000_000)
	if _, err := g.st.EditUserAsAdmin("root", fixture.IDs["fifty"], store.UserUpdate{}, store.QuotaChange{Set: &set}); err != nil {
		t.Error(err)
	}
	if _, err := g.st.EditUserAsAdmin("root", fixture.IDs["alice"], store.UserUpdate{}, store.QuotaChange{Add: &add}); err != nil {
		t.Error(err)
	}
	newRemain := int64(30_000_000)
	if _, err := g.st.UpdateToken(fixture.IDs["alice"], toks[0].tok.ID, store.TokenUpdate{RemainQuota: &newRemain}); err != nil {
		t.Error(err)
	}
	unl := true
	if _, err := g.st.UpdateToken(fixture.IDs["alice"], toks[3].tok.ID, store.TokenUpdate{UnlimitedQuota: &unl}); err != nil {
		t.Error(err)
	}
	if err := g.st.UpdateOption("ModelRatio", fmt.Sprintf(`{%q:%v,%q:%v}`, ratioModel, 3.0, miniModel, miniModelMR)); err != nil {
		t.Error(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := g.st.DeleteToken(fixture.IDs["alice"], toks[2].tok.ID); err != nil {
		t.Error(err)
	}
	prio := int64(7)
	if _, err := g.st.UpdateChannel(channels[2].ID, store.ChannelUpdate{Priority: &prio}); err != nil {
		t.Error(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := g.st.DeleteUser(fixture.IDs["fifty"]); err != nil {
		t.Error(err)
	}
	if _, err := g.st.DeleteChannels([]uint64{channels[1].ID}); err != nil {
		t.Error(err)
	}
	unl = false
	if _, err := g.st.UpdateToken(fixture.IDs["alice"], toks[3].tok.ID, store.TokenUpdate{UnlimitedQuota: &unl}); err != nil {
		t.Error(err)
	}
	wg.Wait()
	if mode.sync > 0 {
		time.Sleep(100 * time.Millisecond)
	}

	logs, err := g.st.Logs(store.LogFilter{Type: store.LogTypeConsume}, 1, 100000)
	if err != nil {
		t.Fatal(err)
	}
	byReq := map[string][]*store.Log{}
	for _, l := range logs.Items {
		o := other(t, l)
		byReq[o.RequestID] = append(byReq[o.RequestID], l)
	}
	statuses := map[int]int{}
	for i, o := range outs {
		statuses[o.status]++
		ls := byReq[o.reqID]
		if o.status == 200 {
			if len(ls) != 1 {
				t.Errorf("call %d (200): %d logs", i, len(ls))
				continue
			}
			l := ls[0]
			if l.TokenID != toks[o.tok].tok.ID || l.UserID != fixture.IDs[toks[o.tok].user] {
				t.Errorf("call %d logged under user %d token %d, want %d %d", i, l.UserID, l.TokenID, fixture.IDs[toks[o.tok].user], toks[o.tok].tok.ID)
			}
		} else if len(ls) > 1 || (len(ls) == 1 && o.status != -1) {
			t.Errorf("call %d (%d): %d logs", i, o.status, len(ls))
		}
	}
	t.Logf("answers %v", statuses)
	sumUser := map[uint64]int64{}
	countUser := map[uint64]int64{}
	sumTok := map[uint64]int64{}
	sumCh := map[uint64]int64{}
	for _, l := range logs.Items {
		sumUser[l.UserID] += l.Quota
		countUser[l.UserID]++
		sumTok[l.TokenID] += l.Quota
		sumCh[l.ChannelID] += l.Quota
	}
	for _, name := range []string{"alice", "fifty"} {
		a := userSnap(name)
		id := fixture.IDs[name]
		if d := a.used - beforeU[name].used; d != sumUser[id] {
			t.Errorf("%s used moved %d, logs say %d", name, d, sumUser[id])
		}
		if d := a.count - beforeU[name].count; d != countUser[id] {
			t.Errorf("%s count moved %d, logs say %d", name, d, countUser[id])
		}
		lb, err := g.st.LiveBalance(id)
		if err != nil {
			t.Fatal(err)
		}
		if lb.Quota != a.quota {
			t.Errorf("%s: live spendable %d != shown %d: something still held", name, lb.Quota, a.quota)
		}
	}
	if a := userSnap("alice"); a.quota+a.used != beforeU["alice"].quota+beforeU["alice"].used+add {
		t.Errorf("alice quota+used = %d, want %d", a.quota+a.used, beforeU["alice"].quota+beforeU["alice"].used+add)
	}
	for _, x := range toks {
		_, u := tokSnap(x.tok.ID)
		if u == -1 {
			continue
		}
		if d := u - beforeT[x.tok.ID]; d != sumTok[x.tok.ID] {
			t.Errorf("token %s used moved %d, logs say %d", x.tok.Name, d, sumTok[x.tok.ID])
		}
	}
	for _, c := range []*store.Channel{channels[0], channels[2]} {
		if d := chUsed(c.ID) - beforeC[c.ID]; d != sumCh[c.ID] {
			t.Errorf("channel %d used moved %d, logs say %d", c.ID, d, sumCh[c.ID])
		}
	}
	// The file holds what memory showed.
	liveU := map[string]snap{"alice": userSnap("alice"), "fifty": userSnap("fifty")}
	liveT := map[uint64][2]int64{}
	for _, x := range toks {
		r, u := tokSnap(x.tok.ID)
		liveT[x.tok.ID] = [2]int64{r, u}
	}
	liveC := map[uint64]int64{channels[0].ID: chUsed(channels[0].ID), channels[2].ID: chUsed(channels[2].ID)}
	g.srv.Close()
	path := g.st.Path()
	if err := g.st.Close(); err != nil {
		t.Fatal(err)
	}
	{
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		var deleted struct {
			UsedQuota int64 `json:"used_quota"`
		}
		db.View(func(tx *bolt.Tx) error {
			return json.Unmarshal(tx.Bucket([]byte("tokens")).Get(itob(toks[2].tok.ID)), &deleted)
		})
		db.Close()
		if d := deleted.UsedQuota - beforeT[toks[2].tok.ID]; d != sumTok[toks[2].tok.ID] {
			t.Errorf("deleted token: used moved %d in the file, logs say %d", d, sumTok[toks[2].tok.ID])
		}
	}
	if err := store.CheckFile(path); err != nil {
		t.Error(err)
	}
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for name, want := range liveU {
		u, err := st.User(fixture.IDs[name])
		if err != nil {
			t.Fatal(err)
		}
		if got := (snap{u.Quota, u.UsedQuota, u.RequestCount}); got != want {
			t.Errorf("%s committed %+v, live was %+v", name, got, want)
		}
	}
	for id, want := range liveT {
		if want[1] == -1 {
			continue
		}
		tt, err := st.Token(0, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]int64{tt.RemainQuota, tt.UsedQuota}; got != want {
			t.Errorf("token %d committed %v, live was %v", id, got, want)
		}
	}
	for id, want := range liveC {
		c, err := st.Channel(id)
		if err != nil {
			t.Fatal(err)
		}
		if c.UsedQuota != want {
			t.Errorf("channel %d committed %d, live was %d", id, c.UsedQuota, want)
		}
	}
}

// One slow stream in flight while a change lands: the call completes and is
// charged at the price and to the accounts it started with; a balance set
// meanwhile ends at the set value minus the charge.
func TestMoney_ChangeDuringSlowStream(t *testing.T) {
	t.Parallel()
	const p, c = 20, 6
	charge := ratioQuota(p, c, ratioModelMR, ratioModelCR, 1)
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel)
		check  func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel, l *store.Log)
	}{
		{"model ratio", func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel) {
			if err := g.st.UpdateOption("ModelRatio", fmt.Sprintf(`{%q:%v}`, ratioModel, 7.0)); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel, l *store.Log) {
			if l.Quota != charge {
				t.Errorf("charged %d, want %d at the ratio the call started with", l.Quota, charge)
			}
		}},
		{"user quota set", func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel) {
			s := int64(123_456)
			if _, err := g.st.EditUserAsAdmin("root", fixture.IDs["alice"], store.UserUpdate{}, store.QuotaChange{Set: &s}); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel, l *store.Log) {
			u, _ := g.st.User(fixture.IDs["alice"])
			if u.Quota != 123_456-l.Quota {
				t.Errorf("user quota %d, want %d", u.Quota, 123_456-l.Quota)
			}
		}},
		{"token remain set", func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel) {
			s := int64(777_777)
			if _, err := g.st.UpdateToken(fixture.IDs["alice"], tok.ID, store.TokenUpdate{RemainQuota: &s}); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel, l *store.Log) {
			tt, _ := g.st.Token(0, tok.ID)
			if tt.RemainQuota != 777_777-l.Quota {
				t.Errorf("token remain %d, want %d", tt.RemainQuota, 777_777-l.Quota)
			}
		}},
		{"token disabled", func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel) {
			s := store.TokenStatusDisabled
			if _, err := g.st.UpdateToken(fixture.IDs["alice"], tok.ID, store.TokenUpdate{Status: &s}); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"user group", func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel) {
			grp := "vip"
			if _, err := g.st.UpdateUser(fixture.IDs["alice"], store.UserUpdate{Group: &grp}); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel, l *store.Log) {
			if l.Quota != charge || l.Group != "default" {
				t.Errorf("charged %d in group %q, want %d in default", l.Quota, l.Group, charge)
			}
		}},
		{"channel deleted", func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel) {
			if _, err := g.st.DeleteChannels([]uint64{ch.ID}); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"channel edited", func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel) {
			m := `{"` + ratioModel + `":"other"}`
			if _, err := g.st.UpdateChannel(ch.ID, store.ChannelUpdate{ModelMapping: &m}); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel, l *store.Log) {
			if o := other(t, l); o.UpstreamModel != "" {
				t.Errorf("log says upstream model %q; the call went as %q", o.UpstreamModel, ratioModel)
			}
		}},
		{"token deleted", func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel) {
			if err := g.st.DeleteToken(fixture.IDs["alice"], tok.ID); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"user deleted", func(t *testing.T, g *gateway, tok *store.Token, ch *store.Channel) {
			if err := g.st.DeleteUser(fixture.IDs["alice"]); err != nil {
				t.Fatal(err)
			}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := MustOpenGateway(t, gatewayConfig{})
			mid := make(chan struct{})
			resume := make(chan struct{})
			up := relaytest.NewChat(t, "sk-slow", func(w http.ResponseWriter, r *http.Request, req *relaytest.Request) {
				sse := relaytest.NewSSE(w)
				for i := range c {
					sse.Send(relaytest.Chunk(req.Model(), " word"))
					if i == 2 {
						close(mid)
						<-resume
					}
				}
				sse.Send(relaytest.FinishChunk(req.Model(), "stop"))
				sse.Send(relaytest.UsageChunk(req.Model(), p, c))
				sse.Done()
			})
			ch := g.MustCreateChannel(t, up, ratioModel, nil)
			tok, key := g.MustCreateToken(t, "alice", store.Token{RemainQuota: 5_000_000})
			u0, _ := g.st.User(fixture.IDs["alice"])
			c0 := ch.UsedQuota
			done := make(chan result, 1)
			go func() {
				res, err := g.do(context.Background(), key, "/v1/chat/completions", streamChat(ratioModel, "hi", true))
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			<-mid
			tc.change(t, g, tok, ch)
			close(resume)
			res := <-done
			if res.Status != 200 || !strings.Contains(string(res.Body), "[DONE]") {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			logs, err := g.st.Logs(store.LogFilter{Type: store.LogTypeConsume, UserID: fixture.IDs["alice"]}, 1, 100)
			if err != nil || len(logs.Items) != 1 {
				t.Fatalf("logs %v %v", logs, err)
			}
			l := logs.Items[0]
			if l.TokenID != tok.ID || l.ChannelID != ch.ID || l.UserID != fixture.IDs["alice"] {
				t.Errorf("log names user %d token %d channel %d", l.UserID, l.TokenID, l.ChannelID)
			}
			u1, _ := g.st.User(fixture.IDs["alice"])
			if u1.UsedQuota-u0.UsedQuota != l.Quota || u1.RequestCount-u0.RequestCount != 1 {
				t.Errorf("user used moved %d count %d, log %d", u1.UsedQuota-u0.UsedQuota, u1.RequestCount-u0.RequestCount, l.Quota)
			}
			if c1, err := g.st.Channel(ch.ID); err == nil && c1.UsedQuota-c0 != l.Quota {
				t.Errorf("channel used moved %d, log %d", c1.UsedQuota-c0, l.Quota)
			}
			if tc.check != nil {
				tc.check(t, g, tok, ch, l)
			}
			lb, _ := g.st.LiveBalance(fixture.IDs["alice"])
			if lb.Quota != u1.Quota {
				t.Errorf("held after the call: spendable %d shown %d", lb.Quota, u1.Quota)
			}
		})
	}
}
