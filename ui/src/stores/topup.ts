import { computed, signal } from "@preact/signals-react";
import { handleError } from "../api/client";
import { PayError, RequestFailed, payableMoney, redeemCode, startPayment, type PaymentMethod } from "../api/topup";
import { t } from "../i18n";
import { serverText } from "../i18n/server";
import { displayInCurrency, quotaPerUnit, status } from "./status";
import { toast } from "./toast";
import { onUserChange, refreshSelf } from "./user";

/** redeemedQuota is the quota the last redemption added; a dialog shows it while set. */
export const redeemedQuota = signal<number | null>(null);

/** PendingPayment is what the confirmation dialog shows before paying. */
export interface PendingPayment {
  amount: number;
  money: number;
  method: PaymentMethod;
}

/** pendingPayment is the payment awaiting confirmation, or null. */
export const pendingPayment = signal<PendingPayment | null>(null);

/**
 * minTopUp is the smallest amount accepted: dollars when quota is shown as
 * currency, otherwise quota units (min_topup dollars' worth), a whole number
 * truncated as the server takes it: 1000 at a QuotaPerUnit of 1000.5, where
 * 1000.5 was offered and no whole amount at it could be paid.
 */
export const minTopUp = computed(() => {
  const min = Number(status.value.min_topup) > 0 ? Number(status.value.min_topup) : 1;
  return displayInCurrency.value ? min : Math.trunc(min * quotaPerUnit.value);
});

/** onlineTopUpEnabled tells whether the site configured a payment provider. */
export const onlineTopUpEnabled = computed(() => status.value.enable_online_topup === true);

/** redeem redeems a code; it resolves true when the code was accepted. */
export async function redeem(code: string): Promise<boolean> {
  const key = code.trim();
  if (!key) {
    toast.info(t("wallet.enterCode"));
    return false;
  }
  try {
    const added = await redeemCode(key);
    toast.success(t("wallet.redeemSuccess"));
    redeemedQuota.value = added;
    // The live user.self message updates the balance too; this read makes
    // sure it is right even when the socket is down.
    void refreshSelf(true).catch(() => {});
    return true;
  } catch (err) {
    handleError(err);
    return false;
  }
}

/** openTopUpLink opens the page where codes are sold. */
export function openTopUpLink(): void {
  const link = status.value.top_up_link;
  if (!link) {
    toast.error(t("wallet.noTopUpLink"));
    return;
  }
  window.open(link, "_blank", "noopener,noreferrer");
}

function payFailed(err: unknown): void {
  if (err instanceof RequestFailed) toast.error(t("wallet.requestFailed"));
  else if (err instanceof PayError) toast.error(t("error.withMessage", { message: serverText(err.message) }));
  else handleError(err);
}

/** quoteMoney asks what an amount costs; null when the server refuses it. */
export async function quoteMoney(amount: number): Promise<number | null> {
  try {
    return await payableMoney(amount);
  } catch {
    return null;
  }
}

/** preparePayment checks the amount, asks for the price and opens the confirmation. */
export async function preparePayment(amount: number, method: PaymentMethod): Promise<void> {
  if (!onlineTopUpEnabled.value) {
    toast.error(t("wallet.onlineDisabled"));
    return;
  }
  if (!Number.isFinite(amount) || amount < minTopUp.value) {
    toast.error(t("wallet.amountTooSmall", { min: minTopUp.value }));
    return;
  }
  // Orders are whole dollars or whole quota units: 2.5 is refused, not paid as 2.
  if (!Number.isInteger(amount)) {
    toast.error(t("wallet.amountWhole"));
    return;
  }
  try {
    const money = await payableMoney(amount);
    pendingPayment.value = { amount, money, method };
  } catch (err) {
    payFailed(err);
  }
}

/** submitPaymentForm posts the provider's form from a hidden form, as the provider expects a browser POST. */
export function submitPaymentForm(url: string, fields: Record<string, string>): void {
  const form = document.createElement("form");
  form.action = url;
  form.method = "POST";
  form.style.display = "none";
  const ua = navigator.userAgent;
  // Safari blocks a form opening a new window, so it pays in this tab.
  const safari = ua.includes("Safari") && !ua.includes("Chrome");
  if (!safari) form.target = "_blank";
  for (const [name, value] of Object.entries(fields)) {
    const input = document.createElement("input");
    input.type = "hidden";
    input.name = name;
    input.value = value;
    form.appendChild(input);
  }
  document.body.appendChild(form);
  form.submit();
  form.remove();
}

/** confirmPayment opens the order and hands the browser to the payment provider. */
export async function confirmPayment(): Promise<void> {
  const p = pendingPayment.value;
  if (!p) return;
  pendingPayment.value = null;
  try {
    const order = await startPayment(p.amount, p.method);
    submitPaymentForm(order.url, order.fields);
  } catch (err) {
    payFailed(err);
  }
}

onUserChange(() => {
  redeemedQuota.value = null;
  pendingPayment.value = null;
});
