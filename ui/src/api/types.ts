/** User is the account record the server returns (password never included). */
export interface User {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  group: string;
  quota: number;
  used_quota: number;
  request_count: number;
  email?: string;
  github_id?: string;
  wechat_id?: string;
  telegram_id?: string;
  linux_do_id?: string;
  aff_code?: string;
  aff_count?: number;
  aff_quota?: number;
  aff_history_quota?: number;
  inviter_id?: number;
  has_access_token?: boolean;
  /** Names the current access token (a few bytes of its hash); another one replacing it changes it. */
  access_token_id?: string;
  /** has_password is false for an account made by a third-party login until its owner sets one. */
  has_password?: boolean;
  [key: string]: unknown;
}

/** ChatLink is one configured chat target: a display name mapped to a URL template. */
export type ChatLink = Record<string, string>;

/** Status is the public status object from GET /api/status. */
export interface Status {
  version?: string;
  start_time?: number;
  system_name?: string;
  logo?: string;
  footer_html?: string;
  server_address?: string;
  quota_per_unit?: number;
  display_in_currency?: boolean;
  enable_drawing?: boolean;
  enable_task?: boolean;
  enable_data_export?: boolean;
  enable_batch_update?: boolean;
  enable_online_topup?: boolean;
  data_export_default_time?: string;
  default_collapse_sidebar?: boolean;
  mj_notify_enabled?: boolean;
  chats?: ChatLink[];
  chat_link?: string;
  chat_link2?: string;
  top_up_link?: string;
  price?: number;
  min_topup?: number;
  email_verification?: boolean;
  turnstile_check?: boolean;
  turnstile_site_key?: string;
  github_oauth?: boolean;
  github_client_id?: string;
  linuxdo_oauth?: boolean;
  linuxdo_client_id?: string;
  wechat_login?: boolean;
  wechat_qrcode?: string;
  telegram_oauth?: boolean;
  telegram_bot_name?: string;
  /** github_authorize_url and linuxdo_authorize_url are the providers' consent pages (configurable on the server). */
  github_authorize_url?: string;
  linuxdo_authorize_url?: string;
  register_enabled?: boolean;
  password_login_enabled?: boolean;
  password_register_enabled?: boolean;
  [key: string]: unknown;
}
