import { signal } from "@preact/signals-react";
import { readString, writeString } from "../lib/storage";

/** Appearance is the colour scheme of the console. */
export type Appearance = "light" | "dark";

/** THEME_KEY is the localStorage key holding the chosen appearance. */
export const THEME_KEY = "theme";

function initial(): Appearance {
  const stored = readString(THEME_KEY);
  if (stored === "dark" || stored === "light") return stored;
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

/** theme is the current appearance. */
export const theme = signal<Appearance>(initial());

/** setTheme changes and persists the appearance. */
export function setTheme(next: Appearance): void {
  theme.value = next;
  writeString(THEME_KEY, next);
}

/** toggleTheme switches between light and dark. */
export function toggleTheme(): void {
  setTheme(theme.value === "dark" ? "light" : "dark");
}
