import { batch, computed, effect, signal } from "@preact/signals-react";
import { handleError } from "../api/client";
import * as tokenApi from "../api/tokens";
import type { Token, TokenInput } from "../api/tokens";
import type { RowKey } from "../components/data-table";
import { sharedPageSize, writePageSize } from "../components/pagination";
import { t } from "../i18n";
import { onReconnected, onTopic } from "../ws/socket";
import { toast } from "./toast";
import { onUserChange } from "./user";

/** Token statuses. */
export const TOKEN_ENABLED = 1;
export const TOKEN_DISABLED = 2;
export const TOKEN_EXPIRED = 3;
export const TOKEN_EXHAUSTED = 4;

/** TOKEN_DEFAULT_QUOTA is the quota a new token starts with (US$1). */
export const TOKEN_DEFAULT_QUOTA = 500000;
/** QUOTA_PRESETS are the quick quota choices: 1, 10, 50, 100, 500 and 1000 dollars. */
export const QUOTA_PRESETS = [500000, 5000000, 25000000, 50000000, 250000000, 500000000];
/** COUNT_PRESETS are the quick choices for how many tokens to create. */
export const COUNT_PRESETS = [10, 20, 30, 100];

/** TokenSearch is an active search by name and key. */
export interface TokenSearch {
  keyword: string;
  token: string;
}

/** tokens is the page (or search result) shown. */
export const tokens = signal<Token[]>([]);
/** tokensLoading is true while a list call runs. */
export const tokensLoading = signal(false);
/** tokenPage is the 0-based page of the plain list. */
export const tokenPage = signal(0);
/** tokenPageSize is the page size, shared with other lists as page-size. */
export const tokenPageSize = sharedPageSize;
/** tokenSearch is the search in force; null shows the paged list. */
export const tokenSearch = signal<TokenSearch | null>(null);
/** hasMoreTokens guesses whether a next page exists (the server sends no total). */
export const hasMoreTokens = computed(() => tokenSearch.value === null && tokens.value.length >= tokenPageSize.value);
/**
 * shownTokens is what the table shows: the page of the plain list, or one page of a search
 * result (the server answers a search whole; tokenPage is then the page of it shown), so that a
 * search matching hundreds of tokens renders no more rows than a page.
 */
export const shownTokens = computed(() => {
  if (tokenSearch.value === null) return tokens.value;
  const size = tokenPageSize.value;
  return tokens.value.slice(tokenPage.value * size, (tokenPage.value + 1) * size);
});

/** lastSearchPage is the last 0-based page of a search result of n tokens. */
function lastSearchPage(n: number): number {
  return Math.max(0, Math.ceil(n / tokenPageSize.value) - 1);
}

/** showSearchPage shows another page of the search result, without asking the server. */
export function showSearchPage(page: number): void {
  tokenPage.value = Math.min(Math.max(0, page), lastSearchPage(tokens.value.length));
}
/** selectedTokens holds the ids ticked for bulk copy, on this page or others. */
export const selectedTokens = signal<Set<RowKey>>(new Set());
/** selectedRows keeps each ticked token as it was last shown, so that a selection made on another page is copied too. */
const selectedRows = new Map<RowKey, Token>();

/** selectTokens sets the selection from the table, remembering the rows ticked on the page shown. */
export function selectTokens(next: Set<RowKey>): void {
  for (const tok of shownTokens.value) {
    if (next.has(tok.id)) selectedRows.set(tok.id, tok);
  }
  for (const k of [...selectedRows.keys()]) {
    if (!next.has(k)) selectedRows.delete(k);
  }
  selectedTokens.value = next;
}

/** chosenTokens is the selection in the order it was ticked: a row shown now as it is now, one on another page as it was last shown. */
export function chosenTokens(): Token[] {
  const shown = new Map<RowKey, Token>(tokens.value.map((x) => [x.id, x]));
  const out: Token[] = [];
  for (const k of selectedTokens.value) {
    const tok = shown.get(k) ?? selectedRows.get(k);
    if (tok) out.push(tok);
  }
  return out;
}
/** shownKeys holds the tokens whose full key is revealed. */
export const shownKeys = signal<Set<number>>(new Set());

/** fullKey is the key as clients use it, with the sk- prefix. */
export function fullKey(tok: Pick<Token, "key">): string {
  return tok.key.startsWith("sk-") ? tok.key : `sk-${tok.key}`;
}

/** maskedKey hides the middle of a key. */
export function maskedKey(tok: Pick<Token, "key">): string {
  const k = fullKey(tok);
  return k.length <= 14 ? k : `${k.slice(0, 7)}${"*".repeat(10)}${k.slice(-4)}`;
}

