package store

import (
	"bytes"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"

	json "github.com/goccy/go-json"
	bolt "go.etcd.io/bbolt"
)

// Token statuses.
const (
	TokenStatusEnabled   = 1
	TokenStatusDisabled  = 2
	TokenStatusExpired   = 3
	TokenStatusExhausted = 4
)

// TokenKeyLen is the length of a token key without its sk- prefix.
const TokenKeyLen = 48

// Token is an API key a user hands to clients. Key is stored without "sk-";
// the key index holds its hash.
type Token struct {
	ID                 uint64 `json:"id"`
	UserID             uint64 `json:"user_id"`
	Key                string `json:"key"`
	Status             int    `json:"status"`
	Name               string `json:"name"`
	CreatedTime        int64  `json:"created_time"`
	AccessedTime       int64  `json:"accessed_time"`
	ExpiredTime        int64  `json:"expired_time"` // -1 = never
	RemainQuota        int64  `json:"remain_quota"`
	UnlimitedQuota     bool   `json:"unlimited_quota"`
	UsedQuota          int64  `json:"used_quota"`
	ModelLimitsEnabled bool   `json:"model_limits_enabled"`
	ModelLimits        string `json:"model_limits"`
	AllowIPs           string `json:"allow_ips"`
	Group              string `json:"group"`
	DeletedAt          int64  `json:"deleted_at,omitempty"`
}

// ModelLimitList returns the allowed model names.
func (t *Token) ModelLimitList() []string { return csvList(t.ModelLimits) }

