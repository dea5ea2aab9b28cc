/** AFTER_LOGIN_PREFERRED is where a normal login lands when that page exists. */
export const AFTER_LOGIN_PREFERRED = "/token";
/** AFTER_LOGIN_FALLBACK is the landing page otherwise, and after a default-password warning. */
export const AFTER_LOGIN_FALLBACK = "/setting?tab=personal";

let routeExists: (path: string) => boolean = () => false;

/** setRouteLookup tells this module which paths the router serves. */
export function setRouteLookup(fn: (path: string) => boolean): void {
  routeExists = fn;
}

/** afterLoginPath is the page to open after a normal login. */
export function afterLoginPath(): string {
  return routeExists(AFTER_LOGIN_PREFERRED) ? AFTER_LOGIN_PREFERRED : AFTER_LOGIN_FALLBACK;
}
