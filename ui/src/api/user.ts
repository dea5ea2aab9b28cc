import { api } from "./client";
import type { User } from "./types";

/** LoginResult is the user record plus the server's message (a default-password warning when set). */
export interface LoginResult {
  user: User;
  message: string;
}

/** login starts a session with a username (or e-mail) and password. */
export async function login(username: string, password: string, turnstile: string): Promise<LoginResult> {
  const r = await api.post<User>("/api/user/login", { username, password }, { query: { turnstile }, anonymous: true });
  return { user: r.data, message: r.message };
}

/** logout ends the session. */
export async function logout(): Promise<void> {
  await api.post("/api/user/logout", undefined, { silent: true });
}

/** RegisterInput is the registration form as sent to the server. */
export interface RegisterInput {
  username: string;
  password: string;
  password2: string;
  email: string;
  verification_code: string;
  aff_code: string;
}

/** register creates an account. */
export async function register(input: RegisterInput, turnstile: string): Promise<string> {
  return (await api.post<unknown>("/api/user/register", input, { query: { turnstile }, anonymous: true })).message;
}

/** getSelf reads the caller's full record; quietExpiry forgets an expired session without a redirect. */
export async function getSelf(silent = false, quietExpiry = false): Promise<User> {
  return (await api.get<User>("/api/user/self", { silent, quietExpiry })).data;
}

/** updateProfile changes the caller's username and display name. */
export async function updateProfile(fields: { username?: string; display_name?: string }): Promise<void> {
  await api.put("/api/user/self", fields);
}

/** changePassword sets a new password; the server checks the current one. */
export async function changePassword(password: string, originalPassword: string): Promise<void> {
  await api.put("/api/user/self", { password, original_password: originalPassword });
}

/** deleteSelf soft-deletes the caller's account. */
export async function deleteSelf(): Promise<void> {
  await api.del("/api/user/self");
}

/** generateAccessToken replaces the caller's system access token and returns the new one. */
export async function generateAccessToken(): Promise<string> {
  return (await api.get<string>("/api/user/token")).data;
}

/** getAffCode returns the caller's invite code, creating it when missing. */
export async function getAffCode(): Promise<string> {
  return (await api.get<string>("/api/user/aff")).data;
}

/** transferAffQuota moves invite earnings into the balance. */
export async function transferAffQuota(quota: number): Promise<string> {
  return (await api.post<unknown>("/api/user/aff_transfer", { quota })).message;
}
