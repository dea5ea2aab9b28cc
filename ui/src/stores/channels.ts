import { batch, computed, signal } from "@preact/signals-react";
import * as channelApi from "../api/channels";
import type { Channel, ChannelHealth, TestProgress } from "../api/channels";
import { handleError } from "../api/client";
import { sharedPageSize, writePageSize } from "../components/pagination";
import type { RowKey } from "../components/data-table";
import { t } from "../i18n";
import { readBool, writeString } from "../lib/storage";
import { onReconnected, onTopic } from "../ws/socket";
import { toast } from "./toast";

/** Channel statuses: enabled, disabled by an administrator, disabled by the health checks. */
export const CHANNEL_ENABLED = 1;
export const CHANNEL_MANUALLY_DISABLED = 2;
export const CHANNEL_AUTO_DISABLED = 3;

/** PRIORITY_MIN is the lowest priority a channel may have. */
export const PRIORITY_MIN = -999;
/** WEIGHT_MIN is the lowest weight; a negative weight becomes 0. */
export const WEIGHT_MIN = 0;

/** ID_SORT_KEY is the localStorage key of the sort-by-id toggle. */
export const ID_SORT_KEY = "id-sort";

/** ChannelSearch is an active search; empty fields do not filter. */
export interface ChannelSearch {
  keyword: string;
  group: string;
  model: string;
}

/** channels is the page (or search result) shown. */
export const channels = signal<Channel[]>([]);
/** channelsLoading is true while a list call runs. */
export const channelsLoading = signal(false);
/** channelPage is the 0-based page of the plain list, or of the search result shown. */
export const channelPage = signal(0);
/** channelPageSize is the page size, shared with other lists as page-size. */
export const channelPageSize = sharedPageSize;
/** idSort orders by id instead of priority. */
export const idSort = signal(readBool(ID_SORT_KEY) ?? false);
/** channelSearch is the search in force; null shows the paged list. */
export const channelSearch = signal<ChannelSearch | null>(null);
/** hasMoreChannels guesses whether a next page exists (the server sends no total). */
export const hasMoreChannels = computed(() => channelSearch.value === null && channels.value.length >= channelPageSize.value);
/**
 * shownChannels is what the table shows: the page of the plain list, or one page of a search
 * result (the server answers a search whole), so that a search matching hundreds of channels
 * renders no more rows than a page.
 */
export const shownChannels = computed(() => {
  if (channelSearch.value === null) return channels.value;
  const size = channelPageSize.value;
  return channels.value.slice(channelPage.value * size, (channelPage.value + 1) * size);
});

/** lastSearchPage is the last 0-based page of a search result of n channels. */
function lastSearchPage(n: number): number {
  return Math.max(0, Math.ceil(n / channelPageSize.value) - 1);
}

/** showSearchPage shows another page of the search result, without asking the server. */
export function showSearchPage(page: number): void {
  channelPage.value = Math.min(Math.max(0, page), lastSearchPage(channels.value.length));
}

/** bulkDeleteMode shows the selection column and the delete-selected action. */
export const bulkDeleteMode = signal(false);
/** selectedChannels holds the ids picked in bulk-delete mode. */
export const selectedChannels = signal<Set<RowKey>>(new Set());

/** TestAllState is the progress of a test-all run. */
export interface TestAllState {
  done: number;
  total: number;
  failed: number;
  /** disabled counts the channels the health rules disabled (a slow answer is no failure). */
  disabled: number;
  running: boolean;
}
/** testAllState is null until a test-all run starts. */
export const testAllState = signal<TestAllState | null>(null);
/** updatingAllBalances is true while every balance is refreshed. */
export const updatingAllBalances = signal(false);
/** testingIds holds the channels with a test in flight. */
export const testingIds = signal<Set<number>>(new Set());

