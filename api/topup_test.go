package api_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/api"
	"gateway/store"
)

const (
	epayPID = "1001"
	epayKey = "epay-secret-key"
)

// epayTestSign is the provider's MD5 signature, written here from the
// epay scheme rather than taken from the handler.
func epayTestSign(params url.Values, key string) string {
	var names []string
	for k := range params {
		if params.Get(k) != "" && k != "sign" && k != "sign_type" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		parts = append(parts, k+"="+params.Get(k))
	}
	sum := md5.Sum([]byte(strings.Join(parts, "&") + key))
	return hex.EncodeToString(sum[:])
}

// fakeEpay is a payment provider double: /submit.php checks the form the
// console posts, "takes the payment" and then calls the order's notify_url
// with a correctly signed TRADE_SUCCESS notification, as a provider does.
type fakeEpay struct {
	*httptest.Server
	tb testing.TB

	mu      sync.Mutex
	orders  []url.Values // the forms received
	replies []string     // what the gateway answered to each notification
}

func startFakeEpay(tb testing.TB) *fakeEpay {
	f := &fakeEpay{tb: tb}
	f.Server = httptest.NewServer(http.HandlerFunc(f.submit))
	tb.Cleanup(f.Close)
	return f
}

func (f *fakeEpay) submit(w http.ResponseWriter, r *http.Request) {
	if r.Method != "POST" || r.URL.Path != "/submit.php" {
		f.tb.Errorf("fake epay: unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		f.tb.Errorf("fake epay: %v", err)
		return
	}
	form := r.PostForm
	if form.Get("pid") != epayPID || form.Get("sign_type") != "MD5" || form.Get("sign") != epayTestSign(form, epayKey) {
		f.tb.Errorf("fake epay: bad form %v", form)
		http.Error(w, "bad sign", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.orders = append(f.orders, form)
	f.mu.Unlock()
	reply := f.notify(form.Get("notify_url"), f.paid(form))
	f.mu.Lock()
	f.replies = append(f.replies, reply)
	f.mu.Unlock()
	io.WriteString(w, "paid")
}

// paid is the notification for a paid order: signed, TRADE_SUCCESS.
func (f *fakeEpay) paid(form url.Values) url.Values {
	n := url.Values{
		"pid": {form.Get("pid")}, "trade_no": {"2024" + form.Get("out_trade_no")}, "out_trade_no": {form.Get("out_trade_no")},
		"type": {form.Get("type")}, "name": {form.Get("name")}, "money": {form.Get("money")},
		"trade_status": {"TRADE_SUCCESS"}, "sign_type": {"MD5"},
	}
	n.Set("sign", epayTestSign(n, epayKey))
	return n
}

// notify calls a notify URL with the parameters in the query string, as
// epay does, and returns the plain-text answer.
func (f *fakeEpay) notify(notifyURL string, params url.Values) string {
	resp, err := http.Get(notifyURL + "?" + params.Encode())
	if err != nil {
		f.tb.Errorf("notify: %v", err)
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		f.tb.Errorf("notify answered %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return string(b)
}

func (f *fakeEpay) lastReply() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.replies) == 0 {
		return ""
	}
	return f.replies[len(f.replies)-1]
}

// payReply is the answer of /api/user/pay.
type payReply struct {
	Message string            `json:"message"`
	Data    map[string]string `json:"data"`
	URL     string            `json:"url"`
}

// startPayServer starts a gateway whose online top-up points at a fresh
// fake provider.
func startPayServer(t *testing.T) (*TestServer, *fakeEpay) {
	ts := MustStartServer(t)
	pay := startFakeEpay(t)
	ts.MustSetOptions(t, "PayAddress", pay.URL, "EpayId", epayPID, "EpayKey", epayKey, "ServerAddress", ts.URL,
		"Price", "7.3", "MinTopUp", "2", "TopupGroupRatio", `{"default":1,"vip":0.5,"svip":0}`)
	return ts, pay
}

// mustPay asks for an order and returns the form, checked field by field.
func mustPay(t *testing.T, ts *TestServer, as string, amount int64) payReply {
	t.Helper()
	r := ApiScenario{Method: "POST", URL: "/api/user/pay", As: as,
		Body: fmt.Sprintf(`{"amount":%d,"top_up_code":"","payment_method":"zfb"}`, amount), WantStatus: 200,
		WantNotContains: []string{`"success":`}}.Test(t, ts)
	var p payReply
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// submit posts the form to the provider, as the console's hidden form does.
func (p payReply) submit(t *testing.T) {
	t.Helper()
	form := url.Values{}
	for k, v := range p.Data {
		form.Set(k, v)
	}
	resp, err := http.PostForm(p.URL, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("provider answered %d", resp.StatusCode)
	}
}

func TestTopUp_NotConfigured(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "PayAddress", "https://pay.example.com", "EpayId", epayPID) // no key
	runScenarios(t, ts, []ApiScenario{
		{Name: "Amount", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":10}`,
			WantStatus: 403, WantContains: []string{`{"message":"error","data":"管理员未开启在线充值"}`}},
		{Name: "Pay", Method: "POST", URL: "/api/user/pay", As: "user", Body: `{"amount":10,"payment_method":"zfb"}`,
			WantStatus: 403, WantContains: []string{`"data":"管理员未开启在线充值"`}, WantNotContains: []string{`"success":`}},
		// Unconfigured, a notification is refused rather than a crash.
		{Name: "Notify", URL: "/api/user/epay/notify?out_trade_no=x&sign=y", WantStatus: 200, WantContains: []string{"fail"}},
	})
}

// An order needs a saved ServerAddress: without one its return and
// notification addresses would be http://localhost:3000, which no provider
// reaches, and the payment would never be credited.
func TestTopUp_NoServerAddress(t *testing.T) {
	t.Parallel()
	ts, _ := startPayServer(t)
	ts.MustSetOptions(t, "ServerAddress", "")
	runScenarios(t, ts, []ApiScenario{
		{Name: "Amount", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":10}`,
			WantStatus: 403, WantContains: []string{`{"message":"error","data":"管理员未设置服务器地址，暂不能在线充值"}`}},
		{Name: "Pay", Method: "POST", URL: "/api/user/pay", As: "user", Body: `{"amount":10,"payment_method":"zfb"}`,
			WantStatus: 403, WantContains: []string{`"data":"管理员未设置服务器地址，暂不能在线充值"`}, WantNotContains: []string{`"success":`, "localhost"}},
	})
	if list, err := ts.Store.TopUps(0, 0, 0); err != nil || len(list) != 0 {
		t.Fatalf("orders = %v, %v; want none", list, err)
	}
	// The notification address alone is not enough: the payer is sent back to ServerAddress.
	ts.MustSetOptions(t, "CustomCallbackAddress", ts.URL)
	ApiScenario{Method: "POST", URL: "/api/user/pay", As: "user", Body: `{"amount":10,"payment_method":"zfb"}`,
		WantStatus: 403}.Test(t, ts)
	ts.MustSetOptions(t, "ServerAddress", ts.URL)
	if p := mustPay(t, ts, "user", 10); p.Data["return_url"] != ts.URL+"/log" {
		t.Fatalf("return_url = %q", p.Data["return_url"])
	}
}

func TestTopUp_Amount(t *testing.T) {
	t.Parallel()
	ts, _ := startPayServer(t)
	runScenarios(t, ts, []ApiScenario{
		{Name: "Guest", Method: "POST", URL: "/api/user/amount", Body: `{"amount":10}`, WantStatus: 401},
		{Name: "BelowMin", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":1,"top_up_code":""}`,
			WantStatus: 400, WantContains: []string{`{"message":"error","data":"充值数量不能小于 2"}`}},
		{Name: "Dollars", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":10,"top_up_code":""}`,
			WantStatus: 200, WantContains: []string{`{"message":"success","data":"73.00"}`}},
		{Name: "GroupRatio", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":10}`,
			Before:     func(tb testing.TB, ts *TestServer) { setGroup(tb, ts, "alice", "vip") },
			WantStatus: 200, WantContains: []string{`"data":"36.50"`}},
		// A zero ratio counts as 1.
		{Name: "ZeroGroupRatio", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":10}`,
			Before:     func(tb testing.TB, ts *TestServer) { setGroup(tb, ts, "alice", "svip") },
			WantStatus: 200, WantContains: []string{`"data":"73.00"`}},
		{Name: "TooLarge", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":9000000000000}`, WantStatus: 400},
		{Name: "BadBody", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":"ten"}`,
			WantStatus: 400, WantContains: []string{`"message":"error"`}},
	})
	// The quote refuses a price of exactly 0.01 (S §6.3).
	ts.MustSetOptions(t, "Price", "0.005")
	runScenarios(t, ts, []ApiScenario{
		{Name: "MoneyAtCent", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":2}`,
			WantStatus: 400, WantContains: []string{`"data":"充值金额过低"`}},
		{Name: "MoneyAboveCent", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":3}`,
			WantStatus: 200, WantContains: []string{`"data":"0.02"`}},
	})
	// The minimums judge the money before rounding: half a cent is not a
	// cent, for the quote and for the order alike.
	ts.MustSetOptions(t, "Price", "0.001")
	runScenarios(t, ts, []ApiScenario{
		{Name: "HalfCentQuote", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":5}`,
			WantStatus: 400, WantContains: []string{`"data":"充值金额过低"`}},
		{Name: "HalfCentOrder", Method: "POST", URL: "/api/user/pay", As: "user", Body: `{"amount":5,"payment_method":"zfb"}`,
			WantStatus: 400, WantContains: []string{`"data":"充值金额过低"`}},
		{Name: "JustAboveCent", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":11}`,
			WantStatus: 200, WantContains: []string{`"data":"0.01"`}},
	})
	// A price and a group ratio at their bounds make money no order can hold.
	ts.MustSetOptions(t, "Price", "1000000", "TopupGroupRatio", `{"default":1000000,"vip":1000000,"svip":1000000}`)
	runScenarios(t, ts, []ApiScenario{
		{Name: "MoneyTooHighQuote", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":1000000}`,
			WantStatus: 400, WantContains: []string{`"data":"充值金额过高"`}},
		{Name: "MoneyTooHighOrder", Method: "POST", URL: "/api/user/pay", As: "user", Body: `{"amount":1000000,"payment_method":"zfb"}`,
			WantStatus: 400, WantContains: []string{`"data":"充值金额过高"`}},
	})
	ts.MustSetOptions(t, "Price", "7.3", "TopupGroupRatio", `{"default":1,"vip":0.5,"svip":0}`)
	// In quota units the minimum is MinTopUp × QuotaPerUnit.
	ts.MustSetOptions(t, "DisplayInCurrencyEnabled", "false")
	runScenarios(t, ts, []ApiScenario{
		{Name: "QuotaBelowMin", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":999999}`,
			WantStatus: 400, WantContains: []string{`"data":"充值数量不能小于 1000000"`}},
		{Name: "Quota", Method: "POST", URL: "/api/user/amount", As: "user", Body: `{"amount":1500000}`,
			WantStatus: 200, WantContains: []string{`"data":"21.90"`}},
	})
}

func setGroup(tb testing.TB, ts *TestServer, username, group string) {
	tb.Helper()
	if _, err := ts.Store.UpdateUser(ts.UserID(tb, username), store.UserUpdate{Group: &group}); err != nil {
		tb.Fatal(err)
	}
}

var tradeNo = regexp.MustCompile(`^USR(\d+)NO[0-9A-Za-z]{6}\d{10}$`)

func TestTopUp_PayAndNotify(t *testing.T) {
	t.Parallel()
	ts, pay := startPayServer(t)
	alice := ts.UserID(t, "alice")
	before := mustUser(t, ts, alice).Quota

	ApiScenario{Name: "Guest", Method: "POST", URL: "/api/user/pay", Body: `{"amount":10,"payment_method":"zfb"}`, WantStatus: 401}.Test(t, ts)
	ApiScenario{Name: "Method", Method: "POST", URL: "/api/user/pay", As: "user", Body: `{"amount":10,"payment_method":"paypal"}`,
		WantStatus: 400, WantContains: []string{`"data":"不支持的支付方式"`}}.Test(t, ts)

	p := mustPay(t, ts, "user", 10)
	f := p.Data
	if p.Message != "success" || p.URL != pay.URL+"/submit.php" {
		t.Fatalf("pay answer %+v", p)
	}
	if m := tradeNo.FindStringSubmatch(f["out_trade_no"]); m == nil || m[1] != fmt.Sprint(alice) {
		t.Fatalf("out_trade_no %q", f["out_trade_no"])
	}
	want := map[string]string{"pid": epayPID, "type": "alipay", "notify_url": ts.URL + "/api/user/epay/notify",
		"return_url": ts.URL + "/log", "name": "TUC10", "money": "73.00", "device": "pc", "sign_type": "MD5"}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("form %s = %q, want %q", k, f[k], v)
		}
	}
	orders, _ := ts.Store.TopUps(alice, 0, 0)
	if len(orders) != 1 || orders[0].Status != store.TopUpPending || orders[0].Quota != 10*500000 || orders[0].Money != 73 {
		t.Fatalf("orders %+v", orders)
	}

	// The provider takes the payment and notifies the gateway: credited once.
	p.submit(t)
	if got := pay.lastReply(); got != "success" {
		t.Fatalf("notify answered %q", got)
	}
	if got := mustUser(t, ts, alice).Quota; got != before+10*500000 {
		t.Fatalf("quota %d, want %d", got, before+10*500000)
	}
	paid := pay.paid(url.Values{"pid": {epayPID}, "out_trade_no": {f["out_trade_no"]}, "type": {"alipay"}, "name": {"TUC10"}, "money": {"73.00"}})
	// A replay is acknowledged and credits nothing.
	if got := pay.notify(ts.URL+"/api/user/epay/notify", paid); got != "success" {
		t.Fatalf("replay answered %q", got)
	}
	if got := mustUser(t, ts, alice).Quota; got != before+10*500000 {
		t.Fatalf("quota %d after a replay", got)
	}
	logs, _ := ts.Store.Logs(store.LogFilter{UserID: alice, Type: store.LogTypeTopup}, 1, 10)
	if logs.Total != 1 || !strings.Contains(logs.Items[0].Content, f["out_trade_no"]) {
		t.Fatalf("top-up logs %+v", logs.Items)
	}

	// The administrator sees the order with its status; users do not.
	runScenarios(t, ts, []ApiScenario{
		{Name: "ListAdmin", URL: "/api/topup/?p=0", As: "admin", WantStatus: 200,
			WantContains: []string{f["out_trade_no"], `"status":"success"`, `"money":73`}},
		{Name: "ListUser", URL: "/api/topup/", As: "user", WantStatus: 403},
		{Name: "ListGuest", URL: "/api/topup/", WantStatus: 401},
	})
}

func TestTopUp_CustomCallbackAndQuotaMode(t *testing.T) {
	t.Parallel()
	ts, _ := startPayServer(t)
	ts.MustSetOptions(t, "CustomCallbackAddress", "https://cb.example.com/", "DisplayInCurrencyEnabled", "false")
	p := ApiScenario{Method: "POST", URL: "/api/user/pay", As: "user", Body: `{"amount":1500000,"payment_method":"wx"}`, WantStatus: 200}.Test(t, ts)
	var r payReply
	if err := json.Unmarshal(p.Body, &r); err != nil {
		t.Fatal(err)
	}
	if r.Data["notify_url"] != "https://cb.example.com/api/user/epay/notify" || r.Data["type"] != "wxpay" || r.Data["money"] != "21.90" ||
		r.Data["name"] != "TUC1500000" || r.Data["return_url"] != ts.URL+"/log" {
		t.Fatalf("form %v", r.Data)
	}
	// In quota mode the order credits exactly the quota asked for; its amount
	// is in dollars, truncated (S §6.3).
	orders, _ := ts.Store.TopUps(0, 0, 0)
	if len(orders) != 1 || orders[0].Quota != 1500000 || orders[0].Amount != 3 {
		t.Fatalf("orders %+v", orders)
	}
}

func TestTopUp_NotifyRefused(t *testing.T) {
	t.Parallel()
	ts, pay := startPayServer(t)
	alice := ts.UserID(t, "alice")
	before := mustUser(t, ts, alice).Quota
	p := mustPay(t, ts, "user", 10)
	order := url.Values{"pid": {epayPID}, "out_trade_no": {p.Data["out_trade_no"]}, "type": {"alipay"}, "name": {"TUC10"}, "money": {"73.00"}}
	notifyURL := ts.URL + "/api/user/epay/notify"
	resign := func(v url.Values) url.Values {
		v.Set("sign", epayTestSign(v, epayKey))
		return v
	}
	for _, tt := range []struct {
		name   string
		params func() url.Values
	}{
		{"ForgedSignature", func() url.Values {
			v := pay.paid(order)
			v.Set("sign", epayTestSign(v, "guessed-key"))
			return v
		}},
		{"NoSignature", func() url.Values { v := pay.paid(order); v.Del("sign"); return v }},
		{"TamperedMoney", func() url.Values { v := pay.paid(order); v.Set("money", "0.01"); return v }},
		// Signed by the key holder, but not what the order costs.
		{"SignedWrongMoney", func() url.Values { v := pay.paid(order); v.Set("money", "7.30"); return resign(v) }},
		{"WrongPID", func() url.Values { v := pay.paid(order); v.Set("pid", "9999"); return resign(v) }},
		{"UnknownOrder", func() url.Values {
			v := pay.paid(order)
			v.Set("out_trade_no", "USR1NOabcdef1700000000")
			return resign(v)
		}},
		{"NotPaid", func() url.Values { v := pay.paid(order); v.Set("trade_status", "WAIT_BUYER_PAY"); return resign(v) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := pay.notify(notifyURL, tt.params()); got != "fail" {
				t.Fatalf("answered %q, want fail", got)
			}
		})
	}
	if got := mustUser(t, ts, alice).Quota; got != before {
		t.Fatalf("quota moved to %d on refused notifications", got)
	}
	// The provider may also POST a form; a correct one still credits.
	resp, err := http.PostForm(notifyURL, pay.paid(order))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "success" || mustUser(t, ts, alice).Quota != before+10*500000 {
		t.Fatalf("form notification: %q, quota %d", b, mustUser(t, ts, alice).Quota)
	}
}

func TestTopUp_ConcurrentNotifications(t *testing.T) {
	t.Parallel()
	ts, pay := startPayServer(t)
	alice := ts.UserID(t, "alice")
	before := mustUser(t, ts, alice).Quota
	p := mustPay(t, ts, "user", 3)
	paid := pay.paid(url.Values{"pid": {epayPID}, "out_trade_no": {p.Data["out_trade_no"]}, "type": {"alipay"},
		"name": {"TUC3"}, "money": {p.Data["money"]}})
	const n = 20
	replies := make([]string, n)
	together(n, func(i int) { replies[i] = pay.notify(ts.URL+"/api/user/epay/notify", paid) })
	for i, r := range replies {
		if r != "success" {
			t.Errorf("notification %d answered %q", i, r)
		}
	}
	if got := mustUser(t, ts, alice).Quota; got != before+3*500000 {
		t.Fatalf("quota %d, want %d: credited more than once", got, before+3*500000)
	}
	logs, _ := ts.Store.Logs(store.LogFilter{UserID: alice, Type: store.LogTypeTopup}, 1, 10)
	if logs.Total != 1 {
		t.Fatalf("%d top-up logs, want 1", logs.Total)
	}
}

// ---- quota reminder ----

type sentMail struct{ to, subject, body string }

// mailRecorder is an injectable MailFunc; while hold is open every send waits.
type mailRecorder struct {
	mu   sync.Mutex
	sent []sentMail
	hold chan struct{}
}

func (m *mailRecorder) send(ctx context.Context, to, subject, body string) error {
	if m.hold != nil {
		<-m.hold
	}
	m.mu.Lock()
	m.sent = append(m.sent, sentMail{to, subject, body})
	m.mu.Unlock()
	return nil
}

func (m *mailRecorder) take() []sentMail {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.sent
	m.sent = nil
	return out
}

func TestQuotaReminder(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "SMTPServer", "smtp.example.com", "QuotaRemindThreshold", "1000",
		"ServerAddress", "https://gw.example.com", "DisplayInCurrencyEnabled", "false")
	alice, inviter := ts.UserID(t, "alice"), ts.UserID(t, "inviter") // inviter has no e-mail
	rec := &mailRecorder{}
	q := api.NewQuotaReminder(ts.Store, rec.send)
	observe := func(quota int64, ids ...uint64) []sentMail {
		var b store.ChargeBatch
		for _, id := range ids {
			b.Balances = append(b.Balances, store.Balance{UserID: id, Quota: quota})
		}
		q.Observe(b)
		q.Wait()
		return rec.take()
	}
	for _, step := range []struct {
		name    string
		quota   int64
		ids     []uint64
		subject string // "" = no mail
	}{
		{"Above", 5000, []uint64{alice, inviter}, ""},
		{"AtThreshold", 1000, []uint64{alice}, ""},
		{"CrossesBelow", 999, []uint64{alice, inviter}, "您的额度即将用尽"},
		{"StillLow", 10, []uint64{alice}, ""},
		{"Exhausted", -5, []uint64{alice}, "您的额度已用尽"},
		{"StillExhausted", -9, []uint64{alice}, ""},
		{"BackAbove", 2000, []uint64{alice}, ""},
		{"ExhaustedAgain", 0, []uint64{alice}, "您的额度已用尽"},
		// A top-up (no charge) takes it back above; the next charge that
		// takes it below is mailed again.
		{"ToppedUp", -1, nil, ""},
		{"LowAfterTopUp", 991, []uint64{alice}, "您的额度即将用尽"},
	} {
		if step.quota == -1 {
			q.Seen(alice, 1005)
			q.Seen(inviter, 999) // below: changes nothing
			continue
		}
		got := observe(step.quota, step.ids...)
		switch {
		case step.subject == "" && len(got) != 0:
			t.Fatalf("%s: sent %+v, want nothing", step.name, got)
		case step.subject != "" && len(got) != 1:
			t.Fatalf("%s: sent %d mails, want 1 (to alice only)", step.name, len(got))
		case step.subject != "":
			m := got[0]
			if m.to != aliceEmail || !strings.Contains(m.subject, step.subject) ||
				!strings.Contains(m.body, `href="https://gw.example.com/topup"`) || !strings.Contains(m.body, fmt.Sprint(step.quota)) {
				t.Fatalf("%s: mail %+v", step.name, m)
			}
		}
	}

	// Observe never waits for the mail server.
	rec.hold = make(chan struct{})
	done := make(chan struct{})
	go func() {
		q.Observe(store.ChargeBatch{Balances: []store.Balance{{UserID: alice, Quota: 1}}})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Observe blocked on a slow mail server")
	}
	close(rec.hold)
	q.Wait()
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("reminded twice while low: %+v", got)
	}

	// Without SMTP nothing is sent or remembered.
	q2 := api.NewQuotaReminder(ts.Store, rec.send)
	ts.MustSetOptions(t, "SMTPServer", "")
	q2.Observe(store.ChargeBatch{Balances: []store.Balance{{UserID: alice, Quota: 1}}})
	q2.Wait()
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("sent without SMTP: %+v", got)
	}
}

