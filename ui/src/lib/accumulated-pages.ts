import { computed, signal, type ReadonlySignal } from "@preact/signals-react";

/** AccumulatedPages pages through a list the server hands out in fixed pages without a total. */
export interface AccumulatedPages<T> {
  /** rows holds every row fetched so far (or the search result). */
  rows: ReadonlySignal<T[]>;
  /** visible is the current client page. */
  visible: ReadonlySignal<T[]>;
  /** page is the 1-based client page. */
  page: ReadonlySignal<number>;
  pageSize: ReadonlySignal<number>;
  loading: ReadonlySignal<boolean>;
  /** hasMore tells whether a next client page exists (or may exist on the server). */
  hasMore: ReadonlySignal<boolean>;
  /** total is the number of rows of a search result, which the server sends whole; undefined while paging the list. */
  total: ReadonlySignal<number | undefined>;
  /**
   * reload forgets the fetched rows and shows the first page; with keepPage it shows the current
   * page again, reading only the server pages from it on (a change there moves no row before it).
   */
  reload: (keepPage?: boolean) => Promise<void>;
  /** goTo shows a client page, fetching server pages as needed. */
  goTo: (page: number) => Promise<void>;
  setPageSize: (size: number) => Promise<void>;
  /** showAll replaces the rows by a complete result (a search) that is paged on the client only. */
  showAll: (rows: T[]) => void;
  /**
   * search shows what read answers (as showAll), unless a newer search, reload or page read
   * started meanwhile: an older search answering late does not replace a newer result. It
   * tells whether the result is shown.
   */
  search: (read: () => Promise<T[]>) => Promise<boolean>;
  /** update patches the rows that match. */
  update: (match: (row: T) => boolean, patch: (row: T) => T) => void;
}

/**
 * createAccumulatedPages keeps fetched server pages and shows client pages of
 * any size over them. When the last fetched client page is shown, the next
 * server page is fetched, so that the pager knows whether to offer "next".
 */
export function createAccumulatedPages<T>(fetchPage: (p: number) => Promise<T[]>, serverPageSize: number, initialPageSize = 10): AccumulatedPages<T> {
  const rows = signal<T[]>([]);
  const page = signal(1);
  const pageSize = signal(initialPageSize);
  const loading = signal(false);
  const exhausted = signal(false);
  let generation = 0;
  /** searched is true while the rows are a search result (showAll), not server pages. */
  const searched = signal(false);

  const ensure = async (count: number, gen: number): Promise<void> => {
    while (gen === generation && !exhausted.value && rows.value.length < count) {
      const p = Math.floor(rows.value.length / serverPageSize);
      const got = await fetchPage(p);
      if (gen !== generation) return;
      rows.value = [...rows.value.slice(0, p * serverPageSize), ...got];
      if (got.length < serverPageSize) exhausted.value = true;
    }
  };

  const goTo = async (n: number): Promise<void> => {
    const gen = generation;
    page.value = Math.max(1, n);
    loading.value = true;
    try {
      await ensure(page.value * pageSize.value + 1, gen);
    } finally {
      if (gen === generation) {
        loading.value = false;
        const last = Math.max(1, Math.ceil(rows.value.length / pageSize.value));
        if (page.value > last) page.value = last;
      }
    }
  };

  const showAll = (all: T[]): void => {
    generation++;
    searched.value = true;
    rows.value = all;
    exhausted.value = true;
    loading.value = false;
    page.value = 1;
  };

  return {
    rows,
    visible: computed(() => rows.value.slice((page.value - 1) * pageSize.value, page.value * pageSize.value)),
    page,
    pageSize,
    loading,
    hasMore: computed(() => rows.value.length > page.value * pageSize.value || (!exhausted.value && rows.value.length >= page.value * pageSize.value)),
    total: computed(() => (searched.value ? rows.value.length : undefined)),
    reload: async (keepPage = false) => {
      generation++;
      const target = keepPage ? page.value : 1;
      // The server pages wholly before the page shown are kept: reading them all again made a
      // change on page N cost N sequential reads.
      const keep = searched.value ? 0 : Math.floor(((target - 1) * pageSize.value) / serverPageSize) * serverPageSize;
      searched.value = false;
      rows.value = rows.value.slice(0, Math.min(keep, Math.floor(rows.value.length / serverPageSize) * serverPageSize));
      exhausted.value = false;
      loading.value = false;
      await goTo(target);
    },
    goTo,
    setPageSize: async (size) => {
      const first = (page.value - 1) * pageSize.value;
      pageSize.value = size;
      await goTo(Math.floor(first / size) + 1);
    },
    showAll,
    search: async (read) => {
      const gen = ++generation;
      loading.value = true;
      try {
        const all = await read();
        if (gen !== generation) return false;
        showAll(all);
        return true;
      } finally {
        if (gen === generation) loading.value = false;
      }
    },
    update: (match, patch) => {
      rows.value = rows.value.map((r) => (match(r) ? patch(r) : r));
    },
  };
}
