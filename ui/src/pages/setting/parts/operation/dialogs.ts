import { signal } from "@preact/signals-react";

/** OperationDialog names each dialog of the operation tab. */
export type OperationDialog = "clearLogs" | "resetRatio" | "modelRow";

/** openDialog is the operation-tab dialog currently open, or null. */
export const openDialog = signal<OperationDialog | null>(null);

/** clearLogsBefore is the Unix time (seconds) the clear-logs dialog asks about. */
export const clearLogsBefore = signal(0);

/** editingModel is the model the row dialog edits; null adds a new one. */
export const editingModel = signal<string | null>(null);

/** showDialog opens one dialog. */
export function showDialog(d: OperationDialog): void {
  openDialog.value = d;
}

/** askClearLogs opens the confirmation for clearing logs before a time. */
export function askClearLogs(timestamp: number): void {
  clearLogsBefore.value = timestamp;
  openDialog.value = "clearLogs";
}

/** editModelRow opens the row dialog for a model, or for a new one with null. */
export function editModelRow(model: string | null): void {
  editingModel.value = model;
  openDialog.value = "modelRow";
}

/** closeDialog closes dialog d when it is the one open (a late answer leaves alone one opened since), or whichever is open without d. */
export function closeDialog(d?: OperationDialog): void {
  if (d === undefined || openDialog.peek() === d) openDialog.value = null;
}

/** dialogProps gives a dialog its open state and close handler. */
export function dialogProps(d: OperationDialog): { open: boolean; onOpenChange: (open: boolean) => void } {
  return {
    open: openDialog.value === d,
    onOpenChange: (open) => {
      if (open) openDialog.value = d;
      else closeDialog(d);
    },
  };
}
