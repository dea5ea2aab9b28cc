import { api } from "./client";

/** OptionPair is one site-wide option as the server lists it; every value is a string. */
export interface OptionPair {
  key: string;
  value: string;
}

/** SECRET_OPTION_KEYS are never sent by the server; the console shows them empty and sends them only when filled. */
export const SECRET_OPTION_KEYS: readonly string[] = [
  "SMTPToken",
  "WorkerValidKey",
  "EpayKey",
  "GitHubClientSecret",
  "LinuxDOClientSecret",
  "WeChatServerToken",
  "TelegramBotToken",
  "TurnstileSecretKey",
];

/** listOptions reads every non-secret option (root only) as a key → value map. */
export async function listOptions(silent = false): Promise<Record<string, string>> {
  const list = (await api.get<OptionPair[]>("/api/option/", { silent })).data ?? [];
  const out: Record<string, string> = {};
  for (const { key, value } of list) out[key] = value ?? "";
  return out;
}

/** updateOption stores one option; the server validates it and refuses bad values or missing prerequisites with a message. */
export async function updateOption(key: string, value: string): Promise<string> {
  return (await api.put<unknown>("/api/option/", { key, value })).message;
}

/** resetModelRatio puts ModelRatio back to the built-in defaults. */
export async function resetModelRatio(): Promise<string> {
  return (await api.post<unknown>("/api/option/rest_model_ratio")).message;
}

/** clearLogsBefore deletes every log entry created before the Unix time (seconds) and returns how many went. */
export async function clearLogsBefore(timestamp: number): Promise<number> {
  return Number((await api.del<number>("/api/log/", { query: { target_timestamp: timestamp } })).data ?? 0);
}