// AllowsIP reports whether ip may use the token: an empty list allows all;
// entries are exact addresses or CIDR ranges, one per line (commas accepted).
func (t *Token) AllowsIP(ip string) bool {
	list := allowIPEntries(t.AllowIPs)
	if len(list) == 0 {
		return true
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	// A link-local client comes with the interface it reached the server
	// on (fe80::5%eth0); a range never contains an address with a zone.
	addr = addr.Unmap().WithZone("")
	for _, e := range list {
		if p, err := netip.ParsePrefix(e); err == nil && unmapPrefix(p).Contains(addr) {
			return true
		}
		if a, err := netip.ParseAddr(e); err == nil && a.Unmap().WithZone("") == addr {
			return true
		}
	}
	return false
}

// allowIPEntries splits an IP allow list into its entries: one per line,
// commas and white space (a tab pasted from a table too) between them.
func allowIPEntries(list string) []string {
	return strings.FieldsFunc(list, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// unmapPrefix is p with an IPv4 range written in IPv6 form
// (::ffff:10.0.0.0/104) as the IPv4 range it names, since client addresses
// are compared unmapped.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96).Masked()
	}
	return p
}

// Validate checks the fields a user sets.
func (t *Token) Validate() error {
	if err := t.validateOthers(); err != nil {
		return err
	}
	if t.ExpiredTime > MaxExpiredTime {
		return errExpiryTooLate
	}
	if t.RemainQuota < 0 {
		return Errorf(EINVALID, "额度不能为负数")
	}
	if t.RemainQuota > MaxQuota {
		return errQuotaTooLarge
	}
	return nil
}

// validateOthers checks and normalises every field a user sets but the
// remaining quota, which calls may leave below zero (see UpdateToken).
func (t *Token) validateOthers() error {
	t.Name = strings.TrimSpace(t.Name)
	if t.Name == "" {
		return Errorf(EINVALID, "令牌名称不能为空")
	}
	if len(t.Name) > 30 {
		return Errorf(EINVALID, "令牌名称过长")
	}
	if hasControl(t.Name) {
		return Errorf(EINVALID, "令牌名称不能包含控制字符")
	}
	if t.ExpiredTime == 0 {
		t.ExpiredTime = -1
	}
	if t.ExpiredTime < -1 {
		return Errorf(EINVALID, "过期时间格式错误！")
	}
	// S §3.5: at most 1024 characters (model names may be Chinese), as
	// stored: without the spaces and repeated names cleaning drops.
	t.ModelLimits = strings.Join(csvList(t.ModelLimits), ",")
	if utf8.RuneCountInString(t.ModelLimits) > 1024 {
		return Errorf(EINVALID, "模型限制列表过长")
	}
	for _, e := range allowIPEntries(t.AllowIPs) {
		if _, err := netip.ParsePrefix(e); err == nil {
			continue
		}
		if _, err := netip.ParseAddr(e); err != nil {
			return Errorf(EINVALID, "IP 白名单中的 %s 不是合法的 IP 或 CIDR", e)
		}
	}
	if !utf8.ValidString(t.Name) {
		return Errorf(EINVALID, "令牌名称不是合法的 UTF-8")
	}
	return nil
}

// MaxExpiredTime is the latest expiry a token may have: the last second of
// the year 9999, the end of what dates are written with.
const MaxExpiredTime = 253402300799

var errExpiryTooLate = Errorf(EINVALID, "过期时间格式错误！")

func getToken(tx *bolt.Tx, id uint64) (*Token, error) {
	var t Token
	ok, err := getJSON(tx.Bucket(bucketTokens), itob(id), &t)
	if err != nil {
		return nil, Internal(err)
	}
	if !ok || t.DeletedAt != 0 {
		return nil, Errorf(ENOTFOUND, "令牌不存在")
	}
	return &t, nil
}

// NewTokenKey returns a fresh 48-character key from crypto/rand.
func NewTokenKey() string { return RandomString(TokenKeyLen) }

// CreateToken creates a token for t.UserID with a new key.
// Errors: EINVALID.
func (s *Store) CreateToken(t *Token) (*Token, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	t.Key = NewTokenKey()
	t.CreatedTime = s.nowUnix()
	t.AccessedTime = t.CreatedTime
	t.UsedQuota = 0
	if t.Status == 0 {
		t.Status = TokenStatusEnabled
	}
	markExhausted(t)
	err := s.update(func(tx *bolt.Tx) error {
		if _, err := getUser(tx, t.UserID); err != nil {
			return err
		}
		return insertToken(tx, t)
	})
	if err != nil {
		return nil, wrapTx(err)
	}
	return t, nil
}

// insertToken stores a new token t (key, times and status set) with its
// key and owner indexes, giving it the next id.
func insertToken(tx *bolt.Tx, t *Token) error {
	id, _ := tx.Bucket(bucketTokens).NextSequence()
	t.ID = id
	if err := tx.Bucket(bucketIdxTokenByKey).Put(hashSecret(t.Key), itob(id)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketIdxTokenByUser).Put(append(itob(t.UserID), itob(id)...), nil); err != nil {
		return err
	}
	return putTokenRecord(tx, t)
}

// Token returns a token of userID (any user when userID is 0).
// Errors: ENOTFOUND.
func (s *Store) Token(userID, id uint64) (*Token, error) {
	var t *Token
	err := s.db.View(func(tx *bolt.Tx) (err error) { t, err = getToken(tx, id); return })
	if err != nil {
		return nil, err
	}
	if userID != 0 && t.UserID != userID {
		return nil, Errorf(ENOTFOUND, "令牌不存在")
	}
	s.ledger.overlayToken(t)
	return t, nil
}

// TokenByKey finds a live token by its key (with or without sk-).
// Errors: ENOTFOUND.
func (s *Store) TokenByKey(key string) (*Token, error) {
	key = strings.TrimPrefix(key, "sk-")
	if t, ok := s.auth.token(key); ok {
		s.ledger.overlayToken(t)
		return t, nil
	}
	gen := s.auth.generation()
	var t *Token
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketIdxTokenByKey).Get(hashSecret(key))
		if id == nil {
			return Errorf(ENOTFOUND, "无效的令牌")
		}
		var err error
		t, err = getToken(tx, btoi(id))
		return err
	})
	if err != nil {
		return nil, err
	}
	s.auth.putToken(gen, key, t)
	s.ledger.overlayToken(t)
	return t, nil
}

