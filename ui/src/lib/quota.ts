/** QuotaDisplay holds the two status values that decide how quota is shown. */
export interface QuotaDisplay {
  inCurrency: boolean;
  quotaPerUnit: number;
}

/** DEFAULT_QUOTA_PER_UNIT is the server's default: 500 000 quota = US$1. */
export const DEFAULT_QUOTA_PER_UNIT = 500000;

/** renderNumber abbreviates a count: k from 10 000, then M and B. */
export function renderNumber(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1e9) return (n / 1e9).toFixed(1) + "B";
  if (abs >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (abs >= 1e4) return (n / 1e3).toFixed(1) + "k";
  return String(n);
}

/** formatQuota renders a quota amount either as dollars or as an abbreviated number. */
export function formatQuota(quota: number, display: QuotaDisplay, digits = 2): string {
  const q = Number.isFinite(quota) ? quota : 0;
  if (display.inCurrency) {
    const perUnit = display.quotaPerUnit > 0 ? display.quotaPerUnit : DEFAULT_QUOTA_PER_UNIT;
    return "$" + (q / perUnit).toFixed(digits);
  }
  return renderNumber(q);
}
