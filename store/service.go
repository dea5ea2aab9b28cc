package store

import (
	"context"
	"io"
	"time"
)

// The interfaces below are the store's contract, one per resource. Store
// (bbolt) implements them all; a second backend (PostgreSQL, say) implements
// the same set and the rest of the program does not change. Each method's
// doc comment on Store lists the error codes it returns.

// UserService manages accounts.
type UserService interface {
	CreateUser(in NewUser) (*User, error)
	EnsureRoot() (bool, error)
	User(id uint64) (*User, error)
	UserByLogin(login string) (*User, error)
	UserByEmail(email string) (*User, error)
	UserByUsername(name string) (*User, error)
	UserByAccessToken(token string) (*User, error)
	UserByExternalID(provider, id string) (*User, error)
	UsernameTaken(name string) bool
	EmailTaken(email string) bool
	UpdateUser(id uint64, upd UserUpdate) (*User, error)
	DeleteUser(id uint64) error
	ResetAccessToken(id uint64) (string, error)
	EnsureAffCode(id uint64) (string, error)
	TransferAffQuota(id uint64, quota int64) (*User, error)
	UpdateUserAsAdmin(adminName string, id uint64, upd UserUpdate, quota *int64) (*User, error)
	Users(f UserFilter) ([]*User, error)
}

// SessionService manages login sessions and single-use codes.
type SessionService interface {
	CreateSession(userID uint64) (string, *Session, error)
	Session(id string) (*Session, error)
	UpdateSession(id string, fn func(*Session) error) error
	DeleteSession(id string) error
	DeleteUserSessions(userID uint64) error
	PurgeExpiredSessions() (int, error)
	IssueCode(purpose, subject, code string) error
	ConsumeCode(purpose, subject, code string) error
	DropCode(purpose, subject string)
}

// OptionService manages the site-wide options.
type OptionService interface {
	Settings() *Settings
	UpdateOption(key, value string) error
	UpdateOptions(opts []Option) error
}

// ChannelService manages upstream channels and routing.
type ChannelService interface {
	CreateChannels(chs []*Channel) error
	Channel(id uint64) (*Channel, error)
	Channels() ([]*Channel, error)
	FindChannels(f ChannelFilter) ([]*Channel, error)
	UpdateChannel(id uint64, upd ChannelUpdate) (*Channel, error)
	SetChannelStatusAutoAfter(id uint64, status int, reason string, seen *Channel) (bool, *Channel, error)
	RecordChannelTest(id uint64, responseMs int64) error
	RecordChannelBalance(id uint64, balance float64) error
	DeleteChannels(ids []uint64) (int, error)
	DeleteDisabledChannels() (int, error)
	FixAbilities() (removed, added int, err error)
	Abilities() ([]Ability, error)
	SelectChannel(group, model string, tier int, exclude map[uint64]bool) *Channel
	RoutingChannel(id uint64) *Channel
	GroupModels(group string) []string
	EnabledModels() map[string][]string
}

// TokenService manages API tokens.
type TokenService interface {
	CreateToken(t *Token) (*Token, error)
	Token(userID, id uint64) (*Token, error)
	TokenByKey(key string) (*Token, error)
	Tokens(userID uint64, f TokenFilter) ([]*Token, error)
	UpdateToken(userID, id uint64, upd TokenUpdate) (*Token, error)
	DeleteToken(userID, id uint64) error
	SetTokenStatus(id uint64, status int) error
}

// LedgerService holds balances and turns calls into charges.
type LedgerService interface {
	Reserve(userID, tokenID uint64, amount int64) (*Reservation, error)
	Settle(r *Reservation, channelID uint64, quota int64, log *Log) error
	Refund(r *Reservation)
	LiveBalance(userID uint64) (Balance, error)
	SetSyncInterval(d time.Duration)
}

// LogService stores and queries the usage and audit log.
type LogService interface {
	AppendLog(l *Log) error
	Logs(f LogFilter, page, pageSize int) (*LogPage, error)
	SearchLogs(f LogFilter, limit int) ([]*Log, error)
	LogQuotaSum(f LogFilter) (int64, error)
	DeleteLogsBefore(ctx context.Context, ts int64) (int, error)
	QuotaData(start, end int64, userID uint64) ([]QuotaDatum, error)
}

// MoneyService manages redemption codes and payment orders.
type MoneyService interface {
	CreateRedemptions(creator uint64, name string, quota int64, count int) ([]*Redemption, error)
	Redemption(id uint64) (*Redemption, error)
	Redemptions(keyword string, offset, limit int) ([]*Redemption, error)
	UpdateRedemption(id uint64, upd RedemptionUpdate) (*Redemption, error)
	DeleteRedemption(id uint64) error
	Redeem(userID uint64, key string) (int64, error)
	CreateTopUp(t *TopUp) error
	CompleteTopUp(tradeNo string, paid float64) (*TopUp, bool, error)
	TopUps(userID uint64, offset, limit int) ([]*TopUp, error)
}

// Backend is everything a storage backend provides.
type Backend interface {
	UserService
	SessionService
	OptionService
	ChannelService
	TokenService
	LedgerService
	LogService
	MoneyService
	SetHooks(h Hooks)
	Backup(ctx context.Context, w io.Writer, size func(int64)) error
	Ping() error
	Close() error
}

var _ Backend = (*Store)(nil)
