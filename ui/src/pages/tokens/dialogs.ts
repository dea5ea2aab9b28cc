import { signal } from "@preact/signals-react";
import type { Token } from "../../api/tokens";

/** deleteTarget is the token whose deletion is being confirmed. */
export const deleteTarget = signal<Token | null>(null);

/** editorState is the drawer: closed (null), creating (id undefined) or editing a token. */
export const editorState = signal<{ id?: number } | null>(null);

/** openEditor opens the drawer for a new token or for the token with this id. */
export function openEditor(id?: number): void {
  editorState.value = { id };
}

/** closeEditor closes the drawer. */
export function closeEditor(): void {
  editorState.value = null;
}
