import { signal } from "@preact/signals-react";
import { handleError } from "../api/client";
import * as redemptionsApi from "../api/redemptions";
import { REDEMPTIONS_SERVER_PAGE, type Redemption } from "../api/redemptions";
import { t } from "../i18n";
import { createAccumulatedPages } from "../lib/accumulated-pages";
import { copyText } from "./clipboard";
import { toast } from "./toast";

/** redemptionsList pages through the codes; the server sends 10 per page and no total. */
export const redemptionsList = createAccumulatedPages<Redemption>(redemptionsApi.listRedemptions, REDEMPTIONS_SERVER_PAGE, 10);

/** redemptionKeyword is the search text (an id or a name prefix). */
export const redemptionKeyword = signal("");

/** selectedRedemptions holds the ids ticked for "copy selected". */
export const selectedRedemptions = signal<Set<string | number>>(new Set());

/** RedemptionsDialog names the drawers and dialogs of the page. */
export type RedemptionsDialog =
  | { kind: "add" }
  | { kind: "edit"; id: number }
  | { kind: "delete"; row: Redemption }
  | { kind: "download"; name: string; keys: string[] }
  | null;

/** redemptionsDialog is the open drawer or dialog. */
export const redemptionsDialog = signal<RedemptionsDialog>(null);

/** shownSearch is the keyword whose result the list shows; "" while it lists every code. */
let shownSearch = "";

/** loadRedemptions shows the first page, or the current one when keepPage is set. */
export async function loadRedemptions(keepPage = false): Promise<void> {
  shownSearch = "";
  try {
    await redemptionsList.reload(keepPage);
  } catch (err) {
    handleError(err);
  }
}

async function showSearch(keyword: string): Promise<void> {
  try {
    if (await redemptionsList.search(() => redemptionsApi.searchRedemptions(keyword))) shownSearch = keyword;
  } catch (err) {
    handleError(err);
  }
}

/** searchRedemptions runs the search; an empty keyword lists every code again. */
export async function searchRedemptions(): Promise<void> {
  const keyword = redemptionKeyword.value.trim();
  selectedRedemptions.value = new Set();
  if (!keyword) {
    await loadRedemptions();
    return;
  }
  await showSearch(keyword);
}

/** refreshRedemptions reads again what the list shows: the search in force, or the current page. */
export async function refreshRedemptions(): Promise<void> {
  if (shownSearch) await showSearch(shownSearch);
  else await loadRedemptions(true);
}

/** copyRedemptionKey copies one code. */
export async function copyRedemptionKey(key: string): Promise<void> {
  if (await copyText(key)) toast.success(t("copy.done"));
}

/** copySelectedRedemptions copies "name    key" of every ticked code, one per line. */
export async function copySelectedRedemptions(): Promise<void> {
  const ids = selectedRedemptions.value;
  const rows = redemptionsList.rows.value.filter((r) => ids.has(r.id));
  if (rows.length === 0) {
    toast.error(t("redemption.selectAtLeastOne"));
    return;
  }
  const text = rows.map((r) => `${r.name}    ${r.key}`).join("\n") + "\n";
  if (await copyText(text)) toast.success(t("copy.done"));
}

/** statusChanging holds the codes with a status change in flight: a second click waits for its answer. */
export const statusChanging = signal<Set<number>>(new Set());

/** setRedemptionStatus enables or disables a code and updates its row; a refused change reads the row again. */
export async function setRedemptionStatus(row: Redemption, status: number): Promise<void> {
  if (statusChanging.value.has(row.id)) return;
  statusChanging.value = new Set(statusChanging.value).add(row.id);
  try {
    await redemptionsApi.setRedemptionStatus(row.id, status);
    toast.success(t("redemption.actionDone"));
    redemptionsList.update(
      (r) => r.id === row.id,
      (r) => ({ ...r, status }),
    );
  } catch (err) {
    handleError(err);
    // Refused because the code changed meanwhile (redeemed, deleted): the row shows what it is now.
    await refreshRedemptionRow(row.id);
  } finally {
    const next = new Set(statusChanging.value);
    next.delete(row.id);
    statusChanging.value = next;
  }
}

/**
 * refreshRedemptionRow reads one code again and updates its row in place, so that the row's
 * buttons (the edit button a closed drawer gives the keyboard back to) stay; if it cannot be
 * read, the list is read again.
 */
export async function refreshRedemptionRow(id: number): Promise<void> {
  try {
    const fresh = await redemptionsApi.getRedemption(id);
    redemptionsList.update(
      (r) => r.id === id,
      (r) => ({ ...r, ...fresh }),
    );
  } catch {
    await refreshRedemptions();
  }
}

/** deleteRedemption removes a code and reloads the page it was on. */
export async function deleteRedemption(row: Redemption): Promise<boolean> {
  try {
    await redemptionsApi.deleteRedemption(row.id);
    toast.success(t("redemption.actionDone"));
    const next = new Set(selectedRedemptions.value);
    next.delete(row.id);
    selectedRedemptions.value = next;
    await refreshRedemptions();
    return true;
  } catch (err) {
    handleError(err);
    return false;
  }
}

/** downloadCodes saves the codes, one per line, as "<name>.txt". */
export function downloadCodes(name: string, keys: string[]): void {
  const blob = new Blob([keys.map((k) => k + "\n").join("")], { type: "text/plain;charset=utf-8" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = `${name}.txt`;
  a.style.display = "none";
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
