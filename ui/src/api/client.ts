import { t } from "../i18n";
import { serverText } from "../i18n/server";
import { toast } from "../stores/toast";

/** Envelope is the shape of every /api answer. */
export interface Envelope<T> {
  success: boolean;
  message: string;
  data: T;
}

/** ApiResult is a successful answer: its data, its message and the parsed body. */
export interface ApiResult<T> {
  data: T;
  message: string;
  raw: unknown;
}

/** ApiError is thrown for every failed call, after the user has been told (unless silent). */
export class ApiError extends Error {
  /** status is the HTTP status, or 0 when the server could not be reached. */
  status: number;
  /** body is the parsed answer, when there was one. */
  body: unknown;
  constructor(message: string, status: number, body?: unknown) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.body = body;
  }
}

/** SessionHooks connect the client to the session store without an import cycle. */
export interface SessionHooks {
  userId: () => number | null;
  /** sessionNo numbers the logins of this tab: a call is made for the login current when it is sent. */
  sessionNo: () => number;
  /**
   * onUnauthorized ends the local session the refused call was made for (login number session of
   * the account uid), unless another login, of another account or the same, happened while it was
   * on its way; quiet skips the redirect to the login page.
   */
  onUnauthorized: (quiet: boolean, uid: number, session: number) => void;
}

let hooks: SessionHooks = { userId: () => null, sessionNo: () => 0, onUnauthorized: () => {} };

/** setSessionHooks installs how the client reads the user id and ends an expired session. */
export function setSessionHooks(h: SessionHooks): void {
  hooks = h;
}

/** Query holds URL query parameters; undefined values are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** RequestOptions tune one call. */
export interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** silent suppresses toasts (the 401 redirect still happens). */
  silent?: boolean;
  /** anonymous sends no user header and treats a 401 as an ordinary error (login, register). */
  anonymous?: boolean;
  /** quietExpiry forgets an expired session without redirecting; route guards still apply. */
  quietExpiry?: boolean;
  /**
   * cooldownMessage shows the server's own text for a 429 (a mail code's "请 N 秒后再试"); other
   * calls show the catalogue's rate-limit message.
   */
  cooldownMessage?: boolean;
  signal?: AbortSignal;
}

function buildUrl(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined) params.set(k, String(v));
  }
  const qs = params.toString();
  if (!qs) return path;
  return path + (path.includes("?") ? "&" : "?") + qs;
}

function isEnvelope(v: unknown): v is Envelope<unknown> {
  return typeof v === "object" && v !== null && ("success" in v || "message" in v);
}

/**
 * fail tells the user (unless silent) and throws. The ApiError keeps the
 * message as it came (code compares the server's texts); the toast shows a
 * server text in the console's language (the console's own texts pass
 * through serverText unchanged).
 */
function fail(message: string, status: number, body: unknown, silent: boolean, kind: "error" | "info" = "error"): never {
  if (!silent && message) toast[kind](serverText(message));
  throw new ApiError(message, status, body);
}

/** request performs one /api call: the only place in the console that calls fetch. */
export async function request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResult<T>> {
  const silent = opts.silent ?? false;
  const headers: Record<string, string> = { Accept: "application/json" };
  const uid = opts.anonymous ? null : hooks.userId();
  const session = hooks.sessionNo();
  if (uid !== null && uid !== undefined) headers["New-Api-User"] = String(uid);
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(opts.body);
  }

  let res: Response;
  try {
    res = await fetch(buildUrl(path, opts.query), {
      method,
      headers,
      body,
      credentials: "same-origin",
      signal: opts.signal,
    });
  } catch (err) {
    if ((err as Error)?.name === "AbortError") throw new ApiError("aborted", 0);
    return fail(t("error.network"), 0, undefined, silent);
  }

  const text = await res.text().catch(() => "");
  let parsed: unknown = undefined;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  const env = isEnvelope(parsed) ? parsed : undefined;
  const serverMessage = typeof env?.message === "string" ? env.message : "";

  if (res.status === 401 && uid !== null && uid !== undefined) {
    hooks.onUnauthorized(opts.quietExpiry ?? false, uid, session);
    throw new ApiError(serverMessage || t("error.expired"), 401, parsed);
  }
  if (res.status === 401) return fail(serverMessage || t("error.expired"), 401, parsed, silent);
  // A mail cooldown tells its wait (Retry-After) and says it; a rate limit's refusal reads as A §8 says.
  const cooldown = opts.cooldownMessage && res.headers.has("Retry-After") && serverMessage;
  if (res.status === 429) return fail(cooldown || t("error.tooManyRequests"), 429, parsed, silent);
  // A 500 is the server's own failure (A §8); other 5xx answers (a mail server or a provider that
  // failed, a feature that is not available) carry a reason the user needs.
  if (res.status === 500 || (res.status > 500 && !serverMessage)) return fail(t("error.serverInternal"), res.status, parsed, silent);
  if (res.status > 500) return fail(t("error.withMessage", { message: serverText(serverMessage) }), res.status, parsed, silent);
  if (res.status === 405) return fail(t("error.demoSite"), 405, parsed, silent, "info");
  if (!res.ok) {
    return fail(serverMessage || t("error.withMessage", { message: res.statusText || String(res.status) }), res.status, parsed, silent);
  }
  if (parsed === undefined) return fail(t("error.badAnswer"), res.status, undefined, silent);
  if (env && env.success === false) return fail(serverMessage || t("error.unknown"), res.status, parsed, silent);
  return { data: (env ? env.data : parsed) as T, message: serverMessage, raw: parsed };
}

/** api offers one helper per HTTP method. */
export const api = {
  get: <T = unknown>(path: string, opts?: RequestOptions) => request<T>("GET", path, opts),
  post: <T = unknown>(path: string, body?: unknown, opts?: RequestOptions) => request<T>("POST", path, { ...opts, body }),
  put: <T = unknown>(path: string, body?: unknown, opts?: RequestOptions) => request<T>("PUT", path, { ...opts, body }),
  del: <T = unknown>(path: string, opts?: RequestOptions) => request<T>("DELETE", path, opts),
};

/** handleError reports an unexpected (non-API) error as a toast; ApiErrors were already shown. */
export function handleError(err: unknown): void {
  if (err instanceof ApiError) return;
  const message = err instanceof Error ? err.message : String(err);
  toast.error(t("error.withMessage", { message }));
}
