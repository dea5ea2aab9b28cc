import { computed, signal } from "@preact/signals-react";
import { handleError } from "../api/client";
import { fetchQuotaData, type QuotaRow } from "../api/dashboard";
import { t } from "../i18n";
import { status } from "./status";
import { toast } from "./toast";
import { isAdmin, onUserChange } from "./user";

/** Granularity is the width of one chart bucket. */
export type Granularity = "hour" | "day" | "week";

/** GRANULARITIES lists the choices in order. */
export const GRANULARITIES: Granularity[] = ["hour", "day", "week"];

/** SELF_MAX_SPAN is the longest range (seconds) a non-administrator may ask for. */
export const SELF_MAX_SPAN = 30 * 86400;

/** defaultGranularity follows the site's data_export_default_time (hour when unset). */
export function defaultGranularity(): Granularity {
  const v = status.value.data_export_default_time;
  return v === "day" || v === "week" ? v : "hour";
}

/**
 * defaultRange gives the range for a granularity: a day of hours, a week of
 * days, 30 days of weeks. It ends an hour from now and never spans more than
 * the 30 days a non-administrator may ask for.
 */
export function defaultRange(g: Granularity, now = Date.now() / 1000): { start: number; end: number } {
  const end = Math.floor(now + 3600);
  const back = g === "hour" ? 86400 + 3600 : g === "day" ? 7 * 86400 + 3600 : SELF_MAX_SPAN;
  return { start: end - back, end };
}

/** DashboardFilter is the query form. */
export interface DashboardFilter {
  start: number;
  end: number;
  username: string;
  granularity: Granularity;
}

function initialFilter(): DashboardFilter {
  const g = defaultGranularity();
  return { ...defaultRange(g), username: "", granularity: g };
}

/** filter is the form; applied is the query the rows answer. */
export const filter = signal<DashboardFilter>(initialFilter());
export const applied = signal<DashboardFilter>(filter.value);

/** rows are the buckets the server returned. */
export const rows = signal<QuotaRow[]>([]);
export const dashboardLoading = signal(false);

/** bucketStart returns the start (unix seconds, local time) of the bucket holding ts. */
export function bucketStart(ts: number, g: Granularity): number {
  if (g === "hour") return ts - (ts % 3600);
  const d = new Date(ts * 1000);
  d.setHours(0, 0, 0, 0);
  if (g === "week") {
    const back = (d.getDay() + 6) % 7; // weeks start on Monday
    d.setDate(d.getDate() - back);
  }
  return Math.floor(d.getTime() / 1000);
}

/** Metric is one quantity charted per model. */
export type Metric = "quota" | "count" | "token_used";

/** ChartSeries is the chart data: bucket times and, per model, one value per bucket. */
export interface ChartSeries {
  times: number[];
  models: string[];
  values: Record<Metric, number[][]>;
}

/** MAX_MODELS caps the series per chart; the rest are summed as "other". */
export const MAX_MODELS = 8;

/** OTHER_MODELS names the summed series of the smaller models. */
export const OTHER_MODELS = "\u0000other";

/** MAX_BUCKETS bounds the chart's time axis; a longer one keeps only the buckets with data. */
const MAX_BUCKETS = 10000;

/** nextBucket returns the start of the bucket after the one starting at t (days may last 23 or 25 hours). */
export function nextBucket(t: number, g: Granularity): number {
  if (g === "hour") return t + 3600;
  return bucketStart(t + (g === "week" ? 7 : 1) * 86400 + 7200, g);
}

/**
 * timeAxis lists every bucket from the one holding from (when given) to the
 * last one with data, so hours without calls show as zero instead of being
 * skipped; seen are the buckets with data, in order.
 */
function timeAxis(seen: number[], g: Granularity, from?: number): number[] {
  if (seen.length === 0) return seen;
  const first = from === undefined ? seen[0] : Math.min(bucketStart(from, g), seen[0]);
  const last = seen[seen.length - 1];
  const all: number[] = [];
  for (let x = first; x <= last; x = nextBucket(x, g)) {
    if (all.length === MAX_BUCKETS) return seen;
    all.push(x);
  }
  const have = new Set(all);
  return seen.every((x) => have.has(x)) ? all : seen;
}

/**
 * aggregate buckets rows by granularity and model; the busiest models keep
 * their own series. from, the start of the queried range, opens the time axis.
 */
