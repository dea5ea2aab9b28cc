import { signal } from "@preact/signals-react";
import { selfGroups, StreamError, streamChat, userModels, type ChatTurn, type GroupOption } from "../api/playground";
import { t } from "../i18n";
import { serverText } from "../i18n/server";
import { toast } from "./toast";
import { expireIfCurrent, onUserChange, sessionMark, user } from "./user";

/** DEFAULT_MODEL is chosen when the model list offers it. */
export const DEFAULT_MODEL = "gpt-4o-mini";
/** DEFAULT_SYSTEM_PROMPT starts every conversation. */
export const DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant.";
/** TEMPERATURE_MIN, TEMPERATURE_MAX and TEMPERATURE_STEP bound the slider; the value itself starts at 0. */
export const TEMPERATURE_MIN = 0.1;
export const TEMPERATURE_MAX = 1;
export const TEMPERATURE_STEP = 0.1;

/** MessageStatus follows a reply: loading, then incomplete while streaming, then complete or error. */
export type MessageStatus = "loading" | "incomplete" | "complete" | "error";

/** PlaygroundMessage is one bubble of the conversation. */
export interface PlaygroundMessage {
  id: number;
  role: "user" | "assistant";
  content: string;
  status: MessageStatus;
  /** stopped marks a reply the user stopped before it was complete. */
  stopped?: boolean;
}

/** PlaygroundSettings are the side-panel inputs. */
export interface PlaygroundSettings {
  group: string;
  model: string;
  temperature: number;
  maxTokens: number;
  systemPrompt: string;
}

function defaultSettings(): PlaygroundSettings {
  // No model until the list tells which are offered (DEFAULT_MODEL is then chosen when it is):
  // a model shown before would be one the list may not have.
  return { group: "", model: "", temperature: 0, maxTokens: 0, systemPrompt: DEFAULT_SYSTEM_PROMPT };
}

/** settings holds the side panel; kept for the page visit and across visits in this tab, for one account. */
export const settings = signal<PlaygroundSettings>(defaultSettings());

/** models and groupOptions fill the side-panel selects. */
export const models = signal<string[]>([]);
export const groupOptions = signal<GroupOption[]>([]);

/** noModels is true when the chosen group's list came back empty: no channel serves it yet. */
export const noModels = signal(false);

/** messages is the conversation. */
export const messages = signal<PlaygroundMessage[]>([]);

/** streaming is true while a reply is being received. */
export const streaming = signal(false);

let nextId = 1;
let controller: AbortController | null = null;

/** updateSettings changes side-panel inputs. */
export function updateSettings(patch: Partial<PlaygroundSettings>): void {
  settings.value = { ...settings.value, ...patch };
}

/** loadOptions reads the groups the user may pick and the models of the chosen one, keeping choices that are still offered. */
export async function loadOptions(): Promise<void> {
  const group = settings.value.group;
  const [listed, gs] = await Promise.all([userModels(group).catch(() => null), selfGroups().catch(() => [] as GroupOption[])]);
  // The user's own group comes first, as the default choice.
  const own = user.value?.group;
  const sorted = own ? [...gs.filter((g) => g.value === own), ...gs.filter((g) => g.value !== own)] : gs;
  groupOptions.value = sorted;
  // A group chosen meanwhile lists its own models: these are another group's.
  if (settings.value.group !== group) return;
  const ms = listed ?? [];
  models.value = ms;
  noModels.value = listed !== null && ms.length === 0;
  const s = settings.value;
  const patch: Partial<PlaygroundSettings> = {};
  if (sorted.length > 0 && !sorted.some((g) => g.value === s.group)) {
    // The group the models were listed for is not offered: list the chosen group's instead.
    await chooseGroup(sorted[0].value);
    return;
  }
  // No list (its failure was told): no model is offered as if it were usable.
  if (listed === null) patch.model = "";
  else if (!ms.includes(s.model)) patch.model = ms.includes(DEFAULT_MODEL) ? DEFAULT_MODEL : (ms[0] ?? "");
  if (Object.keys(patch).length > 0) updateSettings(patch);
}

/**
 * chooseGroup switches the group the playground bills and lists that group's
 * models; a model the group does not offer is dropped (none is chosen when
 * the group offers none).
 */
