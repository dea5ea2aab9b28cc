import { t } from "../i18n";
import { api } from "./client";

/** ChatRole is who wrote a chat message. */
export type ChatRole = "system" | "user" | "assistant";

/** ChatTurn is one message as the model receives it. */
export interface ChatTurn {
  role: ChatRole;
  content: string;
}

/** PlaygroundRequest is the body of POST /pg/chat/completions (always streamed). */
export interface PlaygroundRequest {
  messages: ChatTurn[];
  model: string;
  group: string;
  temperature: number;
  /** max_tokens is left out when 0, which means no limit. */
  max_tokens?: number;
}

/** GroupOption is a group the caller may use and its label. */
export interface GroupOption {
  value: string;
  label: string;
}

/** StreamError is a failed playground call: the HTTP status (0 without one) and the reason shown. */
export class StreamError extends Error {
  status: number;
  constructor(message: string, status: number) {
    super(message);
    this.name = "StreamError";
    this.status = status;
  }
}

/** userModels lists the model names the caller's group, or another group the caller may use, offers; a failure is told. */
export async function userModels(group = ""): Promise<string[]> {
  const data = (await api.get<string[]>("/api/user/models", { query: group ? { group } : undefined })).data;
  return Array.isArray(data) ? data.filter((m) => typeof m === "string") : [];
}

/** selfGroups lists the groups the caller may use (a label is a string or an object with desc); a failure is told. */
export async function selfGroups(): Promise<GroupOption[]> {
  const data = (await api.get<Record<string, unknown>>("/api/user/self/groups")).data ?? {};
  return Object.entries(data).map(([value, info]) => {
    let label = value;
    if (typeof info === "string" && info) label = info;
    else if (info && typeof info === "object" && typeof (info as { desc?: unknown }).desc === "string") label = (info as { desc: string }).desc || value;
    return { value, label };
  });
}

/** enabledTokenKeys returns the keys (without "sk-") of the caller's enabled tokens, from the first 100. */
export async function enabledTokenKeys(): Promise<string[]> {
  const data = (await api.get<{ key: string; status: number }[]>("/api/token/", { query: { p: 0, size: 100 } })).data;
  return (Array.isArray(data) ? data : []).filter((t) => t.status === 1 && t.key).map((t) => t.key);
}

function errorText(body: string, status: number): string {
  try {
    const j = JSON.parse(body) as { error?: { message?: string }; message?: string };
    if (j?.error?.message) return j.error.message;
    if (j?.message) return j.message;
  } catch {
    /* not JSON */
  }
  // Not the gateway's answer (a reverse proxy's HTML error page, say): told in the console's words, as its other calls do.
  if (status >= 500) return t("error.serverInternal");
  if (status >= 400) return t("error.withMessage", { message: `HTTP ${status}` });
  return t("error.badAnswer");
}

/**
 * streamChat posts a playground request and calls onDelta with each piece of
 * content until the stream ends with [DONE] (or closes). It throws a
 * StreamError on an HTTP failure or an error event inside the stream.
 *
 * It calls fetch itself, unlike every other call, because the envelope client
 * reads whole bodies while this answer is a server-sent event stream.
 */
export async function streamChat(req: PlaygroundRequest, userId: number | null, onDelta: (text: string) => void, signal?: AbortSignal): Promise<void> {
  const headers: Record<string, string> = { "Content-Type": "application/json", Accept: "text/event-stream" };
  if (userId !== null) headers["New-Api-User"] = String(userId);
  let res: Response;
  try {
    res = await fetch("/pg/chat/completions", { method: "POST", headers, credentials: "same-origin", body: JSON.stringify({ ...req, stream: true }), signal });
  } catch (err) {
    if ((err as Error)?.name === "AbortError") return;
    // The browser's own words for it ("Failed to fetch") are English in every console: say it as the console's other calls do.
    throw new StreamError(t("error.network"), 0);
  }
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => "");
    throw new StreamError(errorText(text, res.status), res.status);
  }
  if ((res.headers.get("Content-Type") ?? "").includes("application/json")) {
    // An upstream that ignored stream: true answers with one whole completion.
    const text = await res.text();
    let whole: { choices?: { message?: { content?: string } }[]; error?: { message?: string } } = {};
    try {
      whole = JSON.parse(text);
    } catch {
      throw new StreamError(errorText(text, res.status), res.status);
    }
    if (whole.error) throw new StreamError(whole.error.message || text, res.status);
    const content = whole.choices?.[0]?.message?.content;
    if (content) onDelta(content);
    return;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  // An event's data may span several data lines, which SSE joins with a
  // newline; the event ends at a blank line.
  let data: string[] = [];
  const dispatch = (): boolean => {
    if (data.length === 0) return false;
    const payload = data.join("\n").trim();
    data = [];
    if (!payload) return false;
    if (payload === "[DONE]") return true;
    let event: { choices?: { delta?: { content?: string } }[]; error?: { message?: string } };
    try {
      event = JSON.parse(payload);
    } catch {
      return false;
    }
    if (event.error) throw new StreamError(event.error.message || payload, res.status);
    if (!event.choices || event.choices.length === 0) return false;
    const text = event.choices[0]?.delta?.content;
    if (text) onDelta(text);
    return false;
  };
  const handleLine = (line: string): boolean => {
    if (line === "") return dispatch();
    if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    return false;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, "");
        buffer = buffer.slice(nl + 1);
        if (handleLine(line)) {
          await reader.cancel().catch(() => {});
          return;
        }
      }
    }
    if (buffer) handleLine(buffer.replace(/\r$/, ""));
    if (dispatch()) return;
    // The body ended without [DONE]: the reply was cut off (an upstream that stopped, a charge that failed).
    throw new StreamError(t("playground.cutOff"), 0);
  } catch (err) {
    if ((err as Error)?.name === "AbortError") return;
    if (err instanceof StreamError) throw err;
    // The connection broke mid-reply (the gateway restarted, the network dropped): the browser's
    // own words for it ("network error") are English in every console, and the reply is cut off.
    throw new StreamError(t("playground.cutOff"), 0);
  }
}
