import { useRef } from "react";

/**
 * useReturnFocus gives an overlay opened without a Radix trigger (from a
 * table row, a menu, a signal) the focus handlers that put the keyboard back
 * where it was when the overlay opened: on the button that opened it (for an
 * item of a dropdown menu, the button that opened the menu), or, if
 * that element is gone (a deleted row, a closed menu), nowhere in particular
 * as before.
 */
export function useReturnFocus() {
  const returnTo = useRef<HTMLElement | null>(null);
  return {
    onOpenAutoFocus: () => {
      // Runs before the overlay moves the focus inside it.
      let el = document.activeElement;
      // Opened from a menu's item: the item goes with the menu, so the keyboard goes back to the button that opened the menu.
      const menu = el instanceof HTMLElement ? el.closest<HTMLElement>('[role="menu"]') : null;
      if (menu?.id) el = document.querySelector(`[aria-controls="${CSS.escape(menu.id)}"]`) ?? el;
      returnTo.current = el instanceof HTMLElement && el !== document.body ? el : null;
    },
    onCloseAutoFocus: (e: Event) => {
      const el = returnTo.current;
      returnTo.current = null;
      if (el?.isConnected) {
        e.preventDefault();
        el.focus({ preventScroll: true });
      }
    },
  };
}
