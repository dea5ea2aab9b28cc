package store

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/text/unicode/norm"
)

// Roles.
const (
	RoleGuest  = 0
	RoleCommon = 1
	RoleAdmin  = 10
	RoleRoot   = 100
)

// User statuses.
const (
	UserStatusEnabled  = 1
	UserStatusDisabled = 2
)

// Field limits.
const (
	MaxUsernameLen    = 20
	MinPasswordLen    = 8
	MaxPasswordLen    = 20
	MaxDisplayNameLen = 20
	MaxEmailLen       = 50
)

// User is an account. Quota, UsedQuota and RequestCount are the committed
// values; the ledger holds the live ones (see Store.Balance).
type User struct {
	ID              uint64 `json:"id"`
	Username        string `json:"username"`
	DisplayName     string `json:"display_name"`
	PasswordHash    string `json:"password_hash"`
	Email           string `json:"email"`
	GitHubID        string `json:"github_id"`
	WeChatID        string `json:"wechat_id"`
	TelegramID      string `json:"telegram_id"`
	LinuxDOID       string `json:"linux_do_id"`
	AccessTokenHash []byte `json:"access_token_hash,omitempty"`
	Quota           int64  `json:"quota"`
	UsedQuota       int64  `json:"used_quota"`
	RequestCount    int64  `json:"request_count"`
	Group           string `json:"group"`
	Role            int    `json:"role"`
	Status          int    `json:"status"`
	AffCode         string `json:"aff_code"`
	AffCount        int64  `json:"aff_count"`
	AffQuota        int64  `json:"aff_quota"`
	AffHistoryQuota int64  `json:"aff_history_quota"`
	InviterID       uint64 `json:"inviter_id"`
	CreatedAt       int64  `json:"created_at"`
	DeletedAt       int64  `json:"deleted_at"` // unix seconds; 0 = not deleted
	// PasswordIsDefault is set while root still has the first-start password.
	PasswordIsDefault bool `json:"password_is_default,omitempty"`
	// BalanceSeq orders the live balances read (see ledger.readSeq); not
	// stored.
	BalanceSeq uint64 `json:"-"`
}

// Deleted reports whether the user was soft-deleted.
func (u *User) Deleted() bool { return u.DeletedAt != 0 }

// IsAdmin reports role >= admin.
func (u *User) IsAdmin() bool { return u.Role >= RoleAdmin }

// blankRune reports the characters that are no space but show as one.
func blankRune(r rune) bool {
	switch r {
	case '\u115F', '\u1160', '\u3164', '\uFFA0', '\u2800':
		return true
	}
	return false
}

// ValidateUsername checks the username rules. A name must be in Unicode
// normalization form KC: full-width letters ("ｒｏｏｔ"), compatibility
// characters and decomposed accents would let one name pass for another,
// or, as "＠", for an address; the message offers the normal form.
func ValidateUsername(name string) error {
	normal := norm.NFKC.String(name)
	if err := usernameRules(normal); err != nil {
		return err
	}
	if normal != name {
		return Errorf(EINVALID, "用户名不能包含全角、兼容或未组合的字符，可改用：%s", normal)
	}
	return nil
}

// usernameRules checks a name in normal form.
func usernameRules(name string) error {
	if name == "" {
		return Errorf(EINVALID, "用户名不能为空")
	}
	if utf8.RuneCountInString(name) > MaxUsernameLen {
		return Errorf(EINVALID, "用户名长度不得超过 %d 位", MaxUsernameLen)
	}
	// Any white space (the ideographic and no-break spaces too), and the
	// characters that show as blank (Hangul and Braille fillers).
	if strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || blankRune(r) }) >= 0 {
		return Errorf(EINVALID, "用户名不能包含空白字符")
	}
	// Invisible characters would let one name pass for another ("root"
	// and "root" followed by a zero-width space).
	if strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) >= 0 {
		return Errorf(EINVALID, "用户名不能包含控制字符或不可见字符")
	}
	// Login takes a username or an e-mail address: a username that looks
	// like one could shadow another account's address.
	if strings.Contains(name, "@") {
		return Errorf(EINVALID, "用户名不能包含 @")
	}
	return nil
}

// hasControl reports whether s holds a control character (a NUL, a bell,
// an escape): names shown in lists and logs may not.
func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// ValidatePassword checks the password rules.
func ValidatePassword(pw string) error {
	n := utf8.RuneCountInString(pw)
	if n < MinPasswordLen {
		return Errorf(EINVALID, "密码长度不得小于 %d 位！", MinPasswordLen)
	}
	if n > MaxPasswordLen {
		return Errorf(EINVALID, "密码长度不得超过 %d 位！", MaxPasswordLen)
	}
	// bcrypt reads at most 72 bytes: 20 characters of four bytes each do
	// not fit.
	if len(pw) > maxPasswordBytes {
		return Errorf(EINVALID, "密码过长：最多 %d 字节（一个汉字或表情占 3 到 4 字节）", maxPasswordBytes)
	}
	return nil
}

