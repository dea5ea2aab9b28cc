import { signal } from "@preact/signals-react";
import { handleError } from "../api/client";
import * as usersApi from "../api/users";
import { USERS_SERVER_PAGE, type AdminUser, type UserAction } from "../api/users";
import { t } from "../i18n";
import { createAccumulatedPages } from "../lib/accumulated-pages";
import { toast } from "./toast";

/** usersList pages through the accounts; the server sends 10 per page and no total. */
export const usersList = createAccumulatedPages<AdminUser>(usersApi.listUsers, USERS_SERVER_PAGE, 10);

/** userSearch holds the search form. */
export const userSearch = signal({ keyword: "", group: "" });

/** groups lists the group names for the search and edit selects. */
export const groups = signal<string[]>([]);

/** UsersDialog names the drawers and dialogs of the users page. */
export type UsersDialog = { kind: "add" } | { kind: "edit"; id: number } | { kind: "delete"; user: AdminUser } | null;

/** usersDialog is the open drawer or dialog, with its row. */
export const usersDialog = signal<UsersDialog>(null);

/** isDeleted reports whether an account was deleted (shown as 已注销, without actions). */
export function isDeleted(u: AdminUser): boolean {
  return u.DeletedAt !== undefined && u.DeletedAt !== null && u.DeletedAt !== "";
}

/** loadGroups reads the group names once per page visit. */
export async function loadGroups(): Promise<void> {
  try {
    groups.value = await usersApi.listGroups();
  } catch {
    groups.value = [];
  }
}

/** loadUsers shows the first page of all accounts, or the current one when keepPage is set. */
export async function loadUsers(keepPage = false): Promise<void> {
  try {
    await usersList.reload(keepPage);
  } catch (err) {
    handleError(err);
  }
}

/** searchUsers runs the search form; an empty form lists every account again. */
export async function searchUsers(): Promise<void> {
  const { keyword, group } = userSearch.value;
  if (!keyword.trim() && !group) {
    await loadUsers();
    return;
  }
  try {
    await usersList.search(() => usersApi.searchUsers(keyword.trim(), group));
  } catch (err) {
    handleError(err);
  }
}

/** manageUser applies an action and updates the row from the server's answer; a refused action reads the row again. */
export async function manageUser(user: AdminUser, action: UserAction): Promise<boolean> {
  try {
    const res = await usersApi.manageUser(user.id, action);
    toast.success(t("userAdmin.actionDone"));
    usersList.update(
      (u) => u.id === user.id,
      (u) => (action === "delete" ? { ...u, ...res, DeletedAt: new Date().toISOString() } : { ...u, role: res?.role ?? u.role, status: res?.status ?? u.status }),
    );
    return true;
  } catch (err) {
    handleError(err);
    // Refused because the account changed meanwhile (deleted, promoted): the row shows what it is now.
    await refreshUserRow(user.id);
    return false;
  }
}

/** refreshUserRow re-reads one account after an edit and puts it into the table. */
export async function refreshUserRow(id: number): Promise<void> {
  try {
    // Quietly: an account this administrator may no longer read makes the page read again instead.
    const fresh = await usersApi.getUser(id, true);
    usersList.update(
      (u) => u.id === id,
      (u) => ({ ...u, ...fresh }),
    );
  } catch {
    // The list read again is every account, so a search shown before is over, in the form too.
    userSearch.value = { keyword: "", group: "" };
    await loadUsers(true);
  }
}
