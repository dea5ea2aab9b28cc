import { computed, signal } from "@preact/signals-react";
import { loadOptions, options, saveOptions, type OptionChange } from "../../../../stores/options";

/** ModelRow is one model of the price table: a fixed price per call, or a ratio and a completion ratio. */
export interface ModelRow {
  model: string;
  /** price is the fixed US$ price per call; set, it overrides the ratios. */
  price: number | null;
  ratio: number | null;
  completion: number | null;
}

/** PRICING_KEYS are the options the table writes. */
export const PRICING_KEYS = ["ModelPrice", "ModelRatio", "CompletionRatio"] as const;

type PricingKey = (typeof PRICING_KEYS)[number];
type Maps = Record<PricingKey, Record<string, number>>;

function parseMap(text: string | undefined): Record<string, number> {
  try {
    const v = JSON.parse(text || "{}");
    if (typeof v !== "object" || v === null || Array.isArray(v)) return {};
    return Object.fromEntries(Object.entries(v).filter((e): e is [string, number] => typeof e[1] === "number"));
  } catch {
    return {};
  }
}

function serverMaps(o: Record<string, string>): Maps {
  return { ModelPrice: parseMap(o.ModelPrice), ModelRatio: parseMap(o.ModelRatio), CompletionRatio: parseMap(o.CompletionRatio) };
}

/** rowsFromOptions joins the three pricing maps into one row per model, sorted by name. */
export function rowsFromOptions(o: Record<string, string>): ModelRow[] {
  const m = serverMaps(o);
  const names = new Set([...Object.keys(m.ModelPrice), ...Object.keys(m.ModelRatio), ...Object.keys(m.CompletionRatio)]);
  return [...names]
    .sort((a, b) => a.localeCompare(b))
    .map((model) => ({ model, price: m.ModelPrice[model] ?? null, ratio: m.ModelRatio[model] ?? null, completion: m.CompletionRatio[model] ?? null }));
}

/** mapsFromRows splits rows back into the three pricing maps. */
export function mapsFromRows(rows: ModelRow[]): Maps {
  const out: Maps = { ModelPrice: {}, ModelRatio: {}, CompletionRatio: {} };
  for (const r of rows) {
    if (r.price !== null) out.ModelPrice[r.model] = r.price;
    if (r.ratio !== null) out.ModelRatio[r.model] = r.ratio;
    if (r.completion !== null) out.CompletionRatio[r.model] = r.completion;
  }
  return out;
}

function sameMap(a: Record<string, number>, b: Record<string, number>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => k in b && a[k] === b[k]);
}

/** pricingDraft holds the edited rows; null means the table shows the server's values. */
export const pricingDraft = signal<ModelRow[] | null>(null);

/** pricingBase holds the server's rows the draft started from, so applying sends only the rows edited here. */
const pricingBase = signal<ModelRow[]>([]);

/** setDraft replaces the draft, remembering the rows the first edit started from. */
function setDraft(next: ModelRow[]): void {
  if (pricingDraft.value === null) pricingBase.value = rowsFromOptions(options.value);
  pricingDraft.value = next;
}

function sameRow(a: ModelRow | undefined, b: ModelRow | undefined): boolean {
  if (!a || !b) return a === b;
  return a.price === b.price && a.ratio === b.ratio && a.completion === b.completion;
}

/**
 * mergeEdits applies the rows the draft added, changed or removed since base onto
 * the server's current rows: a model another administrator (or another section of
 * this page) priced meanwhile keeps its price instead of being reverted.
 */
export function mergeEdits(base: ModelRow[], draft: ModelRow[], current: ModelRow[]): ModelRow[] {
  const before = new Map(base.map((r) => [r.model, r]));
  const after = new Map(draft.map((r) => [r.model, r]));
  const out = new Map(current.map((r) => [r.model, r]));
  for (const model of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(model);
    const now = after.get(model);
    if (sameRow(was, now)) continue;
    if (now) out.set(model, now);
    else out.delete(model);
  }
  return [...out.values()].sort((a, b) => a.model.localeCompare(b.model));
}

/** pricingRows are the rows the table shows. */
export const pricingRows = computed(() => pricingDraft.value ?? rowsFromOptions(options.value));

/** pricingDirty reports unapplied edits. */
export const pricingDirty = computed(() => pricingDraft.value !== null);

/** upsertModelRow adds a row or replaces the one named original; false when another row already has the name. */
export function upsertModelRow(row: ModelRow, original: string | null): boolean {
  const rows = pricingRows.value;
  if (rows.some((r) => r.model === row.model && r.model !== original)) return false;
  const next = original === null ? [...rows, row] : rows.map((r) => (r.model === original ? row : r));
  setDraft(next);
  return true;
}

/** deleteModelRow removes a model from the draft. */
export function deleteModelRow(model: string): void {
  setDraft(pricingRows.value.filter((r) => r.model !== model));
}

/** discardPricing drops the draft so the table shows the server's values again. */
export function discardPricing(): void {
  pricingDraft.value = null;
}

/** pricingChanges lists the pricing options whose maps the draft's edits change, as JSON, over the server's current maps. */
export function pricingChanges(): OptionChange[] {
  const draft = pricingDraft.value;
  const rows = draft === null ? pricingRows.value : mergeEdits(pricingBase.value, draft, rowsFromOptions(options.value));
  const next = mapsFromRows(rows);
  const current = serverMaps(options.value);
  return PRICING_KEYS.filter((k) => !sameMap(next[k], current[k])).map((k) => [k, JSON.stringify(next[k], null, 2)]);
}

/**
 * applyPricing reads the options again, so the table's edits go onto what the server
 * holds now, writes the changed maps, and drops the draft once every one was saved.
 */
export async function applyPricing(): Promise<void> {
  if (pricingDraft.value !== null) await loadOptions();
  const changes = pricingChanges();
  const saved = await saveOptions(changes);
  if (saved.length === changes.length) pricingDraft.value = null;
}