/**
 * account counts the accounts this tab held: a read started for one is answered to no other (its
 * tokens and keys are the previous account's).
 */
let account = 0;

/** loadTokens reads a page of the plain list (leaving any search). */
export async function loadTokens(page = tokenPage.value): Promise<void> {
  const at = account;
  tokensLoading.value = true;
  try {
    const list = withPushed(await readCatchingUsage(() => tokenApi.listTokens(page, tokenPageSize.value)));
    if (at !== account) return;
    // Usage pushed before this read began is in its answer; pushed while it ran, taken in above.
    forgetUndrawn();
    batch(() => {
      tokenSearch.value = null;
      tokenPage.value = page;
      tokens.value = list;
    });
  } catch (err) {
    if (at === account) handleError(err);
  } finally {
    if (at === account) tokensLoading.value = false;
  }
}

/** searchTokens runs a search (showing its first page, or the page shown when keepPage is set); an empty one goes back to the first page. */
export async function searchTokens(s: TokenSearch, keepPage = false): Promise<void> {
  const q = { keyword: s.keyword.trim(), token: s.token.trim() };
  if (!q.keyword && !q.token) {
    await loadTokens(0);
    return;
  }
  const at = account;
  tokensLoading.value = true;
  try {
    const list = withPushed(await readCatchingUsage(() => tokenApi.searchTokens(q.keyword, q.token)));
    if (at !== account) return;
    forgetUndrawn();
    batch(() => {
      const page = keepPage && tokenSearch.value !== null ? Math.min(tokenPage.value, lastSearchPage(list.length)) : 0;
      tokenSearch.value = q;
      tokenPage.value = page;
      tokens.value = list;
    });
  } catch (err) {
    if (at === account) handleError(err);
  } finally {
    if (at === account) tokensLoading.value = false;
  }
}

/** refreshTokens reloads what is shown. */
export async function refreshTokens(): Promise<void> {
  const s = tokenSearch.value;
  if (s) await searchTokens(s, true);
  else await loadTokens(tokenPage.value);
}

/** setTokenPageSize stores a new page size and shows the first page (of the list, or of the search result). */
export async function setTokenPageSize(size: number): Promise<void> {
  writePageSize(size);
  if (tokenSearch.value !== null) tokenPage.value = 0;
  else await loadTokens(0);
}

function patchToken(id: number, fields: Partial<Token>, seen: Partial<Token> = {}): void {
  // A list read in flight may have been answered before this change: it must not undo it. seen is
  // the token's quotas as the change's answer had them: they tell a read made after it.
  for (const saved of savedArriving) saved.set(id, { ...saved.get(id), ...seen, ...fields });
  tokens.value = tokens.value.map((x) => (x.id === id ? { ...x, ...fields } : x));
}

/** TokenUsage is a token's quota after a charge (topic token.usage). */
interface TokenUsage {
  id: number;
  remain_quota: number;
  used_quota: number;
  unlimited_quota: boolean;
}

/** onUsage takes the quotas of the tokens one commit charged. */
function onUsage(data: unknown): void {
  if (!Array.isArray(data)) return;
  const byId = new Map<number, TokenUsage>();
  for (const u of data as Partial<TokenUsage>[]) {
    if (typeof u?.id !== "number" || typeof u.remain_quota !== "number" || typeof u.used_quota !== "number") continue;
    byId.set(u.id, u as TokenUsage);
  }
  if (byId.size === 0) return;
  for (const pushed of arriving) for (const [id, u] of byId) pushed.set(id, u);
  for (const [id, u] of byId) undrawn.set(id, u);
  if (usageTimer) return;
  const wait = lastDraw + USAGE_DRAW_MS - Date.now();
  if (wait <= 0) drawUsage();
  else
    usageTimer = setTimeout(() => {
      usageTimer = null;
      drawUsage();
    }, wait);
}

/**
 * USAGE_DRAW_MS is the least time between two draws of pushed usage: a page of 100 tokens takes
 * a good part of a second to draw on a slow machine, and a busy gateway pushes a token's usage
 * after every commit of its charges, many times a second.
 */
const USAGE_DRAW_MS = 1000;
/** undrawn holds the newest usage pushed of each token since the last draw; usageTimer waits to draw it. */
let undrawn = new Map<number, TokenUsage>();
let usageTimer: ReturnType<typeof setTimeout> | null = null;
let lastDraw = 0;

