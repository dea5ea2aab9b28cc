import { api } from "./client";

/** QuotaRow is one dashboard bucket: a model's usage within one hour (created_at). */
export interface QuotaRow {
  model_name: string;
  created_at: number;
  count: number;
  quota: number;
  token_used: number;
  username?: string;
}

/** DashboardQuery selects a time range (unix seconds) and, for administrators, a username. */
export interface DashboardQuery {
  start_timestamp: number;
  end_timestamp: number;
  username?: string;
}

/** fetchQuotaData reads dashboard rows: every user's (admin) or the caller's own (span at most 30 days). */
export async function fetchQuotaData(q: DashboardQuery, all: boolean, silent = false): Promise<QuotaRow[]> {
  const path = all ? "/api/data/" : "/api/data/self";
  const query = all ? { ...q, username: q.username ?? "" } : { start_timestamp: q.start_timestamp, end_timestamp: q.end_timestamp };
  const data = (await api.get<QuotaRow[]>(path, { query, silent })).data;
  return Array.isArray(data) ? data : [];
}
