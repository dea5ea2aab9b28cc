import { signal } from "@preact/signals-react";
import { fetchNotice } from "../api/status";

/** notice is the site notice text (Markdown or HTML); empty when none is set. */
export const notice = signal<string>("");

/** loadNotice fetches the notice. */
export async function loadNotice(): Promise<void> {
  try {
    notice.value = await fetchNotice();
  } catch {
    /* no notice is shown when it cannot be read */
  }
}

/** setNotice replaces the notice, for live updates. */
export function setNotice(text: string): void {
  notice.value = text;
}