/** drawUsage puts the usage pushed since the last draw onto the listed tokens, in one update of the page. */
function drawUsage(): void {
  const byId = undrawn;
  undrawn = new Map();
  lastDraw = Date.now();
  if (byId.size === 0 || !tokens.value.some((x) => byId.has(x.id))) return;
  tokens.value = tokens.value.map((cur) => {
    const u = byId.get(cur.id);
    return u ? withUsage(cur, u) : cur;
  });
}

/** forgetUndrawn drops the usage waiting to be drawn: a list read that replaces the rows counted it (or caught it while it ran). */
function forgetUndrawn(): void {
  undrawn = new Map();
}

/** withUsage is a listed token after the charge u tells of. */
function withUsage(cur: Token, u: TokenUsage): Token {
  const fields: Partial<Token> = { remain_quota: u.remain_quota, used_quota: u.used_quota };
  // As the server lists it: a limited token without quota left is exhausted.
  if (cur.status === TOKEN_ENABLED && u.unlimited_quota === false && u.remain_quota <= 0) fields.status = TOKEN_EXHAUSTED;
  return { ...cur, ...fields };
}

/**
 * arriving holds, for each list read in flight, the newest usage pushed meanwhile of each token:
 * the server may have read the list before those charges, and its answer must not undo them.
 */
const arriving = new Set<Map<number, TokenUsage>>();
/** savedArriving holds, for each list read in flight, the fields this tab saved meanwhile of each token (an edit, a status change). */
const savedArriving = new Set<Map<number, Partial<Token>>>();

type CaughtRead = [Token[], Map<number, TokenUsage>, Map<number, Partial<Token>>];

/** readCatchingUsage runs a list read and returns its answer with the usage pushed and the saves answered while it ran. */
async function readCatchingUsage(read: () => Promise<Token[]>): Promise<CaughtRead> {
  const pushed = new Map<number, TokenUsage>();
  const saved = new Map<number, Partial<Token>>();
  arriving.add(pushed);
  savedArriving.add(saved);
  try {
    return [await read(), pushed, saved];
  } finally {
    arriving.delete(pushed);
    savedArriving.delete(saved);
  }
}

/** withSaved is a listed token with what a save answered while the read ran; its quotas only when the list does not show later charges. */
function withSaved(cur: Token, s: Partial<Token>): Token {
  const { remain_quota, used_quota, ...rest } = s;
  // A list that shows charges the save did not was read after it: it holds the save and what came
  // later (a status the charges changed, exhausted), so it stays as listed.
  if (used_quota !== undefined && (cur.used_quota ?? 0) > used_quota) return cur;
  const next = { ...cur, ...rest };
  if (used_quota !== undefined && used_quota >= (cur.used_quota ?? 0)) {
    next.used_quota = used_quota;
    if (remain_quota !== undefined) next.remain_quota = remain_quota;
  } else if (used_quota === undefined && remain_quota !== undefined) next.remain_quota = remain_quota;
  return next;
}

/** withPushed takes into a list read the saves answered and the charges pushed while it ran that it does not show yet (a token's used quota only grows with its charges). */
function withPushed([list, pushed, saved]: CaughtRead): Token[] {
  if (pushed.size === 0 && saved.size === 0) return list;
  return list.map((listed) => {
    const s = saved.get(listed.id);
    const cur = s ? withSaved(listed, s) : listed;
    const u = pushed.get(cur.id);
    return u && u.used_quota > cur.used_quota ? withUsage(cur, u) : cur;
  });
}

/**
 * markExpired shows the listed enabled tokens whose expiry has passed as expired, as the server
 * lists them (an expiry is passed once the clock is beyond its second), and returns the time in
 * ms until the next listed enabled token expires (null when none will).
 */
function markExpired(): number | null {
  const now = Date.now();
  let next: number | null = null;
  let changed = false;
  const list = tokens.value.map((x) => {
    if (x.status !== TOKEN_ENABLED || x.expired_time === -1 || x.expired_time <= 0) return x;
    const at = (x.expired_time + 1) * 1000;
    if (at <= now) {
      changed = true;
      return { ...x, status: TOKEN_EXPIRED };
    }
    next = next === null ? at - now : Math.min(next, at - now);
    return x;
  });
  if (changed) tokens.value = list;
  return next;
}

