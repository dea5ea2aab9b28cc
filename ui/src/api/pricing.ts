import { api } from "./client";

/** QUOTA_TYPE_FIXED marks a model billed per call at a fixed price; 0 bills by usage (ratios). */
export const QUOTA_TYPE_FIXED = 1;

/** PricingItem is one model of the public price list. */
export interface PricingItem {
  model_name: string;
  quota_type: number;
  model_ratio: number;
  model_price: number;
  completion_ratio: number;
  enable_groups: string[];
}

/** Pricing is the price list plus the ratio of every group. */
export interface Pricing {
  items: PricingItem[];
  groupRatio: Record<string, number>;
}

/** fetchPricing reads the public price list; group_ratio sits beside data at the top level. */
export async function fetchPricing(): Promise<Pricing> {
  const r = await api.get<PricingItem[]>("/api/pricing");
  const raw = r.raw as { group_ratio?: Record<string, number> };
  const items = (Array.isArray(r.data) ? r.data : []).map((m) => ({ ...m, enable_groups: Array.isArray(m.enable_groups) ? m.enable_groups : [] }));
  return { items, groupRatio: raw?.group_ratio ?? {} };
}
