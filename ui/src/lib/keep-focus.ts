/** FOCUSABLE finds the controls of a table row the keyboard can land on. */
const FOCUSABLE = 'button:not(:disabled), input:not(:disabled), select:not(:disabled), textarea:not(:disabled), a[href], [tabindex]:not([tabindex="-1"])';

/** RowPlace is where a control of a table row was: enough to find it, or its neighbour, after the row is drawn again or removed. */
export interface RowPlace {
  el: HTMLElement;
  table: HTMLElement | null;
  rowKey: string | null;
  rowIndex: number;
  testId: string | undefined;
}

/** rowPlace notes where el is: its table, its row's key and position, its test id. */
export function rowPlace(el: HTMLElement): RowPlace {
  const row = el.closest<HTMLElement>("tr[data-row-key]");
  const table = row?.closest<HTMLElement>(".data-table") ?? null;
  const rows = table ? Array.from(table.querySelectorAll<HTMLElement>("tr[data-row-key]")) : [];
  return { el, table, rowKey: row?.dataset.rowKey ?? null, rowIndex: row ? rows.indexOf(row) : -1, testId: el.dataset.testid };
}

/** enabled tells whether the keyboard can be on el now. */
function enabled(el: HTMLElement): boolean {
  return el.isConnected && !(el as HTMLButtonElement).disabled;
}

/** inRow picks, in a row, the control of the same test id, else the row's first control. */
function inRow(row: HTMLElement, testId: string | undefined): HTMLElement | null {
  const same = testId ? Array.from(row.querySelectorAll<HTMLElement>(`[data-testid="${CSS.escape(testId)}"]`)).find(enabled) : undefined;
  return same ?? row.querySelector<HTMLElement>(FOCUSABLE);
}

/** nearestInRow picks the row's control after el, else the one before it. */
function nearestInRow(el: HTMLElement): HTMLElement | null {
  const row = el.closest<HTMLElement>("tr");
  if (!row) return null;
  const all = Array.from(row.querySelectorAll<HTMLElement>(FOCUSABLE));
  return all.find((c) => el.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING) ?? all[all.length - 1] ?? null;
}

/**
 * placeTarget finds where the keyboard goes back for a control of a row that was drawn again or went
 * away: the control itself, the same control of its row drawn again, the row's first control, the
 * same control of the row now at its position (or of the last row, a deleted last row), else the table.
 * It gives null while the control is still there but busy (disabled until its action ends).
 */
export function placeTarget(p: RowPlace): HTMLElement | null {
  if (p.el.isConnected) return enabled(p.el) ? p.el : null;
  if (!p.table?.isConnected || p.rowKey === null) return null;
  const row = p.table.querySelector<HTMLElement>(`tr[data-row-key="${CSS.escape(p.rowKey)}"]`);
  const rows = Array.from(p.table.querySelectorAll<HTMLElement>("tr[data-row-key]"));
  if (row) {
    const own = inRow(row, p.testId);
    if (own) return own;
    // Drawn again without a control (a deleted user's row stays, without actions): the rows after it, then before it.
    const at = rows.indexOf(row);
    for (const r of [...rows.slice(at + 1), ...rows.slice(0, at).reverse()]) {
      const c = inRow(r, p.testId);
      if (c) return c;
    }
  } else {
    const near = rows[Math.min(p.rowIndex, rows.length - 1)];
    if (near) return inRow(near, p.testId);
  }
  if (!p.table.hasAttribute("tabindex")) p.table.tabIndex = -1;
  return p.table;
}

/** lost tells whether the keyboard is nowhere in particular: on the page's body, or still on the control now disabled. */
function lost(place: RowPlace): boolean {
  const a = document.activeElement;
  return a === null || a === document.body || (a === place.el && !enabled(place.el));
}

/**
 * keepRowFocus runs a row's action started from control (a button that is disabled while the
 * action runs, or whose row is drawn again by it) and, if that left the keyboard nowhere, puts it
 * back where placeTarget says once the row is drawn again. A focus the person moved elsewhere
 * in the meantime is left alone.
 */
export async function keepRowFocus<T>(control: HTMLElement | null, action: Promise<T>): Promise<T> {
  const place = control ? rowPlace(control) : null;
  try {
    return await action;
  } finally {
    if (place) void restoreFocus(place);
  }
}

/** restoreFocus waits a few frames for the row's new drawing and puts the keyboard back on it. */
export async function restoreFocus(place: RowPlace): Promise<void> {
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => requestAnimationFrame(() => r(null)));
    if (!lost(place)) return;
    // Still disabled some frames after its action ended (a promote of an administrator): the row's next control, else the one before.
    const target = placeTarget(place) ?? (i >= 5 && place.el.isConnected ? nearestInRow(place.el) : null);
    if (target) {
      target.focus({ preventScroll: true });
      return;
    }
  }
}