// S §5.8 (step 10) mails a user whose quota crosses below
// QuotaRemindThreshold and one whose quota drops to zero or less: a user
// already told their quota is running low is still told when it runs out,
// once per time it runs out.
func TestQuotaReminder_Exhausted(t *testing.T) {
	t.Parallel()
	ts := MustStartServer(t)
	ts.MustSetOptions(t, "SMTPServer", "smtp.example.com", "QuotaRemindThreshold", "1000",
		"ServerAddress", "https://gw.example.com", "DisplayInCurrencyEnabled", "false")
	alice := ts.UserID(t, "alice")
	rec := &mailRecorder{}
	q := api.NewQuotaReminder(ts.Store, rec.send)
	for _, step := range []struct {
		name    string
		seen    int64 // a balance changed by something else than a charge (Seen); 0 = a charge
		quota   int64
		subject string // "" = no mail
	}{
		{name: "Above", quota: 5000},
		{name: "CrossesBelow", quota: 400, subject: "您的额度即将用尽"},
		{name: "RunsOut", quota: -5, subject: "您的额度已用尽"},
		{name: "StillOut", quota: -20},
		// A small redemption takes it above zero, not above the threshold:
		// the next time it runs out is mailed, the low warning is not repeated.
		{name: "SmallTopUp", seen: 300},
		{name: "LowAgain", quota: 200},
		{name: "RunsOutAgain", quota: 0, subject: "您的额度已用尽"},
	} {
		if step.seen != 0 {
			q.Seen(alice, step.seen)
			continue
		}
		q.Observe(store.ChargeBatch{Balances: []store.Balance{{UserID: alice, Quota: step.quota}}})
		q.Wait()
		got := rec.take()
		switch {
		case step.subject == "" && len(got) != 0:
			t.Fatalf("%s: sent %+v, want nothing", step.name, got)
		case step.subject != "" && len(got) != 1:
			t.Fatalf("%s: sent %d mails, want 1 (%s)", step.name, len(got), step.subject)
		case step.subject != "" && !strings.Contains(got[0].subject, step.subject):
			t.Fatalf("%s: subject %q, want %q", step.name, got[0].subject, step.subject)
		}
	}
}

