package api

import (
	"crypto/md5"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"gateway/store"
)

// Online top-up through an epay-compatible payment provider (S §6.3), with
// the fixes S §15.6 asks for: the notification's signature is compared in
// constant time, its pid and paid amount are checked, and the order is
// credited exactly once by one conditional transaction in the store.
func (s *Server) registerTopUpRoutes() {
	s.handle("POST /api/user/amount", s.topUpAmount)
	s.handle("POST /api/user/pay", s.topUpPay)
	s.handle("GET /api/user/epay/notify", s.epayNotify)
	s.handle("POST /api/user/epay/notify", s.epayNotify)
	s.handle("GET /api/topup/{$}", s.listTopUps)
}

// maxTopUpDollars bounds one order so that quota and money cannot overflow.
const maxTopUpDollars = 1_000_000

// maxTopUpMoney bounds what one order may ask to be paid: the price and a
// group's ratio (each up to 1 000 000) could otherwise make an amount whose
// cents no int64 holds.
const maxTopUpMoney = 1e12

// topUpReply is the answer of /amount and /pay: message "success" or
// "error", with no success key (S §1); on failure data carries the reason.
type topUpReply struct {
	Message string `json:"message"`
	Data    any    `json:"data"`
	URL     string `json:"url,omitempty"`
}

// writeTopUpError answers a refused top-up with its real status.
func writeTopUpError(w http.ResponseWriter, r *http.Request, err error) {
	status, ok := statusOf[store.ErrorCode(err)]
	if !ok {
		status = http.StatusInternalServerError
	}
	if store.ErrorCode(err) == store.EINTERNAL {
		slog.Error("internal error", append(logAttrs(r), "err", err)...)
	}
	writeRaw(w, status, topUpReply{Message: "error", Data: store.ErrorMessage(err)})
}

type topUpRequest struct {
	Amount        int64  `json:"amount"`
	TopUpCode     string `json:"top_up_code"` // accepted and ignored, as S §6.3 does
	PaymentMethod string `json:"payment_method"`
}

// topUpQuote is what an amount costs the caller.
type topUpQuote struct {
	Dollars float64 // what the order buys, in US$
	Quota   int64   // what a paid order credits
	Money   float64 // what the caller pays, rounded to cents
	raw     float64 // the money before rounding, which the minimums judge
}

// quoteTopUp prices amount for a user of group: amount is dollars when the
// console shows currency (at least MinTopUp), otherwise quota (at least
// MinTopUp × QuotaPerUnit); money = dollars × Price × TopupGroupRatio[group],
// a missing or zero ratio counting as 1.
func quoteTopUp(set *store.Settings, group string, amount int64) (topUpQuote, error) {
	if set.Get("PayAddress") == "" || set.Get("EpayId") == "" || set.Get("EpayKey") == "" {
		return topUpQuote{}, store.Errorf(store.EFORBIDDEN, "管理员未开启在线充值")
	}
	// Without a saved ServerAddress the order would send the payer back to,
	// and (with no CustomCallbackAddress) have the provider notify,
	// http://localhost:3000: the money would be paid and never credited.
	// The reason is told: payment is enabled as the console shows it, and
	// "not enabled" would leave the administrator nothing to look for.
	if set.Get("ServerAddress") == "" {
		return topUpQuote{}, store.Errorf(store.EFORBIDDEN, "管理员未设置服务器地址，暂不能在线充值")
	}
	qpu := set.QuotaPerUnit()
	minTopUp := set.Int("MinTopUp")
	dollars := float64(amount)
	if set.Bool("DisplayInCurrencyEnabled") {
		if amount < minTopUp {
			return topUpQuote{}, store.Errorf(store.EINVALID, "充值数量不能小于 %d", minTopUp)
		}
	} else {
		if least := int64(float64(minTopUp) * qpu); amount < least {
			return topUpQuote{}, store.Errorf(store.EINVALID, "充值数量不能小于 %d", least)
		}
		dollars = float64(amount) / qpu
	}
	if dollars > maxTopUpDollars {
		return topUpQuote{}, store.Errorf(store.EINVALID, "充值数量过大")
	}
	ratio := set.TopupGroupRatio[group]
	if ratio == 0 {
		ratio = 1
	}
	raw := dollars * set.Float("Price") * ratio
	q := topUpQuote{Dollars: dollars, Quota: int64(math.Round(dollars * qpu)), Money: math.Round(raw*100) / 100, raw: raw}
	// Judged before rounding: 0.005 would round up to a cent and be charged
	// twice its price.
	if q.raw < 0.01 {
		return topUpQuote{}, store.Errorf(store.EINVALID, "充值金额过低")
	}
	if q.raw > maxTopUpMoney {
		return topUpQuote{}, store.Errorf(store.EINVALID, "充值金额过高")
	}
	return q, nil
}

// topUpAmount answers the money an amount costs, with two decimals.
func (s *Server) topUpAmount(w http.ResponseWriter, r *http.Request) {
	var req topUpRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeTopUpError(w, r, err)
		return
	}
	q, err := quoteTopUp(s.store.Settings(), currentUser(r).Group, req.Amount)
	if err == nil && q.raw <= 0.01 {
		// The quote is stricter than the order (S §6.3): 0.01 itself is refused here.
		err = store.Errorf(store.EINVALID, "充值金额过低")
	}
	if err != nil {
		writeTopUpError(w, r, err)
		return
	}
	writeRaw(w, http.StatusOK, topUpReply{Message: "success", Data: strconv.FormatFloat(q.Money, 'f', 2, 64)})
}