export function aggregate(list: QuotaRow[], g: Granularity, from?: number): ChartSeries {
  const byModel = new Map<string, number>();
  for (const r of list) byModel.set(r.model_name, (byModel.get(r.model_name) ?? 0) + (r.quota || 0) + (r.count || 0));
  const ranked = [...byModel.entries()].sort((a, b) => b[1] - a[1]).map(([m]) => m);
  const kept = ranked.slice(0, MAX_MODELS);
  const models = ranked.length > MAX_MODELS ? [...kept, OTHER_MODELS] : kept;
  const index = new Map(models.map((m, i) => [m, i]));
  const times = timeAxis(
    [...new Set(list.map((r) => bucketStart(r.created_at, g)))].sort((a, b) => a - b),
    g,
    from,
  );
  const tIndex = new Map(times.map((x, i) => [x, i]));
  const empty = () => models.map(() => times.map(() => 0));
  const values: Record<Metric, number[][]> = { quota: empty(), count: empty(), token_used: empty() };
  for (const r of list) {
    const mi = index.get(r.model_name) ?? index.get(OTHER_MODELS);
    const ti = tIndex.get(bucketStart(r.created_at, g));
    if (mi === undefined || ti === undefined) continue;
    values.quota[mi][ti] += r.quota || 0;
    values.count[mi][ti] += r.count || 0;
    values.token_used[mi][ti] += r.token_used || 0;
  }
  return { times, models, values };
}

/** series is the chart data of the applied query. */
export const series = computed(() => aggregate(rows.value, applied.value.granularity, applied.value.start));

/** totals sums the applied query's rows. */
export const totals = computed(() => {
  let quota = 0;
  let count = 0;
  let tokens = 0;
  for (const r of rows.value) {
    quota += r.quota || 0;
    count += r.count || 0;
    tokens += r.token_used || 0;
  }
  return { quota, count, tokens };
});

// rangeChosen is true once the user set the start or the end; until then the
// range follows the clock, so a page opened hours after the first visit (or
// refreshed live) still ends an hour from now.
let rangeChosen = false;

/** followClock moves a range the user did not choose to end an hour from now, keeping its span. */
function followClock(f: DashboardFilter): DashboardFilter {
  if (rangeChosen) return f;
  const end = Math.floor(Date.now() / 1000 + 3600);
  return { ...f, start: end - (f.end - f.start), end };
}

/** updateFilter changes the form. */
export function updateFilter(patch: Partial<DashboardFilter>): void {
  if (patch.start !== undefined || patch.end !== undefined) rangeChosen = true;
  filter.value = { ...filter.value, ...patch };
}

/**
 * requested is the query last asked for from the form (answered or not), which live refreshes
 * repeat; dashboardRead numbers the reads, and only the answer of the latest one is shown, so a
 * refresh of an older range answering late cannot replace the range asked for.
 */
let requested: DashboardFilter = applied.value;
let dashboardRead = 0;

/** loadDashboard runs the form's query; quiet refreshes (live updates) show no toasts or spinner. */
export async function loadDashboard(quiet = false): Promise<void> {
  if (!quiet) filter.value = followClock(filter.value);
  const f = followClock(quiet ? requested : filter.value);
  if (f.end <= f.start) {
    if (!quiet) toast.error(t("dashboard.badRange"));
    return;
  }
  const all = isAdmin.value;
  if (!all && f.end - f.start > SELF_MAX_SPAN) {
    if (!quiet) toast.error(t("dashboard.spanTooLong"));
    return;
  }
  if (!quiet) {
    requested = f;
    dashboardLoading.value = true;
  }
  const read = ++dashboardRead;
  try {
    const list = await fetchQuotaData({ start_timestamp: f.start, end_timestamp: f.end, username: f.username.trim() }, all, quiet);
    if (read !== dashboardRead) return;
    rows.value = list;
    applied.value = f;
  } catch (err) {
    if (!quiet && read === dashboardRead) handleError(err);
  } finally {
    if (read === dashboardRead) dashboardLoading.value = false;
  }
}

/** resetFilter restores the default granularity and range. */
export function resetFilter(): void {
  rangeChosen = false;
  granularityChosen = false;
  filter.value = initialFilter();
}

// granularityChosen is true once the user picked a granularity; until then (and with no range
// chosen) an opened dashboard takes up the configured default, saved meanwhile or not.
let granularityChosen = false;

/** followDefaults takes up the default granularity and its range while the user chose neither. */
export function followDefaults(): void {
  if (rangeChosen || granularityChosen) return;
  filter.value = { ...initialFilter(), username: filter.value.username };
}

/** setGranularity re-buckets the shown rows at once and keeps the choice for the next query. */
export function setGranularity(g: Granularity): void {
  granularityChosen = true;
  filter.value = { ...filter.value, granularity: g };
  applied.value = { ...applied.value, granularity: g };
  requested = { ...requested, granularity: g };
}

// Another account in this tab never sees the previous one's figures.
onUserChange(() => {
  rangeChosen = false;
  granularityChosen = false;
  rows.value = [];
  filter.value = initialFilter();
  applied.value = filter.value;
  // A read the previous account started is not shown either.
  requested = applied.value;
  dashboardRead++;
  dashboardLoading.value = false;
});
