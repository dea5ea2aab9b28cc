/** ChatTarget is one configured chat application: a display name and its URL template. */
export interface ChatTarget {
  index: number;
  name: string;
  template: string;
}

/**
 * chatTargets reads status.chats, a list of {name: url-template} objects.
 * It returns null when the value is present but malformed.
 */
export function chatTargets(chats: unknown): ChatTarget[] | null {
  if (chats === undefined || chats === null) return [];
  let list = chats;
  if (typeof list === "string") {
    try {
      list = JSON.parse(list);
    } catch {
      return null;
    }
  }
  if (!Array.isArray(list)) return null;
  const out: ChatTarget[] = [];
  list.forEach((entry, index) => {
    if (!entry || typeof entry !== "object") return;
    for (const [name, template] of Object.entries(entry as Record<string, unknown>)) {
      out.push({ index, name, template: typeof template === "string" ? template : "" });
    }
  });
  return out;
}

/** fillChatLink puts the token ("sk-" + key) and the server address into a template's {key} and {address}. */
export function fillChatLink(template: string, key: string, address: string): string {
  return template.replaceAll("{address}", encodeURIComponent(address)).replaceAll("{key}", "sk-" + key);
}

/**
 * chat2Link builds the /chat2link target: a template with placeholders is
 * filled in; a bare link gets the settings fragment ChatGPT-Next-Web reads.
 */
export function chat2Link(chatLink: string, key: string, address: string): string {
  if (chatLink.includes("{key}") || chatLink.includes("{address}")) return fillChatLink(chatLink, key, address);
  const base = chatLink.replace(/\/+$/, "");
  return `${base}/#/?settings=${encodeURIComponent(JSON.stringify({ key: "sk-" + key, url: address }))}`;
}

/** isWebUrl tells whether a link is an absolute http(s) URL that may be framed or opened. */
export function isWebUrl(link: string): boolean {
  try {
    const u = new URL(link);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

/** isAppLink tells whether a link opens a chat application installed on the user's machine (ama://, opencat://…): a scheme other than the web's and the ones that run code or read local data. */
export function isAppLink(link: string): boolean {
  const m = /^([a-z][a-z0-9+.-]*):/i.exec(link.trim());
  if (!m) return false;
  return !["http", "https", "javascript", "data", "vbscript", "file", "blob", "about"].includes(m[1].toLowerCase());
}
