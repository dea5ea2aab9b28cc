import { signal } from "@preact/signals-react";
import type { Channel } from "../../api/channels";

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

/** editorState is the drawer: closed (null), creating (id undefined) or editing a channel. */
export const editorState = signal<{ id?: number } | null>(null);

/** openEditor opens the drawer for a new channel or for the channel with this id. */
export function openEditor(id?: number): void {
  editorState.value = { id };
}

/** closeEditor closes the drawer. */
export function closeEditor(): void {
  editorState.value = null;
}