// TokenFilter selects a user's tokens.
type TokenFilter struct {
	Keyword string // part of the name
	Key     string // part of the key
	Offset  int
	Limit   int
}

// Tokens lists a user's tokens, newest first.
func (s *Store) Tokens(userID uint64, f TokenFilter) ([]*Token, error) {
	var out []*Token
	// S: name LIKE %kw% AND key LIKE %t%, with the LIKE of the databases S
	// runs on: ASCII case does not count and % and _ are wildcards.
	key := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(f.Key), "sk-"))
	kw := strings.ToLower(strings.TrimSpace(f.Keyword))
	err := s.db.View(func(tx *bolt.Tx) error {
		prefix := itob(userID)
		c := tx.Bucket(bucketIdxTokenByUser).Cursor()
		// Seek past the user's last entry, then walk back.
		k, _ := c.Seek(itob(userID + 1))
		if k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		skipped := 0
		for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
			t, err := getToken(tx, btoi(k[8:]))
			if ErrorCode(err) == ENOTFOUND {
				continue
			}
			if err != nil {
				return err
			}
			if kw != "" && !likeMatch(strings.ToLower(t.Name), "%"+kw+"%") {
				continue
			}
			if key != "" && !likeMatch(strings.ToLower(t.Key), "%"+key+"%") {
				continue
			}
			if skipped < f.Offset {
				skipped++
				continue
			}
			out = append(out, t)
			if f.Limit > 0 && len(out) >= f.Limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, Internal(err)
	}
	for _, t := range out {
		s.ledger.overlayToken(t)
	}
	return out, nil
}

// TokenUpdate lists the fields a user changes; nil fields stay.
type TokenUpdate struct {
	Name               *string `json:"name"`
	ExpiredTime        *int64  `json:"expired_time"`
	RemainQuota        *int64  `json:"remain_quota"`
	UnlimitedQuota     *bool   `json:"unlimited_quota"`
	ModelLimitsEnabled *bool   `json:"model_limits_enabled"`
	ModelLimits        *string `json:"model_limits"`
	AllowIPs           *string `json:"allow_ips"`
	Group              *string `json:"group"`
	Status             *int    `json:"status"`
}

