import type { LogEntry, LogOther } from "../../api/logs";
import { trimNumber } from "../../lib/quota";

/** LOG_TYPE_CONSUME and LOG_TYPE_ALL (shown like consume) are the entries that carry tokens, model and cost. */
export const LOG_TYPE_CONSUME = 2;

/** isConsume reports whether an entry is a consumption (type 0 is shown like one). */
export function isConsume(l: Pick<LogEntry, "type">): boolean {
  return l.type === 0 || l.type === LOG_TYPE_CONSUME;
}

/** Billing holds the parameters of the billing text, ready for interpolation; mode picks the text. */
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
  | {
      mode: "audio";
      textInput: number;
      textOutput: number;
      audioInput: number;
      audioOutput: number;
      modelRatio: string;
      completionRatio: string;
      audioRatio: string;
      audioCompletionRatio: string;
      groupRatio: string;
      /** text and audio are the rounded token equivalents of the two parts. */
      text: number;
      audio: number;
      result: number;
      promptPrice: string;
      completionPrice: string;
      audioInputPrice: string;
      audioOutputPrice: string;
    }
  | {
      mode: "image";
      /** known is false for an entry without the image fields, recognised by its zero tokens alone. */
      known: boolean;
      size: string;
      quality: string;
      n: number;
      /** price is the model price in dollars, or "" when the model ratio applies. */
      price: string;
      modelRatio: string;
      groupRatio: string;
    }
  | {
      mode: "price";
      price: string;
      groupRatio: string;
      /** total is the price times the group ratio, in dollars. */
      total: string;
      /**
       * perUnit is the QuotaPerUnit the charge used; result the quota that made, truncated as
       * charged, or "" for an older entry that does not keep its rate and whose charge today's
       * does not give (the option changed since, or an image priced by size and count).
       */
      perUnit: string;
      result: string;
    };

/**
 * isImageEntry reports whether an entry was priced per image rather than by
 * tokens: the server marks image generations with image: true; an older
 * entry in ratio mode that charged quota for no tokens at all can only have
 * been priced that way too, and the token formula would show 0 for it.
 */
function isImageEntry(l: LogEntry, o: LogOther): boolean {
  if (o.image) return true;
  return (o.model_price ?? -1) < 0 && l.prompt_tokens === 0 && l.completion_tokens === 0 && l.quota > 0;
}

/**
 * billing explains how an entry's quota was computed.
 *
 * Image generations are priced by size, quality and count, which the
 * console shows with the model ratio or price instead of a token formula.
 * Price mode (model_price ≥ 0): price × group ratio dollars, times the
 * QuotaPerUnit of the charge, truncated to the quota charged. Audio models
 * (audio: true) in ratio mode, as the server charges them:
 * round((round(text_in + text_out × CR) + round(audio_in × AR + audio_out
 * × AR × ACR)) × model ratio × group ratio), at least 1 for any usage.
 * Other ratio mode entries: (prompt + completion × completion ratio) ×
 * model ratio × group ratio. A ratio of 1 is $2 per 1M tokens at the default
 * QuotaPerUnit (1 000 000 / perUnit dollars in general), so each
 * price per 1M tokens is 2 × model ratio dollars times the part's ratios
 * and the group ratio.
 */
export function billing(l: LogEntry, o: LogOther, perUnit = 500000): Billing {
  // Dollars per 1M tokens at a ratio of 1: 2 at the default 500 000 quota per dollar.
  const perM = 1e6 / perUnit;
  const gr = o.group_ratio ?? 1;
  const price = o.model_price ?? -1;
  const mr = o.model_ratio ?? 0;
  if (isImageEntry(l, o)) {
    return {
      mode: "image",
      known: o.image === true,
      size: o.size ?? "",
      quality: o.quality ?? "",
      n: o.n ?? 1,
      price: price >= 0 ? trimNumber(price) : "",
      modelRatio: trimNumber(mr),
      groupRatio: trimNumber(gr),
    };
  }
  if (price >= 0) {
    // The rate of the charge when the entry keeps it (a later change of QuotaPerUnit does not
    // change what was charged), else today's.
    const kept = o.quota_per_unit !== undefined && o.quota_per_unit > 0;
    const rate = kept ? (o.quota_per_unit as number) : perUnit;
    const result = moneyQuota(price * rate * gr);
    return {
      mode: "price",
      price: trimNumber(price),
      groupRatio: trimNumber(gr),
      total: trimNumber(price * gr),
      perUnit: trimNumber(rate),
      result: kept || result === l.quota ? String(result) : "",
    };
  }
  const cr = o.completion_ratio ?? 1;
  if (o.audio) {
    const ar = o.audio_ratio ?? 1;
    const acr = o.audio_completion_ratio ?? 1;
    const audioInput = o.audio_input ?? 0;
    const audioOutput = o.audio_output ?? 0;
    const textInput = o.text_input ?? Math.max(l.prompt_tokens - audioInput, 0);
    const textOutput = o.text_output ?? Math.max(l.completion_tokens - audioOutput, 0);
    // The same steps and rounding as the server (relay/pricing.go price.quota).
    const text = Math.round(textInput + textOutput * cr);
    const audio = Math.round(audioInput * ar + audioOutput * ar * acr);
    let result = Math.round((text + audio) * mr * gr);
    if (textInput + textOutput + audioInput + audioOutput === 0) result = 0;
    else if (result < 1 && mr !== 0 && gr !== 0) result = 1;
    return {
      mode: "audio",
      textInput,
      textOutput,
      audioInput,
      audioOutput,
      modelRatio: trimNumber(mr),
      completionRatio: trimNumber(cr),
      audioRatio: trimNumber(ar),
      audioCompletionRatio: trimNumber(acr),
      groupRatio: trimNumber(gr),
      text,
      audio,
      result,
      promptPrice: trimNumber(mr * perM * gr),
      completionPrice: trimNumber(mr * perM * cr * gr),
      audioInputPrice: trimNumber(mr * perM * ar * gr),
      audioOutputPrice: trimNumber(mr * perM * ar * acr * gr),
    };
  }
  // Rounded like the server's charge (relay/pricing.go price.charge), so the
  // result is the quota deducted: the completion part, then the whole, at
  // least 1 for any usage at a non-zero ratio.
  const used = l.prompt_tokens + l.completion_tokens;
  let result = used === 0 ? 0 : Math.round((l.prompt_tokens + Math.round(l.completion_tokens * cr)) * mr * gr);
  if (used > 0 && result < 1 && mr !== 0 && gr !== 0) result = 1;
  return {
    mode: "ratio",
    prompt: l.prompt_tokens,
    completion: l.completion_tokens,
    modelRatio: trimNumber(mr),
    completionRatio: trimNumber(cr),
    groupRatio: trimNumber(gr),
    result: String(result),
    promptPrice: trimNumber(mr * perM * gr),
    completionPrice: trimNumber(mr * perM * cr * gr),
  };
}

/**
 * moneyQuota turns dollars times QuotaPerUnit into quota as the server charges a fixed price
 * (relay/pricing.go moneyQuota): truncated, except that a product a rounding error short of a
 * whole number (0.0157 × 500 000 = 7849.999…) is that number.
 */
function moneyQuota(f: number): number {
  if (!(f > 0)) return 0;
  const r = Math.round(f);
  if (r > 0 && Math.abs(f - r) <= r * 1e-9) return r;
  return Math.min(Math.trunc(f), 2 ** 53);
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
