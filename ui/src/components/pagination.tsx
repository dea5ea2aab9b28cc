import { signal } from "@preact/signals-react";
import { Button, Flex, Text } from "@radix-ui/themes";
import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import { readString, writeString } from "../lib/storage";
import { Icon } from "./icons";
import { Select } from "./ui/select";

/** PAGE_SIZES are the page sizes a list offers. */
export const PAGE_SIZES = [10, 20, 50, 100];

/** DEFAULT_PAGE_SIZE is used until the visitor picks one. */
export const DEFAULT_PAGE_SIZE = 10;

/** PAGE_SIZE_KEY is the localStorage key shared by every list, as existing consoles use it. */
export const PAGE_SIZE_KEY = "page-size";

/**
 * readPageSize returns the stored page size, or the default: a size above the largest offered (a value
 * written by another console) would ask for more rows than the server's lists answer, 100, and the pager
 * would take a full page of 100 for the last one.
 */
function readPageSize(): number {
  const n = Number.parseInt(readString(PAGE_SIZE_KEY) ?? "", 10);
  return n > 0 && n <= PAGE_SIZES[PAGE_SIZES.length - 1] ? n : DEFAULT_PAGE_SIZE;
}

/**
 * sharedPageSize is the page size of the token, channel and log lists: one signal, so
 * that a size picked on one list is the size of the others opened later in the
 * same tab, as it is after a reload.
 */
export const sharedPageSize = signal(readPageSize());

/** writePageSize stores the chosen page size for every list. */
export function writePageSize(size: number): void {
  writeString(PAGE_SIZE_KEY, String(size));
  sharedPageSize.value = size;
}

/** PaginationProps describe the current page. page is 1-based. */
export interface PaginationProps {
  page: number;
  pageSize: number;
  /** itemCount is how many rows the current page shows. */
  itemCount: number;
  /** total is the number of rows across pages, when the server reports it. */
  total?: number;
  /** hasMore tells, without a total, whether a next page may exist. */
  hasMore?: boolean;
  disabled?: boolean;
  onPageChange: (page: number) => void;
  onPageSizeChange: (size: number) => void;
}

function pageWindow(current: number, last: number): (number | "gap")[] {
  const pages = new Set<number>([1, last, current - 1, current, current + 1]);
  const sorted = [...pages].filter((p) => p >= 1 && p <= last).sort((a, b) => a - b);
  const out: (number | "gap")[] = [];
  for (const p of sorted) {
    const prev = out[out.length - 1];
    if (typeof prev === "number" && p - prev > 1) out.push("gap");
    out.push(p);
  }
  return out;
}

/** Pagination moves between pages and changes the page size (stored as page-size). */
export function Pagination({ page, pageSize, itemCount, total, hasMore, disabled, onPageChange, onPageSizeChange }: PaginationProps) {
  const { t } = useTranslation();
  const sizes = PAGE_SIZES.includes(pageSize) ? PAGE_SIZES : [...PAGE_SIZES, pageSize].sort((a, b) => a - b);
  const known = total !== undefined;
  const last = known ? Math.max(1, Math.ceil(total / pageSize)) : page + (hasMore ? 1 : 0);
  const start = (page - 1) * pageSize + 1;
  const end = (page - 1) * pageSize + itemCount;
  // The pager is disabled while the page it asked for loads, which drops the keyboard: the control
  // used (or, on the last page, the previous page's button) takes it back once the page is there.
  const root = useRef<HTMLDivElement>(null);
  const used = useRef<string | null>(null);
  const use = (control: string) => {
    used.current = control;
  };
  useEffect(() => {
    const want = used.current;
    const box = root.current;
    if (want === null || disabled || box === null) return;
    const at = document.activeElement;
    if (at !== null && at !== document.body) {
      // Still on an enabled control of the pager (a page read without loading), or gone elsewhere by choice.
      if (!box.contains(at) || !(at as HTMLButtonElement).disabled) {
        if (!box.contains(at)) used.current = null;
        return;
      }
    }
    used.current = null;
    const pick = (sel: string) => box.querySelector<HTMLElement>(`${sel}:not(:disabled)`);
    const target = pick(`[data-pager="${want}"]`) ?? pick('[aria-current="page"]') ?? pick('[data-pager="prev"]') ?? pick('[data-pager="next"]');
    target?.focus({ preventScroll: true });
  });
  useEffect(() => {
    // A click elsewhere on the page is a choice: the pager no longer calls the keyboard back.
    const away = (e: PointerEvent) => {
      if (!root.current?.contains(e.target as Node)) used.current = null;
    };
    document.addEventListener("pointerdown", away, true);
    return () => document.removeEventListener("pointerdown", away, true);
  }, []);
  return (
    <Flex ref={root} align="center" justify="between" gap="3" wrap="wrap" className="pagination" data-testid="pagination">
      <Text size="2" color="gray">
        {itemCount === 0
          ? known
            ? total > 0
              ? t("table.noneHereOfTotal", { total })
              : t("table.none")
            : page > 1
              ? t("table.noneHere")
              : t("table.none")
          : known
            ? t("table.rangeOfTotal", { start, end, total })
            : t("table.range", { start, end })}
      </Text>
      <Flex align="center" gap="1" wrap="wrap">
        <Button variant="soft" color="gray" size="1" disabled={disabled || page <= 1} onClick={() => {
            use("prev");
            onPageChange(page - 1);
          }} aria-label={t("table.prev")} data-pager="prev">
          <Icon name="chevronLeft" size={14} />
        </Button>
        {known ? (
          pageWindow(page, last).map((p, i) =>
            p === "gap" ? (
              <Text key={`gap${i}`} size="2" color="gray" className="pagination-gap">
                …
              </Text>
            ) : (
              <Button
                key={p}
                size="1"
                variant={p === page ? "solid" : "soft"}
                color={p === page ? undefined : "gray"}
                disabled={disabled}
                onClick={() => {
                  if (p === page) return;
                  use("page");
                  onPageChange(p);
                }}
                aria-current={p === page ? "page" : undefined}
              >
                {p}
              </Button>
            ),
          )
        ) : (
          <Text size="2" className="pagination-current">
            {t("table.pageN", { page })}
          </Text>
        )}
        <Button
          variant="soft"
          color="gray"
          size="1"
          disabled={disabled || page >= last}
          onClick={() => {
            use("next");
            onPageChange(page + 1);
          }}
          aria-label={t("table.next")}
          data-pager="next"
          data-testid="page-next"
        >
          <Icon name="chevronRight" size={14} />
        </Button>
        <Select.Root size="1" value={String(pageSize)} onValueChange={(v) => {
            use("size");
            onPageSizeChange(Number(v));
          }} disabled={disabled}>
          <Select.Trigger aria-label={t("table.pageSize")} data-testid="page-size" data-pager="size" />
          <Select.Content>
            {sizes.map((s) => (
              <Select.Item key={s} value={String(s)}>
                {t("table.perPage", { size: s })}
              </Select.Item>
            ))}
          </Select.Content>
        </Select.Root>
      </Flex>
    </Flex>
  );
}
