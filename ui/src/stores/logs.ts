import { batch, signal } from "@preact/signals-react";
import { handleError } from "../api/client";
import * as logApi from "../api/logs";
import type { LogEntry, LogOther, LogQuery, LogStat } from "../api/logs";
import { nowSeconds, startOfToday } from "../components/format";
import { sharedPageSize, writePageSize } from "../components/pagination";
import { onReconnected, onTopic } from "../ws/socket";
import { isAdmin, onUserChange } from "./user";

/** Row is a log entry with a key that stays stable across live prepends. */
export type Row = LogEntry & { key: string };

/** defaultQuery starts at today's midnight and ends an hour from now. */
export function defaultQuery(): LogQuery {
  return {
    type: 0,
    token_name: "",
    model_name: "",
    start_timestamp: startOfToday(),
    end_timestamp: nowSeconds() + 3600,
    username: "",
    channel: "",
  };
}

/** logQuery holds the filters in force. */
export const logQuery = signal<LogQuery>(defaultQuery());

/**
 * endFollowsClock is true while the end in force is the default one, which nobody chose: it then
 * stays an hour ahead of the clock, so a log page left open for hours keeps listing the new calls
 * (live and on every read) instead of stopping an hour after it was opened.
 */
let endFollowsClock = true;

/** query returns the filters in force, with a default end moved to an hour from now. */
function query(): LogQuery {
  const q = logQuery.value;
  if (!endFollowsClock) return q;
  const end = nowSeconds() + 3600;
  if (q.end_timestamp >= end) return q;
  const moved = { ...q, end_timestamp: end };
  logQuery.value = moved;
  return moved;
}

/** logs is the page shown. */
export const logs = signal<Row[]>([]);
/** logTotal is the number of matching entries. */
export const logTotal = signal(0);
/** logPage is the 1-based page. */
export const logPage = signal(1);
/** logPageSize is the page size, shared with other lists as page-size. */
export const logPageSize = sharedPageSize;
/** logsLoading is true while a list call runs. */
export const logsLoading = signal(false);
/** logStat holds the summary badges. */
export const logStat = signal<LogStat>({ quota: 0, rpm: 0, tpm: 0 });
/** statLoading is true while the summary is read. */
export const statLoading = signal(false);

let seq = 0;
/**
 * entryKey names one log entry across a page read and a push: its id (an administrator's view),
 * else its request id (a user's view has no entry id; a consume entry carries its call's request id).
 */
function entryKey(l: LogEntry): string | undefined {
  if (l.id !== undefined) return `id${l.id}`;
  const rid = parseOther(l.other).request_id;
  return typeof rid === "string" && rid !== "" ? `rq${rid}` : undefined;
}

/**
 * unseen keeps the entries of pushed that page one (shown) has not counted: in an administrator's
 * view, those with a higher id than its newest row (ids follow the order of commits, so a page
 * read after an entry's commit shows, or counts below its rows, every entry with a lower id);
 * else those whose key none of its rows has.
 */
function unseen(pushed: LogEntry[], shown: LogEntry[]): LogEntry[] {
  const newest = shown.reduce((m, l) => (l.id !== undefined && l.id > m ? l.id : m), 0);
  const seen = new Set(shown.map(entryKey).filter((k) => k !== undefined));
  return pushed.filter((l) => {
    if (newest > 0 && l.id !== undefined) return l.id > newest;
    const k = entryKey(l);
    return k === undefined || !seen.has(k);
  });
}

function withKey(l: LogEntry): Row {
  seq++;
  // The entry's own name keeps a row (and its expanded detail) across the reads of the page.
  return { ...l, key: entryKey(l) ?? `t${l.created_at}-${seq}` };
}

/**
 * keyed names the rows of a page read. An entry without an id or a request id (a user's top-up,
 * gift or administrator's entry) is named by what it holds, so that it too keeps its name, and its
 * expanded detail, across the reads of the page; identical ones are told apart by their order
 * counted from the oldest, which entries added on top do not change.
 */
