package store

import (
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
	bolt "go.etcd.io/bbolt"
)

// Redemption statuses.
const (
	RedemptionUnused   = 1
	RedemptionDisabled = 2
	RedemptionUsed     = 3
)

// Redemption is a code that adds quota to the account that redeems it.
type Redemption struct {
	ID           uint64 `json:"id"`
	UserID       uint64 `json:"user_id"` // the administrator who created it
	Key          string `json:"key"`
	Status       int    `json:"status"`
	Name         string `json:"name"`
	Quota        int64  `json:"quota"`
	CreatedTime  int64  `json:"created_time"`
	RedeemedTime int64  `json:"redeemed_time"`
	UsedUserID   uint64 `json:"used_user_id"`
	DeletedAt    int64  `json:"deleted_at,omitempty"`
}

func validateRedemption(name string, quota int64) error {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 20 {
		return Errorf(EINVALID, "兑换码名称长度必须在 1-20 之间")
	}
	if hasControl(name) {
		return Errorf(EINVALID, "兑换码名称不能包含控制字符")
	}
	if quota <= 0 {
		return Errorf(EINVALID, "兑换码额度必须大于 0")
	}
	if quota > MaxQuota {
		return errQuotaTooLarge
	}
	return nil
}

func getRedemption(tx *bolt.Tx, id uint64) (*Redemption, error) {
	var r Redemption
	ok, err := getJSON(tx.Bucket(bucketRedemptions), itob(id), &r)
	if err != nil {
		return nil, Internal(err)
	}
	if !ok || r.DeletedAt != 0 {
		return nil, Errorf(ENOTFOUND, "兑换码不存在")
	}
	return &r, nil
}

// CreateRedemptions creates count codes (1-100) in one transaction and
// returns them. Errors: EINVALID.
func (s *Store) CreateRedemptions(creator uint64, name string, quota int64, count int) ([]*Redemption, error) {
	if err := validateRedemption(name, quota); err != nil {
		return nil, err
	}
	if count < 1 || count > 100 {
		return nil, Errorf(EINVALID, "一次兑换码批量生成的个数必须在 1-100 之间")
	}
	now := s.nowUnix()
	var out []*Redemption
	err := s.update(func(tx *bolt.Tx) error {
		out = out[:0]
		b := tx.Bucket(bucketRedemptions)
		for i := 0; i < count; i++ {
			id, _ := b.NextSequence()
			r := &Redemption{ID: id, UserID: creator, Key: RandomHex(32), Status: RedemptionUnused,
				Name: strings.TrimSpace(name), Quota: quota, CreatedTime: now}
			if err := tx.Bucket(bucketIdxRedemptionKey).Put([]byte(r.Key), itob(id)); err != nil {
				return err
			}
			if err := putJSON(b, itob(id), r); err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, wrapTx(err)
	}
	return out, nil
}

// Redemption returns one code. Errors: ENOTFOUND.
func (s *Store) Redemption(id uint64) (*Redemption, error) {
	var r *Redemption
	err := s.db.View(func(tx *bolt.Tx) (err error) { r, err = getRedemption(tx, id); return })
	return r, err
}

// Redemptions lists codes newest first; keyword matches the id or a name
// prefix (S: name LIKE 'kw%', so % and _ are wildcards and ASCII case does
// not count). Offset and limit page the list (limit 0 = all).
func (s *Store) Redemptions(keyword string, offset, limit int) ([]*Redemption, error) {
	out := []*Redemption{}
	kw := strings.TrimSpace(keyword)
	id, idErr := strconv.ParseUint(kw, 10, 64)
	pattern := strings.ToLower(kw) + "%"
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRedemptions).Cursor()
		skipped := 0
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			var r Redemption
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			if r.DeletedAt != 0 {
				continue
			}
			if kw != "" && !(idErr == nil && r.ID == id) && !likeMatch(strings.ToLower(r.Name), pattern) {
				continue
			}
			if skipped < offset {
				skipped++
				continue
			}
			out = append(out, &r)
			if limit > 0 && len(out) >= limit {
				break
			}
		}
		return nil
	})
	return out, Internal(err)
}

// RedemptionUpdate lists the fields to change.
type RedemptionUpdate struct {
	Name   *string `json:"name"`
	Quota  *int64  `json:"quota"`
	Status *int    `json:"status"`
}

