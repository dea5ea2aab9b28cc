import { signal } from "@preact/signals-react";
import { onUserChange } from "./user";

/** manualCopy holds text the browser refused to copy; a dialog shows it for manual copying. */
export const manualCopy = signal<string | null>(null);

/** copyText copies to the clipboard; on failure it opens the manual-copy dialog and returns false. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (!navigator.clipboard?.writeText) throw new Error("clipboard unavailable");
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    manualCopy.value = text;
    return false;
  }
}

/** closeManualCopy hides the manual-copy dialog. */
export function closeManualCopy(): void {
  manualCopy.value = null;
}

// What waits to be copied (a token key, an access token) is the account's: a logout, an ended
// session or another login closes the dialog, so the next person at the browser never finds it.
onUserChange(closeManualCopy);