function keyed(items: LogEntry[]): Row[] {
  const seen = new Map<string, number>();
  const out: Row[] = new Array(items.length);
  for (let i = items.length - 1; i >= 0; i--) {
    const l = items[i];
    let key = entryKey(l);
    if (key === undefined) {
      const base = `c${l.created_at}:${l.type}:${l.quota}:${l.content}`;
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      key = n === 0 ? base : `${base}#${n}`;
    }
    out[i] = { ...l, key };
  }
  return out;
}

/** parseOther reads a log entry's other JSON; bad or empty text gives {}. */
export function parseOther(other: string | undefined): LogOther {
  if (!other) return {};
  try {
    const v = JSON.parse(other) as unknown;
    return v && typeof v === "object" ? (v as LogOther) : {};
  } catch {
    return {};
  }
}

/**
 * arriving holds, for each page read in flight, the live entries pushed meanwhile: the server may
 * have read the page before they were written, and its answer must not drop them.
 */
const arriving = new Set<LogEntry[]>();

/**
 * listRead and statRead number the reads of the list and of the summary: only the answer of the
 * latest one is shown, so an earlier query answering late (other filters, another page) cannot
 * replace what the filters in force asked for.
 */
let listRead = 0;
let statRead = 0;

/**
 * askedPage is the page the latest read asked for: a reload after a reconnect reads that one, since
 * a page turn on its way would otherwise be dropped for the page still shown.
 */
let askedPage = 1;

/**
 * loadLogs reads a page with the filters in force. A recount (see scheduleRecount) reads it
 * quietly, and on a later page takes only its total: that page keeps its rows, the reader's place.
 */
export async function loadLogs(page = logPage.value, recount = false): Promise<void> {
  const read = ++listRead;
  if (!recount) {
    logsLoading.value = true;
    askedPage = page;
  }
  const pushed: LogEntry[] = [];
  arriving.add(pushed);
  try {
    const q = query();
    const r = await logApi.listLogs(isAdmin.value, q, page, logPageSize.value);
    if (read !== listRead) return;
    const at = r.page || page;
    let items = r.items;
    let total = r.total;
    if (at === 1 && pushed.length > 0) {
      // Entries pushed while the page was read join it as they would have joined the page shown.
      const fresh = unseen(pushed, items).filter((l) => matchesQuery(l, q, isAdmin.value));
      items = [...fresh.reverse(), ...items].slice(0, logPageSize.value);
      total += fresh.length;
    }
    // Entries pushed before this answer and not drawn yet are in it (or counted in its total).
    undrawn = [];
    if (recount && (at !== 1 || logPage.value !== 1)) {
      if (at === logPage.value) logTotal.value = total;
      return;
    }
    batch(() => {
      logs.value = keyed(items);
      logTotal.value = total;
      logPage.value = at;
    });
  } catch (err) {
    if (read === listRead && !recount) {
      askedPage = logPage.value;
      handleError(err);
    }
    // A recount refused (the rate limit, a server restarting) is tried again, as long as the page
    // follows the pushes: nothing else would correct a later page's total.
    if (read === listRead && recount && tailing) scheduleRecount();
  } finally {
    arriving.delete(pushed);
    if (read === listRead && !recount) logsLoading.value = false;
  }
}

/** loadStat reads the summary badges for the filters in force. */
export async function loadStat(): Promise<void> {
  const read = ++statRead;
  statLoading.value = true;
  try {
    const stat = await logApi.logStat(isAdmin.value, query());
    if (read === statRead) logStat.value = stat;
  } catch {
    /* the client told the user; the badges keep their last values */
  } finally {
    if (read === statRead) statLoading.value = false;
  }
}

/**
 * applyQuery puts new filters in force and reloads page one and the summary; followClock says
 * that q's end is the default one (see endFollowsClock).
 */
export async function applyQuery(q: LogQuery, followClock = false): Promise<void> {
  endFollowsClock = followClock;
  logQuery.value = q;
  await Promise.all([loadLogs(1), loadStat()]);
}

/** setLogType filters by type (0 = all) and reloads. */
export async function setLogType(type: number): Promise<void> {
  await applyQuery({ ...logQuery.value, type }, endFollowsClock);
}

/** setLogPageSize stores a new page size and reloads page one. */
export async function setLogPageSize(size: number): Promise<void> {
  writePageSize(size);
  await loadLogs(1);
}

