import type { Token, TokenInput } from "../../api/tokens";
import { formatTimestamp, parseDateTime } from "../../components/format";
import { quotaWithinBound } from "../../lib/quota";
import { TOKEN_DEFAULT_QUOTA } from "../../stores/tokens";

function splitList(csv: string | null | undefined): string[] {
  return (csv ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** TokenForm is the drawer's state; an empty expiry means never. */
export interface TokenForm {
  name: string;
  expiry: string;
  /**
   * expiry_at is the instant the expiry text was written from (a quick button, a loaded token).
   * While the text is unchanged it is sent as it is: in the hour a fall-back repeats, the text
   * names two instants and reading it back would give the first one.
   */
  expiry_at?: number;
  remain_quota: string;
  /** loaded_quota is remain_quota as an edit loaded it (unset for a new token). */
  loaded_quota?: string;
  unlimited_quota: boolean;
  count: string;
  model_limits_enabled: boolean;
  model_limits: string[];
  allow_ips: string;
  group: string;
}

/** emptyTokenForm is a new token: never expires, US$1 of quota, one token, the user's group. */
export function emptyTokenForm(): TokenForm {
  return {
    name: "",
    expiry: "",
    remain_quota: String(TOKEN_DEFAULT_QUOTA),
    unlimited_quota: false,
    count: "1",
    model_limits_enabled: false,
    model_limits: [],
    allow_ips: "",
    group: "",
  };
}

/** formFromToken fills the form from a stored token. */
export function formFromToken(tok: Token): TokenForm {
  return {
    name: tok.name,
    expiry: tok.expired_time === -1 || tok.expired_time <= 0 ? "" : formatTimestamp(tok.expired_time),
    expiry_at: tok.expired_time > 0 ? tok.expired_time : undefined,
    remain_quota: String(tok.remain_quota ?? 0),
    loaded_quota: String(tok.remain_quota ?? 0),
    unlimited_quota: tok.unlimited_quota,
    count: "1",
    model_limits_enabled: tok.model_limits_enabled,
    model_limits: splitList(tok.model_limits),
    allow_ips: tok.allow_ips ?? "",
    group: tok.group ?? "",
  };
}

/** expiryIn returns the form with its expiry set to now plus seconds; 0 means never (""). */
export function expiryIn(f: TokenForm, seconds: number): TokenForm {
  if (seconds === 0) return { ...f, expiry: "", expiry_at: undefined };
  const at = Math.floor(Date.now() / 1000) + seconds;
  return { ...f, expiry: formatTimestamp(at), expiry_at: at };
}

/** expirySeconds reads the form's expiry text: the instant it was written from while unchanged. */
function expirySeconds(f: TokenForm, text: string): number | null {
  if (f.expiry_at !== undefined && formatTimestamp(f.expiry_at) === text) return f.expiry_at;
  return parseDateTime(text);
}

/** Expiry quick choices in seconds: never, one hour, one day, one month (30 days). */
export const EXPIRY_CHOICES: { label: string; seconds: number }[] = [
  { label: "tokens.form.never", seconds: 0 },
  { label: "tokens.form.hour", seconds: 3600 },
  { label: "tokens.form.day", seconds: 86400 },
  { label: "tokens.form.month", seconds: 30 * 86400 },
];

/** TOKEN_NAME_MAX_BYTES is the server's limit on a token name, in UTF-8 bytes. */
export const TOKEN_NAME_MAX_BYTES = 30;
/** BATCH_SUFFIX_BYTES is what batch creation adds to the extra tokens' names: a dash and 6 characters. */
export const BATCH_SUFFIX_BYTES = 7;

/** nameBytes is the length of a name as the server counts it. */
export function nameBytes(name: string): number {
  return new TextEncoder().encode(name.trim()).length;
}

/** validateTokenForm returns the i18n key of the first problem, or null. */
export function validateTokenForm(f: TokenForm, isEdit: boolean): string | null {
  if (f.name.trim() === "") return "tokens.msg.nameRequired";
  if (nameBytes(f.name) > TOKEN_NAME_MAX_BYTES) return "tokens.msg.nameTooLong";
  // An instant at or before 1970 would be sent as 0 or -1, which the server reads as never.
  if (f.expiry.trim() !== "" && (parseDateTime(f.expiry) ?? 0) <= 0) return "tokens.msg.expiryInvalid";
  if (!f.unlimited_quota && !quotaUnchanged(f) && !/^\d+$/.test(f.remain_quota.trim())) return "tokens.msg.quotaInvalid";
  if (!quotaUnchanged(f) && !quotaWithinBound(f.remain_quota)) return "common.quotaTooLarge";
  if (!isEdit && !/^[1-9]\d*$/.test(f.count.trim())) return "tokens.msg.countInvalid";
  // The extra tokens of a batch carry a suffix; refuse before the first one is created.
  if (!isEdit && f.count.trim() !== "1" && nameBytes(f.name) > TOKEN_NAME_MAX_BYTES - BATCH_SUFFIX_BYTES) return "tokens.msg.batchNameTooLong";
  return null;
}

/**
 * quotaUnchanged reports an edit that keeps the remaining quota as loaded. Such a save leaves
 * remain_quota out, so it cannot undo charges made while the form was open, and a token that
 * calls took below zero stays editable.
 */
function quotaUnchanged(f: TokenForm): boolean {
  return f.loaded_quota !== undefined && f.remain_quota.trim() === f.loaded_quota;
}

/** toTokenInput builds the request body of a validated form. */
export function toTokenInput(f: TokenForm): TokenInput {
  const expiry = f.expiry.trim();
  return {
    name: f.name.trim(),
    expired_time: expiry === "" ? -1 : (expirySeconds(f, expiry) ?? -1),
    remain_quota: quotaUnchanged(f)
      ? undefined
      : f.unlimited_quota && !/^\d+$/.test(f.remain_quota.trim())
        ? 0
        : Number.parseInt(f.remain_quota.trim(), 10) || 0,
    unlimited_quota: f.unlimited_quota,
    model_limits_enabled: f.model_limits_enabled,
    model_limits: f.model_limits.join(","),
    allow_ips: f.allow_ips
      .split("\n")
      .map((s) => s.trim())
      .filter(Boolean)
      .join("\n"),
    group: f.group.trim(),
  };
}

