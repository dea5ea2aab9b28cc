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
