import { signal } from "@preact/signals-react";
import { navigate } from "wouter/use-browser-location";
import { getChannel, type Channel } from "../../api/channels";
import { handleError } from "../../api/client";
import { channels } from "../../stores/channels";

/** ChannelConfirm names each confirmation of the channel page. */
export type ChannelConfirm = "delete" | "testAll" | "updateAll" | "deleteDisabled" | "deleteSelected" | "fix";

/** confirmState is the confirmation open now, with the row it is about. */
export const confirmState = signal<{ kind: ChannelConfirm; channel?: Channel } | null>(null);

/** askConfirm opens a confirmation. */
export function askConfirm(kind: ChannelConfirm, channel?: Channel): void {
  confirmState.value = { kind, channel };
}

/** closeConfirm closes the open confirmation. */
export function closeConfirm(): void {
  confirmState.value = null;
}

/** CHANNEL_PATH is the channel list; CHANNEL_ADD_PATH and CHANNEL_EDIT_PATH are the list with the drawer open. */
export const CHANNEL_PATH = "/channel";
export const CHANNEL_ADD_PATH = "/channel/add";
export const CHANNEL_EDIT_PATH = "/channel/edit/:id";

/** channelEditPath is the address of the edit drawer of one channel. */
export function channelEditPath(id: number): string {
  return `/channel/edit/${id}`;
}

/**
 * editorState is the drawer: closed (null), creating (id undefined) or
 * editing a channel. channel is set when the channel was read to open the
 * drawer, so the drawer need not read it again.
 */
export const editorState = signal<{ id?: number; channel?: Channel } | null>(null);

// FROM_LIST marks the history entry openEditor pushes. Closing such a drawer
// goes back to the list entry instead of pushing /channel again, so Back
// after a close does not reopen the drawer.
const FROM_LIST = "channelDrawerFromList";
// leaving is true between history.back() and its popstate, so a second close
// in that gap does not go back twice.
let leaving = false;
// showSeq drops the answer of a channel read that a newer address overtook.
let showSeq = 0;

/** openEditor opens the drawer for a new channel or for the channel with this id, by moving to its address. */
export function openEditor(id?: number): void {
  navigate(id === undefined ? CHANNEL_ADD_PATH : channelEditPath(id), { state: { [FROM_LIST]: true } });
}

/** closeEditor closes the drawer and goes back to the list's address. */
export function closeEditor(): void {
  showSeq++;
  editorState.value = null;
  if (leaving || window.location.pathname === CHANNEL_PATH) return;
  if ((history.state as Record<string, unknown> | null)?.[FROM_LIST]) {
    leaving = true;
    window.addEventListener("popstate", () => (leaving = false), { once: true });
    history.back();
    return;
  }
  navigate(CHANNEL_PATH, { replace: true });
}

/** EditorTarget is what the address asks of the drawer: nothing, the create drawer, or the channel with this id (as written in the address). */
export type EditorTarget = null | "add" | { id: string };

/**
 * showEditor makes the drawer follow the address. A channel on the
 * current page opens at once; any other is read first, and one the server
 * does not know gets the client's error toast and no drawer.
 */
export async function showEditor(target: EditorTarget): Promise<void> {
  const seq = ++showSeq;
  if (target === null) {
    editorState.value = null;
    return;
  }
  if (target === "add") {
    editorState.value = {};
    return;
  }
  // Only digits make an id; anything else becomes NaN, which the server refuses with its own message.
  const id = /^\d+$/.test(target.id) ? Number(target.id) : Number.NaN;
  if (channels.value.some((c) => c.id === id)) {
    editorState.value = { id };
    return;
  }
  editorState.value = null;
  try {
    const channel = await getChannel(id);
    if (seq === showSeq) editorState.value = { id: channel.id, channel };
  } catch (err) {
    handleError(err);
    if (seq === showSeq) closeEditor();
  }
}
