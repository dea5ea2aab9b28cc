import type { Channel, ChannelInput } from "../../api/channels";
import { splitList } from "../../stores/channels";
import { AZURE_DEFAULT_VERSION, SPARK_DEFAULT_VERSION, TYPE_AZURE, TYPE_SPARK, TYPE_VERTEX } from "./constants";

/** ChannelForm is the drawer's state; lists are arrays here and comma strings on the wire. */
export interface ChannelForm {
  type: number;
  name: string;
  key: string;
  batch: boolean;
  openai_organization: string;
  base_url: string;
  other: string;
  models: string[];
  groups: string[];
  model_mapping: string;
  status_code_mapping: string;
  test_model: string;
  auto_ban: boolean;
  priority: string;
  weight: string;
  /**
   * loaded_json is the JSON fields as an edit loaded them: stored is the text on the channel,
   * shown its indented form in the drawer. A field left as shown is sent as stored.
   */
  loaded_json?: Record<JSONField, { stored: string; shown: string }>;
}

/** JSONField names the form's JSON text fields. */
type JSONField = "model_mapping" | "status_code_mapping";

/** emptyForm is a new channel: OpenAI, group default, auto-ban on. */
export function emptyForm(): ChannelForm {
  return {
    type: 1,
    name: "",
    key: "",
    batch: false,
    openai_organization: "",
    base_url: "",
    other: "",
    models: [],
    groups: ["default"],
    model_mapping: "",
    status_code_mapping: "",
    test_model: "",
    auto_ban: true,
    priority: "0",
    weight: "0",
  };
}

