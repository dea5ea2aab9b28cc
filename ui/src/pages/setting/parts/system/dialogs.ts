import { signal } from "@preact/signals-react";

/** SystemDialog names each dialog of the system tab. */
export type SystemDialog = "disablePasswordLogin";

/** openDialog is the system-tab dialog currently open, or null. */
export const openDialog = signal<SystemDialog | null>(null);

/** showDialog opens one dialog. */
export function showDialog(d: SystemDialog): void {
  openDialog.value = d;
}

/** closeDialog closes whichever dialog is open. */
export function closeDialog(): void {
  openDialog.value = null;
}

/** dialogProps gives a dialog its open state and close handler. */
export function dialogProps(d: SystemDialog): { open: boolean; onOpenChange: (open: boolean) => void } {
  return {
    open: openDialog.value === d,
    onOpenChange: (open) => {
      openDialog.value = open ? d : null;
    },
  };
}
