import { signal } from "@preact/signals-react";

/** PersonalDialog names each dialog of the personal tab. */
export type PersonalDialog = "profile" | "transfer" | "email" | "wechat" | "delete";

/** openDialog is the personal-tab dialog currently open, or null. */
export const openDialog = signal<PersonalDialog | null>(null);

/** showDialog opens one dialog. */
export function showDialog(d: PersonalDialog): void {
  openDialog.value = d;
}

/** dialogProps gives a dialog its open state and close handler. */
export function dialogProps(d: PersonalDialog): { open: boolean; onOpenChange: (open: boolean) => void } {
  return {
    open: openDialog.value === d,
    onOpenChange: (open) => {
      // A late answer closing this dialog leaves alone another one opened since.
      if (open) openDialog.value = d;
      else if (openDialog.peek() === d) openDialog.value = null;
    },
  };
}
