package api

import (
	"net/http"
	"sync/atomic"
	"time"
)

// statusView is the public status object (A §3, S §4.3).
type statusView struct {
	Version                 string              `json:"version"`
	StartTime               int64               `json:"start_time"`
	SystemName              string              `json:"system_name"`
	Logo                    string              `json:"logo"`
	FooterHTML              string              `json:"footer_html"`
	ServerAddress           string              `json:"server_address"`
	QuotaPerUnit            float64             `json:"quota_per_unit"`
	DisplayInCurrency       bool                `json:"display_in_currency"`
	EnableBatchUpdate       bool                `json:"enable_batch_update"`
	EnableDrawing           bool                `json:"enable_drawing"`
	EnableTask              bool                `json:"enable_task"`
	EnableDataExport        bool                `json:"enable_data_export"`
	DataExportDefaultTime   string              `json:"data_export_default_time"`
	DefaultCollapseSidebar  bool                `json:"default_collapse_sidebar"`
	MjNotifyEnabled         bool                `json:"mj_notify_enabled"`
	Chats                   []map[string]string `json:"chats"`
	ChatLink                string              `json:"chat_link"`
	ChatLink2               string              `json:"chat_link2"`
	TopUpLink               string              `json:"top_up_link"`
	Price                   float64             `json:"price"`
	MinTopUp                int64               `json:"min_topup"`
	EnableOnlineTopUp       bool                `json:"enable_online_topup"`
	EmailVerification       bool                `json:"email_verification"`
	TurnstileCheck          bool                `json:"turnstile_check"`
	TurnstileSiteKey        string              `json:"turnstile_site_key"`
	GitHubOAuth             bool                `json:"github_oauth"`
	GitHubClientID          string              `json:"github_client_id"`
	LinuxDOOAuth            bool                `json:"linuxdo_oauth"`
	LinuxDOClientID         string              `json:"linuxdo_client_id"`
	WeChatLogin             bool                `json:"wechat_login"`
	WeChatQRCode            string              `json:"wechat_qrcode"`
	TelegramOAuth           bool                `json:"telegram_oauth"`
	TelegramBotName         string              `json:"telegram_bot_name"`
	GitHubAuthorizeURL      string              `json:"github_authorize_url"`
	LinuxDOAuthorizeURL     string              `json:"linuxdo_authorize_url"`
	RegisterEnabled         bool                `json:"register_enabled"`
	PasswordLoginEnabled    bool                `json:"password_login_enabled"`
	PasswordRegisterEnabled bool                `json:"password_register_enabled"`
}

func (s *Server) getStatus(w http.ResponseWriter, r *http.Request) {
	set := s.store.Settings()
	logo := set.Get("Logo")
	if logo == "" {
		logo = "/logo.png"
	}
	chats := set.Chats
	if chats == nil {
		chats = []map[string]string{}
	}
	writeJSON(w, statusView{
		Version: s.cfg.Version, StartTime: s.cfg.StartTime.Unix(),
		SystemName: set.Get("SystemName"), Logo: logo, FooterHTML: set.Get("Footer"),
		ServerAddress: set.ServerAddress(), QuotaPerUnit: set.QuotaPerUnit(),
		DisplayInCurrency: set.Bool("DisplayInCurrencyEnabled"), EnableBatchUpdate: true,
		EnableDrawing: set.Bool("DrawingEnabled"), EnableTask: set.Bool("TaskEnabled"),
		EnableDataExport: set.Bool("DataExportEnabled"), DataExportDefaultTime: set.Get("DataExportDefaultTime"),
		DefaultCollapseSidebar: set.Bool("DefaultCollapseSidebar"), MjNotifyEnabled: set.Bool("MjNotifyEnabled"),
		Chats: chats, ChatLink: set.Get("ChatLink"), ChatLink2: set.Get("ChatLink2"), TopUpLink: set.Get("TopUpLink"),
		Price: set.Float("Price"), MinTopUp: set.Int("MinTopUp"),
		EnableOnlineTopUp: set.Get("PayAddress") != "" && set.Get("EpayId") != "" && set.Get("EpayKey") != "",
		EmailVerification: set.Bool("EmailVerificationEnabled"),
		TurnstileCheck:    set.Bool("TurnstileCheckEnabled"), TurnstileSiteKey: set.Get("TurnstileSiteKey"),
		GitHubOAuth: set.Bool("GitHubOAuthEnabled"), GitHubClientID: set.Get("GitHubClientId"),
		LinuxDOOAuth: set.Bool("LinuxDOOAuthEnabled"), LinuxDOClientID: set.Get("LinuxDOClientId"),
		WeChatLogin: set.Bool("WeChatAuthEnabled"), WeChatQRCode: set.Get("WeChatAccountQRCodeImageURL"),
		TelegramOAuth: set.Bool("TelegramOAuthEnabled"), TelegramBotName: set.Get("TelegramBotName"),
		GitHubAuthorizeURL: orDefault(s.cfg.GitHubAuthorizeURL, DefaultGitHubAuthorizeURL), LinuxDOAuthorizeURL: orDefault(s.cfg.LinuxDOAuthorizeURL, DefaultLinuxDOAuthorizeURL),
		RegisterEnabled: set.Bool("RegisterEnabled"), PasswordLoginEnabled: set.Bool("PasswordLoginEnabled"),
		PasswordRegisterEnabled: set.Bool("PasswordRegisterEnabled"),
	})
}

// pingEvery is how long a successful data-file check stands for the next.
const pingEvery = 10 * time.Second

// lastPing is when testStatus last reached the data file (Unix nanoseconds).
type lastPing struct{ at atomic.Int64 }

// testStatus checks that the data file answers (S §3.1): 200 when it does,
// 503 when it does not. A check that succeeded less than 10 s ago stands.
func (s *Server) testStatus(w http.ResponseWriter, r *http.Request) {
	now := s.store.Now().UnixNano()
	if last := s.ping.at.Load(); last == 0 || now-last >= int64(pingEvery) {
		if err := s.store.Ping(); err != nil {
			writeRaw(w, http.StatusServiceUnavailable, map[string]any{"success": false, "message": "数据库连接失败"})
			return
		}
		s.ping.at.Store(now)
	}
	writeMessage(w, "Server is running", nil)
}
