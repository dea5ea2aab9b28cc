import { computed, signal } from "@preact/signals-react";
import { navigate } from "wouter/use-browser-location";
import { setSessionHooks } from "../api/client";
import type { User } from "../api/types";
import * as userApi from "../api/user";
import { rememberAskedPage } from "../lib/after-login";
import { ROLE_ADMIN, ROLE_ROOT } from "../lib/roles";
import { readJSON, removeKey, writeJSON } from "../lib/storage";

/** USER_BANNED is the status of a disabled account. */
export const USER_BANNED = 2;

/** user is the logged-in account, cached in localStorage under "user"; null when anonymous. */
export const user = signal<User | null>(readJSON<User | null>("user", null));

/** isLoggedIn reports whether a user record is held. */
export const isLoggedIn = computed(() => user.value !== null);
/** role is the current role value (0 when anonymous). */
export const role = computed(() => user.value?.role ?? 0);
/** isAdmin holds for role 10 and above. */
export const isAdmin = computed(() => role.value >= ROLE_ADMIN);
/** isRoot holds for role 100 and above. */
export const isRoot = computed(() => role.value >= ROLE_ROOT);

/** resetters clear the state pages keep for the logged-in account (lists, conversations, keys). */
const resetters: (() => void)[] = [];
let holder: number | null = user.value?.id ?? null;

/** onUserChange registers fn to run whenever the account held changes: a logout, an expired session, another login. */
export function onUserChange(fn: () => void): void {
  resetters.push(fn);
}

function noteHolder(id: number | null): void {
  if (id === holder) return;
  holder = id;
  balanceSeq = 0;
  for (const fn of resetters) fn();
}

/**
 * balanceSeq is the highest balance_seq of a balance taken in, pushed by the live socket or read
 * with the account. Balances can arrive out of order (a charge read before a top-up and pushed
 * after it; a page load's read answered after a push): one of a lower number is older than the
 * one shown and is left out.
 */
let balanceSeq = 0;

/** resetBalanceSeq counts again from nothing: a new socket (a gateway restarted with its clock set back counts lower). */
export function resetBalanceSeq(): void {
  balanceSeq = 0;
}

/**
 * newestBalance is what of fields to take in: all of it, less a balance older than the one held.
 * The invite earnings are part of the balance: a transfer moves them to the quota in one step, so an
 * older read's earnings beside the newer quota would count the moved amount twice.
 */
export function newestBalance(fields: Partial<User> & { balance_seq?: unknown }): Partial<User> {
  const { balance_seq: seq, ...rest } = fields;
  if (typeof seq !== "number") return rest;
  if (seq < balanceSeq) {
    delete rest.quota;
    delete rest.used_quota;
    delete rest.request_count;
    delete rest.aff_quota;
    delete rest.aff_history_quota;
    delete rest.aff_count;
  } else {
    balanceSeq = seq;
  }
  return rest;
}

/** setUser stores a full user record. */
export function setUser(u: User): void {
  noteHolder(u.id);
  user.value = u;
  writeJSON("user", u);
}

/** mergeUser updates fields of the held record; it does nothing when anonymous. */
export function mergeUser(fields: Partial<User>): void {
  if (!user.value) return;
  const next = { ...user.value, ...fields };
  user.value = next;
  writeJSON("user", next);
}

/**
 * clearUser forgets the session locally. The stored record goes only when it is this tab's: another
 * tab of the browser may have logged in as another account meanwhile (which ended this tab's
 * session), and that account stays logged in.
 */
export function clearUser(): void {
  const held = user.value?.id ?? null;
  noteHolder(null);
  user.value = null;
  const stored = readJSON<User | null>("user", null);
  if (held === null || stored === null || stored.id === held) removeKey("user");
}

/**
 * loginPath is where a protected page sends a visitor without a session: the login page with its
 * notice (未登录或登录已过期), whether the visitor never logged in or their session ended (B §2, §6).
 */
export function loginPath(): string {
  return "/login?expired=true";
}

/** expireSession forgets the session and, unless quiet, sends the visitor to the login page with the expired notice. */
export function expireSession(quiet = false): void {
  if (!quiet) {
    // The page the session ended on is where the next login returns.
    rememberAskedPage();
    navigate(loginPath());
  }
  clearUser();
}

/** refreshSelf reloads the held record from the server. */
export async function refreshSelf(silent = false, quietExpiry = false): Promise<User | null> {
  if (!user.value) return null;
  const fresh = await userApi.getSelf(silent, quietExpiry);
  const held = user.value;
  // Logged out meanwhile: the answer is no one's any more.
  if (!held) return null;
  // Another account's record starts the count again; a read answered after a newer push keeps
  // the pushed balance.
  noteHolder(fresh.id);
  setUser({ ...(held.id === fresh.id ? held : {}), ...newestBalance(fresh) } as User);
  return user.value;
}

/** logout forgets the session locally at once, then ends it on the server. */
export async function logout(): Promise<void> {
  clearUser();
  try {
    await userApi.logout();
  } catch {
    /* the local session is already gone */
  }
}

// sessionNo counts this tab's logins.
let sessionNo = 0;

/** SessionMark names the login a call was made for: the account and this tab's login number. */
export interface SessionMark {
  uid: number | null;
  session: number;
}

/** sessionMark is the login current now. */
export function sessionMark(): SessionMark {
  return { uid: user.value?.id ?? null, session: sessionNo };
}

/**
 * expireIfCurrent ends the session when a call made for the login mark was refused as unauthorized
 * and that login is still the current one: a refusal for a login ended since (another account's, or
 * this account's before it logged in again) says nothing of the one logged in now.
 */
export function expireIfCurrent(mark: SessionMark, quiet = false): void {
  if (user.value && user.value.id === mark.uid && mark.session === sessionNo) expireSession(quiet);
}

setSessionHooks({
  userId: () => user.value?.id ?? null,
  sessionNo: () => sessionNo,
  onUnauthorized: (quiet, uid, session) => expireIfCurrent({ uid, session }, quiet),
});

/** startSession stores the record a login returned and then reloads the full record quietly. */
export function startSession(u: User): void {
  sessionNo++;
  setUser(u);
  void refreshSelf(true).catch(() => {});
}

/** validateSession checks a stored record against the server once at start; an expired one is forgotten quietly. */
export function validateSession(): void {
  if (user.value) void refreshSelf(true, true).catch(() => {});
}
