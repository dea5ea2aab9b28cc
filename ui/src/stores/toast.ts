import { signal } from "@preact/signals-react";

/** ToastKind selects the colour and icon of a toast. */
export type ToastKind = "success" | "error" | "info" | "warning";

/** ToastItem is one visible toast. */
export interface ToastItem {
  id: number;
  kind: ToastKind;
  text: string;
  duration: number;
}

/** toasts lists the toasts currently shown, oldest first. */
export const toasts = signal<ToastItem[]>([]);

let nextId = 1;
const MAX_TOASTS = 5;

function push(kind: ToastKind, text: string, duration: number): void {
  if (!text) return;
  const current = toasts.value;
  if (current.some((t) => t.text === text && t.kind === kind)) return;
  toasts.value = [...current, { id: nextId++, kind, text, duration }].slice(-MAX_TOASTS);
}

/** dismissToast removes one toast. */
export function dismissToast(id: number): void {
  toasts.value = toasts.value.filter((t) => t.id !== id);
}

/** toast shows a short message; errors and warnings stay longer. */
export const toast = {
  success: (text: string) => push("success", text, 3000),
  info: (text: string) => push("info", text, 4000),
  warning: (text: string) => push("warning", text, 8000),
  error: (text: string) => push("error", text, 6000),
};