// TestQuotaReminder_Ledger wires the server's reminder to the ledger's
// Charged hook, as main does, and receives the mail over real SMTP.
func TestQuotaReminder_Ledger(t *testing.T) {
	t.Parallel()
	ts, smtp := MustStartMailServer(t)
	ts.MustSetOptions(t, "QuotaRemindThreshold", "1000", "ServerAddress", "https://gw.example.com")
	if first, again := ts.API.QuotaReminder(), ts.API.QuotaReminder(); first != again {
		t.Fatal("QuotaReminder returns a new reminder on every call")
	}
	ts.Store.SetHooks(store.Hooks{Charged: ts.API.QuotaReminder().Observe})
	alice := ts.UserID(t, "alice")
	if _, err := ts.Store.UpdateUserAsAdmin("setup", alice, store.UserUpdate{}, new(int64(1500))); err != nil {
		t.Fatal(err)
	}
	charge := func(quota int64) {
		res, err := ts.Store.Reserve(alice, 0, quota)
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.Store.Settle(res, 0, quota, &store.Log{UserID: alice, Username: "alice", Type: store.LogTypeConsume, ModelName: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	charge(400) // 1100 left: above the threshold
	charge(400) // 700 left: crosses below
	charge(100) // still low: no second mail
	ts.API.QuotaReminder().Wait()
	m := smtp.Wait(t)
	if len(m.To) != 1 || m.To[0] != aliceEmail || !strings.Contains(m.Body, "https://gw.example.com/topup") {
		t.Fatalf("reminder mail to %v: %s", m.To, m.Body)
	}
	if n := len(smtp.Messages()); n != 1 {
		t.Fatalf("%d mails sent, want 1", n)
	}
}