// epayTypes maps the console's payment methods to epay's types.
var epayTypes = map[string]string{"zfb": "alipay", "alipay": "alipay", "wx": "wxpay", "wxpay": "wxpay"}

// topUpPay stores a pending order and answers the signed form the console
// posts to {PayAddress}/submit.php.
func (s *Server) topUpPay(w http.ResponseWriter, r *http.Request) {
	var req topUpRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeTopUpError(w, r, err)
		return
	}
	set, u := s.store.Settings(), currentUser(r)
	q, err := quoteTopUp(set, u.Group, req.Amount)
	if err != nil {
		writeTopUpError(w, r, err)
		return
	}
	payType, ok := epayTypes[req.PaymentMethod]
	if !ok {
		writeTopUpError(w, r, store.Errorf(store.EINVALID, "不支持的支付方式"))
		return
	}
	// The row's amount is in dollars, truncated in quota mode (S §6.3); the
	// quota it credits is kept exactly.
	order := &store.TopUp{UserID: u.ID, Amount: int64(q.Dollars), Quota: q.Quota, Money: q.Money, PaymentMethod: payType,
		TradeNo: "USR" + strconv.FormatUint(u.ID, 10) + "NO" + store.RandomString(6) + strconv.FormatInt(s.store.Now().Unix(), 10)}
	if err := s.store.CreateTopUp(order); err != nil {
		writeTopUpError(w, r, err)
		return
	}
	callback := set.Get("CustomCallbackAddress")
	if callback == "" {
		callback = set.ServerAddress()
	}
	form := map[string]string{
		"pid": set.Get("EpayId"), "type": payType, "out_trade_no": order.TradeNo,
		"notify_url": callback + "/api/user/epay/notify", "return_url": set.ServerAddress() + "/log",
		"name": "TUC" + strconv.FormatInt(req.Amount, 10), "money": strconv.FormatFloat(order.Money, 'f', 2, 64),
		"device": "pc", "sign_type": "MD5",
	}
	form["sign"] = epaySign(form, set.Get("EpayKey"))
	writeRaw(w, http.StatusOK, topUpReply{Message: "success", Data: form, URL: set.Get("PayAddress") + "/submit.php"})
}

// epaySign is epay's MD5 signature: the non-empty parameters except sign and
// sign_type, sorted by name and joined as k=v&…, followed by the key.
func epaySign(params map[string]string, key string) string {
	names := make([]string, 0, len(params))
	for k, v := range params {
		if v != "" && k != "sign" && k != "sign_type" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k + "=" + params[k])
	}
	sum := md5.Sum([]byte(b.String() + key))
	return hex.EncodeToString(sum[:])
}

// epayNotify is the provider's server-to-server notification (query string,
// or a form body). It answers plain text "success" once the order is paid,
// also for a replay of an order already credited, and "fail" otherwise, so
// the provider retries what failed.
func (s *Server) epayNotify(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err := s.completeEpay(w, r); err != nil {
		slog.Warn("epay notification refused", append(logAttrs(r), "ip", s.ips.of(r), "err", err)...)
		w.Write([]byte("fail"))
		return
	}
	w.Write([]byte("success"))
}

// completeEpay checks a notification and credits its order.
func (s *Server) completeEpay(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if err := r.ParseForm(); err != nil {
		return store.Errorf(store.EINVALID, "unreadable notification")
	}
	set := s.store.Settings()
	key := set.Get("EpayKey")
	if set.Get("PayAddress") == "" || set.Get("EpayId") == "" || key == "" {
		return store.Errorf(store.EFORBIDDEN, "online top-up is not configured")
	}
	params := formParams(r.Form)
	want := epaySign(params, key)
	if subtle.ConstantTimeCompare([]byte(strings.ToLower(params["sign"])), []byte(want)) != 1 {
		return store.Errorf(store.EUNAUTHORIZED, "bad signature")
	}
	if params["pid"] != set.Get("EpayId") {
		return store.Errorf(store.EINVALID, "pid %q is not ours", params["pid"])
	}
	if params["trade_status"] != "TRADE_SUCCESS" {
		return store.Errorf(store.EINVALID, "trade status %q", params["trade_status"])
	}
	paid, err := strconv.ParseFloat(params["money"], 64)
	if err != nil {
		return store.Errorf(store.EINVALID, "money %q", params["money"])
	}
	order, done, err := s.store.CompleteTopUp(params["out_trade_no"], paid)
	if err != nil {
		return err
	}
	if !done {
		slog.Info("top-up credited", "trade_no", order.TradeNo, "user", order.UserID, "quota", order.Quota, "money", order.Money)
	}
	return nil
}

// formParams flattens a parsed form to its first values.
func formParams(form url.Values) map[string]string {
	out := make(map[string]string, len(form))
	for k, v := range form {
		if len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out
}

// topUpPageSize is the fixed page of the order list.
const topUpPageSize = 10

// listTopUps lists every user's orders, newest first, with their status.
func (s *Server) listTopUps(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.TopUps(0, pageNum(r, 0)*topUpPageSize, topUpPageSize)
	writeResult(w, r, list, err)
}
