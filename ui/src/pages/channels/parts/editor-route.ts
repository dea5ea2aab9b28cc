import { useEffect } from "react";
import { useRoute } from "wouter";
import { CHANNEL_ADD_PATH, CHANNEL_EDIT_PATH, showEditor } from "../dialogs";

/** useEditorRoute opens and closes the drawer as the address moves between /channel, /channel/add and /channel/edit/{id}. */
export function useEditorRoute(): void {
  const [adding] = useRoute(CHANNEL_ADD_PATH);
  const [, edit] = useRoute<{ id: string }>(CHANNEL_EDIT_PATH);
  const editId = edit?.id ?? null;
  useEffect(() => {
    void showEditor(adding ? "add" : editId !== null ? { id: editId } : null);
  }, [adding, editId]);
}