function pretty(text: string): string {
  if (!text.trim()) return "";
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** formFromChannel fills the form from a stored channel; the key stays empty (it is never sent to the browser). */
export function formFromChannel(c: Channel): ChannelForm {
  const loaded = (stored: string) => ({ stored, shown: pretty(stored) });
  const json = { model_mapping: loaded(c.model_mapping ?? ""), status_code_mapping: loaded(c.status_code_mapping ?? "") };
  return {
    type: c.type,
    name: c.name ?? "",
    key: "",
    batch: false,
    openai_organization: c.openai_organization ?? "",
    base_url: c.base_url ?? "",
    other: c.other ?? "",
    models: splitList(c.models),
    groups: splitList(c.group),
    model_mapping: json.model_mapping.shown,
    status_code_mapping: json.status_code_mapping.shown,
    test_model: c.test_model ?? "",
    auto_ban: c.auto_ban !== 0,
    priority: String(c.priority ?? 0),
    weight: String(c.weight ?? 0),
    loaded_json: json,
  };
}

/** jsonText is what a JSON field sends: the stored text while the field shows it unchanged, so an edit of another field keeps it byte for byte. */
function jsonText(f: ChannelForm, field: JSONField): string {
  const loaded = f.loaded_json?.[field];
  if (loaded && f[field] === loaded.shown) return loaded.stored;
  return f[field].trim();
}

/** isJSONObject reports whether text is a JSON object. */
export function isJSONObject(text: string): boolean {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/** WEIGHT_MAX is the largest weight the server takes. */
export const WEIGHT_MAX = 1_000_000;

/** Where a saved channel sends its key: its type and base URL. */
export interface KeyDestination {
  type: number;
  base_url: string;
}

const trimBase = (url: string) => url.trim().replace(/\/+$/, "");

/**
 * validateForm returns the i18n key of the first problem, or null when the form can be sent.
 * On edit, saved is where the stored channel sends its key: a form moved to another type or
 * base URL must bring the key again (the server refuses it otherwise).
 */
export function validateForm(f: ChannelForm, isEdit: boolean, saved?: KeyDestination): string | null {
  if (!isEdit && (f.name.trim() === "" || f.key.trim() === "")) return "channels.msg.nameKeyRequired";
  // On edit an empty key keeps the stored one; the name stays required.
  if (isEdit && f.name.trim() === "") return "channels.msg.nameRequired";
  if (isEdit && saved && f.key.trim() === "" && (f.type !== saved.type || trimBase(f.base_url) !== trimBase(saved.base_url))) {
    return "channels.msg.keyForNewDestination";
  }
  if (f.models.length === 0) return "channels.msg.modelRequired";
  if (f.model_mapping.trim() !== "" && !isJSONObject(f.model_mapping)) return "channels.msg.mappingInvalid";
  if (f.status_code_mapping.trim() !== "" && !isJSONObject(f.status_code_mapping)) return "channels.msg.statusMappingInvalid";
  // As the inline editors: a whole number or nothing (1e3 or 2.9 is not read as something else).
  if (f.priority.trim() !== "" && !/^-?\d+$/.test(f.priority.trim())) return "channels.msg.priorityInteger";
  if (f.weight.trim() !== "" && !/^-?\d+$/.test(f.weight.trim())) return "channels.msg.weightInteger";
  if (/^\d+$/.test(f.weight.trim()) && Number(f.weight.trim()) > WEIGHT_MAX) return "channels.msg.weightTooLarge";
  if (f.type === TYPE_VERTEX) {
    const other = f.other.trim();
    if (other === "") return "channels.msg.regionInvalid";
    if (other.startsWith("{")) {
      // As the server reads it: region names by model, with a non-empty default.
      if (!isJSONObject(other)) return "channels.msg.regionInvalid";
      const regions = JSON.parse(other) as Record<string, unknown>;
      if (Object.values(regions).some((r) => typeof r !== "string")) return "channels.msg.regionInvalid";
      if (typeof regions.default !== "string" || regions.default.trim() === "") return "channels.msg.regionInvalid";
    }
    if (f.key.trim() !== "" && !isJSONObject(f.key)) return "channels.msg.vertexKeyInvalid";
  }
  return null;
}

/** singleKey is a key typed as one: the line breaks a single-line field does not show are left out. */
export function singleKey(key: string): string {
  return key.replace(/[\r\n]+/g, "");
}

function toInt(text: string, fallback: number): number {
  const n = Number.parseInt(text.trim(), 10);
  return Number.isFinite(n) ? n : fallback;
}

/**
 * toInput builds the request body: trailing slashes are removed from the
 * base URL, Azure and Spark get their default version, priority is raised to
 * -999 and a negative weight becomes 0. On edit an empty key is left out, so
 * the stored key stays, and a mapping left as shown is sent as stored.
 */
export function toInput(f: ChannelForm, isEdit: boolean): ChannelInput {
  let other = f.other.trim();
  if (other === "" && f.type === TYPE_AZURE) other = AZURE_DEFAULT_VERSION;
  if (other === "" && f.type === TYPE_SPARK) other = SPARK_DEFAULT_VERSION;
  const input: ChannelInput = {
    type: f.type,
    name: f.name.trim(),
    openai_organization: f.openai_organization.trim(),
    base_url: f.base_url.trim().replace(/\/+$/, ""),
    other: f.type === TYPE_VERTEX ? f.other : other,
    models: f.models.join(","),
    group: f.groups.join(","),
    model_mapping: jsonText(f, "model_mapping"),
    status_code_mapping: jsonText(f, "status_code_mapping"),
    test_model: f.test_model.trim(),
    auto_ban: f.auto_ban ? 1 : 0,
    priority: Math.max(-999, toInt(f.priority, 0)),
    weight: Math.max(0, toInt(f.weight, 0)),
  };
  // The server makes one channel per line: only a batch (or a Vertex key, one JSON document) keeps them.
  const batch = f.batch && !isEdit && f.type !== TYPE_VERTEX;
  const key = (batch || f.type === TYPE_VERTEX ? f.key : singleKey(f.key)).trim();
  if (!isEdit || key !== "") input.key = key;
  return input;
}

/**
 * addCustomModels adds comma-separated names (a full-width comma too, as the
 * models picker takes them); any name already chosen refuses the whole entry (null).
 */
export function addCustomModels(current: string[], entry: string): string[] | null {
  const names = entry
    .split(/[,，]/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) return current;
  const seen = new Set(current);
  const next = [...current];
  for (const n of names) {
    if (seen.has(n)) return null;
    seen.add(n);
    next.push(n);
  }
  return next;
}
