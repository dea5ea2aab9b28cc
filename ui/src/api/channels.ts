import { t } from "../i18n";
import { serverText } from "../i18n/server";
import { readJSON, writeJSON } from "../lib/storage";
import { toast } from "../stores/toast";
import { ApiError, api } from "./client";

/** Channel is an upstream provider as the console sees it; the key never comes back. */
export interface Channel {
  id: number;
  type: number;
  name: string;
  openai_organization: string;
  test_model: string;
  status: number;
  weight: number;
  created_time: number;
  test_time: number;
  /** response_time is the last test's latency in milliseconds; 0 means untested. */
  response_time: number;
  base_url: string;
  other: string;
  balance: number;
  balance_updated_time: number;
  /** models and group are comma-joined lists. */
  models: string;
  group: string;
  used_quota: number;
  model_mapping: string;
  status_code_mapping: string;
  priority: number;
  auto_ban: number;
  /** other_info is JSON text with status_reason and status_time. */
  other_info: string;
}

/** ChannelInput is the body of create (key: one per line) and edit (plus id; an empty key keeps the stored one). */
export interface ChannelInput {
  id?: number;
  type: number;
  name: string;
  key?: string;
  openai_organization: string;
  base_url: string;
  other: string;
  models: string;
  group: string;
  model_mapping: string;
  status_code_mapping: string;
  test_model: string;
  auto_ban: number;
  priority: number;
  weight: number;
}

/** ChannelHealth is the live update of one channel (topic channel.health). */
export interface ChannelHealth {
  id: number;
  status: number;
  response_time: number;
  test_time: number;
  balance: number;
  balance_updated_time: number;
  used_quota: number;
  other_info: string;
}

/** TestProgress is one step of a test-all run (topic task.progress, task channel_test). */
export interface TestProgress {
  task: string;
  done: number;
  total: number;
  channel_id?: number;
  ok?: boolean;
  time?: number;
  message?: string;
  /** disabled is true when the health rules disabled the channel just tested. */
  disabled?: boolean;
}

/** BalanceResult is one channel's outcome of the update-all-balances call. */
export interface BalanceResult {
  id: number;
  balance: number;
  error?: string;
}

/**
 * reportServerError shows what the server said about a failure it answered
 * with a 5xx (the client then shows only a generic text): an unsupported
 * balance endpoint (501) or an upstream failure (502) carry a useful message.
 * Calls using it must be made silent.
 */
export function reportServerError(err: unknown): void {
  if (!(err instanceof ApiError)) {
    toast.error(t("error.withMessage", { message: err instanceof Error ? err.message : String(err) }));
    return;
  }
  if (err.message === "aborted") return;
  const message = errorText(err);
  if (message) toast.error(message);
}

/** errorText is what a failed call says, for display: the server's message when it gave one, else the client's text. */
export function errorText(err: unknown): string {
  if (!(err instanceof ApiError)) return err instanceof Error ? err.message : String(err);
  const body = err.body as { message?: unknown } | undefined;
  const own = err.status !== 500 && typeof body?.message === "string" ? body.message : "";
  return serverText(own || err.message);
}

async function quiet<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    reportServerError(err);
    throw err;
  }
}

/** listChannels reads one page (p is 0-based); id_sort orders by id instead of priority. */
export async function listChannels(p: number, pageSize: number, idSort: boolean): Promise<Channel[]> {
  return (await api.get<Channel[]>("/api/channel/", { query: { p, page_size: pageSize, id_sort: idSort } })).data ?? [];
}

/** searchChannels matches id, name or exact key, a model substring and a group; not paged. */
export async function searchChannels(keyword: string, group: string, model: string, idSort: boolean): Promise<Channel[]> {
  return (await api.get<Channel[]>("/api/channel/search", { query: { keyword, group, model, id_sort: idSort } })).data ?? [];
}

/** getChannel reads one channel (without its key). */
export async function getChannel(id: number): Promise<Channel> {
  return (await api.get<Channel>(`/api/channel/${id}`)).data;
}

/** createChannels creates one channel per key line (one for Vertex AI) and returns the server's message. */
export async function createChannels(input: ChannelInput): Promise<string> {
  return (await api.post<unknown>("/api/channel/", input)).message;
}

/** updateChannel writes the fields given (plus id) and returns the stored channel. */
export async function updateChannel(fields: Partial<ChannelInput> & { id: number; status?: number }): Promise<Channel> {
  return (await api.put<Channel>("/api/channel/", fields)).data;
}

/** deleteChannel removes one channel. */
export async function deleteChannel(id: number): Promise<void> {
  await api.del(`/api/channel/${id}/`);
}

