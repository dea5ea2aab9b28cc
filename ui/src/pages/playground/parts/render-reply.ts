import { Marked } from "marked";
import { sanitizeHtml } from "../../../lib/markdown";

function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

// Model output is untrusted: HTML in it is shown as text, never parsed.
const md = new Marked({ gfm: true, breaks: true });
md.use({ renderer: { html: ({ text }) => escapeHtml(text) } });

const ABSOLUTE_WEB = /^https?:\/\//i;

/**
 * renderReply turns a model reply into sanitised HTML: raw HTML is escaped,
 * scripts and handlers are removed (lib/markdown), images become their alt
 * text (a same-origin image URL would otherwise fire a GET with the session),
 * and only absolute web links survive, opening in a new tab so the
 * conversation is never navigated away.
 */
export function renderReply(text: string): string {
  const html = sanitizeHtml(md.parse(text, { async: false }) as string);
  const tpl = document.createElement("template");
  tpl.innerHTML = html;
  for (const img of Array.from(tpl.content.querySelectorAll("img"))) {
    img.replaceWith(document.createTextNode(img.getAttribute("alt") || ""));
  }
  for (const a of Array.from(tpl.content.querySelectorAll("a"))) {
    const href = a.getAttribute("href") ?? "";
    if (!ABSOLUTE_WEB.test(href.trim())) {
      a.replaceWith(...Array.from(a.childNodes));
      continue;
    }
    a.setAttribute("target", "_blank");
    a.setAttribute("rel", "noopener noreferrer nofollow");
  }
  return tpl.innerHTML;
}
