import { api } from "./client";
import type { User } from "./types";

/** USERS_SERVER_PAGE is how many users one GET /api/user/?p= answer holds. */
export const USERS_SERVER_PAGE = 10;

/** AdminUser is a user as the administrator list shows it; DeletedAt is set on deleted accounts. */
export interface AdminUser extends User {
  DeletedAt?: string | null;
}

/** UserAction is one administrator action on an account. */
export type UserAction = "promote" | "demote" | "disable" | "enable" | "delete";

/** NewUserInput is the body of the add-user drawer. */
export interface NewUserInput {
  username: string;
  display_name: string;
  password: string;
}

/** UserUpdate is an edit: the id plus only the fields that change (quota as an integer). */
export interface UserUpdate {
  id: number;
  username?: string;
  display_name?: string;
  password?: string;
  group?: string;
  /** quota sets the live quota. */
  quota?: number;
  /** add_quota adds to the live quota (negative takes away), keeping what changed it meanwhile. */
  add_quota?: number;
}

/** listUsers reads one server page (p is 0-based, 10 users each), deleted users included. */
export async function listUsers(p: number): Promise<AdminUser[]> {
  return (await api.get<AdminUser[]>("/api/user/", { query: { p } })).data ?? [];
}

/** searchUsers matches an id, username, display name or e-mail, optionally within one group; not paged. */
export async function searchUsers(keyword: string, group: string): Promise<AdminUser[]> {
  return (await api.get<AdminUser[]>("/api/user/search", { query: { keyword, group } })).data ?? [];
}

/** getUser reads one account; silent leaves a refusal untold. */
export async function getUser(id: number, silent = false): Promise<AdminUser> {
  return (await api.get<AdminUser>(`/api/user/${id}`, { silent })).data;
}

/** createUser adds an ordinary account. */
export async function createUser(input: NewUserInput): Promise<void> {
  await api.post("/api/user/", input);
}

/** updateUser writes the fields present in the update. */
export async function updateUser(update: UserUpdate): Promise<void> {
  await api.put("/api/user/", update);
}

/** manageUser applies an action and returns the account's new role and status. */
export async function manageUser(id: number, action: UserAction): Promise<{ role: number; status: number }> {
  return (await api.post<{ role: number; status: number }>("/api/user/manage", { id, action })).data;
}

/** listGroups reads the configured group names. */
export async function listGroups(): Promise<string[]> {
  const data = (await api.get<string[]>("/api/group/", { silent: true })).data;
  return Array.isArray(data) ? data : [];
}