/** serverGroups holds the group names from the server. */
export const serverGroups = signal<string[]>([]);
/** groupOptions joins the server's groups with those the listed channels use. */
export const groupOptions = computed(() => {
  const set = new Set<string>(serverGroups.value);
  for (const c of channels.value) for (const g of splitList(c.group)) set.add(g);
  return [...set].sort();
});

/** splitList turns a comma-joined list into its non-empty items. */
export function splitList(csv: string | null | undefined): string[] {
  return (csv ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** patchChannel updates one listed channel in place. */
export function patchChannel(id: number, fields: Partial<Channel>): void {
  // What was pushed of these fields before is older than this change (the answer of an action).
  const waiting = undrawn.get(id);
  if (waiting) for (const k of Object.keys(fields)) delete (waiting as Record<string, unknown>)[k];
  if (!channels.value.some((c) => c.id === id)) return;
  channels.value = channels.value.map((c) => (c.id === id ? { ...c, ...fields } : c));
}

function dropChannels(ids: number[]): void {
  const gone = new Set(ids);
  channels.value = channels.value.filter((c) => !gone.has(c.id));
  const sel = new Set(selectedChannels.value);
  for (const id of ids) sel.delete(id);
  selectedChannels.value = sel;
}

/** listReads counts the list and search reads started: only the latest one's answer is shown. */
let listReads = 0;

/** loadChannels reads a page of the plain list (leaving any search). */
export async function loadChannels(page = channelPage.value): Promise<void> {
  const at = ++listReads;
  channelsLoading.value = true;
  try {
    const list = withPushed(await readCatchingHealth(() => channelApi.listChannels(page, channelPageSize.value, idSort.value)));
    if (at !== listReads) return;
    // Health pushed before this read began is in its answer; pushed while it ran, taken in above.
    undrawn = new Map();
    batch(() => {
      channelSearch.value = null;
      channelPage.value = page;
      channels.value = list;
    });
  } catch (err) {
    handleError(err);
  } finally {
    if (at === listReads) channelsLoading.value = false;
  }
}

/** searchChannels runs a search (showing its first page, or the page shown when keepPage is set); an empty one goes back to the first page of the list. */
export async function searchChannels(s: ChannelSearch, keepPage = false): Promise<void> {
  const q = { keyword: s.keyword.trim(), group: s.group.trim(), model: s.model.trim() };
  if (!q.keyword && !q.group && !q.model) {
    await loadChannels(0);
    return;
  }
  const at = ++listReads;
  channelsLoading.value = true;
  try {
    const list = withPushed(await readCatchingHealth(() => channelApi.searchChannels(q.keyword, q.group, q.model, idSort.value)));
    // An older search answering late does not replace the result of a newer one.
    if (at !== listReads) return;
    // Health pushed before this read began is in its answer; pushed while it ran, taken in above.
    undrawn = new Map();
    batch(() => {
      const page = keepPage && channelSearch.value !== null ? Math.min(channelPage.value, lastSearchPage(list.length)) : 0;
      channelSearch.value = q;
      channelPage.value = page;
      channels.value = list;
    });
  } catch (err) {
    handleError(err);
  } finally {
    if (at === listReads) channelsLoading.value = false;
  }
}

/** refreshChannels reloads what is shown: the search in force or the current page. */
export async function refreshChannels(): Promise<void> {
  const s = channelSearch.value;
  if (s) await searchChannels(s, true);
  else await loadChannels(channelPage.value);
}

/** refreshAfterDelete reloads what is shown after a delete; a page left empty gives way to the last one that has rows. */
async function refreshAfterDelete(): Promise<void> {
  await refreshChannels();
  while (channelSearch.value === null && channels.value.length === 0 && channelPage.value > 0) {
    const page = channelPage.value;
    await loadChannels(page - 1);
    if (channelPage.value === page) return; // the read failed (and said so)
  }
}

/** setChannelPageSize stores a new page size and shows the first page (of the list, or of the search result). */
export async function setChannelPageSize(size: number): Promise<void> {
  writePageSize(size);
  if (channelSearch.value !== null) channelPage.value = 0;
  else await loadChannels(0);
}

/** setIdSort switches the sort order, stores it and reloads. */
export async function setIdSort(on: boolean): Promise<void> {
  idSort.value = on;
  writeString(ID_SORT_KEY, String(on));
  await refreshChannels();
}

/** setBulkDeleteMode turns bulk-delete mode on or off, clearing the selection. */
export function setBulkDeleteMode(on: boolean): void {
  batch(() => {
    bulkDeleteMode.value = on;
    selectedChannels.value = new Set();
  });
}

/** loadGroups fetches the group names for the group filter and form. */
export async function loadGroups(): Promise<void> {
  serverGroups.value = await channelApi.listGroupNames();
}

async function update(id: number, fields: Partial<Channel>): Promise<boolean> {
  try {
    const saved = await channelApi.updateChannel({ id, ...fields });
    patchChannel(id, saved ? { ...fields, ...pickListFields(saved) } : fields);
    toast.success(t("channels.msg.done"));
    return true;
  } catch (err) {
    handleError(err);
    return false;
  }
}

// pickListFields keeps what the list shows from an update answer, which may
// carry the key (the server's reference answer did): the key never enters the store.
function pickListFields(c: Channel): Partial<Channel> {
  const { key: _key, ...rest } = c as Channel & { key?: string };
  return rest;
}

/** statusChanging holds the channels with a status change in flight: a second click waits for its answer. */
export const statusChanging = signal<Set<number>>(new Set());

/** setChannelStatus enables (1) or disables (2) a channel. */
export async function setChannelStatus(id: number, status: number): Promise<boolean> {
  if (statusChanging.value.has(id)) return false;
  statusChanging.value = new Set(statusChanging.value).add(id);
  try {
    return await update(id, { status });
  } finally {
    const next = new Set(statusChanging.value);
    next.delete(id);
    statusChanging.value = next;
  }
}

/** setChannelPriority saves a priority, raised to PRIORITY_MIN when lower. */
export function setChannelPriority(id: number, priority: number): Promise<boolean> {
  return update(id, { priority: Math.max(PRIORITY_MIN, Math.trunc(priority)) });
}

/** setChannelWeight saves a weight; a negative weight becomes 0. */
export function setChannelWeight(id: number, weight: number): Promise<boolean> {
  return update(id, { weight: Math.max(WEIGHT_MIN, Math.trunc(weight)) });
}

/** removeChannel deletes one channel. */
export async function removeChannel(id: number): Promise<boolean> {
  try {
    await channelApi.deleteChannel(id);
    dropChannels([id]);
    toast.success(t("channels.msg.done"));
    // The page fills up again from the next one; an emptied last page gives way to the one before.
    await refreshAfterDelete();
    return true;
  } catch (err) {
    handleError(err);
    return false;
  }
}

/** copyingIds holds the channels with a copy in flight: one is not copied again until it answered. */
export const copyingIds = signal<Set<number>>(new Set());

/** duplicateChannel copies a channel on the server and reloads the list. */
export async function duplicateChannel(id: number): Promise<void> {
  if (copyingIds.value.has(id)) return;
  copyingIds.value = new Set(copyingIds.value).add(id);
  try {
    await channelApi.copyChannel(id);
    toast.success(t("channels.msg.copied"));
    await refreshChannels();
  } catch (err) {
    const reason = channelApi.errorText(err);
    toast.error(reason ? t("channels.msg.copyFailedWith", { reason }) : t("channels.msg.copyFailed"));
  } finally {
    const next = new Set(copyingIds.value);
    next.delete(id);
    copyingIds.value = next;
  }
}

/**
 * recordedMs is a test's duration as the server records it: whole milliseconds, cut, at least 1
 * (0 means never tested). The answer gives seconds; the small term keeps a whole number of
 * milliseconds that the division left a hair below it.
 */
function recordedMs(seconds: number): number {
  return Math.max(1, Math.floor(seconds * 1000 + 1e-9));
}

/** testOne tests a channel (with a chosen model or its default) and shows the latency. */
export async function testOne(ch: Channel, model?: string): Promise<void> {
  testingIds.value = new Set(testingIds.value).add(ch.id);
  try {
    const seconds = await channelApi.testChannel(ch.id, model);
    patchChannel(ch.id, { response_time: recordedMs(seconds), test_time: Math.floor(Date.now() / 1000) });
    toast.info(
      model
        ? t("channels.msg.testedModel", { name: ch.name, model, seconds: seconds.toFixed(2) })
        : t("channels.msg.tested", { name: ch.name, seconds: seconds.toFixed(2) }),
    );
  } catch {
    /* the server's message was shown */
  } finally {
    const next = new Set(testingIds.value);
    next.delete(ch.id);
    testingIds.value = next;
  }
}

/** refreshBalance updates one channel's balance. */
export async function refreshBalance(ch: Channel): Promise<void> {
  try {
    const balance = await channelApi.updateBalance(ch.id);
    patchChannel(ch.id, { balance, balance_updated_time: Math.floor(Date.now() / 1000) });
    toast.info(t("channels.msg.balanceUpdated", { name: ch.name }));
  } catch {
    /* the server's message was shown */
  }
}

/** startTestAll starts the background test of every channel; progress arrives live. */
export async function startTestAll(): Promise<void> {
  // The state is set before the call: progress frames of a quick run can
  // arrive before the answer that started it.
  testAllState.value = { done: 0, total: 0, failed: 0, disabled: 0, running: true };
  try {
    await channelApi.testAllChannels();
    // A quick run may already have reported its end.
    if (testAllState.value?.running) toast.info(t("channels.msg.testAllStarted"));
  } catch (err) {
    testAllState.value = null;
    handleError(err);
  }
}

/** BALANCE_IDS_SHOWN bounds the ids a failure toast names: hundreds would run off the screen. */
const BALANCE_IDS_SHOWN = 10;

/** idList names the first ids, and how many more there are. */
function idList(ids: number[]): string {
  const shown = ids.slice(0, BALANCE_IDS_SHOWN).join(", ");
  return ids.length > BALANCE_IDS_SHOWN ? `${shown} …` : shown;
}

/** updateAllBalances refreshes every enabled channel's balance and reports failures. */
export async function updateAllBalances(): Promise<void> {
  updatingAllBalances.value = true;
  try {
    const results = await channelApi.updateAllBalances();
    const failed = results.filter((r) => r.error);
    for (const r of results) if (!r.error) patchChannel(r.id, { balance: r.balance, balance_updated_time: Math.floor(Date.now() / 1000) });
    if (failed.length > 0) toast.warning(t("channels.msg.balancesPartial", { count: failed.length, ids: idList(failed.map((r) => r.id)) }));
    else toast.info(t("channels.msg.balancesUpdated"));
  } catch {
    /* the server's message was shown */
  } finally {
    updatingAllBalances.value = false;
  }
}

/** deleteDisabled removes every disabled channel. */
export async function deleteDisabled(): Promise<void> {
  try {
    const n = await channelApi.deleteDisabledChannels();
    toast.success(t("channels.msg.deletedDisabled", { count: n }));
    // Which ones went is not told: a selection may name them, so it starts again.
    selectedChannels.value = new Set();
    await refreshAfterDelete();
  } catch (err) {
    handleError(err);
  }
}

/** deleteSelected removes the channels picked in bulk-delete mode. */
export async function deleteSelected(): Promise<boolean> {
  const ids = [...selectedChannels.value].map(Number);
  if (ids.length === 0) {
    toast.error(t("channels.msg.selectFirst"));
    return false;
  }
  try {
    const n = await channelApi.deleteChannelBatch(ids);
    toast.success(t("channels.msg.deletedN", { count: n }));
    dropChannels(ids);
    await refreshAfterDelete();
    return true;
  } catch (err) {
    handleError(err);
    return false;
  }
}

/** fixAbilities repairs the channel index. */
export async function fixAbilities(): Promise<void> {
  try {
    const count = await channelApi.fixChannels();
    toast.success(t("channels.msg.fixed", { count }));
    await refreshChannels();
  } catch (err) {
    handleError(err);
  }
}

function onHealth(data: unknown): void {
  const h = data as Partial<ChannelHealth>;
  if (typeof h?.id !== "number") return;
  const fields: Partial<Channel> = {};
  for (const k of ["status", "response_time", "test_time", "balance", "balance_updated_time", "used_quota", "other_info"] as const) {
    if (h[k] !== undefined) (fields as Record<string, unknown>)[k] = h[k];
  }
  for (const pushed of arriving) pushed.set(h.id, { ...pushed.get(h.id), ...fields });
  queueDraw(h.id, fields);
}

/**
 * HEALTH_DRAW_MS is the least time between two draws of pushed channel changes: a test-all run of
 * hundreds of channels pushes a health and a progress frame for each, tens a second, and a page of
 * 100 channels takes a good part of a second to draw on a slow machine.
 */
const HEALTH_DRAW_MS = 1000;
/** undrawn holds, for each channel, the fields pushed since the last draw; healthTimer waits to draw them. */
let undrawn = new Map<number, Partial<Channel>>();
let healthTimer: ReturnType<typeof setTimeout> | null = null;
let lastDraw = 0;

/** queueDraw takes pushed fields of a channel: drawn at once when nothing was drawn in the last HEALTH_DRAW_MS, else when it ends. */
function queueDraw(id: number, fields: Partial<Channel>): void {
  undrawn.set(id, { ...undrawn.get(id), ...fields });
  if (healthTimer) return;
  const wait = lastDraw + HEALTH_DRAW_MS - Date.now();
  if (wait <= 0) drawHealth();
  else
    healthTimer = setTimeout(() => {
      healthTimer = null;
      drawHealth();
    }, wait);
}

/** drawHealth puts the fields pushed since the last draw onto the listed channels, in one update of the page. */
function drawHealth(): void {
  const byId = undrawn;
  undrawn = new Map();
  lastDraw = Date.now();
  if (byId.size === 0 || !channels.value.some((c) => byId.has(c.id))) return;
  channels.value = channels.value.map((c) => {
    const fields = byId.get(c.id);
    return fields ? { ...c, ...fields } : c;
  });
}

/**
 * arriving holds, for each list read in flight, the health pushed meanwhile of each channel: the
 * server may have read the list before those changes (each push reads the channel as committed
 * when its turn comes, so a push is never older than a read made before it), and its answer must
 * not undo them.
 */
const arriving = new Set<Map<number, Partial<Channel>>>();

/** readCatchingHealth runs a list read and returns its answer with the health pushed while it ran. */
async function readCatchingHealth(read: () => Promise<Channel[]>): Promise<[Channel[], Map<number, Partial<Channel>>]> {
  const pushed = new Map<number, Partial<Channel>>();
  arriving.add(pushed);
  try {
    return [await read(), pushed];
  } finally {
    arriving.delete(pushed);
  }
}

/** withPushed takes into a list read the health pushed while it ran. */
function withPushed([list, pushed]: [Channel[], Map<number, Partial<Channel>>]): Channel[] {
  if (pushed.size === 0) return list;
  return list.map((c) => {
    const fields = pushed.get(c.id);
    return fields ? { ...c, ...fields } : c;
  });
}

let finishTimer: ReturnType<typeof setTimeout> | null = null;

/** framesDuring holds, for each read of the run's state in flight, the progress frames taken meanwhile. */
const framesDuring = new Set<Partial<TestProgress>[]>();

function onProgress(data: unknown): void {
  const p = data as Partial<TestProgress>;
  if (p?.task !== "channel_test") return;
  for (const frames of framesDuring) frames.push(p);
  const prev = testAllState.value;
  const failed = (prev?.running ? prev.failed : 0) + (p.ok === false ? 1 : 0);
  const disabled = (prev?.running ? prev.disabled : 0) + (p.disabled === true ? 1 : 0);
  const done = Number(p.done) || 0;
  const total = Number(p.total) || 0;
  // A channel's response time and test time come with its channel.health push, as the server
  // recorded them (just before this frame): this frame's time, in seconds, is not what was kept.
  const finished = total > 0 ? done >= total : true;
  testAllState.value = { done, total, failed, disabled, running: !finished };
  if (finished) {
    if (disabled > 0) toast.warning(t("channels.msg.testAllDoneDisabled", { total, failed, disabled }));
    else toast.success(t("channels.msg.testAllDone", { total, failed }));
    if (finishTimer) clearTimeout(finishTimer);
    finishTimer = setTimeout(() => {
      if (testAllState.value && !testAllState.value.running) testAllState.value = null;
    }, 4000);
  }
}

let progressRead = 0;

/**
 * readTestAllProgress shows a run started from a console at once when the page opens (or its
 * socket reconnects) during it, instead of at the run's next push (a slow channel's test takes up
 * to a minute). A run of the test interval pushes nothing, so it is not shown.
 */
async function readTestAllProgress(): Promise<void> {
  const read = ++progressRead;
  const frames: Partial<TestProgress>[] = [];
  framesDuring.add(frames);
  try {
    const p = await channelApi.testAllProgress();
    if (read !== progressRead || !p?.running || p.periodic) return;
    // The server counts a channel before pushing it: a frame that came meanwhile is in the answer
    // when it counts no more channels, and newer than it (the answer travels on another
    // connection) when it counts more. Those are added to the answer's figures.
    let { done, failed, disabled } = p;
    for (const f of frames) {
      const fd = Number(f.done) || 0;
      if (Number(f.total) !== p.total || fd <= p.done) continue;
      done = Math.max(done, fd);
      if (f.ok === false) failed++;
      if (f.disabled === true) disabled++;
    }
    if (p.total > 0 && done >= p.total) {
      // The run's last frame came (and ended what is shown, with the frames this page saw).
      const cur = testAllState.value;
      if (cur && !cur.running && cur.total === p.total) testAllState.value = { ...cur, done, failed, disabled };
      return;
    }
    testAllState.value = { done, total: p.total, failed, disabled, running: true };
  } catch {
    /* the run shows with its next push */
  } finally {
    framesDuring.delete(frames);
  }
}

/**
 * subscribeChannelLive follows channel health, test-all progress and channels added or deleted while
 * the page is open, reloading the list after a reconnect.
 */
export function subscribeChannelLive(): () => void {
  // Frames that came while the page was closed were not followed (the run's
  // end, perhaps): a run still going is read again.
  if (testAllState.value?.running) testAllState.value = null;
  void readTestAllProgress();
  const offHealth = onTopic("channel.health", onHealth);
  const offProgress = onTopic("task.progress", onProgress);
  // Channels were added or deleted (here or in another console): the page shown is read again,
  // once for pushes that come together (a page left empty gives way to the last one with rows).
  let listTimer: ReturnType<typeof setTimeout> | null = null;
  const offList = onTopic("channel.list", () => {
    if (listTimer) return;
    listTimer = setTimeout(() => {
      listTimer = null;
      void refreshAfterDelete();
    }, 300);
  });
  const offReconnect = onReconnected(() => {
    // Frames of a test-all run were missed while the socket was down (its
    // end, perhaps): a run still going is read again.
    if (testAllState.value?.running) testAllState.value = null;
    void readTestAllProgress();
    void refreshChannels();
  });
  return () => {
    progressRead++;
    offHealth();
    offProgress();
    offList();
    if (listTimer) clearTimeout(listTimer);
    offReconnect();
    if (healthTimer) clearTimeout(healthTimer);
    healthTimer = null;
    undrawn = new Map();
  };
}