// maxPasswordBytes is what bcrypt hashes.
const maxPasswordBytes = 72

// ValidateDisplayName checks the display name rules.
func ValidateDisplayName(name string) error {
	if utf8.RuneCountInString(name) > MaxDisplayNameLen {
		return Errorf(EINVALID, "显示名称长度不得超过 %d 位", MaxDisplayNameLen)
	}
	if hasControl(name) {
		return Errorf(EINVALID, "显示名称不能包含控制字符")
	}
	return nil
}

// ValidateEmail checks an e-mail address: one @, a dot in the domain, no
// spaces, the length limit, and read by the mail parser as itself. An
// address the mailer would rewrite (a comment, farmer@example.com(1), is
// dropped) would name one mailbox under many addresses.
func ValidateEmail(email string) error {
	// Characters, as the display name's limit (S §3.2): an address may be
	// internationalised.
	if utf8.RuneCountInString(email) > MaxEmailLen {
		return Errorf(EINVALID, "邮箱地址长度不得超过 %d 位", MaxEmailLen)
	}
	at := strings.LastIndexByte(email, '@')
	if at <= 0 || at == len(email)-1 || strings.ContainsAny(email, " \t\r\n<>,;\"()") || hasControl(email) || !strings.Contains(email[at+1:], ".") {
		return Errorf(EINVALID, "无效的邮箱地址")
	}
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
		return Errorf(EINVALID, "无效的邮箱地址")
	}
	return nil
}

// PasswordCost is the bcrypt cost of new password hashes. Tests lower it;
// production keeps the default.
var PasswordCost = bcrypt.DefaultCost

// HashPassword returns the bcrypt hash of pw.
func HashPassword(pw string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), PasswordCost)
	return string(h), err
}

// dummyHash is compared against when a login names no user, so that a
// missing user costs the same time as a wrong password. It is made on first
// use, at the cost in force then.
var (
	dummyOnce sync.Once
	dummyHash []byte
)

func dummy() []byte {
	dummyOnce.Do(func() { dummyHash, _ = bcrypt.GenerateFromPassword([]byte("not-a-password-at-all"), PasswordCost) })
	return dummyHash
}

// CheckPassword reports whether pw matches u's hash; with u nil it does the
// same work and reports false.
func CheckPassword(u *User, pw string) bool {
	if u == nil || u.PasswordHash == "" {
		bcrypt.CompareHashAndPassword(dummy(), []byte(pw))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(pw)) == nil
}

// indexes of the user bucket: each maps a unique attribute to the user id.
type userIndex struct {
	bucket []byte
	value  func(u *User) string
	label  string
}

var userIndexes = []userIndex{
	{bucketIdxUserByName, func(u *User) string { return strings.ToLower(u.Username) }, "用户名已存在"},
	{bucketIdxUserByEmail, func(u *User) string { return strings.ToLower(u.Email) }, "邮箱地址已被占用"},
	{bucketIdxUserByAff, func(u *User) string { return u.AffCode }, "邀请码冲突"},
	{bucketIdxUserByAccess, func(u *User) string { return string(u.AccessTokenHash) }, "访问令牌冲突"},
	{bucketIdxUserByGitHub, func(u *User) string { return u.GitHubID }, "该 GitHub 账户已被绑定"},
	{bucketIdxUserByWeChat, func(u *User) string { return u.WeChatID }, "该微信账号已被绑定"},
	{bucketIdxUserByTelegram, func(u *User) string { return u.TelegramID }, "该 Telegram 账户已被绑定"},
	{bucketIdxUserByLinuxDO, func(u *User) string { return u.LinuxDOID }, "该 LinuxDO 账户已被绑定"},
}

// putUser writes u and brings every index in line with it, checking
// uniqueness first; old is the previous version (nil on create). Deleted users
// keep their index entries, so their username and e-mail stay reserved.
func putUser(tx *bolt.Tx, old, u *User) error {
	for _, ix := range userIndexes {
		nv := ix.value(u)
		ov := ""
		if old != nil {
			ov = ix.value(old)
		}
		if nv == ov {
			continue
		}
		b := tx.Bucket(ix.bucket)
		if nv != "" {
			if id := b.Get([]byte(nv)); id != nil && btoi(id) != u.ID {
				return Errorf(ECONFLICT, "%s", ix.label)
			}
		}
		if ov != "" {
			if err := b.Delete([]byte(ov)); err != nil {
				return err
			}
		}
		if nv != "" {
			if err := b.Put([]byte(nv), itob(u.ID)); err != nil {
				return err
			}
		}
	}
	return putUserRecord(tx, u)
}

