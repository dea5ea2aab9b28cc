import type { Access } from "../routes";
import { accessAllows } from "./roles";

/** AFTER_LOGIN_PREFERRED is where a normal login lands when that page exists. */
export const AFTER_LOGIN_PREFERRED = "/token";
/** AFTER_LOGIN_FALLBACK is the landing page otherwise, and after a default-password warning. */
export const AFTER_LOGIN_FALLBACK = "/setting?tab=personal";

let routeAccess: (path: string) => Access | null = () => null;

/** setRouteLookup tells this module which paths the router serves, and to whom. */
export function setRouteLookup(fn: (path: string) => Access | null): void {
  routeAccess = fn;
}

// ASKED_KEY holds, for this tab, the page a visitor was sent to the login page from.
const ASKED_KEY = "asked_page";
// AUTH_PAGE matches the pages a login passes through: they are never the page asked for.
const AUTH_PAGE = /^\/(login|register|reset|user\/reset|oauth)(\/|$)/;

/**
 * rememberAskedPage keeps the page this tab shows (path and query) as the one to return to after
 * the next login: a protected page opened without a session, or the page a session expired on.
 */
export function rememberAskedPage(): void {
  const { pathname, search } = window.location;
  if (AUTH_PAGE.test(pathname)) return;
  try {
    sessionStorage.setItem(ASKED_KEY, pathname + search);
  } catch {
    /* storage disabled: the login lands on its usual page */
  }
}

/** forgetAskedPage drops the page to return to: the visitor went elsewhere. */
export function forgetAskedPage(): void {
  try {
    sessionStorage.removeItem(ASKED_KEY);
  } catch {
    /* storage disabled: nothing is kept */
  }
}

/** isAuthPage reports whether path is one a login passes through (login, registration, resets, OAuth callbacks). */
export function isAuthPage(path: string): boolean {
  return AUTH_PAGE.test(path);
}

function takeAskedPage(): string | null {
  let asked: string | null = null;
  try {
    asked = sessionStorage.getItem(ASKED_KEY);
  } catch {
    return null;
  }
  forgetAskedPage();
  return asked;
}

/**
 * afterLoginPath is the page to open after a login by an account of the given role: the page the
 * visitor was sent to the login page from, when the account may open it, else landing (by default
 * the token list, A §1).
 */
export function afterLoginPath(role: number, landing?: string): string {
  const asked = takeAskedPage();
  if (asked && asked.startsWith("/") && !asked.startsWith("//")) {
    const access = routeAccess(asked);
    if (access && accessAllows(access, { role })) return asked;
  }
  if (landing) return landing;
  return routeAccess(AFTER_LOGIN_PREFERRED) ? AFTER_LOGIN_PREFERRED : AFTER_LOGIN_FALLBACK;
}
