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
 * anything else, including impossible dates, gives null.
 */
export function parseDateTime(text: string): number | null {
  const m = DATE_TIME.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h = "0", mi = "0", s = "0"] = m.slice(1);
  const date = new Date(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (
    date.getFullYear() !== Number(y) ||
    date.getMonth() !== Number(mo) - 1 ||
    date.getDate() !== Number(d) ||
    date.getHours() !== Number(h) ||
    date.getMinutes() !== Number(mi)
  ) {
    return null;
  }
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
