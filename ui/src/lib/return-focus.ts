import { useRef, type RefObject } from "react";
import { restoreFocus, rowPlace, type RowPlace } from "./keep-focus";

// openTargets holds, for each open overlay in the order they opened, where its close puts the focus.
const openTargets: RefObject<HTMLElement | null>[] = [];

/**
 * useReturnFocus gives an overlay opened without a Radix trigger (from a
 * table row, a menu, a signal) the focus handlers that put the keyboard back
 * where it was when the overlay opened: on the button that opened it (for an
 * item of a dropdown menu, the button that opened the menu), or, if
 * that element is gone: for a control of a table row, the same control of
 * that row drawn again or of the row now in its place (a deleted row), else
 * nowhere in particular as before. An overlay that opens as another closes (the download offer that
 * replaces the redemption drawer) takes over where the closing one would have
 * put the focus, as its own opener went with the closing overlay.
 */
export function useReturnFocus() {
  const returnTo = useRef<HTMLElement | null>(null);
  // Where the opener was in its table: a deleted row gives the keyboard to the row now in its place.
  const place = useRef<RowPlace | null>(null);
  return {
    onOpenAutoFocus: () => {
      // Runs before the overlay moves the focus inside it.
      let el = document.activeElement;
      // Opened from a menu's item: the item goes with the menu, so the keyboard goes back to the button that opened the menu.
      const menu = el instanceof HTMLElement ? el.closest<HTMLElement>('[role="menu"]') : null;
      if (menu?.id) el = document.querySelector(`[aria-controls="${CSS.escape(menu.id)}"]`) ?? el;
      returnTo.current = el instanceof HTMLElement && el !== document.body ? el : null;
      place.current = returnTo.current?.closest("tr[data-row-key]") ? rowPlace(returnTo.current) : null;
      if (!openTargets.includes(returnTo)) openTargets.push(returnTo);
    },
    onCloseAutoFocus: (e: Event) => {
      const el = returnTo.current;
      const row = place.current;
      returnTo.current = null;
      place.current = null;
      const at = openTargets.indexOf(returnTo);
      if (at >= 0) openTargets.splice(at, 1);
      if (el?.isConnected) {
        e.preventDefault();
        // An overlay still open whose opener is gone opened as this one closed: it gives the focus back here later.
        const next = openTargets[openTargets.length - 1];
        if (next && !next.current?.isConnected) {
          next.current = el;
          return;
        }
        el.focus({ preventScroll: true });
        return;
      }
      // The opener's row was deleted or drawn again: the same control of that row, else of the row now in its place.
      if (el && row && !openTargets.some((t) => t.current)) {
        e.preventDefault();
        void restoreFocus(row);
      }
    },
  };
}
