import type { Access } from "../routes";

/** ROLE_USER is an ordinary account. */
export const ROLE_USER = 1;
/** ROLE_ADMIN and above manage users and channels. */
export const ROLE_ADMIN = 10;
/** ROLE_ROOT and above also change site-wide options. */
export const ROLE_ROOT = 100;

/** roleLabelKey names the i18n key describing a role value: exactly 1, 10 or 100, any other value is 未知身份 (A §6). */
export function roleLabelKey(role: number): string {
  switch (role) {
    case ROLE_USER:
      return "role.user";
    case ROLE_ADMIN:
      return "role.admin";
    case ROLE_ROOT:
      return "role.root";
    default:
      return "role.unknown";
  }
}

/** accessAllows reports whether an account (null when anonymous) may open a page of the given access. */
export function accessAllows(access: Access, account: { role: number } | null): boolean {
  switch (access) {
    case "public":
      return true;
    case "user":
      return account !== null;
    case "admin":
      return account !== null && account.role >= ROLE_ADMIN;
    case "root":
      return account !== null && account.role >= ROLE_ROOT;
  }
}
