package store

import (
	"math"
	"strconv"

	json "github.com/goccy/go-json"
	bolt "go.etcd.io/bbolt"
)

// Top-up order statuses.
const (
	TopUpPending = "pending"
	TopUpSuccess = "success"
)

// TopUp is an online payment order.
type TopUp struct {
	ID            uint64  `json:"id"`
	UserID        uint64  `json:"user_id"`
	Amount        int64   `json:"amount"` // dollars (truncated when the console counts in quota units)
	Quota         int64   `json:"quota"`  // what a paid order credits
	Money         float64 `json:"money"`  // what the user must pay, 2 decimals
	TradeNo       string  `json:"trade_no"`
	PaymentMethod string  `json:"payment_method"`
	CreateTime    int64   `json:"create_time"`
	CompleteTime  int64   `json:"complete_time"`
	Status        string  `json:"status"`
}

// cents turns money into whole cents for exact comparison.
func cents(m float64) int64 { return int64(math.Round(m * 100)) }

// CreateTopUp stores a pending order. Errors: EINVALID, ECONFLICT.
func (s *Store) CreateTopUp(t *TopUp) error {
	if t.TradeNo == "" || t.Quota <= 0 || cents(t.Money) <= 0 {
		return Errorf(EINVALID, "无效的充值订单")
	}
	t.Status = TopUpPending
	t.CreateTime = s.nowUnix()
	t.Money = float64(cents(t.Money)) / 100
	return wrapTx(s.update(func(tx *bolt.Tx) error {
		idx := tx.Bucket(bucketIdxTopUpTradeNo)
		if idx.Get([]byte(t.TradeNo)) != nil {
			return Errorf(ECONFLICT, "订单号重复")
		}
		b := tx.Bucket(bucketTopUps)
		id, _ := b.NextSequence()
		t.ID = id
		if err := idx.Put([]byte(t.TradeNo), itob(id)); err != nil {
			return err
		}
		return putJSON(b, itob(id), t)
	}))
}

// CompleteTopUp marks a pending order paid and credits its quota with a
// top-up log, in one transaction, exactly once: a replayed or concurrent
// notification finds the order already paid and credits nothing (done is
// true then). paid is the amount the payment provider reports; it must
// equal the order's money. Errors: ENOTFOUND, EINVALID.
func (s *Store) CompleteTopUp(tradeNo string, paid float64) (order *TopUp, done bool, err error) {
	err = s.updateBalances(func(tx *bolt.Tx) ([]balanceDelta, error) {
		idb := tx.Bucket(bucketIdxTopUpTradeNo).Get([]byte(tradeNo))
		if idb == nil {
			return nil, Errorf(ENOTFOUND, "订单不存在")
		}
		var t TopUp
		if _, err := getJSON(tx.Bucket(bucketTopUps), idb, &t); err != nil {
			return nil, err
		}
		order = &t
		if t.Status == TopUpSuccess {
			done = true
			return nil, nil
		}
		if cents(paid) != cents(t.Money) {
			return nil, Errorf(EINVALID, "支付金额与订单金额不符")
		}
		u, err := getUser(tx, t.UserID)
		if err != nil {
			return nil, err
		}
		// The order stays pending (and the provider's notification is
		// answered as failed) rather than wrap the balance around.
		if s.ledger.liveQuotaLocked(u) > MaxQuota-t.Quota {
			return nil, errQuotaTooLarge
		}
		now := s.nowUnix()
		t.Status, t.CompleteTime = TopUpSuccess, now
		if err := putJSON(tx.Bucket(bucketTopUps), idb, &t); err != nil {
			return nil, err
		}
		u.Quota += t.Quota
		if err := putUserRecord(tx, u); err != nil {
			return nil, err
		}
		if err := appendLog(tx, &Log{UserID: u.ID, Username: u.Username, Type: LogTypeTopup, CreatedAt: now,
			Content: "在线充值成功，充值额度: " + formatQuota(s.Settings(), t.Quota) + "，支付金额：" + strconv.FormatFloat(t.Money, 'f', 2, 64) + "，订单号 " + t.TradeNo}); err != nil {
			return nil, err
		}
		return []balanceDelta{{user: u.ID, quota: t.Quota}}, nil
	})
	if err == nil && !done {
		s.userChanged(order.UserID)
	}
	return order, done, err
}

// TopUps lists orders newest first; userID 0 lists everyone's.
func (s *Store) TopUps(userID uint64, offset, limit int) ([]*TopUp, error) {
	out := []*TopUp{}
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketTopUps).Cursor()
		skipped := 0
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			var t TopUp
			if err := json.Unmarshal(v, &t); err != nil {
				return err
			}
			if userID != 0 && t.UserID != userID {
				continue
			}
			if skipped < offset {
				skipped++
				continue
			}
			out = append(out, &t)
			if limit > 0 && len(out) >= limit {
				break
			}
		}
		return nil
	})
	return out, Internal(err)
}