func getUser(tx *bolt.Tx, id uint64) (*User, error) {
	var u User
	ok, err := getJSON(tx.Bucket(bucketUsers), itob(id), &u)
	if err != nil {
		return nil, Internal(err)
	}
	if !ok {
		return nil, Errorf(ENOTFOUND, "用户不存在")
	}
	return &u, nil
}

func getUserBy(tx *bolt.Tx, bucket []byte, key string) (*User, error) {
	if key == "" {
		return nil, Errorf(ENOTFOUND, "用户不存在")
	}
	id := tx.Bucket(bucket).Get([]byte(key))
	if id == nil {
		return nil, Errorf(ENOTFOUND, "用户不存在")
	}
	return getUser(tx, btoi(id))
}

// newAffCode draws 4-character codes until one is free.
func newAffCode(tx *bolt.Tx) string {
	b := tx.Bucket(bucketIdxUserByAff)
	for n := 4; ; n++ {
		for i := 0; i < 8; i++ {
			c := RandomString(n)
			if b.Get([]byte(c)) == nil {
				return c
			}
		}
	}
}

// NewUser holds what creating an account needs.
type NewUser struct {
	Username    string
	Password    string // plain; hashed here
	DisplayName string
	Email       string
	Role        int
	Group       string
	InviterCode string // aff code of the inviter, optional
	GitHubID    string
	WeChatID    string
	TelegramID  string
	LinuxDOID   string
	// DefaultPassword marks the first-start root account.
	DefaultPassword bool
	// NoPassword creates an account without a password (a third-party
	// login's): nobody logs in with one until its owner sets it.
	NoPassword bool
	// Quota is credited on creation, in the same transaction, with a
	// system log (the first root's starting quota).
	Quota int64
	// DefaultToken also creates, in the same transaction, the account's
	// first API token: unlimited, never expiring, remain 500 000 (S §3.2,
	// GENERATE_DEFAULT_TOKEN).
	DefaultToken bool
	// Code, when set, is the mailed code that allows the registration,
	// spent in its transaction.
	Code *CodeUse
}

