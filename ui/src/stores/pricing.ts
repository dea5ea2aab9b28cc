import { computed, signal } from "@preact/signals-react";
import { handleError } from "../api/client";
import { fetchPricing, QUOTA_TYPE_FIXED, type PricingItem } from "../api/pricing";
import { t } from "../i18n";
import { DEFAULT_QUOTA_PER_UNIT, trimNumber } from "../lib/quota";
import { copyText } from "./clipboard";
import { toast } from "./toast";
import { onUserChange, user } from "./user";

/** pricingItems is the price list in display order (gpt-named models first). */
export const pricingItems = signal<PricingItem[]>([]);

/** groupRatio maps every group to its ratio. */
export const groupRatio = signal<Record<string, number>>({});

/** pricingLoading is true while the list is being read. */
export const pricingLoading = signal(false);

/** pricingSearch is the fuzzy model-name filter. */
export const pricingSearch = signal("");

/** chosenGroup is the group picked by a click; null follows the user's own group (default for visitors). */
export const chosenGroup = signal<string | null>(null);

/** selectedModels holds the ticked model names. */
export const selectedModels = signal<Set<string | number>>(new Set());

// Another account in this tab starts from its own group, with nothing ticked.
onUserChange(() => {
  chosenGroup.value = null;
  selectedModels.value = new Set();
});

/** ownGroup is the logged-in user's group, or "default" for visitors. */
export const ownGroup = computed(() => user.value?.group || "default");

/** viewedGroup is the group whose ratio the prices use. */
export const viewedGroup = computed(() => chosenGroup.value ?? ownGroup.value);

/** ratioOf returns a group's ratio; an unknown group counts as 1. */
export function ratioOf(group: string): number {
  const r = groupRatio.value[group];
  return typeof r === "number" && Number.isFinite(r) ? r : 1;
}

/** sortPricing puts gpt-named models first, then orders by name. */
export function sortPricing(items: PricingItem[]): PricingItem[] {
  return [...items].sort((a, b) => {
    const ag = a.model_name.startsWith("gpt");
    const bg = b.model_name.startsWith("gpt");
    if (ag !== bg) return ag ? -1 : 1;
    return a.model_name.localeCompare(b.model_name);
  });
}

/**
 * fuzzyMatch tells whether every space-separated term of the query occurs in
 * the name, ignoring case; a term may also match as a subsequence ("g4o" in "gpt-4o").
 */
export function fuzzyMatch(name: string, query: string): boolean {
  const hay = name.toLowerCase();
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((term) => {
      if (hay.includes(term)) return true;
      // By characters on both sides: an emoji is one character but two UTF-16 units.
      const chars = Array.from(term);
      let i = 0;
      for (const ch of hay) if (ch === chars[i]) i++;
      return i === chars.length;
    });
}

/** filteredPricing is the list after the search. */
export const filteredPricing = computed(() => {
  const q = pricingSearch.value.trim();
  return q ? pricingItems.value.filter((m) => fuzzyMatch(m.model_name, q)) : pricingItems.value;
});

/** formatPrice trims a dollar amount to at most 6 decimals, or six significant digits below $0.1 (never $0 for a price). */
export function formatPrice(n: number): string {
  return trimNumber(n);
}

/** PriceView is what a row shows for one group. */
export interface PriceView {
  fixed: boolean;
  /** price is the per-call price (fixed) in dollars. */
  price: number;
  /** prompt and completion are dollars per 1M tokens (usage billing). */
  prompt: number;
  completion: number;
}

/**
 * priceFor applies the pricing rule: prompt $/1M = 2 × model ratio × group ratio, completion =
 * prompt × completion ratio; a fixed price overrides. The 2 is 1M tokens at one quota unit each
 * over the default 500 000 quota per dollar: with another QuotaPerUnit (perUnit) a token still
 * costs its ratio in quota, so the dollars per 1M tokens are 1 000 000 / perUnit × the ratios.
 */
export function priceFor(m: PricingItem, ratio: number, perUnit = DEFAULT_QUOTA_PER_UNIT): PriceView {
  if (m.quota_type === QUOTA_TYPE_FIXED) {
    return { fixed: true, price: (Number(m.model_price) || 0) * ratio, prompt: 0, completion: 0 };
  }
  const prompt = (1e6 / perUnit) * (Number(m.model_ratio) || 0) * ratio;
  return { fixed: false, price: 0, prompt, completion: prompt * (Number(m.completion_ratio) || 0) };
}

/** loadPricing reads the price list. */
export async function loadPricing(): Promise<void> {
  pricingLoading.value = true;
  try {
    const p = await fetchPricing();
    pricingItems.value = sortPricing(p.items);
    groupRatio.value = p.groupRatio;
  } catch (err) {
    handleError(err);
  } finally {
    pricingLoading.value = false;
  }
}

/** chooseGroup shows prices for another group. */
export function chooseGroup(group: string): void {
  chosenGroup.value = group;
}

/** copyModelName copies one model name. */
export async function copyModelName(name: string): Promise<void> {
  if (await copyText(name)) toast.success(t("pricing.copied", { name }));
}

/** copySelectedModels copies the ticked model names, comma-separated. */
export async function copySelectedModels(): Promise<void> {
  const names = pricingItems.value.map((m) => m.model_name).filter((n) => selectedModels.value.has(n));
  if (names.length === 0) {
    toast.error(t("pricing.selectAtLeastOne"));
    return;
  }
  if (await copyText(names.join(","))) toast.success(t("copy.done"));
}
