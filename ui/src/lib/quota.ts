/** QuotaDisplay holds the two status values that decide how quota is shown. */
export interface QuotaDisplay {
  inCurrency: boolean;
  quotaPerUnit: number;
}

/** DEFAULT_QUOTA_PER_UNIT is the server's default: 500 000 quota = US$1. */
export const DEFAULT_QUOTA_PER_UNIT = 500000;

/** renderNumber abbreviates a count: k from 10 000, then M and B. */
export function renderNumber(n: number): string {
  // The unit is chosen by the figure as it is shown: 999 999 is 1.0M, not 1000.0k.
  const abs = Math.abs(n);
  if (abs >= 999_950_000) return (n / 1e9).toFixed(1) + "B";
  if (abs >= 999_950) return (n / 1e6).toFixed(1) + "M";
  if (abs >= 1e4) return (n / 1e3).toFixed(1) + "k";
  return String(n);
}

/** formatQuota renders a quota amount either as dollars or as an abbreviated number. */
export function formatQuota(quota: number, display: QuotaDisplay, digits = 2): string {
  const q = Number.isFinite(quota) ? quota : 0;
  if (display.inCurrency) {
    const perUnit = display.quotaPerUnit > 0 ? display.quotaPerUnit : DEFAULT_QUOTA_PER_UNIT;
    // A balance below zero (a call may end past its reservation) reads -$0.50, and one that rounds
    // to nothing reads $0.00, not $-0.00.
    const text = Math.abs(q / perUnit).toFixed(digits);
    return (q < 0 && /[1-9]/.test(text) ? "-$" : "$") + text;
  }
  return renderNumber(q);
}

/** MAX_QUOTA is the largest balance or amount the server takes, 2^53, written out. */
export const MAX_QUOTA = "9007199254740992";

/**
 * quotaWithinBound reports whether a whole number typed as text is at most MAX_QUOTA either way.
 * It compares the digits, not a Number: past 2^53 a Number silently loses them (9007199254740993
 * reads as ...992, 2^63-1 as 9223372036854776000). Text that is not a whole number passes; the
 * form's own check refuses it.
 */
export function quotaWithinBound(text: string): boolean {
  const m = /^-?0*(\d+)$/.exec(text.trim());
  if (!m) return true;
  const digits = m[1];
  return digits.length < MAX_QUOTA.length || (digits.length === MAX_QUOTA.length && digits <= MAX_QUOTA);
}

/**
 * trimNumber prints a number with at most `digits` decimals and no trailing zeros. A number below
 * 0.1 keeps six significant digits instead, written out as decimals: a ratio of 0.0000001 and the
 * prices it makes are charged, and must neither read as 0 (free) nor lose their digits.
 */
export function trimNumber(n: number, digits = 6): string {
  if (!Number.isFinite(n)) return "0";
  if (n === 0 || Math.abs(n) >= 0.1) return String(Number.parseFloat(n.toFixed(digits)));
  const sig = Number(n.toPrecision(6));
  const decimals = Math.ceil(-Math.log10(Math.abs(sig))) + 5;
  return decimals > 100 ? String(sig) : sig.toFixed(decimals).replace(/\.?0+$/, "");
}
