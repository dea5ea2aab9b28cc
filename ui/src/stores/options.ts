import { signal } from "@preact/signals-react";
import * as optionsApi from "../api/options";
import { t } from "../i18n";
import { loadStatus } from "./status";
import { toast } from "./toast";
import { isRoot } from "./user";

/** options holds the site-wide options as the server last listed them (secrets excluded). */
export const options = signal<Record<string, string>>({});

/** optionsLoaded turns true once the options were read in this page load. */
export const optionsLoaded = signal(false);

/** OptionChange is one key to store with its new string value. */
export type OptionChange = [key: string, value: string];

/** reads counts the option list reads started, so that only the latest one's answer is shown. */
let reads = 0;

/**
 * loadOptions reads every option; failures were already reported by the client.
 * An answer that arrives after a later read was started is dropped: it may have
 * been read before a save the later one already reflects.
 */
export async function loadOptions(quiet = false): Promise<void> {
  const read = ++reads;
  try {
    const list = await optionsApi.listOptions(quiet);
    if (read !== reads) return;
    options.value = list;
    optionsLoaded.value = true;
  } catch {
    /* the client showed the error; the forms keep what they had */
  }
}

/**
 * refreshOptions reads the options again after the server said they changed (another
 * administrator, another tab), so open settings show the stored values: fields not being
 * edited follow, edited ones keep their text. Only a root console that already read them
 * asks, and quietly: the values shown stay when the read fails.
 */
export function refreshOptions(): void {
  if (optionsLoaded.value && isRoot.value) void loadOptions(true);
}

async function afterSave(saved: OptionChange[]): Promise<void> {
  if (saved.length === 0) return;
  options.value = { ...options.value, ...Object.fromEntries(saved.filter(([k]) => !optionsApi.SECRET_OPTION_KEYS.includes(k))) };
  // The server normalises values (trims, strips slashes), and the status object
  // carries the name, logo, footer and display rules the shell shows.
  await Promise.all([loadOptions(), loadStatus()]);
}

/**
 * saveOptions stores the changed keys one after another, so a prerequisite saved
 * earlier in the list is in place for the next. It tells the user the outcome
 * (nothing changed, saved, or partly failed) and returns the keys that were saved.
 */
export async function saveOptions(changes: OptionChange[]): Promise<string[]> {
  if (changes.length === 0) {
    toast.info(t("options.noChange"));
    return [];
  }
  const saved: OptionChange[] = [];
  for (const [key, value] of changes) {
    try {
      await optionsApi.updateOption(key, value);
      saved.push([key, value]);
    } catch {
      /* the server's reason was shown by the client */
    }
  }
  // Reload first, so the forms already show the stored values when the outcome is announced.
  await afterSave(saved);
  if (saved.length === changes.length) toast.success(t("options.saved"));
  else if (saved.length === 0) toast.error(t("options.saveFailed"));
  else toast.error(t("options.partialFailed"));
  return saved.map(([key]) => key);
}

/** saveOption stores one option at once (a switch); on refusal the server's message is shown and false returned. */
export async function saveOption(key: string, value: string): Promise<boolean> {
  try {
    await optionsApi.updateOption(key, value);
  } catch {
    return false;
  }
  await afterSave([[key, value]]);
  toast.success(t("options.saved"));
  return true;
}

/** resetModelRatios restores the built-in model ratios and reloads the options. */
export async function resetModelRatios(): Promise<boolean> {
  try {
    await optionsApi.resetModelRatio();
    toast.success(t("options.ratio.resetDone"));
  } catch {
    return false;
  }
  await Promise.all([loadOptions(), loadStatus()]);
  return true;
}

/** clearLogs deletes log entries older than the Unix time (seconds) and reports how many went. */
export async function clearLogs(timestamp: number): Promise<boolean> {
  try {
    const count = await optionsApi.clearLogsBefore(timestamp);
    toast.success(t("options.log.cleared", { count }));
    return true;
  } catch {
    return false;
  }
}
