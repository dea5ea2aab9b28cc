import { Flex, Spinner, Table, Text } from "@radix-ui/themes";
import { Fragment, useRef, useState, type ReactElement, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import "./data-table.css";
import { Icon } from "./icons";
import { Checkbox } from "./ui/checkbox";

/** RowKey identifies a row across renders. */
export type RowKey = string | number;

/** Column describes one column of a DataTable. */
export interface Column<T> {
  key: string;
  header: ReactNode;
  cell: (row: T) => ReactNode;
  /** width is a CSS width for the column. */
  width?: string;
  /** hidden leaves the column out (role-dependent columns). */
  hidden?: boolean;
}

/** DataTableProps configure a table of rows. */
export interface DataTableProps<T> {
  rows: T[];
  columns: Column<T>[];
  rowKey: (row: T) => RowKey;
  loading?: boolean;
  empty?: ReactNode;
  /** selected turns on a checkbox column; onSelectedChange receives the new set. */
  selected?: Set<RowKey>;
  onSelectedChange?: (next: Set<RowKey>) => void;
  /** expansion renders the detail row of a row; null means the row has none. */
  expansion?: (row: T) => ReactNode | null;
  /** muted greys out a row (a disabled channel). */
  muted?: (row: T) => boolean;
  testId?: string;
  rowTestId?: (row: T) => string;
  /** compact narrows the cell padding and the headers, for tables of many columns. */
  compact?: boolean;
}

/** DrawnRow is a row as last drawn, with what its drawing depended on. */
interface DrawnRow<T> {
  row: T;
  columns: Column<T>[];
  checked: boolean;
  muted: boolean;
  span: number;
  testId: string | undefined;
  el: ReactElement;
}

/**
 * DataTable renders rows in a Radix Themes table with optional selection and expandable detail rows.
 * A table given the same columns (the same array: a caller that keeps it, e.g. with useMemo) draws
 * again only the rows that changed (another object, selection or muting): a list taking live
 * updates of a few of its rows does not draw all of them each time.
 */
export function DataTable<T>({ rows, columns, rowKey, loading, empty, selected, onSelectedChange, expansion, muted, testId, rowTestId, compact }: DataTableProps<T>) {
  const { t } = useTranslation();
  const [open, setOpen] = useState<Set<RowKey>>(() => new Set());
  const drawn = useRef(new Map<RowKey, DrawnRow<T>>());
  // A kept row's handlers read the selection in force, not the one of the render that drew it.
  const latest = useRef({ selected, onSelectedChange });
  latest.current = { selected, onSelectedChange };
  const visible = columns.filter((c) => !c.hidden);
  const selectable = selected !== undefined && onSelectedChange !== undefined;
  const span = visible.length + (selectable ? 1 : 0) + (expansion ? 1 : 0);
  const keys = rows.map(rowKey);
  const allChecked = selectable && keys.length > 0 && keys.every((k) => selected.has(k));
  const someChecked = selectable && keys.some((k) => selected.has(k));

  const toggleAll = (on: boolean) => {
    if (!selectable) return;
    const next = new Set(selected);
    for (const k of keys) {
      if (on) next.add(k);
      else next.delete(k);
    }
    onSelectedChange(next);
  };
  const toggleOne = (k: RowKey, on: boolean) => {
    const { selected: sel, onSelectedChange: change } = latest.current;
    if (sel === undefined || change === undefined) return;
    const next = new Set(sel);
    if (on) next.add(k);
    else next.delete(k);
    change(next);
  };
  // The rows drawn by this render, filled in as they are: the next render keeps those unchanged.
  let prevDrawn: Map<RowKey, DrawnRow<T>> | null = drawn.current;
  let nextDrawn: Map<RowKey, DrawnRow<T>> | null = new Map();
  drawn.current = nextDrawn;
  const toggleOpen = (k: RowKey) => {
    setOpen((prev) => {
      const next = new Set(prev);
      if (next.has(k)) next.delete(k);
      else next.add(k);
      return next;
    });
  };

  const body = rows.map((row) => {
    const k = rowKey(row);
    const isOpen = open.has(k);
    const checked = selectable && selected.has(k);
    const isMuted = muted?.(row) ?? false;
    const rowId = rowTestId?.(row);
    // An open row's detail may show more than the row: it is always drawn again.
    const was = isOpen ? undefined : prevDrawn?.get(k);
    if (was && was.row === row && was.columns === columns && was.checked === checked && was.muted === isMuted && was.span === span && was.testId === rowId) {
      nextDrawn?.set(k, was);
      return was.el;
    }
    const detail = expansion && isOpen ? expansion(row) : null;
    const el = (
      <Fragment key={k}>
        <Table.Row
          className={isMuted ? "data-table-muted" : undefined}
          data-testid={rowId}
          data-row-key={String(k)}
        >
          {expansion ? (
            <Table.Cell className="data-table-narrow">
              <button
                type="button"
                className={`data-table-expander ${isOpen ? "open" : ""}`}
                onClick={() => toggleOpen(k)}
                aria-expanded={isOpen}
                aria-label={t("table.expand")}
                data-testid="expand-row"
              >
                <Icon name="chevronRight" size={14} />
              </button>
            </Table.Cell>
          ) : null}
          {selectable ? (
            <Table.Cell className="data-table-narrow">
              <Checkbox checked={checked} onCheckedChange={(v) => toggleOne(k, v === true)} aria-label={t("table.selectRow")} data-testid="select-row" />
            </Table.Cell>
          ) : null}
          {visible.map((c) => (
            <Table.Cell key={c.key} data-col={c.key}>
              {c.cell(row)}
            </Table.Cell>
          ))}
        </Table.Row>
        {detail ? (
          <Table.Row className="data-table-detail">
            <Table.Cell colSpan={span}>{detail}</Table.Cell>
          </Table.Row>
        ) : null}
      </Fragment>
    );
    if (!isOpen) nextDrawn?.set(k, { row, columns, checked, muted: isMuted, span, testId: rowId, el });
    return el;
  });
  // A kept row's element outlives this render, and its handlers hold this render's scope: were the
  // maps left in it, each render would hold the rows drawn before it, and so on back to the first.
  prevDrawn = nextDrawn = null;
  return (
    <div
      className={["data-table", expansion ? "data-table-expandable" : "", compact ? "data-table-compact" : ""].filter(Boolean).join(" ")}
      data-testid={testId}
      aria-busy={loading || undefined}
    >
      <Table.Root variant="surface" size="2">
        <Table.Header>
          <Table.Row>
            {expansion ? <Table.ColumnHeaderCell className="data-table-narrow" aria-label={t("table.expand")} /> : null}
            {selectable ? (
              <Table.ColumnHeaderCell className="data-table-narrow">
                <Checkbox
                  checked={allChecked ? true : someChecked ? "indeterminate" : false}
                  onCheckedChange={(v) => toggleAll(v === true)}
                  aria-label={t("table.selectAll")}
                  data-testid="select-all"
                />
              </Table.ColumnHeaderCell>
            ) : null}
            {visible.map((c) => (
              <Table.ColumnHeaderCell key={c.key} style={c.width ? { width: c.width } : undefined} className="nowrap">
                {c.header}
              </Table.ColumnHeaderCell>
            ))}
          </Table.Row>
        </Table.Header>
        <Table.Body>
          {rows.length === 0 ? (
            <Table.Row>
              <Table.Cell colSpan={span}>
                <Flex justify="center" py="5" gap="2" align="center" className="data-table-empty">
                  {loading ? <Spinner /> : null}
                  <Text color="gray" size="2">
                    {loading ? t("table.loading") : (empty ?? t("table.empty"))}
                  </Text>
                </Flex>
              </Table.Cell>
            </Table.Row>
          ) : (
            body
          )}
        </Table.Body>
      </Table.Root>
      {loading && rows.length > 0 ? (
        <div className="data-table-busy">
          <Spinner size="3" />
        </div>
      ) : null}
    </div>
  );
}