// CreateUser creates an account, applies QuotaForNewUser and the invite
// rewards, and writes their logs, all in one transaction.
// Errors: EINVALID, ECONFLICT (username, e-mail or external id taken).
func (s *Store) CreateUser(in NewUser) (*User, error) {
	in.Username = strings.TrimSpace(in.Username)
	if err := ValidateUsername(in.Username); err != nil {
		return nil, err
	}
	if !in.DefaultPassword && !in.NoPassword {
		if err := ValidatePassword(in.Password); err != nil {
			return nil, err
		}
	}
	if in.DisplayName = strings.TrimSpace(in.DisplayName); in.DisplayName == "" {
		in.DisplayName = in.Username
	}
	if err := ValidateDisplayName(in.DisplayName); err != nil {
		return nil, err
	}
	if in.Email != "" {
		if err := ValidateEmail(in.Email); err != nil {
			return nil, err
		}
	}
	if in.Role == 0 {
		in.Role = RoleCommon
	}
	if in.Group == "" {
		in.Group = "default"
	}
	hash := ""
	if !in.NoPassword {
		h, err := HashPassword(in.Password)
		if err != nil {
			return nil, Internal(err)
		}
		hash = h
	}
	set := s.Settings()
	now := s.Now()
	var created *User
	err := s.updateBalances(func(tx *bolt.Tx) ([]balanceDelta, error) {
		if in.Code != nil {
			if err := spendCode(tx, *in.Code, now.Unix()); err != nil {
				return nil, err
			}
		}
		var credits []balanceDelta
		id, _ := tx.Bucket(bucketUsers).NextSequence()
		u := &User{
			ID: id, Username: in.Username, DisplayName: in.DisplayName, PasswordHash: hash,
			Email: in.Email, Role: in.Role, Status: UserStatusEnabled, Group: in.Group,
			GitHubID: in.GitHubID, WeChatID: in.WeChatID, TelegramID: in.TelegramID, LinuxDOID: in.LinuxDOID,
			CreatedAt: now.Unix(), PasswordIsDefault: in.DefaultPassword,
		}
		u.AffCode = newAffCode(tx)
		var inviter *User
		if in.InviterCode != "" {
			if inv, err := getUserBy(tx, bucketIdxUserByAff, in.InviterCode); err == nil && !inv.Deleted() {
				inviter = inv
				u.InviterID = inv.ID
			}
		}
		if in.Quota > MaxQuota {
			return nil, errQuotaTooLarge
		}
		if in.Quota > 0 {
			u.Quota += in.Quota
			credits = append(credits, balanceDelta{user: id, quota: in.Quota})
			// Logged as every credit is: the balance is explained by its log.
			if err := appendLog(tx, &Log{UserID: id, Username: u.Username, Type: LogTypeSystem, CreatedAt: now.Unix(),
				Content: "初始额度 " + formatQuota(set, in.Quota)}); err != nil {
				return nil, err
			}
		}
		// The gifts are granted within the bound every balance keeps: two
		// options of 2^53 each give 2^53, not a sum past it.
		if q := min(set.Int("QuotaForNewUser"), MaxQuota-u.Quota); q > 0 {
			u.Quota += q
			credits = append(credits, balanceDelta{user: id, quota: q})
			if err := appendLog(tx, &Log{UserID: id, Username: u.Username, Type: LogTypeSystem, CreatedAt: now.Unix(),
				Content: "新用户注册赠送 " + formatQuota(set, q)}); err != nil {
				return nil, err
			}
		}
		if inviter != nil {
			if q := min(set.Int("QuotaForInvitee"), MaxQuota-u.Quota); q > 0 {
				u.Quota += q
				credits = append(credits, balanceDelta{user: id, quota: q})
				if err := appendLog(tx, &Log{UserID: id, Username: u.Username, Type: LogTypeSystem, CreatedAt: now.Unix(),
					Content: "使用邀请码赠送 " + formatQuota(set, q)}); err != nil {
					return nil, err
				}
			}
			old := *inviter
			inviter.AffCount++
			// Invite earnings stay within the bound every balance keeps, so
			// that many invitations cannot wrap them around.
			if q := set.Int("QuotaForInviter"); q > 0 && inviter.AffQuota <= MaxQuota-q && inviter.AffHistoryQuota <= MaxQuota-q {
				inviter.AffQuota += q
				inviter.AffHistoryQuota += q
				if err := appendLog(tx, &Log{UserID: inviter.ID, Username: inviter.Username, Type: LogTypeSystem, CreatedAt: now.Unix(),
					Content: "邀请用户赠送 " + formatQuota(set, q)}); err != nil {
					return nil, err
				}
			}
			if err := putUser(tx, &old, inviter); err != nil {
				return nil, err
			}
		}
		if err := putUser(tx, nil, u); err != nil {
			return nil, err
		}
		if in.DefaultToken {
			t := &Token{UserID: id, Name: "初始令牌", Key: NewTokenKey(), CreatedTime: now.Unix(),
				AccessedTime: now.Unix(), ExpiredTime: -1, RemainQuota: 500000, UnlimitedQuota: true, Status: TokenStatusEnabled}
			if err := insertToken(tx, t); err != nil {
				return nil, err
			}
		}
		created = u
		return credits, nil
	})
	if err != nil {
		return nil, wrapTx(err)
	}
	s.userChanged(created.ID)
	if created.InviterID != 0 {
		s.userChanged(created.InviterID) // the invitation count and earnings
	}
	return created, nil
}

// wrapTx passes domain errors through and wraps anything else as internal.
func wrapTx(err error) error { return Internal(err) }

// EnsureRoot creates root / 123456 (role 100, quota 100 000 000) when the
// store has no user at all. It reports whether it created the account.
func (s *Store) EnsureRoot() (bool, error) { return s.EnsureRootWith("") }

// EnsureRootWith is EnsureRoot with the first password chosen by the
// operator (--root-password); "" keeps the well-known default, which every
// login then warns about. Given to a file whose root still has that
// default, the password replaces it.
func (s *Store) EnsureRootWith(password string) (bool, error) {
	if password != "" {
		if err := ValidatePassword(password); err != nil {
			return false, err
		}
	}
	empty := false
	var first uint64
	var root *User
	if err := s.db.View(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketUsers).Cursor().First()
		empty = k == nil
		if k == nil {
			return nil
		}
		first = btoi(k)
		var err error
		root, err = getUser(tx, first)
		return err
	}); err != nil {
		return false, err
	}
	if !empty {
		if password == "" {
			return false, nil
		}
		if !root.PasswordIsDefault {
			// The same password at every start (a service's environment)
			// is no news.
			if !CheckPassword(root, password) {
				keptRootPassword()
			}
			return false, nil
		}
		// Root was created by an earlier start without the flag (`make
		// run` first, as the README's first steps go) and still has the
		// well-known 123456: the operator's password replaces it, ending
		// any session that one gave. A password root chose stays.
		_, err := s.UpdateUser(first, UserUpdate{Password: &password, Check: func(u *User) error {
			if !u.PasswordIsDefault {
				return errNotDefault
			}
			return nil
		}})
		switch {
		case err == nil:
			slog.Info("root had the default password 123456: it is now the one from --root-password")
		case errors.Is(err, errNotDefault):
			keptRootPassword()
		default:
			return false, err
		}
		return false, nil
	}
	in := NewUser{Username: "root", Password: "123456", DisplayName: "Root User", Role: RoleRoot, DefaultPassword: true,
		Quota: 100000000}
	if password != "" {
		in.Password, in.DefaultPassword = password, false
	}
	// One transaction: a crash cannot leave a root without its quota.
	if _, err := s.CreateUser(in); err != nil {
		return false, err
	}
	return true, nil
}

