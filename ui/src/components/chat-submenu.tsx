import { useSignals } from "@preact/signals-react/runtime";
import { Text } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { Link, useLocation } from "wouter";
import { chatTargets } from "../lib/chat-links";
import { status } from "../stores/status";
import { toast } from "../stores/toast";
import "./chat-submenu.css";
import { Icon } from "./icons";

let reportedParseFailure = false;

/**
 * ChatSubmenu lists the configured chat targets (status.chats) as links to
 * /chat/{index}. As "sidebar" it renders nested sidebar links (for the chat
 * entry of the sidebar); as "tabs" it renders the switcher of the chat page.
 */
export function ChatSubmenu({ variant = "sidebar" }: { variant?: "sidebar" | "tabs" }) {
  useSignals();
  const { t } = useTranslation();
  const [location] = useLocation();
  const targets = chatTargets(status.value.chats);
  useEffect(() => {
    if (targets === null && !reportedParseFailure) {
      reportedParseFailure = true;
      toast.error(t("chatPage.parseFailed"));
    }
  }, [targets, t]);
  if (!targets || targets.length === 0) return null;
  const current = location.match(/^\/chat\/(\d+)/)?.[1] ?? (location === "/chat" ? "0" : null);
  return (
    <ul className={variant === "sidebar" ? "chat-submenu" : "chat-tabs"} aria-label={t("chatPage.targets")} data-testid={`chat-submenu-${variant}`}>
      {targets.map((c) => {
        const active = current === String(c.index);
        return (
          <li key={`${c.index}:${c.name}`}>
            <Link href={`/chat/${c.index}`} className={variant === "sidebar" ? `sidebar-link ${active ? "active" : ""}` : `chat-tab ${active ? "active" : ""}`} aria-current={active ? "page" : undefined} data-chat={c.index} title={c.name}>
              {variant === "sidebar" ? <Icon name="chat" size={14} /> : null}
              <Text size="2" className={variant === "sidebar" ? "sidebar-label" : undefined}>
                {c.name}
              </Text>
            </Link>
          </li>
        );
      })}
    </ul>
  );
}
