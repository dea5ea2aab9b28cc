import { ApiError, api } from "./client";
import type { User } from "./types";

/** LOG_TYPE names the log kinds; 0 in a filter means all. */
export const LOG_TYPE = { all: 0, topup: 1, consume: 2, manage: 3, system: 4 } as const;

/** LogEntry is one usage log; users' own entries have no id and no channel. */
export interface LogEntry {
  id?: number;
  user_id: number;
  created_at: number;
  type: number;
  content: string;
  username: string;
  token_name: string;
  token_id?: number;
  model_name: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** use_time is the total time in seconds. */
  use_time: number;
  is_stream: boolean;
  channel?: number;
  group?: string;
  /** other is JSON text: frt, ratios, model_price, upstream_model, request_id, admin_info, and the audio or image fields. */
  other: string;
}

/** LogOther is the parsed other field of a log entry. */
export interface LogOther {
  frt?: number;
  model_ratio?: number;
  completion_ratio?: number;
  group_ratio?: number;
  /** model_price is -1 when ratios apply. */
  model_price?: number;
  /** quota_per_unit is the QuotaPerUnit a fixed price was turned into quota at. */
  quota_per_unit?: number;
  upstream_model?: string;
  request_id?: string;
  admin_info?: { use_channel?: number[] | null; operator?: string };
  /** audio marks an audio model's call (gpt-4o-audio and later audio chat models): its tokens split into text and audio parts, audio priced at audio_ratio. */
  audio?: boolean;
  text_input?: number;
  text_output?: number;
  audio_input?: number;
  audio_output?: number;
  audio_ratio?: number;
  /** audio_completion_ratio multiplies audio output on top of audio_ratio. */
  audio_completion_ratio?: number;
  /** image marks an image generation, priced by size, quality and count (n), not by tokens. */
  image?: boolean;
  size?: string;
  quality?: string;
  n?: number;
}

/** LogPage is one page of logs. */
export interface LogPage {
  items: LogEntry[];
  total: number;
  page: number;
  page_size: number;
}

/** LogStat is the summary of the filtered logs: consumed quota and the last minute's requests and tokens. */
export interface LogStat {
  quota: number;
  rpm: number;
  tpm: number;
}

/** LogQuery holds the filters; timestamps are unix seconds, 0 leaves them out. */
export interface LogQuery {
  type: number;
  token_name: string;
  model_name: string;
  start_timestamp: number;
  end_timestamp: number;
  /** username and channel are honoured for administrators only. */
  username: string;
  channel: string;
}

function params(q: LogQuery, admin: boolean) {
  return {
    type: q.type,
    token_name: q.token_name || undefined,
    model_name: q.model_name || undefined,
    start_timestamp: q.start_timestamp || undefined,
    end_timestamp: q.end_timestamp || undefined,
    username: admin ? q.username || undefined : undefined,
    channel: admin ? q.channel || undefined : undefined,
  };
}

/** listLogs reads one page (p is 1-based): every user's entries for administrators, else the caller's. */
export async function listLogs(admin: boolean, q: LogQuery, p: number, pageSize: number): Promise<LogPage> {
  const path = admin ? "/api/log/" : "/api/log/self/";
  const data = (await api.get<LogPage>(path, { query: { p, page_size: pageSize, ...params(q, admin) } })).data;
  return { items: data?.items ?? [], total: data?.total ?? 0, page: data?.page ?? p, page_size: data?.page_size ?? pageSize };
}

/** logStat sums the filtered logs. */
export async function logStat(admin: boolean, q: LogQuery): Promise<LogStat> {
  const path = admin ? "/api/log/stat" : "/api/log/self/stat";
  const data = (await api.get<LogStat>(path, { query: params(q, admin) })).data;
  return { quota: Number(data?.quota) || 0, rpm: Number(data?.rpm) || 0, tpm: Number(data?.tpm) || 0 };
}

/** getUserInfo reads a user for the log page's info dialog; null when the server offers no such call (404). */
export async function getUserInfo(id: number): Promise<User | null> {
  try {
    return (await api.get<User>(`/api/user/${id}`, { silent: true })).data;
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 405)) return null;
    throw err;
  }
}
