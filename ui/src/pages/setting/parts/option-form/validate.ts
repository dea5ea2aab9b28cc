import { t } from "../../../../i18n";
import type { OptionChange } from "../../../../stores/options";
import { toast } from "../../../../stores/toast";

/** JsonShape says what a JSON option must hold. */
export type JsonShape = "ratioMap" | "labelMap" | "chats";

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * isValidJson reports whether text parses into the shape the server accepts. An empty box is
 * not valid: saved, it would empty the map (every ratio-priced model unpriced); "{}" or "[]"
 * says that on purpose.
 */
export function isValidJson(text: string, shape: JsonShape): boolean {
  if (text.trim() === "") return false;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return false;
  }
  switch (shape) {
    case "ratioMap":
      return isPlainObject(v) && Object.values(v).every((r) => typeof r === "number" && Number.isFinite(r) && r >= 0);
    case "labelMap":
      return isPlainObject(v) && Object.values(v).every((r) => typeof r === "string");
    case "chats":
      return Array.isArray(v) && v.every((item) => isPlainObject(item) && Object.values(item).every((u) => typeof u === "string"));
  }
}

/** prettyJson indents JSON text for a textarea; text that does not parse is returned as it is. */
export function prettyJson(text: string): string {
  if (text.trim() === "") return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** Rule checks one option before it is sent. */
export type Rule = { json: JsonShape; label: string; checkInput?: boolean } | { min: number; label: string; integer?: boolean };

/**
 * checkChanges validates the changed keys against their rules and shows the
 * first problem as an error toast; it returns false when nothing may be sent.
 */
export function checkChanges(changes: OptionChange[], rules: Record<string, Rule>): boolean {
  for (const [key, value] of changes) {
    const rule = rules[key];
    if (!rule) continue;
    if ("json" in rule) {
      if (!isValidJson(value, rule.json)) {
        const reason = t("options.invalidJson", { name: rule.label });
        // The operation settings' JSON fields fail with the catalogue's 请检查输入 (A §8), naming the field.
        toast.error(rule.checkInput ? t("options.checkInput", { reason }) : reason);
        return false;
      }
      continue;
    }
    // Decimal, as the server reads it: a sign, digits and, for decimals, a
    // fraction and an exponent ("1e3"); hex and digit separators are refused there.
    const text = value.trim();
    const n = Number(text);
    if (!(rule.integer ? /^[-+]?\d+$/ : /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/).test(text) || !Number.isFinite(n)) {
      toast.error(t("options.notNumber", { name: rule.label }));
      return false;
    }
    if (n < rule.min) {
      toast.error(t("options.belowMin", { name: rule.label, min: rule.min }));
      return false;
    }
  }
  return true;
}

/** stripTrailingSlashes removes every trailing "/" (addresses are stored without one). */
export function stripTrailingSlashes(value: string): string {
  return value.trim().replace(/\/+$/, "");
}