/** deleteDisabledChannels removes every manually or automatically disabled channel and returns the count. */
export async function deleteDisabledChannels(): Promise<number> {
  return Number((await api.del<number>("/api/channel/disabled")).data) || 0;
}

/** deleteChannelBatch removes the channels with these ids and returns the count. */
export async function deleteChannelBatch(ids: number[]): Promise<number> {
  return Number((await api.post<number>("/api/channel/batch", { ids })).data) || 0;
}

/** fixChannels repairs the channel-ability index; it resolves to the rows removed and added. */
export async function fixChannels(): Promise<number> {
  return Number((await api.post<number>("/api/channel/fix")).data) || 0;
}

/** copyChannel duplicates a channel on the server, key included. */
export async function copyChannel(id: number): Promise<{ channel: Channel; message: string }> {
  const r = await api.post<Channel>(`/api/channel/copy/${id}`, undefined, { silent: true });
  return { channel: r.data, message: r.message };
}

/** testChannel sends one test request; it resolves to the latency in seconds. Failures carry the server's message. */
export async function testChannel(id: number, model?: string): Promise<number> {
  const r = await quiet(api.get<unknown>(`/api/channel/test/${id}`, { query: { model: model || undefined }, silent: true }));
  return Number((r.raw as { time?: unknown })?.time) || 0;
}

/** testAllChannels starts the background test of every channel; progress arrives on task.progress. */
export async function testAllChannels(): Promise<string> {
  return (await api.get<unknown>("/api/channel/test")).message;
}

/** TestRunState is where a test-all run stands: the run in progress, or the last one (running false). */
export interface TestRunState {
  task: string;
  running: boolean;
  /** periodic marks a run of the test interval, which pushes no progress. */
  periodic: boolean;
  done: number;
  total: number;
  failed: number;
  disabled: number;
}

/** testAllProgress reads where a test-all run stands. */
export async function testAllProgress(): Promise<TestRunState> {
  return (await quiet(api.get<TestRunState>("/api/channel/test/progress", { silent: true }))).data;
}

/** updateBalance refreshes one channel's balance from its provider. */
export async function updateBalance(id: number): Promise<number> {
  const r = await quiet(api.get<unknown>(`/api/channel/update_balance/${id}/`, { silent: true }));
  return Number((r.raw as { balance?: unknown })?.balance) || 0;
}

/** updateAllBalances refreshes every enabled channel that has a balance endpoint. */
export async function updateAllBalances(): Promise<BalanceResult[]> {
  return (await quiet(api.get<BalanceResult[]>("/api/channel/update_balance", { silent: true }))).data ?? [];
}

const MODELS_BY_TYPE_KEY = "channel_models";

/** modelsByType returns the suggested models of each channel type, cached in localStorage. */
export async function modelsByType(): Promise<Record<string, string[]>> {
  const fresh = api.get<Record<string, string[]>>("/api/models", { silent: true }).then((r) => {
    const data = r.data ?? {};
    writeJSON(MODELS_BY_TYPE_KEY, data);
    return data;
  });
  const cached = readJSON<Record<string, string[]> | null>(MODELS_BY_TYPE_KEY, null);
  if (cached) {
    // The cached map answers at once; the fresh one replaces it for next time.
    fresh.catch(() => {});
    return cached;
  }
  return fresh;
}

/** allModelIds lists every model the server knows. */
export async function allModelIds(): Promise<string[]> {
  const data = (await api.get<{ id: string }[]>("/api/channel/models", { silent: true })).data ?? [];
  return data.map((m) => m.id);
}

/**
 * fetchFormModels asks a provider for its models for a channel form; the server makes the request, never the browser.
 * With id and an empty key, the saved channel's key is used.
 */
export async function fetchFormModels(type: number, baseURL: string, key: string, id?: number): Promise<string[]> {
  return (await quiet(api.post<string[]>("/api/channel/fetch_models", { type, base_url: baseURL, key, id }, { silent: true }))).data ?? [];
}

/** listGroupNames returns the group names the server knows: GET /api/group/ when it exists, else the caller's usable groups. */
export async function listGroupNames(): Promise<string[]> {
  try {
    const r = await api.get<string[] | { data?: string[] }>("/api/group/", { silent: true });
    const list = Array.isArray(r.data) ? r.data : r.data?.data;
    if (Array.isArray(list)) return list;
  } catch {
    /* not offered by this server: fall back */
  }
  try {
    return Object.keys((await api.get<Record<string, string>>("/api/user/self/groups", { silent: true })).data ?? {});
  } catch {
    return [];
  }
}