// keptRootPassword says that --root-password was given to a file whose
// root chose its own password, which the flag never replaces: an operator
// who changed the variable to rotate root's password would otherwise take
// the start for done and the old password for gone.
func keptRootPassword() {
	slog.Warn("--root-password is ignored: root has already chosen its password, which stays; change it in the console (Settings → personal)")
}

// errNotDefault tells EnsureRootWith that root chose its password.
var errNotDefault = errors.New("root's password is not the default one")

// User returns the user with id, deleted ones included.
// Errors: ENOTFOUND.
func (s *Store) User(id uint64) (*User, error) {
	if u, ok := s.auth.user(id); ok {
		s.ledger.overlay(u)
		return u, nil
	}
	gen := s.auth.generation()
	var u *User
	err := s.db.View(func(tx *bolt.Tx) (err error) { u, err = getUser(tx, id); return })
	if err != nil {
		return nil, err
	}
	s.auth.putUser(gen, u)
	s.ledger.overlay(u)
	return u, nil
}

// UserByLogin finds a user by username or e-mail (case-insensitive).
// Errors: ENOTFOUND.
func (s *Store) UserByLogin(login string) (*User, error) {
	var u *User
	key := strings.ToLower(strings.TrimSpace(login))
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		if u, err = getUserBy(tx, bucketIdxUserByName, key); err == nil {
			return nil
		}
		u, err = getUserBy(tx, bucketIdxUserByEmail, key)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.ledger.overlay(u)
	return u, nil
}

// UserByEmail finds a user by e-mail. Errors: ENOTFOUND.
func (s *Store) UserByEmail(email string) (*User, error) {
	return s.userByIndex(bucketIdxUserByEmail, strings.ToLower(strings.TrimSpace(email)))
}

// UserByUsername finds a user by username. Errors: ENOTFOUND.
func (s *Store) UserByUsername(name string) (*User, error) {
	return s.userByIndex(bucketIdxUserByName, strings.ToLower(strings.TrimSpace(name)))
}

// UserByAccessToken finds the user whose system access token is token.
// Errors: ENOTFOUND.
func (s *Store) UserByAccessToken(token string) (*User, error) {
	if token == "" {
		return nil, Errorf(ENOTFOUND, "用户不存在")
	}
	return s.userByIndex(bucketIdxUserByAccess, string(hashSecret(token)))
}

// UserByExternalID finds a user by a third-party id; provider is one of
// "github", "wechat", "telegram", "linuxdo". Errors: ENOTFOUND.
func (s *Store) UserByExternalID(provider, id string) (*User, error) {
	b := externalBucket(provider)
	if b == nil {
		return nil, Errorf(EINVALID, "未知的登录方式")
	}
	return s.userByIndex(b, id)
}

func externalBucket(provider string) []byte {
	switch provider {
	case "github":
		return bucketIdxUserByGitHub
	case "wechat":
		return bucketIdxUserByWeChat
	case "telegram":
		return bucketIdxUserByTelegram
	case "linuxdo":
		return bucketIdxUserByLinuxDO
	}
	return nil
}

func (s *Store) userByIndex(bucket []byte, key string) (*User, error) {
	var u *User
	err := s.db.View(func(tx *bolt.Tx) (err error) { u, err = getUserBy(tx, bucket, key); return })
	if err != nil {
		return nil, err
	}
	s.ledger.overlay(u)
	return u, nil
}

// UsernameTaken reports whether name is used by any account, deleted ones included.
func (s *Store) UsernameTaken(name string) bool {
	_, err := s.UserByUsername(name)
	return err == nil
}

// EmailTaken reports whether email is used by any account, deleted ones included.
func (s *Store) EmailTaken(email string) bool {
	_, err := s.UserByEmail(email)
	return err == nil
}

