import DOMPurify from "dompurify";
import { marked } from "marked";

const FORBID_TAGS = ["style", "script", "form", "input", "button", "textarea", "select", "iframe", "object", "embed", "base", "meta", "link"];
const SAFE_URL = /^(?:https?:|mailto:|tel:|\/|#|\.{0,2}\/|[^:]*$)/i;

let hooked = false;

function installHooks(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    const el = node as Element;
    if (!el.getAttribute) return;
    for (const attr of ["href", "src", "xlink:href", "action"]) {
      const v = el.getAttribute(attr);
      if (v !== null && !SAFE_URL.test(v.trim())) {
        if (!(attr === "src" && el.tagName === "IMG" && /^data:image\//i.test(v.trim()))) el.removeAttribute(attr);
      }
    }
    if (el.tagName === "A" && el.getAttribute("href")) {
      const href = el.getAttribute("href") ?? "";
      if (/^https?:/i.test(href)) {
        el.setAttribute("target", "_blank");
        el.setAttribute("rel", "noopener noreferrer");
      }
    }
  });
}

/** sanitizeHtml removes scripts, event handlers, forms and unsafe URLs from an HTML fragment. */
export function sanitizeHtml(html: string): string {
  installHooks();
  return DOMPurify.sanitize(html, {
    FORBID_TAGS,
    ALLOW_DATA_ATTR: false,
    USE_PROFILES: { html: true },
  });
}

/** renderMarkdown turns Markdown (which may embed HTML) into sanitised HTML. */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text, { async: false, gfm: true, breaks: true }) as string;
  return sanitizeHtml(html);
}
