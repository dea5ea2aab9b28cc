import type { ComponentType } from "react";
import { Redirect } from "wouter";
import type { IconName } from "./components/icons";
import { setRouteLookup } from "./lib/after-login";
import AboutPage from "./pages/about";
import ChannelsPage from "./pages/channels";
import HomePage from "./pages/home";
import LogsPage from "./pages/logs";
import LoginPage from "./pages/login";
import OAuthCallbackPage from "./pages/oauth-callback";
import RegisterPage from "./pages/register";
import ResetPage from "./pages/reset";
import SettingPage from "./pages/setting";
import TokensPage from "./pages/tokens";
import UserResetPage from "./pages/user-reset";
import UsersPage from "./pages/users";
import RedemptionsPage from "./pages/redemptions";
import TopUpPage from "./pages/topup";
import PricingPage from "./pages/pricing";
import PlaygroundPage from "./pages/playground";
import ChatPage from "./pages/chat";
import Chat2LinkPage from "./pages/chat/link";
import DetailPage from "./pages/detail";

/** SelfEditRedirect serves /user/edit: everyone's own account is edited in the personal settings. */
function SelfEditRedirect() {
  return <Redirect to="/setting?tab=personal" replace />;
}

/** Access says who may open a route: anyone, a logged-in user, an admin (role ≥ 10) or root (role ≥ 100). */
export type Access = "public" | "user" | "admin" | "root";

/** SidebarKey names a sidebar entry; SIDEBAR_ORDER fixes their order. */
export type SidebarKey =
  | "playground"
  | "pricing"
  | "channel"
  | "chat"
  | "token"
  | "redemption"
  | "topup"
  | "user"
  | "log"
  | "detail"
  | "midjourney"
  | "task"
  | "setting";

/** SIDEBAR_ORDER is the order of sidebar entries. */
export const SIDEBAR_ORDER: SidebarKey[] = [
  "playground",
  "pricing",
  "channel",
  "chat",
  "token",
  "redemption",
  "topup",
  "user",
  "log",
  "detail",
  "midjourney",
  "task",
  "setting",
];

/** FeatureFlag is a status field that switches a sidebar entry on. */
export type FeatureFlag = "enable_data_export" | "enable_drawing" | "enable_task";

/** NavEntry puts a route into the sidebar. */
export interface NavEntry {
  key: SidebarKey;
  /** label is an i18n key. */
  label: string;
  icon: IconName;
  /** href overrides the route path as the link target (for paths with parameters). */
  href?: string;
  /** flag hides the entry unless that status field is true. */
  flag?: FeatureFlag;
}

/** RouteDef is one page of the console. */
export interface RouteDef {
  path: string;
  component: ComponentType;
  access: Access;
  nav?: NavEntry;
}

/**
 * routes lists every page; a page joins the router and the sidebar by adding
 * one line here. Routes that show the same component share one mounted page,
 * so moving between them (the channel list and its /channel/add drawer)
 * keeps the page's state.
 */
export const routes: RouteDef[] = [
  { path: "/", component: HomePage, access: "public" },
  { path: "/about", component: AboutPage, access: "public" },
  { path: "/login", component: LoginPage, access: "public" },
  { path: "/register", component: RegisterPage, access: "public" },
  { path: "/reset", component: ResetPage, access: "public" },
  { path: "/user/reset", component: UserResetPage, access: "public" },
  { path: "/oauth/:provider", component: OAuthCallbackPage, access: "public" },
  { path: "/setting", component: SettingPage, access: "user", nav: { key: "setting", label: "nav.setting", icon: "settings" } },
  { path: "/channel", component: ChannelsPage, access: "admin", nav: { key: "channel", label: "nav.channel", icon: "layers" } },
  { path: "/channel/add", component: ChannelsPage, access: "admin" },
  { path: "/channel/edit/:id", component: ChannelsPage, access: "admin" },
  { path: "/token", component: TokensPage, access: "user", nav: { key: "token", label: "nav.token", icon: "key" } },
  { path: "/log", component: LogsPage, access: "user", nav: { key: "log", label: "nav.log", icon: "list" } },
  { path: "/user", component: UsersPage, access: "admin", nav: { key: "user", label: "nav.user", icon: "users" } },
  { path: "/user/edit/:id", component: UsersPage, access: "admin" },
  { path: "/user/edit", component: SelfEditRedirect, access: "user" },
  { path: "/redemption", component: RedemptionsPage, access: "admin", nav: { key: "redemption", label: "nav.redemption", icon: "ticket" } },
  { path: "/topup", component: TopUpPage, access: "user", nav: { key: "topup", label: "nav.topup", icon: "wallet" } },
  { path: "/pricing", component: PricingPage, access: "public", nav: { key: "pricing", label: "nav.pricing", icon: "tag" } },
  { path: "/playground", component: PlaygroundPage, access: "user", nav: { key: "playground", label: "nav.playground", icon: "play" } },
  { path: "/chat/:id?", component: ChatPage, access: "public", nav: { key: "chat", label: "nav.chat", icon: "chat", href: "/chat/0" } },
  { path: "/chat2link", component: Chat2LinkPage, access: "user" },
  { path: "/detail", component: DetailPage, access: "user", nav: { key: "detail", label: "nav.detail", icon: "chart", flag: "enable_data_export" } },
];

// routeMatchers turns each route's pattern into an expression: ":name" is one segment, "/:name?"
// an optional one.
const routeMatchers = routes.map((r) => ({
  access: r.access,
  re: new RegExp(
    "^" +
      r.path
        .split("/")
        .slice(1)
        .map((seg) => (seg.startsWith(":") ? (seg.endsWith("?") ? "(?:/[^/]+)?" : "/[^/]+") : "/" + seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
        .join("") +
      "$",
  ),
}));

/** routeAccess is who may open the page serving path (a query is ignored), or null when no route serves it. */
export function routeAccess(path: string): Access | null {
  const bare = path.split("?")[0];
  for (const m of routeMatchers) if (m.re.test(bare)) return m.access;
  return null;
}

setRouteLookup(routeAccess);
