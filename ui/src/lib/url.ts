/** isStandaloneUrl reports whether the whole text is one http(s) address, to be shown in a frame. */
export function isStandaloneUrl(text: string): boolean {
  return /^https?:\/\/\S+$/i.test(text.trim());
}
