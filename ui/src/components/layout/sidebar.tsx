import { useSignals } from "@preact/signals-react/runtime";
import { Text } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { Link, useLocation } from "wouter";
import { accessAllows } from "../../lib/roles";
import { routes, SIDEBAR_ORDER, type NavEntry } from "../../routes";
import { isMobile, setSidebarCollapsed, sidebarCollapsed, toggleSidebar } from "../../stores/sidebar";
import { status } from "../../stores/status";
import { user } from "../../stores/user";
import { ChatSubmenu } from "../chat-submenu";
import { Icon } from "../icons";
import { Tooltip } from "../ui/tooltip";

/** visibleEntries lists the sidebar entries the current visitor may see, in sidebar order. */
export function visibleEntries(): (NavEntry & { path: string })[] {
  const s = status.value;
  return routes
    .filter((r) => r.nav && accessAllows(r.access, user.value) && (!r.nav.flag || s[r.nav.flag] === true))
    // The chat entry leads to the configured chat targets: none, no entry.
    .filter((r) => r.nav?.key !== "chat" || (Array.isArray(s.chats) && s.chats.length > 0))
    .map((r) => ({ ...(r.nav as NavEntry), path: r.path }))
    .sort((a, b) => SIDEBAR_ORDER.indexOf(a.key) - SIDEBAR_ORDER.indexOf(b.key));
}

/** Sidebar shows the navigation entries allowed by role and feature flags. */
export function Sidebar() {
  useSignals();
  const { t } = useTranslation();
  const [location] = useLocation();
  const entries = visibleEntries();
  const collapsed = sidebarCollapsed.value;
  // On a phone the open sidebar covers the page: Escape closes it, as the backdrop does.
  useEffect(() => {
    if (collapsed) return;
    const onKey = (ev: KeyboardEvent) => {
      if (ev.key === "Escape" && isMobile()) setSidebarCollapsed(true);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [collapsed]);
  if (entries.length === 0) return null;
  return (
    <>
      {!collapsed ? <div className="sidebar-backdrop" onClick={() => setSidebarCollapsed(true)} /> : null}
      <nav className={`sidebar ${collapsed ? "collapsed" : ""}`} aria-label={t("nav.sidebar")} data-testid="sidebar">
        <ul>
          {entries.map((e) => {
            const href = e.href ?? e.path;
            // Optional parameters (/chat/:id?) do not take part in matching.
            const base = e.path.replace(/\/:[^/]+\??$/, "");
            const active = location === e.path || location === base || location.startsWith(base + "/");
            const link = (
              <Link
                href={href}
                className={`sidebar-link ${active ? "active" : ""}`}
                data-nav={e.key}
                aria-current={active ? "page" : undefined}
                // Collapsed, the label is hidden and the tooltip shows on hover only.
                aria-label={collapsed ? t(e.label) : undefined}
                onClick={() => {
                  if (isMobile()) setSidebarCollapsed(true);
                }}
              >
                <Icon name={e.icon} size={18} />
                <Text size="2" className="sidebar-label">
                  {t(e.label)}
                </Text>
              </Link>
            );
            return (
              <li key={e.key}>
                {collapsed ? (
                  <Tooltip content={t(e.label)} side="right">
                    {link}
                  </Tooltip>
                ) : (
                  link
                )}
                {e.key === "chat" && !collapsed ? <ChatSubmenu variant="sidebar" /> : null}
              </li>
            );
          })}
        </ul>
        <button type="button" className="sidebar-collapse" onClick={toggleSidebar} aria-label={collapsed ? t("nav.expand") : t("nav.collapse")}>
          <Icon name={collapsed ? "chevronRight" : "chevronLeft"} />
        </button>
      </nav>
    </>
  );
}
