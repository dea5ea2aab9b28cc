package api

import (
	"encoding/hex"
	"time"

	"gateway/store"
)

// userView is the user record as the console sees it. It is built field by
// field so that password and access-token hashes can never slip out.
type userView struct {
	ID              uint64  `json:"id"`
	Username        string  `json:"username"`
	DisplayName     string  `json:"display_name"`
	Email           string  `json:"email"`
	GitHubID        string  `json:"github_id"`
	WeChatID        string  `json:"wechat_id"`
	TelegramID      string  `json:"telegram_id"`
	LinuxDOID       string  `json:"linux_do_id"`
	Quota           int64   `json:"quota"`
	UsedQuota       int64   `json:"used_quota"`
	RequestCount    int64   `json:"request_count"`
	Group           string  `json:"group"`
	Role            int     `json:"role"`
	Status          int     `json:"status"`
	AffCode         string  `json:"aff_code"`
	AffCount        int64   `json:"aff_count"`
	AffQuota        int64   `json:"aff_quota"`
	AffHistoryQuota int64   `json:"aff_history_quota"`
	InviterID       uint64  `json:"inviter_id"`
	HasAccessToken  bool    `json:"has_access_token"`
	AccessTokenID   string  `json:"access_token_id"`
	HasPassword     bool    `json:"has_password"`
	CreatedAt       int64   `json:"created_at"`
	DeletedAt       *string `json:"DeletedAt"`
	// BalanceSeq numbers the balance of the user's own record, in the
	// order of the user.self pushes (docs/live.md).
	BalanceSeq uint64 `json:"balance_seq,omitempty"`
}

func viewUser(u *store.User) userView {
	v := userView{
		ID: u.ID, Username: u.Username, DisplayName: u.DisplayName, Email: u.Email,
		GitHubID: u.GitHubID, WeChatID: u.WeChatID, TelegramID: u.TelegramID, LinuxDOID: u.LinuxDOID,
		Quota: u.Quota, UsedQuota: u.UsedQuota, RequestCount: u.RequestCount, Group: u.Group,
		Role: u.Role, Status: u.Status, AffCode: u.AffCode, AffCount: u.AffCount, AffQuota: u.AffQuota,
		AffHistoryQuota: u.AffHistoryQuota, InviterID: u.InviterID, HasAccessToken: len(u.AccessTokenHash) > 0,
		AccessTokenID: accessTokenID(u), HasPassword: u.PasswordHash != "", CreatedAt: u.CreatedAt,
	}
	if u.Deleted() {
		t := time.Unix(u.DeletedAt, 0).UTC().Format(time.RFC3339)
		v.DeletedAt = &t
	}
	return v
}

// liveUser is the payload of the user.self topic.
type liveUser struct {
	ID              uint64 `json:"id"`
	Username        string `json:"username"`
	DisplayName     string `json:"display_name"`
	Quota           int64  `json:"quota"`
	UsedQuota       int64  `json:"used_quota"`
	RequestCount    int64  `json:"request_count"`
	Status          int    `json:"status"`
	Role            int    `json:"role"`
	Group           string `json:"group"`
	AffCount        int64  `json:"aff_count"`
	AffQuota        int64  `json:"aff_quota"`
	AffHistoryQuota int64  `json:"aff_history_quota"`
	// The bindings and credentials the personal settings show, so that
	// another tab of the user's sees a change made in one.
	Email          string `json:"email"`
	GitHubID       string `json:"github_id"`
	WeChatID       string `json:"wechat_id"`
	TelegramID     string `json:"telegram_id"`
	LinuxDOID      string `json:"linux_do_id"`
	HasAccessToken bool   `json:"has_access_token"`
	AccessTokenID  string `json:"access_token_id"`
	HasPassword    bool   `json:"has_password"`
	// BalanceSeq orders the balances pushed: a console ignores the balance
	// of a message whose number is below one it already has (see
	// docs/live.md).
	BalanceSeq uint64 `json:"balance_seq,omitempty"`
}

// LiveUser returns the user.self payload for u.
func LiveUser(u *store.User) any {
	return liveUser{ID: u.ID, Username: u.Username, DisplayName: u.DisplayName, Quota: u.Quota, UsedQuota: u.UsedQuota,
		RequestCount: u.RequestCount, Status: u.Status, Role: u.Role, Group: u.Group,
		AffCount: u.AffCount, AffQuota: u.AffQuota, AffHistoryQuota: u.AffHistoryQuota, BalanceSeq: u.BalanceSeq,
		Email: u.Email, GitHubID: u.GitHubID, WeChatID: u.WeChatID, TelegramID: u.TelegramID, LinuxDOID: u.LinuxDOID,
		HasAccessToken: len(u.AccessTokenHash) > 0, AccessTokenID: accessTokenID(u), HasPassword: u.PasswordHash != ""}
}

// accessTokenID names the user's current system access token without
// telling anything of it (a few bytes of its hash), so that a console showing
// the token it made can tell when another one replaced it.
func accessTokenID(u *store.User) string {
	if len(u.AccessTokenHash) == 0 {
		return ""
	}
	return hex.EncodeToString(u.AccessTokenHash[:min(4, len(u.AccessTokenHash))])
}