function likeMatch(pattern: string, value: string): boolean {
  if (!pattern) return true;
  if (!/[%_]/.test(pattern)) return pattern === value;
  const re = pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/%/g, ".*").replace(/_/g, ".");
  // "u": _ is one character, as the server has it, not one UTF-16 unit (half an emoji).
  return new RegExp(`^${re}$`, "su").test(value);
}

/** matchesQuery tells whether a new entry belongs to the list under the filters in force, as the server would filter it. */
export function matchesQuery(l: LogEntry, q: LogQuery, admin: boolean): boolean {
  if (q.type !== 0 && l.type !== q.type) return false;
  if (q.token_name && l.token_name !== q.token_name) return false;
  if (!likeMatch(q.model_name, l.model_name)) return false;
  if (q.start_timestamp && l.created_at < q.start_timestamp) return false;
  if (q.end_timestamp && l.created_at > q.end_timestamp) return false;
  // Usernames are matched without regard to case, as the server finds them.
  if (admin && q.username.trim() && l.username.toLowerCase() !== q.username.trim().toLowerCase()) return false;
  // As the server reads it: a channel number, 0 meaning any.
  const channel = Number(q.channel.trim() || 0);
  if (admin && channel > 0 && l.channel !== channel) return false;
  return true;
}

let statTimer: ReturnType<typeof setTimeout> | null = null;
/** liveStat is the summary read a push started, while it runs; statAgain asks for one more after it. */
let liveStat: Promise<void> | null = null;
let statAgain = false;
/**
 * STAT_EVERY_MS is the least time between two summary reads pushed entries ask for: the console
 * shares the per-IP /api budget (S §12: 180 requests per 180 s) with everything its user does, and
 * a read every few hundred milliseconds used it up within a minute (429 on every call).
 */
const STAT_EVERY_MS = 5000;
/** lastLiveStat is when the last summary read pushed entries asked for started. */
let lastLiveStat = 0;

/**
 * scheduleStat reads the summary again 300 ms after the first entry pushed since the last read
 * (and no sooner than STAT_EVERY_MS after the read before), the entries pushed meanwhile joining
 * it. The wait is not started again by each push: on a busy gateway, whose charges never pause for
 * 300 ms, the badges would never move. Nor does a read start while the one before is still running
 * (over millions of rows a sum takes a while): one more follows it.
 */
function scheduleStat(): void {
  if (statTimer) return;
  const wait = Math.max(300, lastLiveStat + STAT_EVERY_MS - Date.now());
  statTimer = setTimeout(() => {
    statTimer = null;
    if (liveStat) {
      statAgain = true;
      return;
    }
    lastLiveStat = Date.now();
    liveStat = loadStat().finally(() => {
      liveStat = null;
      if (statAgain) {
        statAgain = false;
        scheduleStat();
      }
    });
  }, wait);
}

/** tailing is true while an open log page follows the pushes (subscribeLogTail). */
let tailing = false;

/** RECOUNT_QUIET_MS and RECOUNT_MAX_MS bound the wait of scheduleRecount. */
const RECOUNT_QUIET_MS = 300;
const RECOUNT_MAX_MS = 5000;
/**
 * RECOUNT_EVERY_MS is the least time between two recounts: calls that pause for 300 ms between
 * them asked for a read of the page after each, and the console shares the per-IP /api budget
 * (S §12: 180 requests per 180 s) with everything its user does (429 on every call once spent).
 */
const RECOUNT_EVERY_MS = 5000;
let recountTimer: ReturnType<typeof setTimeout> | null = null;
/** recountDue is when the pending recount runs at the latest (0: none pending). */
let recountDue = 0;
/** lastRecount is when the last recount started. */
let lastRecount = 0;

/**
 * scheduleRecount reads the open page again once the pushes pause for RECOUNT_QUIET_MS, and at
 * least every RECOUNT_MAX_MS while they never pause, but no sooner than RECOUNT_EVERY_MS after the
 * recount before. A push can reach the page before or after a read of the page that already
 * counted its entries (the server read them between their commit and their push); on page one the
 * entries' ids tell them apart, but a later page shows none of them, and its total counted them
 * twice. The server's answer, read after the pushes, is the page.
 */
