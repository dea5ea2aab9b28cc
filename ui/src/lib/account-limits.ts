/** USERNAME_MAX, DISPLAY_NAME_MAX and PASSWORD_MIN/MAX are the account forms' length limits, in characters. */
export const USERNAME_MAX = 20;
export const DISPLAY_NAME_MAX = 20;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 20;
/** EMAIL_MAX is the longest e-mail address the server takes, in characters. */
export const EMAIL_MAX = 50;

/** charCount counts characters as the server does (code points): an emoji is one, not two UTF-16 units. */
export function charCount(s: string): number {
  return Array.from(s).length;
}

/**
 * inputMax is the maxLength of an input that takes up to chars characters: the attribute counts UTF-16 units and
 * a character takes up to two, so chars emoji fit; the server refuses more characters with its own message.
 */
export function inputMax(chars: number): number {
  return 2 * chars;
}

/** plausibleEmail tells whether text can be an address the server took: one @ between non-blank parts, within EMAIL_MAX. */
export function plausibleEmail(text: string): boolean {
  return charCount(text) <= EMAIL_MAX && /^[^\s@]+@[^\s@]+$/u.test(text);
}