/** MAX_TIMER_MS is the longest wait setTimeout takes; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** followExpiry marks each listed token expired when its expiry passes while the page is open. */
function followExpiry(): () => void {
  // One timer at a time: the list written below schedules a check of its own, which the wait for
  // the next expiry replaces (two kept, every expiry added one more, and one outlived the page).
  let timer: ReturnType<typeof setTimeout> | null = null;
  const schedule = (): void => {
    const wait = markExpired();
    if (timer) clearTimeout(timer);
    timer = wait === null ? null : setTimeout(schedule, Math.min(wait, MAX_TIMER_MS));
  };
  const stop = effect(() => {
    void tokens.value;
    if (timer) clearTimeout(timer);
    // Read after the effect: markExpired may write the list it follows.
    timer = setTimeout(schedule, 0);
  });
  return () => {
    stop();
    if (timer) clearTimeout(timer);
  };
}

/** subscribeTokenLive follows the quota and expiry of the listed tokens while the page is open, reloading them after a reconnect. */
export function subscribeTokenLive(): () => void {
  const offUsage = onTopic("token.usage", onUsage);
  const offReconnect = onReconnected(() => void refreshTokens());
  const offExpiry = followExpiry();
  return () => {
    offUsage();
    offReconnect();
    offExpiry();
    if (usageTimer) clearTimeout(usageTimer);
    usageTimer = null;
    forgetUndrawn();
  };
}

/** toggleKey reveals or hides a token's full key. */
export function toggleKey(id: number): void {
  const next = new Set(shownKeys.value);
  if (next.has(id)) next.delete(id);
  else next.add(id);
  shownKeys.value = next;
}

/** statusChanging holds the tokens with a status change in flight: a second click waits for its answer. */
export const statusChanging = signal<Set<number>>(new Set());

/** setStatus enables (1) or disables (2) a token. */
export async function setStatus(id: number, status: number): Promise<void> {
  if (statusChanging.value.has(id)) return;
  statusChanging.value = new Set(statusChanging.value).add(id);
  try {
    const saved = await tokenApi.setTokenStatus(id, status);
    patchToken(id, saved ? { status: saved.status } : { status }, saved ? { remain_quota: saved.remain_quota, used_quota: saved.used_quota } : {});
    toast.success(t("tokens.msg.done"));
  } catch (err) {
    handleError(err);
  } finally {
    const next = new Set(statusChanging.value);
    next.delete(id);
    statusChanging.value = next;
  }
}

/** removeToken deletes a token. */
export async function removeToken(id: number): Promise<boolean> {
  try {
    await tokenApi.deleteToken(id);
    tokens.value = tokens.value.filter((x) => x.id !== id);
    const sel = new Set(selectedTokens.value);
    sel.delete(id);
    selectTokens(sel);
    toast.success(t("tokens.msg.done"));
    // The page fills up again from the next one, so the pager still offers it;
    // a page left empty gives way to the one before.
    await refreshTokens();
    if (tokenSearch.value === null && tokens.value.length === 0 && tokenPage.value > 0) await loadTokens(tokenPage.value - 1);
    return true;
  } catch (err) {
    handleError(err);
    return false;
  }
}

const SUFFIX_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** randomSuffix returns six random letters and digits. */
export function randomSuffix(): string {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => SUFFIX_CHARS[b % SUFFIX_CHARS.length]).join("");
}

/**
 * createTokens creates count tokens from one form: the first keeps the name,
 * each other one gets the name, a dash and six random letters or digits. It
 * stops at the first failure and returns how many were created.
 */
export async function createTokens(input: TokenInput, count: number): Promise<number> {
  let created = 0;
  for (let i = 0; i < count; i++) {
    const name = i === 0 ? input.name : `${input.name}-${randomSuffix()}`;
    try {
      await tokenApi.createToken({ ...input, name });
      created++;
    } catch (err) {
      handleError(err);
      break;
    }
  }
  if (created > 0) toast.success(t("tokens.msg.created", { count: created }));
  if (created > 0) await loadTokens(0);
  return created;
}

/** saveToken writes an edited token. */
export async function saveToken(input: TokenInput & { id: number }): Promise<boolean> {
  try {
    const saved = await tokenApi.updateToken(input);
    if (saved) {
      // Usage pushed before the save answered is older than it (its quota as it was before the edit).
      const u = undrawn.get(input.id);
      if (u && u.used_quota <= (saved.used_quota ?? 0)) undrawn.delete(input.id);
      patchToken(input.id, saved);
    }
    toast.success(t("tokens.msg.updated"));
    return true;
  } catch (err) {
    handleError(err);
    return false;
  }
}

// Another account in this tab never sees the previous one's tokens or keys.
onUserChange(() => {
  account++;
  forgetUndrawn();
  batch(() => {
    tokensLoading.value = false;
    tokens.value = [];
    tokenPage.value = 0;
    tokenSearch.value = null;
    selectTokens(new Set());
    shownKeys.value = new Set();
  });
});
