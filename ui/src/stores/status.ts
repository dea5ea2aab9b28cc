import { computed, signal } from "@preact/signals-react";
import { ApiError } from "../api/client";
import { fetchStatus } from "../api/status";
import type { Status } from "../api/types";
import { t } from "../i18n";
import { DEFAULT_QUOTA_PER_UNIT, formatQuota } from "../lib/quota";
import { readJSON, writeJSON, writeString } from "../lib/storage";
import { applyDefaultCollapse } from "./sidebar";
import { toast } from "./toast";

/** status is the public status object, cached in localStorage under "status". */
export const status = signal<Status>(readJSON<Status>("status", {}));

/** statusLoaded turns true once the server answered this page load. */
export const statusLoaded = signal(false);

/** systemName is the configured site name. */
export const systemName = computed(() => status.value.system_name || "New API");

/** LOCAL_DEFAULT_ADDRESS is the server address the gateway reports while none is configured. */
const LOCAL_DEFAULT_ADDRESS = "http://localhost:3000";

/**
 * serverAddress is where clients reach the gateway, without a trailing "/": the
 * configured ServerAddress, else the origin this page came from (the server
 * reports its local default until an address is saved, which is wrong for any
 * other host or port).
 */
export const serverAddress = computed(() => {
  const configured = status.value.server_address;
  const address = configured && configured !== LOCAL_DEFAULT_ADDRESS ? configured : window.location.origin;
  return address.replace(/\/+$/, "");
});

/** quotaPerUnit is how many quota units make one dollar. */
export const quotaPerUnit = computed(() => {
  const v = Number(status.value.quota_per_unit);
  return v > 0 ? v : DEFAULT_QUOTA_PER_UNIT;
});

/** displayInCurrency selects dollar display for quota. */
export const displayInCurrency = computed(() => status.value.display_in_currency !== false);

/** renderQuota formats a quota amount by the site's display rule. */
export function renderQuota(quota: number, digits = 2): string {
  return formatQuota(quota, { inCurrency: displayInCurrency.value, quotaPerUnit: quotaPerUnit.value }, digits);
}

/**
 * renderSpent writes a total spend as renderQuota does, except that a spend two decimals would show
 * as $0.00 (a few cheap calls) keeps six, as a log row writes a call's: it does not read as free.
 */
export function renderSpent(quota: number): string {
  const text = renderQuota(quota);
  return quota !== 0 && !/[1-9]/.test(text) ? renderQuota(quota, 6) : text;
}

const INDIVIDUAL_KEYS = [
  "system_name",
  "logo",
  "footer_html",
  "chat_link",
  "chat_link2",
  "enable_data_export",
  "enable_drawing",
  "enable_task",
  "mj_notify_enabled",
  "default_collapse_sidebar",
  "quota_per_unit",
  "display_in_currency",
] as const;

function persist(s: Status): void {
  writeJSON("status", s);
  for (const key of INDIVIDUAL_KEYS) {
    const v = s[key];
    writeString(key, v === undefined || v === null ? null : String(v));
  }
  writeString("chats", s.chats === undefined ? null : JSON.stringify(s.chats));
}

function applyDocument(s: Status): void {
  // A cleared name falls back to the default, as the top bar shows it.
  document.title = s.system_name || "New API";
  const icon = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
  if (icon && s.logo) icon.href = s.logo;
}

/** statusReads counts the status reads started, so that only the latest one's answer is shown. */
let statusReads = 0;

/**
 * loadStatus fetches the status object, stores it and applies title and
 * icon. quiet (a refresh pushed by the server) says nothing when it fails:
 * the status already shown stays.
 */
export async function loadStatus(quiet = false): Promise<void> {
  const read = ++statusReads;
  try {
    const s = await fetchStatus();
    // An answer overtaken by a later read may predate a change that one shows.
    if (read !== statusReads) return;
    status.value = s;
    persist(s);
    applyDocument(s);
    applyDefaultCollapse(s.default_collapse_sidebar === true);
    // Only an answer counts: after a failed read the kept copy (its chat links) is not the server's.
    statusLoaded.value = true;
  } catch (err) {
    // A refusal for too many requests has said so already; the server is reachable.
    const limited = err instanceof ApiError && err.status === 429;
    if (!quiet && !limited) toast.error(t("error.cannotConnect"));
  }
}

applyDocument(status.value);
