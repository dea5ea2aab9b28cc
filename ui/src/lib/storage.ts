/** readString returns the raw localStorage value, or null when absent or storage is unavailable. */
export function readString(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

/** writeString stores a raw value; null or undefined removes the key. */
export function writeString(key: string, value: string | null | undefined): void {
  try {
    if (value === null || value === undefined) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    /* storage full or disabled: the value simply is not persisted */
  }
}

/** readJSON parses a stored JSON value, falling back when it is absent or malformed. */
export function readJSON<T>(key: string, fallback: T): T {
  const raw = readString(key);
  if (raw === null || raw === "") return fallback;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return fallback;
  }
}

/** writeJSON stores a value as JSON. */
export function writeJSON(key: string, value: unknown): void {
  writeString(key, JSON.stringify(value));
}

/** removeKey deletes a stored key. */
export function removeKey(key: string): void {
  writeString(key, null);
}

/** readBool reads a key stored as the string "true" or "false". */
export function readBool(key: string): boolean | null {
  const raw = readString(key);
  if (raw === null) return null;
  return raw === "true";
}