// UserUpdate lists the fields to change; nil fields stay as they are.
type UserUpdate struct {
	Username    *string
	DisplayName *string
	Password    *string // plain; validated and hashed here
	Email       *string
	Group       *string
	Role        *int
	Status      *int
	GitHubID    *string
	WeChatID    *string
	TelegramID  *string
	LinuxDOID   *string
	// Check, when set, is asked inside the transaction with the account as
	// it is there; an error refuses the update. An administrator's rights
	// over an account are so judged on the record the change is made to,
	// not on one read before (the account may have been deleted or
	// promoted meanwhile).
	Check func(*User) error
	// Code, when set, is the mailed code that allows the change (a reset
	// password, a bound e-mail), spent in its transaction.
	Code *CodeUse
}

// UpdateUser applies upd to the user in one transaction. A password, role or
// status change, or a deletion, ends the user's sessions in the same
// transaction. Errors: ENOTFOUND, EINVALID, ECONFLICT.
func (s *Store) UpdateUser(id uint64, upd UserUpdate) (*User, error) {
	hash, err := prepareUserUpdate(&upd)
	if err != nil {
		return nil, err
	}
	var out *User
	now := s.Now().Unix()
	err = s.update(func(tx *bolt.Tx) (err error) {
		if upd.Code != nil {
			if err := spendCode(tx, *upd.Code, now); err != nil {
				return err
			}
		}
		out, err = applyUserUpdate(tx, id, upd, hash)
		return
	})
	if err != nil {
		return nil, wrapTx(err)
	}
	s.ledger.overlay(out)
	s.userChanged(id)
	return out, nil
}

// UpdateUserAsAdmin applies an administrator's edit of a user and, when
// quota is set, sets the user's live quota to it with its manage log: one
// transaction, so the edit is saved whole or not at all.
func (s *Store) UpdateUserAsAdmin(adminName string, id uint64, upd UserUpdate, quota *int64) (*User, error) {
	return s.EditUserAsAdmin(adminName, id, upd, QuotaChange{Set: quota})
}

// QuotaChange is how an administrator's edit changes a user's quota: Set
// sets the live quota, Add adds to it (a negative amount takes away). Add
// is applied to the live balance inside the transaction, so a top-up or a
// charge made while the administrator's form was open is kept.
type QuotaChange struct {
	Set, Add *int64
}

// EditUserAsAdmin applies an administrator's edit of a user and its quota
// change, with a manage log naming the old and new quota: one transaction,
// so the edit is saved whole or not at all. Errors: as UpdateUser, and
// EINVALID for both a Set and an Add, or a quota beyond MaxQuota.
func (s *Store) EditUserAsAdmin(adminName string, id uint64, upd UserUpdate, q QuotaChange) (*User, error) {
	if q.Set != nil && q.Add != nil {
		return nil, Errorf(EINVALID, "额度与增加额度只能给出一个")
	}
	hash, err := prepareUserUpdate(&upd)
	if err != nil {
		return nil, err
	}
	var out *User
	err = s.updateBalances(func(tx *bolt.Tx) ([]balanceDelta, error) {
		u, err := applyUserUpdate(tx, id, upd, hash)
		if err != nil {
			return nil, err
		}
		out = u
		target := q.Set
		var setN uint64
		if b := s.ledger.users[id]; b != nil && q.Set != nil {
			// A set takes the charges settled so far as made (see setFns).
			b.setFns++
			setN = b.setFns
		}
		if q.Add != nil {
			live := s.ledger.liveQuotaLocked(u)
			if err := checkQuotaMagnitude(*q.Add); err != nil {
				return nil, err
			}
			sum := live + *q.Add
			target = &sum
		}
		if target == nil {
			return nil, nil
		}
		d, err := s.setQuotaTx(tx, adminName, u, *target)
		if err != nil || (d == 0 && setN == 0) {
			return nil, err
		}
		return []balanceDelta{{user: id, quota: d, setN: setN}}, nil
	})
	if err != nil {
		return nil, err
	}
	s.ledger.overlay(out)
	s.userChanged(id)
	return out, nil
}

// prepareUserUpdate checks and normalises upd and hashes a new password.
func prepareUserUpdate(upd *UserUpdate) (hash string, err error) {
	if upd.Username != nil {
		// Checked where the current name is known (applyUserUpdate): a
		// name kept as it is passes, even one made before a rule.
		v := strings.TrimSpace(*upd.Username)
		upd.Username = &v
	}
	if upd.DisplayName != nil {
		// Kept without the spaces around it; a blank one keeps the old.
		if v := strings.TrimSpace(*upd.DisplayName); v == "" {
			upd.DisplayName = nil
		} else {
			upd.DisplayName = &v
		}
	}
	if upd.DisplayName != nil {
		if err := ValidateDisplayName(*upd.DisplayName); err != nil {
			return "", err
		}
	}
	if upd.Email != nil && *upd.Email != "" {
		if err := ValidateEmail(*upd.Email); err != nil {
			return "", err
		}
	}
	if upd.Password != nil {
		if err := ValidatePassword(*upd.Password); err != nil {
			return "", err
		}
		h, err := HashPassword(*upd.Password)
		if err != nil {
			return "", Internal(err)
		}
		hash = h
	}
	return hash, nil
}

