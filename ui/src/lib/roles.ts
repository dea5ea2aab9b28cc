/** ROLE_USER is an ordinary account. */
export const ROLE_USER = 1;
/** ROLE_ADMIN and above manage users and channels. */
export const ROLE_ADMIN = 10;
/** ROLE_ROOT and above also change site-wide options. */
export const ROLE_ROOT = 100;

/** roleLabelKey names the i18n key describing a role value. */
export function roleLabelKey(role: number): string {
  if (role >= ROLE_ROOT) return "role.root";
  if (role >= ROLE_ADMIN) return "role.admin";
  if (role >= ROLE_USER) return "role.user";
  return "role.unknown";
}
