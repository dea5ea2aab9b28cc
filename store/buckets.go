package store

// Every bucket and meta key of the file is declared here; doc.go draws the tree.
var (
	bucketMeta = []byte("meta")

	bucketUsers             = []byte("users")
	bucketIdxUserByName     = []byte("idx_user_by_username")
	bucketIdxUserByEmail    = []byte("idx_user_by_email")
	bucketIdxUserByAff      = []byte("idx_user_by_aff_code")
	bucketIdxUserByAccess   = []byte("idx_user_by_access_token")
	bucketIdxUserByGitHub   = []byte("idx_user_by_github_id")
	bucketIdxUserByWeChat   = []byte("idx_user_by_wechat_id")
	bucketIdxUserByTelegram = []byte("idx_user_by_telegram_id")
	bucketIdxUserByLinuxDO  = []byte("idx_user_by_linux_do_id")

	bucketSessions          = []byte("sessions")
	bucketIdxSessionsByUser = []byte("idx_session_by_user")

	bucketOptions = []byte("options")
	bucketCodes   = []byte("codes")

	bucketLogs           = []byte("logs")
	bucketIdxLogsByUser  = []byte("idx_log_by_user")
	bucketIdxLogsByToken = []byte("idx_log_by_token")

	bucketIdxLogsByChannel = []byte("idx_log_by_channel")
	bucketIdxLogsByModel   = []byte("idx_log_by_model")
	bucketIdxLogsByType    = []byte("idx_log_by_type")
	// idx_log_by_token_name keys entries by the token name they were made
	// with (a log keeps the name its token had then): name, 0, log key.
	bucketIdxLogsByTokenName = []byte("idx_log_by_token_name")
	bucketLogCounts          = []byte("log_counts")
	bucketLogUnindexed       = []byte("log_unindexed")

	bucketRedemptions      = []byte("redemptions")
	bucketIdxRedemptionKey = []byte("idx_redemption_by_key")
	bucketTopUps           = []byte("top_ups")
	bucketIdxTopUpTradeNo  = []byte("idx_top_up_by_trade_no")
	bucketQuotaData        = []byte("quota_data")

	bucketChannels       = []byte("channels")
	bucketAbilities      = []byte("abilities")
	bucketTokens         = []byte("tokens")
	bucketIdxTokenByKey  = []byte("idx_token_by_key")
	bucketIdxTokenByUser = []byte("idx_token_by_user")
)

// allBuckets lists every top-level bucket; Open creates them in one transaction.
var allBuckets = [][]byte{
	bucketMeta,
	bucketUsers, bucketIdxUserByName, bucketIdxUserByEmail, bucketIdxUserByAff,
	bucketIdxUserByAccess, bucketIdxUserByGitHub, bucketIdxUserByWeChat,
	bucketIdxUserByTelegram, bucketIdxUserByLinuxDO,
	bucketSessions, bucketIdxSessionsByUser,
	bucketOptions, bucketCodes,
	bucketLogs, bucketIdxLogsByUser, bucketIdxLogsByToken, bucketIdxLogsByChannel, bucketIdxLogsByModel, bucketIdxLogsByType, bucketIdxLogsByTokenName, bucketLogCounts, bucketLogUnindexed,
	bucketRedemptions, bucketIdxRedemptionKey, bucketTopUps, bucketIdxTopUpTradeNo, bucketQuotaData,
	bucketChannels, bucketAbilities, bucketTokens, bucketIdxTokenByKey, bucketIdxTokenByUser,
}

// bucketSince gives the schema version from which every data file holds a
// bucket added after the first layout (files of an older version may lack
// it, and Open creates it); the others are in every file that has a schema
// version. A file missing a bucket its version holds was torn.
var bucketSince = map[string]uint64{
	// Added by builds writing version 1 or with version 2.
	string(bucketAbilities): 2, string(bucketIdxLogsByChannel): 2, string(bucketIdxLogsByModel): 2,
	string(bucketIdxLogsByType): 2, string(bucketLogCounts): 2, string(bucketRedemptions): 2,
	string(bucketIdxRedemptionKey): 2, string(bucketTopUps): 2, string(bucketIdxTopUpTradeNo): 2,
	string(bucketQuotaData):          2,
	string(bucketLogUnindexed):       3,
	string(bucketIdxLogsByTokenName): 5,
}

// Meta keys.
var (
	metaSchemaVersion = []byte("schema_version")
	// While entries written before the token-name index existed are being
	// added to it, these hold the next log key to add and the last one
	// (see backfillTokenNames); the index is read only once they are gone.
	metaNameBackfillNext = []byte("token_name_backfill_next")
	metaNameBackfillEnd  = []byte("token_name_backfill_end")
)
