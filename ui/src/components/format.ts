/** pad2 left-pads a number to two digits. */
function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** formatTimestamp renders unix seconds as local "YYYY-MM-DD HH:mm:ss"; 0 or less renders as "". */
export function formatTimestamp(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return "";
  const d = new Date(seconds * 1000);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

/** toDateTimeLocal renders unix seconds in the value format of an <input type="datetime-local">. */
export function toDateTimeLocal(seconds: number): string {
  return formatTimestamp(seconds).replace(" ", "T");
}

const DATE_TIME = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2}))?)?$/;

/**
 * parseDateTime reads a local date and time ("YYYY-MM-DD HH:mm:ss", seconds
 * and the time part optional, "T" accepted as separator) into unix seconds;
 * anything else, including impossible dates, gives null. A time the clocks
 * skip (the hour a spring-forward leaves out, which date pickers still offer)
 * is read as the browser reads it, past the skip, not refused: a filter
 * bound there stays a bound.
 */
export function parseDateTime(text: string): number | null {
  const m = DATE_TIME.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((x) => Number(x ?? "0"));
  if (y < 100 || h > 23 || mi > 59 || s > 59) return null;
  // The calendar date must exist (no 30 February), checked away from any time zone.
  const day = new Date(0);
  day.setUTCFullYear(y, mo - 1, d);
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) return null;
  const date = new Date(0);
  date.setFullYear(y, mo - 1, d);
  date.setHours(h, mi, s, 0);
  return Math.floor(date.getTime() / 1000);
}

/** startOfToday is today's local midnight in unix seconds. */
export function startOfToday(): number {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  return Math.floor(d.getTime() / 1000);
}

/** nowSeconds is the current time in unix seconds. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * initial is the first character of name as a reader sees it (an emoji, a flag, a letter with its accents),
 * upper-cased, for an avatar: slicing one UTF-16 unit would show half of an emoji's surrogate pair.
 */
export function initial(name: string): string {
  if (!name) return "?";
  let first: string | undefined;
  if (typeof Intl !== "undefined" && "Segmenter" in Intl) {
    first = new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(name)[Symbol.iterator]().next().value?.segment;
  }
  return (first ?? Array.from(name)[0]).toUpperCase();
}