// applyUserUpdate writes upd (with the new password's hash) to user id in tx.
func applyUserUpdate(tx *bolt.Tx, id uint64, upd UserUpdate, hash string) (*User, error) {
	u, err := getUser(tx, id)
	if err != nil {
		return nil, err
	}
	if upd.Check != nil {
		if err := upd.Check(u); err != nil {
			return nil, err
		}
	}
	if upd.Username != nil && *upd.Username != u.Username {
		if err := ValidateUsername(*upd.Username); err != nil {
			return nil, err
		}
	}
	old := *u
	endSessions := false
	setIf(&u.Username, upd.Username)
	setIf(&u.DisplayName, upd.DisplayName)
	setIf(&u.Email, upd.Email)
	setIf(&u.Group, upd.Group)
	setIf(&u.GitHubID, upd.GitHubID)
	setIf(&u.WeChatID, upd.WeChatID)
	setIf(&u.TelegramID, upd.TelegramID)
	setIf(&u.LinuxDOID, upd.LinuxDOID)
	if hash != "" {
		// A new password ends every way in that the old one gave:
		// sessions and the system access token (S §15.7).
		u.PasswordHash = hash
		u.PasswordIsDefault = false
		u.AccessTokenHash = nil
		endSessions = true
	}
	if upd.Role != nil && *upd.Role != u.Role {
		u.Role = *upd.Role
		endSessions = true
	}
	if upd.Status != nil && *upd.Status != u.Status {
		u.Status = *upd.Status
		endSessions = endSessions || u.Status != UserStatusEnabled
	}
	if err := putUser(tx, &old, u); err != nil {
		return nil, err
	}
	if endSessions {
		if err := deleteUserSessions(tx, id); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// DeleteUser soft-deletes the user and ends their sessions. Root accounts
// cannot be deleted. Errors: ENOTFOUND, EFORBIDDEN.
func (s *Store) DeleteUser(id uint64) error {
	return s.DeleteUserIf(id, nil)
}

// DeleteUserIf is DeleteUser when check, asked inside the transaction with
// the account as it is there, allows it.
func (s *Store) DeleteUserIf(id uint64, check func(*User) error) error {
	err := s.update(func(tx *bolt.Tx) error {
		u, err := getUser(tx, id)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(u); err != nil {
				return err
			}
		}
		if u.Role >= RoleRoot {
			return Errorf(EFORBIDDEN, "不能删除超级管理员账户")
		}
		if u.Deleted() {
			return nil
		}
		old := *u
		u.DeletedAt = s.Now().Unix()
		u.AccessTokenHash = nil
		if err := putUser(tx, &old, u); err != nil {
			return err
		}
		return deleteUserSessions(tx, id)
	})
	if err != nil {
		return wrapTx(err)
	}
	s.userChanged(id)
	return nil
}

// ResetAccessToken creates a new system access token for the user, stores
// only its hash and returns the token; the previous one stops working.
// Errors: ENOTFOUND.
func (s *Store) ResetAccessToken(id uint64) (string, error) {
	return s.ResetAccessTokenWith(id, Credential{})
}

// Credential is what authenticated a request: a session (its cookie value)
// or a system access token (its hash, as the user record holds it).
type Credential struct {
	SessionID string
	TokenHash []byte
}

// ResetAccessTokenWith is ResetAccessToken for a request authenticated by
// cred, which must still be valid in the same transaction: a password change
// committed while the request was on its way ends its session (or clears its
// token) and no new token may come of it. Errors: EUNAUTHORIZED, EFORBIDDEN,
// ENOTFOUND.
func (s *Store) ResetAccessTokenWith(id uint64, cred Credential) (string, error) {
	token := RandomString(40)
	err := s.update(func(tx *bolt.Tx) error {
		u, err := getUser(tx, id)
		if err != nil {
			return err
		}
		if u.Deleted() {
			return Errorf(EFORBIDDEN, "用户已注销")
		}
		if cred.SessionID != "" {
			var sess Session
			ok, err := getJSON(tx.Bucket(bucketSessions), hashSecret(cred.SessionID), &sess)
			if err != nil {
				return err
			}
			if !ok || sess.UserID != id || sess.ExpiresAt < s.Now().Unix() {
				return Errorf(EUNAUTHORIZED, "未登录或登录已过期，请重新登录！")
			}
		}
		if cred.TokenHash != nil && !bytes.Equal(cred.TokenHash, u.AccessTokenHash) {
			return Errorf(EUNAUTHORIZED, "无效的访问令牌")
		}
		old := *u
		u.AccessTokenHash = hashSecret(token)
		return putUser(tx, &old, u)
	})
	if err != nil {
		return "", wrapTx(err)
	}
	s.userChanged(id) // the other consoles of the user see the token made
	return token, nil
}

// EnsureAffCode returns the user's invite code, creating one if missing.
// Errors: ENOTFOUND.
func (s *Store) EnsureAffCode(id uint64) (string, error) {
	var code string
	err := s.update(func(tx *bolt.Tx) error {
		u, err := getUser(tx, id)
		if err != nil {
			return err
		}
		if u.AffCode != "" {
			code = u.AffCode
			return nil
		}
		old := *u
		u.AffCode = newAffCode(tx)
		code = u.AffCode
		return putUser(tx, &old, u)
	})
	return code, wrapTx(err)
}

// TransferAffQuota moves quota from the user's invite earnings to their
// balance in one transaction. The amount must be at least QuotaPerUnit and
// at most aff_quota. Errors: EINVALID, ENOTFOUND.
func (s *Store) TransferAffQuota(id uint64, quota int64) (*User, error) {
	// Rounded up: a decimal QuotaPerUnit (1000.5) is the least, not 1000.
	min := int64(math.Ceil(s.Settings().QuotaPerUnit()))
	if quota < min {
		return nil, Errorf(EINVALID, "划转金额最低为 %s", formatQuota(s.Settings(), min))
	}
	var out *User
	err := s.updateBalances(func(tx *bolt.Tx) ([]balanceDelta, error) {
		u, err := getUser(tx, id)
		if err != nil {
			return nil, err
		}
		if u.AffQuota < quota {
			return nil, Errorf(EINVALID, "邀请额度不足")
		}
		if s.ledger.liveQuotaLocked(u) > MaxQuota-quota {
			return nil, errQuotaTooLarge
		}
		old := *u
		u.AffQuota -= quota
		u.Quota += quota
		out = u
		return []balanceDelta{{user: id, quota: quota}}, putUser(tx, &old, u)
	})
	if err != nil {
		return nil, err
	}
	s.ledger.overlay(out)
	s.userChanged(id)
	return out, nil
}

// UserFilter selects users for listing and search.
type UserFilter struct {
	Keyword string // id, or part of username, e-mail or display name
	Group   string
	Offset  int
	Limit   int // 0 = no limit
}

// Users lists users newest first, deleted ones included.
func (s *Store) Users(f UserFilter) ([]*User, error) {
	var out []*User
	kw := strings.ToLower(strings.TrimSpace(f.Keyword))
	// S §3.3: LIKE %kw%, with the LIKE of the databases S runs on (as the
	// token search): ASCII case does not count and % and _ are wildcards.
	pattern := "%" + kw + "%"
	err := s.db.View(func(tx *bolt.Tx) error {
		if kw != "" {
			if id, err := strconv.ParseUint(kw, 10, 64); err == nil {
				if u, err := getUser(tx, id); err == nil && (f.Group == "" || u.Group == f.Group) {
					out = append(out, u)
					return nil
				}
			}
		}
		skipped := 0
		c := tx.Bucket(bucketUsers).Cursor()
		k, v := c.Last()
		if kw == "" && f.Group == "" {
			// Every account matches: the rows before the page are
			// stepped over without being decoded.
			for ; k != nil && skipped < f.Offset; k, v = c.Prev() {
				skipped++
			}
		}
		for ; k != nil; k, v = c.Prev() {
			var u User
			if err := jsonUnmarshal(v, &u); err != nil {
				return err
			}
			if f.Group != "" && u.Group != f.Group {
				continue
			}
			if kw != "" && !likeMatch(strings.ToLower(u.Username), pattern) &&
				!likeMatch(strings.ToLower(u.Email), pattern) && !likeMatch(strings.ToLower(u.DisplayName), pattern) {
				continue
			}
			if skipped < f.Offset {
				skipped++
				continue
			}
			out = append(out, &u)
			if f.Limit > 0 && len(out) >= f.Limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, Internal(err)
	}
	for _, u := range out {
		s.ledger.overlay(u)
	}
	return out, nil
}

// nowUnix is a small helper for records stamped in seconds.
func (s *Store) nowUnix() int64 { return s.Now().Unix() }
