import { signal } from "@preact/signals-react";
import { readBool, writeString } from "../lib/storage";

/** SIDEBAR_KEY is the localStorage key holding the visitor's own collapse choice. */
export const SIDEBAR_KEY = "sidebar_collapsed";

/** MOBILE_QUERY matches narrow screens, where the sidebar starts collapsed. */
export const MOBILE_QUERY = "(max-width: 768px)";

/** isMobile reports whether the screen is narrow. */
export function isMobile(): boolean {
  return window.matchMedia?.(MOBILE_QUERY).matches ?? false;
}

/** wideChoice is the state on a wide screen: the visitor's own choice, else the site's default. */
function wideChoice(): boolean {
  const own = readBool(SIDEBAR_KEY);
  if (own !== null) return own;
  return readBool("default_collapse_sidebar") ?? false;
}

function initial(): boolean {
  return isMobile() ? true : wideChoice();
}

/** sidebarCollapsed is true when only icons (or, on mobile, nothing) are shown. */
export const sidebarCollapsed = signal<boolean>(initial());

// A screen that becomes narrow (a tablet turned to portrait, a window made
// small) folds the sidebar away, as on a phone; wide again, it follows the
// visitor's choice.
window.matchMedia?.(MOBILE_QUERY).addEventListener?.("change", (ev) => {
  sidebarCollapsed.value = ev.matches ? true : wideChoice();
});

/** setSidebarCollapsed changes the state; on wide screens the choice is persisted. */
export function setSidebarCollapsed(collapsed: boolean): void {
  sidebarCollapsed.value = collapsed;
  if (!isMobile()) writeString(SIDEBAR_KEY, String(collapsed));
}

/** toggleSidebar flips the collapse state. */
export function toggleSidebar(): void {
  setSidebarCollapsed(!sidebarCollapsed.value);
}

/** applyDefaultCollapse follows the site's default once the status is known, unless the visitor chose. */
export function applyDefaultCollapse(collapsedByDefault: boolean): void {
  if (isMobile() || readBool(SIDEBAR_KEY) !== null) return;
  sidebarCollapsed.value = collapsedByDefault;
}
