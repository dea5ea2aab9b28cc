import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { navigate } from "wouter/use-browser-location";
import { enabledTokenKeys } from "../../../api/playground";
import { toast } from "../../../stores/toast";

/** REDIRECT_DELAY_MS is how long the "no enabled token" message shows before /token opens. */
export const REDIRECT_DELAY_MS = 1500;

/**
 * useTokenKey loads the key of the user's first enabled token. Without one it
 * tells the user and opens /token after 1.5 s. It returns undefined while
 * loading and null when there is no key.
 */
export function useTokenKey(enabled: boolean): string | null | undefined {
  const { t } = useTranslation();
  const [key, setKey] = useState<string | null | undefined>(undefined);
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    enabledTokenKeys()
      .then((keys) => {
        if (!live) return;
        if (keys.length === 0) {
          setKey(null);
          toast.error(t("chatPage.noToken"));
          timer = setTimeout(() => navigate("/token"), REDIRECT_DELAY_MS);
          return;
        }
        setKey(keys[0]);
      })
      .catch(() => live && setKey(null));
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [enabled, t]);
  return key;
}