function scheduleRecount(): void {
  const now = Date.now();
  if (recountDue === 0) recountDue = now + RECOUNT_MAX_MS;
  if (recountTimer) clearTimeout(recountTimer);
  recountTimer = setTimeout(runRecount, Math.max(0, Math.min(RECOUNT_QUIET_MS, recountDue - now), lastRecount + RECOUNT_EVERY_MS - now));
}

function runRecount(): void {
  recountTimer = null;
  // A read in flight (another page, other filters) is answered first; the recount follows it.
  if (logsLoading.value) {
    recountTimer = setTimeout(runRecount, RECOUNT_QUIET_MS);
    return;
  }
  recountDue = 0;
  lastRecount = Date.now();
  void loadLogs(logPage.value, true);
}

/**
 * TAIL_DRAW_MS is the least time between two draws of pushed entries: a page of 100 rows takes
 * about 100 ms to draw, and a busy gateway pushes entries many times a second.
 */
const TAIL_DRAW_MS = 1000;
/** undrawn holds the entries pushed since the last draw, oldest first; tailTimer waits to draw them. */
let undrawn: LogEntry[] = [];
let tailTimer: ReturnType<typeof setTimeout> | null = null;
let lastDraw = 0;

/**
 * onTail takes the new entries of one commit, oldest first. They are drawn at once when nothing
 * was drawn in the last TAIL_DRAW_MS, else together with the others pushed meanwhile when it ends.
 */
function onTail(data: unknown): void {
  if (!Array.isArray(data)) return;
  const entries = (data as LogEntry[]).filter((l) => l && typeof l.created_at === "number");
  if (entries.length === 0) return;
  for (const pushed of arriving) pushed.push(...entries);
  scheduleStat();
  scheduleRecount();
  undrawn.push(...entries);
  if (tailTimer) return;
  const wait = lastDraw + TAIL_DRAW_MS - Date.now();
  if (wait <= 0) drawTail();
  else
    tailTimer = setTimeout(() => {
      tailTimer = null;
      drawTail();
    }, wait);
}

/**
 * drawTail puts the undrawn entries onto page one as the server would list them. Another page
 * keeps its rows where the reader is, and counts the new entries in its total.
 */
function drawTail(): void {
  const entries = undrawn;
  undrawn = [];
  lastDraw = Date.now();
  if (entries.length === 0) return;
  const q = query();
  if (logPage.value !== 1) {
    const matching = entries.filter((l) => matchesQuery(l, q, isAdmin.value)).length;
    if (matching > 0) logTotal.value = logTotal.value + matching;
    return;
  }
  const fresh = unseen(entries, logs.value).filter((l) => matchesQuery(l, q, isAdmin.value));
  if (fresh.length === 0) return;
  batch(() => {
    logs.value = [...fresh.reverse().map(withKey), ...logs.value].slice(0, logPageSize.value);
    logTotal.value = logTotal.value + fresh.length;
  });
}

/** subscribeLogTail prepends live entries while the log page is open; after a reconnect it reloads the open page. */
export function subscribeLogTail(): () => void {
  tailing = true;
  const off = onTopic("log.tail", onTail);
  const offReconnect = onReconnected(() => {
    // What was pushed meanwhile was missed: the open page (rows and total) is read again.
    scheduleStat();
    void loadLogs(askedPage);
  });
  return () => {
    tailing = false;
    off();
    offReconnect();
    if (statTimer) clearTimeout(statTimer);
    statTimer = null;
    statAgain = false;
    if (tailTimer) clearTimeout(tailTimer);
    tailTimer = null;
    undrawn = [];
    if (recountTimer) clearTimeout(recountTimer);
    recountTimer = null;
    recountDue = 0;
  };
}

// Another account in this tab never sees the previous one's entries.
onUserChange(() => {
  // Nor the answer of a read the previous account started.
  listRead++;
  statRead++;
  undrawn = [];
  askedPage = 1;
  batch(() => {
    logsLoading.value = false;
    statLoading.value = false;
    logs.value = [];
    logTotal.value = 0;
    logPage.value = 1;
    logQuery.value = defaultQuery();
    endFollowsClock = true;
    logStat.value = { quota: 0, rpm: 0, tpm: 0 };
  });
});
