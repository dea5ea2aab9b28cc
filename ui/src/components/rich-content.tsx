import { useEffect, useState } from "react";
import { isStandaloneUrl } from "../lib/url";

type MarkdownModule = typeof import("../lib/markdown");
let markdownModule: Promise<MarkdownModule> | null = null;

function loadMarkdown(): Promise<MarkdownModule> {
  markdownModule ??= import("../lib/markdown");
  return markdownModule;
}

/** RichContentProps select how server text is shown. */
export interface RichContentProps {
  text: string;
  /** markdown renders Markdown; otherwise the text is treated as HTML. */
  markdown?: boolean;
  /** allowFrame shows a text that is only a URL inside a sandboxed frame. */
  allowFrame?: boolean;
  className?: string;
  title?: string;
}

/** RichContent renders server-provided Markdown or HTML after sanitising it; the renderer loads on first use. */
export function RichContent({ text, markdown = true, allowFrame = false, className, title }: RichContentProps) {
  const framed = allowFrame && isStandaloneUrl(text);
  const [html, setHtml] = useState<string | null>(null);
  useEffect(() => {
    if (framed) return;
    let live = true;
    void loadMarkdown().then((m) => {
      if (live) setHtml(markdown ? m.renderMarkdown(text) : m.sanitizeHtml(text));
    });
    return () => {
      live = false;
    };
  }, [text, markdown, framed]);
  if (framed) {
    return (
      <iframe
        className="content-frame"
        src={text.trim()}
        title={title ?? text.trim()}
        sandbox="allow-scripts allow-popups allow-forms"
        referrerPolicy="no-referrer"
      />
    );
  }
  return <div className={`rich-content ${className ?? ""}`} dangerouslySetInnerHTML={{ __html: html ?? "" }} />;
}
