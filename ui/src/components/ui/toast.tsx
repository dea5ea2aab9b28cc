import { Theme } from "@radix-ui/themes";
import { Toast as ToastPrimitive } from "radix-ui";
import type { ReactNode } from "react";
import { createPortal } from "react-dom";

/** ToastProvider holds the toast region's settings. */
export const ToastProvider = ToastPrimitive.Provider;

/** ToastViewport is where toasts are stacked; label names the region for screen readers ("{hotkey}" is filled in). */
export function ToastViewport({ label }: { label: string }) {
  // Outside the root theme, whose stacking context (z-index 0) would keep the toasts under the
  // drawers and dialogs, which open in layers of their own.
  return createPortal(
    <Theme asChild>
      <ToastPrimitive.Viewport className="toast-viewport" label={label} />
    </Theme>,
    document.body,
  );
}

/** ToastProps configure one toast. */
export interface ToastProps {
  kind: "success" | "error" | "info" | "warning";
  duration: number;
  onClose: () => void;
  children: ReactNode;
  closeLabel: string;
}

/** Toast is one transient message over the Radix toast primitive. */
export function Toast({ kind, duration, onClose, children, closeLabel }: ToastProps) {
  return (
    <ToastPrimitive.Root
      className={`toast toast-${kind}`}
      duration={duration}
      type={kind === "error" || kind === "warning" ? "foreground" : "background"}
      defaultOpen
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
      data-kind={kind}
    >
      <ToastPrimitive.Description className="toast-text">{children}</ToastPrimitive.Description>
      <ToastPrimitive.Close className="toast-close" aria-label={closeLabel}>
        ×
      </ToastPrimitive.Close>
    </ToastPrimitive.Root>
  );
}
