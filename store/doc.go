// Package store keeps all state in one bbolt file and is the only package
// that opens it. It holds the entities (users, sessions, options, channels
// with their abilities, tokens, logs), their validation, the error type
// shared by every layer, and the ledger that keeps live balances.
//
// Buckets (all created at open, declared in buckets.go):
//
//	meta                      schema_version -> uint64 (big-endian); while older log entries
//	                          are added to idx_log_by_token_name, token_name_backfill_next
//	                          and token_name_backfill_end -> log key(16)
//	users                     id(8) -> User JSON
//	  idx_user_by_username    lower(username) -> id      unique; deleted users keep theirs
//	  idx_user_by_email       lower(email) -> id         unique
//	  idx_user_by_aff_code    aff code -> id             unique
//	  idx_user_by_access_token sha256(token) -> id       the token itself is never stored
//	  idx_user_by_github_id, _wechat_id, _telegram_id, _linux_do_id
//	sessions                  sha256(cookie) -> Session JSON
//	  idx_session_by_user     user id(8) + sha256(cookie) -> nil   ends all sessions of a user
//	options                   key -> value
//	codes                     purpose 0x00 address -> {code, expiry, sent_at}   single use
//	channels                  id(8) -> Channel JSON
//	abilities                 group 0x00 model 0x00 channel id(8) -> Ability JSON
//	tokens                    id(8) -> Token JSON
//	  idx_token_by_key        sha256(key) -> id
//	  idx_token_by_user       user id(8) + token id(8) -> nil
//	logs                      created_at(8) + id(8) -> Log JSON      time-ordered
//	  idx_log_by_user         user id(8) + log key(16) -> type(1) varint(quota)
//	  idx_log_by_token        token id(8) + log key(16) -> type(1) varint(quota)
//	  idx_log_by_channel      channel id(8) + log key(16) -> type(1) varint(quota)
//	  idx_log_by_model        model 0x00 + log key(16) -> type(1) varint(quota)
//	  idx_log_by_type         type(1) + log key(16) -> type(1) varint(quota)
//	  idx_log_by_token_name   token name 0x00 + log key(16) -> type(1) varint(quota) uvarint(user)
//	                          (entries an older build indexed carry nil: they are decoded)
//	  log_counts              "all" | "u"+user | "t"+token | "c"+channel | "m"+model | "y"+type | "n"+token name -> row count
//	  log_unindexed           log key(16) -> 0xFE user(8) token(8) channel(8) type(1) quota(8)
//	                          uvarint(len(model)) model token-name   not yet in the indexes
//	                          (older references: 0xFF and no name, or no mark, quota nor name)
//	redemptions               id(8) -> Redemption JSON
//	  idx_redemption_by_key   key -> id
//	top_ups                   id(8) -> TopUp JSON
//	  idx_top_up_by_trade_no  trade no -> id
//	quota_data                hour(8) + user id(8) + model -> QuotaDatum JSON (written with the charges)
//
// Every record is written with its index entries in one transaction, except
// log entries: their transaction writes the entry and its log_unindexed
// reference, and a background indexer moves references into the log indexes
// and counters in batches (logindex.go). Queries read both, so nothing is
// missed in between.
// Integers in keys are 8-byte big-endian so that keys sort by value; ids come
// from NextSequence, so newest-first is a reverse cursor walk.
//
// Balances (user quota, used quota and request count; token remain and used;
// channel used) are held in memory by the ledger while the process owns the
// file; see ledger.go for how charges and credits reach the file.
package store
