import { ApiError, api, type ApiResult } from "./client";

/** PaymentMethod is the epay channel: zfb (Alipay) or wx (WeChat Pay). */
export type PaymentMethod = "zfb" | "wx";

/** PayError carries the reason the payment endpoints gave in data. */
export class PayError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PayError";
  }
}

/** redeemCode redeems a code and returns the quota it added. */
export async function redeemCode(key: string): Promise<number> {
  return Number((await api.post<number>("/api/user/topup", { key })).data) || 0;
}

interface PayAnswer {
  message?: string;
  data?: unknown;
  url?: string;
}

function reason(body: unknown, fallback: string): string {
  const b = body as PayAnswer | undefined;
  if (b && typeof b.data === "string" && b.data) return b.data;
  if (b && typeof b.message === "string" && b.message && b.message !== "error") return b.message;
  return fallback;
}

/** RequestFailed is a payment call that got no answer from the payment endpoints (the server unreachable or failing). */
export class RequestFailed extends Error {
  constructor() {
    super("request failed");
    this.name = "RequestFailed";
  }
}

// The payment endpoints answer {message: "success"|"error", data, url} without
// a success key, so the outcome is read from message; calls are silent and the
// caller shows data, which holds the reason on failure.
async function payCall(path: string, body: unknown): Promise<ApiResult<unknown>> {
  let r: ApiResult<unknown>;
  try {
    r = await api.post<unknown>(path, body, { silent: true });
  } catch (err) {
    if (err instanceof ApiError && (err.status === 0 || err.status >= 500)) throw new RequestFailed();
    if (err instanceof ApiError) throw new PayError(reason(err.body, err.message));
    throw err;
  }
  if (r.message !== "success") throw new PayError(reason(r.raw, r.message || "error"));
  return r;
}

/** payableMoney asks what the amount costs; the answer has two decimals. */
export async function payableMoney(amount: number, topUpCode = ""): Promise<number> {
  const r = await payCall("/api/user/amount", { amount, top_up_code: topUpCode });
  return Number.parseFloat(String(r.data)) || 0;
}

/** PayOrder is where to post the payment form and its fields. */
export interface PayOrder {
  url: string;
  fields: Record<string, string>;
}

/** startPayment opens an order and returns the form the browser must post to the payment provider. */
export async function startPayment(amount: number, method: PaymentMethod, topUpCode = ""): Promise<PayOrder> {
  const r = await payCall("/api/user/pay", { amount, top_up_code: topUpCode, payment_method: method });
  const raw = r.raw as PayAnswer;
  const fields: Record<string, string> = {};
  if (r.data && typeof r.data === "object") {
    for (const [k, v] of Object.entries(r.data as Record<string, unknown>)) fields[k] = v === null || v === undefined ? "" : String(v);
  }
  if (!raw.url) throw new PayError("missing payment url");
  return { url: raw.url, fields };
}

/** TopUpOrder is one online top-up order as the admin list shows it. */
export interface TopUpOrder {
  id: number;
  user_id: number;
  amount: number;
  quota: number;
  money: number;
  trade_no: string;
  payment_method: string;
  create_time: number;
  complete_time: number;
  status: string;
}

/** TOPUP_ORDERS_PAGE_SIZE is the server's fixed page of the order list. */
export const TOPUP_ORDERS_PAGE_SIZE = 10;

/** listTopUpOrders reads one page (0-based) of every user's orders, newest first (admin). */
export async function listTopUpOrders(page: number): Promise<TopUpOrder[]> {
  const r = await api.get<TopUpOrder[]>("/api/topup/", { query: { p: page } });
  return Array.isArray(r.data) ? r.data : [];
}
