import { useCallback, useState } from "react";

/**
 * useBusyFor tracks which dialog's action is on its way, by the dialog's state object: a
 * confirmation dismissed while its request travels leaves the one opened since (another row's)
 * ready, and only the dialog whose action is pending shows it is busy.
 */
export function useBusyFor<K>(): [isBusy: (key: K | null) => boolean, run: (key: K, action: () => Promise<void>) => Promise<void>] {
  const [busy, setBusy] = useState<K | null>(null);
  const isBusy = useCallback((key: K | null) => key !== null && busy === key, [busy]);
  const run = useCallback(async (key: K, action: () => Promise<void>) => {
    setBusy(key);
    try {
      await action();
    } finally {
      // An action started since for another dialog stays busy until its own answer.
      setBusy((b) => (b === key ? null : b));
    }
  }, []);
  return [isBusy, run];
}