export async function chooseGroup(group: string): Promise<void> {
  updateSettings({ group });
  const ms = await userModels(group).catch(() => null);
  if (settings.value.group !== group) return; // a newer choice overtook this one
  if (ms === null) {
    models.value = [];
    noModels.value = false;
    updateSettings({ model: "" });
    return;
  }
  models.value = ms;
  noModels.value = ms.length === 0;
  if (!ms.includes(settings.value.model)) updateSettings({ model: ms.includes(DEFAULT_MODEL) ? DEFAULT_MODEL : (ms[0] ?? "") });
}

function patchLast(fn: (m: PlaygroundMessage) => PlaygroundMessage): void {
  const list = messages.value;
  const last = list[list.length - 1];
  if (!last || last.role !== "assistant") return;
  messages.value = [...list.slice(0, -1), fn(last)];
}

function finish(status: "complete" | "error", extra = ""): void {
  patchLast((m) => {
    if (m.status === "complete" || m.status === "error") return m;
    return { ...m, status, content: extra ? (m.content ? `${m.content}\n\n${extra}` : extra) : m.content };
  });
}

/** stopped ends a reply the user stopped: one with nothing yet is taken away, another stays incomplete. */
function stopped(): void {
  const list = messages.value;
  const last = list[list.length - 1];
  if (!last || last.role !== "assistant" || last.status === "complete" || last.status === "error") return;
  messages.value = last.content ? [...list.slice(0, -1), { ...last, status: "incomplete", stopped: true }] : list.slice(0, -1);
}

/**
 * history is what the model receives: the system prompt and every finished turn. A message whose
 * reply failed goes with it: one refused (a sensitive word, a prompt too long) would otherwise be
 * sent again with every later message, and refused again.
 */
function history(): ChatTurn[] {
  const turns: ChatTurn[] = [];
  const prompt = settings.value.systemPrompt.trim();
  if (prompt) turns.push({ role: "system", content: prompt });
  const list = messages.value;
  list.forEach((m, i) => {
    if (m.status === "error" || m.status === "loading" || !m.content) return;
    const reply = list[i + 1];
    if (m.role === "user" && reply?.role === "assistant" && reply.status === "error") return;
    turns.push({ role: m.role, content: m.content });
  });
  return turns;
}

/**
 * send adds the user's message and streams the reply into a new assistant
 * message. It answers whether the message was taken: one refused (no model
 * chosen, a reply still coming) stays with the caller, to send again.
 */
export function send(text: string): boolean {
  const content = text.trim();
  if (!content || streaming.value) return false;
  if (!settings.value.model) {
    toast.error(t(noModels.value ? "playground.noModels" : "playground.modelPlaceholder"));
    return false;
  }
  messages.value = [...messages.value, { id: nextId++, role: "user", content, status: "complete" }];
  const turns = history();
  messages.value = [...messages.value, { id: nextId++, role: "assistant", content: "", status: "loading" }];
  const s = settings.value;
  const ctl = new AbortController();
  controller = ctl;
  streaming.value = true;
  void receive(turns, s, ctl);
  return true;
}

/** receive streams the reply to turns into the last (assistant) message. */
async function receive(turns: ChatTurn[], s: PlaygroundSettings, ctl: AbortController): Promise<void> {
  const mark = sessionMark();
  try {
    await streamChat(
      {
        messages: turns,
        model: s.model,
        group: s.group,
        temperature: s.temperature,
        ...(s.maxTokens > 0 ? { max_tokens: Math.floor(s.maxTokens) } : {}),
      },
      user.value?.id ?? null,
      (delta) => patchLast((m) => ({ ...m, content: m.content + delta, status: "incomplete" })),
      ctl.signal,
    );
    if (ctl.signal.aborted) stopped();
    else finish("complete");
  } catch (err) {
    const e = err instanceof StreamError ? err : new StreamError(String(err), 0);
    if (e.status === 401) {
      toast.error(t("error.expired"));
      finish("error", t("error.expired"));
      expireIfCurrent(mark);
    } else {
      finish("error", serverText(e.message));
    }
  } finally {
    streaming.value = false;
    controller = null;
  }
}

/** stop ends the current reply where it is. */
export function stop(): void {
  controller?.abort();
}

/** clearContext starts a new conversation. */
export function clearContext(): void {
  stop();
  messages.value = [];
}

// Another account in this tab starts afresh: the conversation is not theirs to see or to send.
onUserChange(() => {
  stop();
  messages.value = [];
  models.value = [];
  noModels.value = false;
  groupOptions.value = [];
  settings.value = defaultSettings();
});
