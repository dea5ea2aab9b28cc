import i18n from "./index";
import catalogue from "./server.en.json";

/*
 * The server's messages (an answer's message, a log's content, a channel's
 * status reason) are the spec's Chinese texts in either language: clients
 * match on them. The English console shows them through server.en.json,
 * whose keys are the server's texts as its code writes them: a value the
 * server fills in is a Go verb there (%s, %d, %.2f) and in the English text,
 * which may also name a value by its place (%[2]s) to reorder them.
 * ui/server_messages_test.go fails when the server writes a text the
 * catalogue lacks.
 */

/** A Pattern is a catalogue entry whose text carries values. */
interface Pattern {
  re: RegExp;
  /** kinds holds each value's verb letter (s, d, f...). */
  kinds: string[];
  en: string;
  /** literal is the length of the fixed text: the longer, the more specific. */
  literal: number;
}

const VERB = /%(?:\[(\d+)\])?(?:\.\d+)?[a-zA-Z]/g;

/** DEPTH bounds how deep values are translated in turn (a message quoting another). */
const DEPTH = 3;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

let exact: Map<string, string> | null = null;
let patterns: Pattern[] = [];

function compile(): Map<string, string> {
  const map = new Map<string, string>();
  const list: Pattern[] = [];
  for (const [zh, en] of Object.entries(catalogue as Record<string, string>)) {
    const verbs = [...zh.matchAll(VERB)];
    if (verbs.length === 0) {
      map.set(zh, en);
      continue;
    }
    let re = "^";
    let last = 0;
    const kinds: string[] = [];
    for (const m of verbs) {
      re += escapeRe(zh.slice(last, m.index));
      const kind = m[0].slice(-1);
      kinds.push(kind);
      re += kind === "d" ? "(-?\\d+)" : kind === "f" ? "(-?\\d+(?:\\.\\d+)?)" : "([\\s\\S]*?)";
      last = m.index + m[0].length;
    }
    re += escapeRe(zh.slice(last)) + "$";
    list.push({ re: new RegExp(re), kinds, en, literal: zh.replace(VERB, "").length });
  }
  patterns = list.sort((a, b) => b.literal - a.literal);
  return map;
}

/** fill puts values into an English text: each verb takes the next value, or the one it names (%[2]s). */
function fill(en: string, values: string[]): string {
  let next = 0;
  return en.replace(VERB, (_, index: string | undefined) => {
    const i = index ? Number(index) - 1 : next;
    next = i + 1;
    return values[i] ?? "";
  });
}

/** REQUEST_ID is the suffix the relay puts after its error messages (" (request id: …)"). */
const REQUEST_ID = /^([\s\S]+?) \(request id: ([^()]*)\)$/;

/**
 * englishServerText is a server message in English: its exact entry, else
 * the most specific pattern it matches (values that are server texts
 * themselves translated in turn), else, for a relay error, its text before
 * the request id translated with the id kept, else the message as it came.
 */
export function englishServerText(message: string, depth = 0): string {
  const english = lookup(message, depth);
  if (english !== null) return english;
  const withId = REQUEST_ID.exec(message);
  if (withId) {
    const text = lookup(withId[1], depth);
    if (text !== null) return `${text} (request id: ${withId[2]})`;
  }
  return message;
}

/** lookup is a server message's English text from the catalogue, or null when no entry fits it. */
function lookup(message: string, depth: number): string | null {
  exact ??= compile();
  const found = exact.get(message);
  if (found !== undefined) return found;
  for (const p of patterns) {
    const m = p.re.exec(message);
    if (!m) continue;
    const values = m.slice(1).map((v, i) => {
      if (p.kinds[i] !== "s") return v;
      // Chinese typesetting spaces a Latin name out (" GitHub "); English places its own spaces.
      const value = v.trim();
      return depth < DEPTH ? englishServerText(value, depth + 1) : value;
    });
    return fill(p.en, values);
  }
  return null;
}

/**
 * serverText is how the console shows a text the server wrote: in English
 * in the English console, unchanged in the Chinese one. Only for display:
 * code that compares a server message compares the message as it came.
 */
export function serverText(message: string): string {
  if (!message || !i18n.language?.startsWith("en")) return message;
  return englishServerText(message);
}