// UpdateToken applies upd to a token of userID. Enabling an expired token
// whose expiry is past, or an exhausted one with nothing left, is refused.
// The remaining quota goes through the ledger so open reservations stay
// counted. Errors: ENOTFOUND, EINVALID.
func (s *Store) UpdateToken(userID, id uint64, upd TokenUpdate) (*Token, error) {
	var out *Token
	now := s.nowUnix()
	err := s.updateBalances(func(tx *bolt.Tx) ([]balanceDelta, error) {
		t, err := getToken(tx, id)
		if err != nil {
			return nil, err
		}
		if t.UserID != userID {
			return nil, Errorf(ENOTFOUND, "令牌不存在")
		}
		// The ledger lock is held here: read the live value directly.
		live := *t
		if lt := s.ledger.tokens[id]; lt != nil {
			live.RemainQuota, live.UsedQuota = lt.shown(), lt.used
		}
		var remainDelta int64
		if upd.Name != nil {
			t.Name = *upd.Name
		}
		if upd.ExpiredTime != nil {
			// Judged when set: a token stored with a later expiry (one
			// written in milliseconds) can still be disabled.
			if *upd.ExpiredTime > MaxExpiredTime && *upd.ExpiredTime != t.ExpiredTime {
				return nil, errExpiryTooLate
			}
			t.ExpiredTime = *upd.ExpiredTime
		}
		var setN uint64
		if upd.RemainQuota != nil {
			// The user sets the live value; the file moves by the same delta.
			remainDelta = *upd.RemainQuota - live.RemainQuota
			t.RemainQuota += remainDelta
			if lt := s.ledger.tokens[id]; lt != nil {
				// The charges settled so far count as made (see setFns).
				lt.setFns++
				setN = lt.setFns
			}
		}
		if upd.UnlimitedQuota != nil {
			t.UnlimitedQuota = *upd.UnlimitedQuota
		}
		if upd.ModelLimitsEnabled != nil {
			t.ModelLimitsEnabled = *upd.ModelLimitsEnabled
		}
		if upd.ModelLimits != nil {
			t.ModelLimits = *upd.ModelLimits
		}
		if upd.AllowIPs != nil {
			t.AllowIPs = *upd.AllowIPs
		}
		if upd.Group != nil {
			t.Group = *upd.Group
		}
		if upd.Status != nil {
			switch *upd.Status {
			case TokenStatusEnabled:
				if t.ExpiredTime != -1 && t.ExpiredTime < now {
					return nil, Errorf(EINVALID, "令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期")
				}
				if !t.UnlimitedQuota && live.RemainQuota+remainDelta <= 0 {
					return nil, Errorf(EINVALID, "令牌可用额度已用尽，无法启用，请先修改令牌剩余额度，或者设置为无限额度")
				}
			case TokenStatusDisabled:
			default:
				return nil, Errorf(EINVALID, "无效的令牌状态")
			}
			t.Status = *upd.Status
		}
		// Only a remaining quota the user sets must not be negative: a call
		// may cost more than the token held (the pre-consume allowance), and
		// reservations in flight move the file value, so the stored one can
		// be below zero without the token becoming impossible to edit.
		if upd.RemainQuota != nil && *upd.RemainQuota < 0 {
			return nil, Errorf(EINVALID, "额度不能为负数")
		}
		if upd.RemainQuota != nil && *upd.RemainQuota > MaxQuota {
			return nil, errQuotaTooLarge
		}
		if err := t.validateOthers(); err != nil {
			return nil, err
		}
		markExhausted(t)
		out = t
		// The live flag changes with the commit, not before it.
		unlimited := t.UnlimitedQuota
		return []balanceDelta{{token: id, remain: remainDelta, unlimited: &unlimited, remainSetN: setN}}, putTokenRecord(tx, t)
	})
	if err != nil {
		return nil, err
	}
	s.ledger.overlayToken(out)
	return out, nil
}

// DeleteToken soft-deletes a token of userID; its key stops working at once.
// Errors: ENOTFOUND.
func (s *Store) DeleteToken(userID, id uint64) error {
	err := s.update(func(tx *bolt.Tx) error {
		t, err := getToken(tx, id)
		if err != nil {
			return err
		}
		if t.UserID != userID {
			return Errorf(ENOTFOUND, "令牌不存在")
		}
		t.DeletedAt = s.nowUnix()
		if err := tx.Bucket(bucketIdxTokenByKey).Delete(hashSecret(t.Key)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketIdxTokenByUser).Delete(append(itob(userID), itob(id)...)); err != nil {
			return err
		}
		return putTokenRecord(tx, t)
	})
	if err != nil {
		return wrapTx(err)
	}
	s.ledger.forgetToken(id)
	return nil
}

// markExhausted shows an enabled, limited token without stored remaining
// quota as exhausted, which it is for good: no call can use it, and no call
// in flight can give it quota back (a hold is taken from the live value
// only). A token shown as enabled that refuses every call would mislead.
func markExhausted(t *Token) {
	if t.Status == TokenStatusEnabled && !t.UnlimitedQuota && t.RemainQuota <= 0 {
		t.Status = TokenStatusExhausted
	}
}

// SetTokenStatus records an expiry or exhaustion found at use time. An
// expiry is judged again on the stored token: an owner who extended or
// cleared it, or disabled the token, since the caller read it keeps that.
func (s *Store) SetTokenStatus(id uint64, status int) error {
	return wrapTx(s.update(func(tx *bolt.Tx) error {
		t, err := getToken(tx, id)
		if err != nil {
			return err
		}
		if t.Status == status {
			return nil
		}
		if status == TokenStatusExpired && (t.Status != TokenStatusEnabled || t.ExpiredTime == -1 || t.ExpiredTime >= s.nowUnix()) {
			return nil
		}
		t.Status = status
		return putTokenRecord(tx, t)
	}))
}

var _ = json.Marshal