// UpdateRedemption edits a code. Name and quota change only while it is
// unused; status moves between unused and disabled only, and a used code
// never changes. Errors: ENOTFOUND, EINVALID.
func (s *Store) UpdateRedemption(id uint64, upd RedemptionUpdate) (*Redemption, error) {
	var out *Redemption
	err := s.update(func(tx *bolt.Tx) error {
		r, err := getRedemption(tx, id)
		if err != nil {
			return err
		}
		if r.Status == RedemptionUsed {
			return Errorf(EINVALID, "兑换码已被使用，无法修改")
		}
		if upd.Name != nil || upd.Quota != nil {
			if r.Status != RedemptionUnused {
				return Errorf(EINVALID, "只能编辑未使用的兑换码")
			}
			name, quota := r.Name, r.Quota
			if upd.Name != nil {
				name = strings.TrimSpace(*upd.Name)
			}
			if upd.Quota != nil {
				quota = *upd.Quota
			}
			if err := validateRedemption(name, quota); err != nil {
				return err
			}
			r.Name, r.Quota = name, quota
		}
		if upd.Status != nil {
			if *upd.Status != RedemptionUnused && *upd.Status != RedemptionDisabled {
				return Errorf(EINVALID, "无效的兑换码状态")
			}
			r.Status = *upd.Status
		}
		out = r
		return putJSON(tx.Bucket(bucketRedemptions), itob(id), r)
	})
	return out, wrapTx(err)
}

// DeleteRedemption soft-deletes a code; its key stops working.
// Errors: ENOTFOUND.
func (s *Store) DeleteRedemption(id uint64) error {
	return wrapTx(s.update(func(tx *bolt.Tx) error {
		r, err := getRedemption(tx, id)
		if err != nil {
			return err
		}
		r.DeletedAt = s.nowUnix()
		if err := tx.Bucket(bucketIdxRedemptionKey).Delete([]byte(r.Key)); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bucketRedemptions), itob(id), r)
	}))
}

// Redeem claims an unused code for userID and credits its quota, with a
// top-up log, in one transaction: of any number of concurrent attempts on
// one code exactly one succeeds. It returns the quota added.
// Errors: EINVALID (unknown, used or disabled code), ENOTFOUND, EFORBIDDEN
// (a deleted account).
func (s *Store) Redeem(userID uint64, key string) (int64, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return 0, Errorf(EINVALID, "请输入兑换码！")
	}
	var quota int64
	err := s.updateBalances(func(tx *bolt.Tx) ([]balanceDelta, error) {
		idb := tx.Bucket(bucketIdxRedemptionKey).Get([]byte(key))
		if idb == nil {
			return nil, Errorf(EINVALID, "无效的兑换码")
		}
		r, err := getRedemption(tx, btoi(idb))
		if err != nil {
			return nil, Errorf(EINVALID, "无效的兑换码")
		}
		if r.Status != RedemptionUnused {
			return nil, Errorf(EINVALID, "该兑换码已被使用或已禁用")
		}
		u, err := getUser(tx, userID)
		if err != nil {
			return nil, err
		}
		// An account deleted while the request was on its way would spend
		// the code on a balance nobody can use: the code stays unused.
		if u.Deleted() {
			return nil, Errorf(EFORBIDDEN, "用户已注销")
		}
		now := s.nowUnix()
		r.Status, r.RedeemedTime, r.UsedUserID = RedemptionUsed, now, userID
		if err := putJSON(tx.Bucket(bucketRedemptions), itob(r.ID), r); err != nil {
			return nil, err
		}
		if s.ledger.liveQuotaLocked(u) > MaxQuota-r.Quota {
			return nil, errQuotaTooLarge
		}
		u.Quota += r.Quota
		if err := putUserRecord(tx, u); err != nil {
			return nil, err
		}
		quota = r.Quota
		if err := appendLog(tx, &Log{UserID: userID, Username: u.Username, Type: LogTypeTopup, CreatedAt: now,
			Content: "通过兑换码充值 " + formatQuota(s.Settings(), r.Quota) + "，兑换码ID " + strconv.FormatUint(r.ID, 10)}); err != nil {
			return nil, err
		}
		return []balanceDelta{{user: userID, quota: r.Quota}}, nil
	})
	if err != nil {
		return 0, err
	}
	s.userChanged(userID)
	return quota, nil
}

// setQuotaTx sets user u's live quota to quota in tx, with its manage log,
// and returns the change (0: nothing written); open reservations stay
// counted. The ledger lock is held.
func (s *Store) setQuotaTx(tx *bolt.Tx, adminName string, u *User, quota int64) (int64, error) {
	if err := checkQuotaMagnitude(quota); err != nil {
		return 0, err
	}
	live := s.ledger.liveQuotaLocked(u)
	delta := quota - live
	if delta == 0 {
		return 0, nil
	}
	u.Quota += delta
	if err := putUserRecord(tx, u); err != nil {
		return 0, err
	}
	set := s.Settings()
	// The user sees the change in their own log; which administrator made
	// it is for administrators (admin_info is left out of a user's views).
	operator, _ := json.Marshal(map[string]map[string]string{"admin_info": {"operator": adminName}})
	if err := appendLog(tx, &Log{UserID: u.ID, Username: u.Username, Type: LogTypeManage, CreatedAt: s.nowUnix(),
		Content: "管理员将用户额度从 " + formatQuota(set, live) + " 修改为 " + formatQuota(set, quota), Other: string(operator)}); err != nil {
		return 0, err
	}
	return delta, nil
}
