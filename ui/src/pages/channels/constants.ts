/** BadgeColor is a colour scale bundled in theme.css. */
export type BadgeColor = "gray" | "indigo" | "blue" | "cyan" | "teal" | "green" | "lime" | "yellow" | "amber" | "orange" | "red" | "pink" | "purple" | "violet";

/** ChannelType is one provider type of the selector; its name is the i18n key channels.type.<value>. */
export interface ChannelType {
  value: number;
  color: BadgeColor;
}

/** CHANNEL_TYPES lists the 30 channel types in the order the selector shows them. */
export const CHANNEL_TYPES: ChannelType[] = [
  { value: 1, color: "green" },
  { value: 2, color: "blue" },
  { value: 5, color: "purple" },
  { value: 36, color: "pink" },
  { value: 4, color: "gray" },
  { value: 14, color: "indigo" },
  { value: 33, color: "indigo" },
  { value: 41, color: "blue" },
  { value: 3, color: "teal" },
  { value: 24, color: "orange" },
  { value: 34, color: "teal" },
  { value: 15, color: "blue" },
  { value: 17, color: "orange" },
  { value: 18, color: "blue" },
  { value: 16, color: "violet" },
  { value: 26, color: "purple" },
  { value: 11, color: "orange" },
  { value: 39, color: "gray" },
  { value: 25, color: "gray" },
  { value: 19, color: "gray" },
  { value: 23, color: "teal" },
  { value: 31, color: "green" },
  { value: 35, color: "red" },
  { value: 37, color: "teal" },
  { value: 38, color: "blue" },
  { value: 40, color: "purple" },
  { value: 42, color: "blue" },
  { value: 8, color: "pink" },
  { value: 22, color: "blue" },
  { value: 21, color: "purple" },
];

/** IMPLEMENTED_TYPES are the types the relay speaks today; others can be saved but answer "not supported yet". */
export const IMPLEMENTED_TYPES = new Set([1, 3, 4, 8, 19, 25, 31, 40, 42]);

/** Type codes with their own form fields or defaults. */
export const TYPE_OPENAI = 1;
export const TYPE_MJ = 2;
export const TYPE_AZURE = 3;
export const TYPE_MJ_PLUS = 5;
export const TYPE_CUSTOM = 8;
export const TYPE_SPARK = 18;
export const TYPE_AIPROXY_KB = 21;
export const TYPE_FASTGPT = 22;
export const TYPE_SUNO = 36;
export const TYPE_CLOUDFLARE = 39;
export const TYPE_VERTEX = 41;

/** AZURE_DEFAULT_VERSION fills an empty "other" of an Azure channel. */
export const AZURE_DEFAULT_VERSION = "2023-06-01-preview";
/** SPARK_DEFAULT_VERSION fills an empty "other" of a Spark channel. */
export const SPARK_DEFAULT_VERSION = "v2.1";

/** KEY_FORMAT_TYPES have a dedicated key-format hint (channels.keyHint.<type>). */
export const KEY_FORMAT_TYPES = new Set([15, 18, 22, 23, 33, 41]);

/** MODEL_MAPPING_TEMPLATE maps dated model names to their base names. */
export const MODEL_MAPPING_TEMPLATE = {
  "gpt-3.5-turbo-0301": "gpt-3.5-turbo",
  "gpt-4-0314": "gpt-4",
  "gpt-4-32k-0314": "gpt-4-32k",
};

/** STATUS_CODE_MAPPING_TEMPLATE turns an upstream 400 into a 500 so the call is retried. */
export const STATUS_CODE_MAPPING_TEMPLATE = { "400": "500" };

/** VERTEX_REGION_TEMPLATE sets the default region and sends one model elsewhere. */
export const VERTEX_REGION_TEMPLATE = {
  default: "us-central1",
  "claude-3-5-sonnet-20240620": "europe-west1",
};

/** MJ_MODELS are the drawing actions of Midjourney Proxy (type 2). */
export const MJ_MODELS = ["mj_imagine", "mj_variation", "mj_reroll", "mj_blend", "mj_upscale", "mj_describe", "mj_uploads"];

/** MJ_PLUS_MODELS are the extended drawing actions of Midjourney Proxy Plus (type 5), face swap included. */
export const MJ_PLUS_MODELS = [
  "swap_face",
  "mj_imagine",
  "mj_variation",
  "mj_reroll",
  "mj_blend",
  "mj_upscale",
  "mj_describe",
  "mj_zoom",
  "mj_shorten",
  "mj_modal",
  "mj_inpaint",
  "mj_custom_zoom",
  "mj_high_variation",
  "mj_low_variation",
  "mj_pan",
  "mj_uploads",
];

/** SUNO_MODELS are the actions of Suno API (type 36). */
export const SUNO_MODELS = ["suno_music", "suno_lyrics"];

/** typeColor returns the badge colour of a channel type. */
export function typeColor(type: number): BadgeColor {
  return CHANNEL_TYPES.find((x) => x.value === type)?.color ?? "gray";
}

/** typeNameKey is the i18n key of a channel type's name. */
export function typeNameKey(type: number): string {
  return CHANNEL_TYPES.some((x) => x.value === type) ? `channels.type.${type}` : "channels.type.unknown";
}

/** suggestedModels returns the models a type change proposes: fixed lists for drawing and music, else the server's map. */
export function suggestedModels(type: number, byType: Record<string, string[]>): string[] {
  switch (type) {
    case TYPE_MJ:
      return MJ_MODELS;
    case TYPE_MJ_PLUS:
      return MJ_PLUS_MODELS;
    case TYPE_SUNO:
      return SUNO_MODELS;
    default:
      return byType[String(type)] ?? [];
  }
}

/** responseTimeColor colours a latency in ms: ≤1 s green, ≤3 s lime, ≤5 s yellow, above red; 0 (untested) gray. */
export function responseTimeColor(ms: number): BadgeColor {
  if (!ms) return "gray";
  if (ms <= 1000) return "green";
  if (ms <= 3000) return "lime";
  if (ms <= 5000) return "yellow";
  return "red";
}

/** BALANCE_TYPES have a balance endpoint on the server; their balance is in US dollars. */
export const BALANCE_TYPES = new Set([1, 8]);
