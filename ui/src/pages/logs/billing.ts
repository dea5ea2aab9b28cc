import type { LogEntry, LogOther } from "../../api/logs";

/** LOG_TYPE_CONSUME and LOG_TYPE_ALL (shown like consume) are the entries that carry tokens, model and cost. */
export const LOG_TYPE_CONSUME = 2;

/** isConsume reports whether an entry is a consumption (type 0 is shown like one). */
export function isConsume(l: Pick<LogEntry, "type">): boolean {
  return l.type === 0 || l.type === LOG_TYPE_CONSUME;
}

/** trimNumber prints a number with at most `digits` decimals and no trailing zeros. */
export function trimNumber(n: number, digits = 6): string {
  if (!Number.isFinite(n)) return "0";
  return String(Number.parseFloat(n.toFixed(digits)));
}

/** BillingLines are the parameters of the billing text, ready for interpolation. */
export type Billing =
  | {
      mode: "ratio";
      prompt: number;
      completion: number;
      modelRatio: string;
      completionRatio: string;
      groupRatio: string;
      result: string;
      promptPrice: string;
      completionPrice: string;
    }
  | { mode: "price"; price: string; groupRatio: string; total: string };

/**
 * billing explains how an entry's quota was computed. Ratio mode (model_price
 * −1): (prompt + completion × completion ratio) × model ratio × group ratio;
 * the prompt price per 1M tokens is 2 × model ratio dollars, the completion
 * price that times the completion ratio, both times the group ratio. Price
 * mode: price × group ratio.
 */
export function billing(l: LogEntry, o: LogOther): Billing {
  const gr = o.group_ratio ?? 1;
  const price = o.model_price ?? -1;
  if (price >= 0) {
    return { mode: "price", price: trimNumber(price), groupRatio: trimNumber(gr), total: trimNumber(price * gr) };
  }
  const mr = o.model_ratio ?? 0;
  const cr = o.completion_ratio ?? 1;
  const result = (l.prompt_tokens + l.completion_tokens * cr) * mr * gr;
  return {
    mode: "ratio",
    prompt: l.prompt_tokens,
    completion: l.completion_tokens,
    modelRatio: trimNumber(mr),
    completionRatio: trimNumber(cr),
    groupRatio: trimNumber(gr),
    result: trimNumber(result, 2),
    promptPrice: trimNumber(mr * 2 * gr),
    completionPrice: trimNumber(mr * 2 * cr * gr),
  };
}

/** Latency colours of the log table. */
export type LatencyColor = "green" | "orange" | "red";

/** totalTimeColor colours a total time in seconds: under 101 s green, under 300 s orange, else red. */
export function totalTimeColor(seconds: number): LatencyColor {
  if (seconds < 101) return "green";
  if (seconds < 300) return "orange";
  return "red";
}

/** firstTokenColor colours a first-token time in seconds: under 3 s green, under 10 s orange, else red. */
export function firstTokenColor(seconds: number): LatencyColor {
  if (seconds < 3) return "green";
  if (seconds < 10) return "orange";
  return "red";
}
