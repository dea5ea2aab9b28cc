import { useSignals } from "@preact/signals-react/runtime";
import { useCallback, useEffect, useRef, useState, type ReactNode } from "react";
import { status } from "../stores/status";

interface TurnstileApi {
  render: (el: HTMLElement, opts: Record<string, unknown>) => string;
  remove: (id: string) => void;
}

declare global {
  interface Window {
    turnstile?: TurnstileApi;
  }
}

const SCRIPT_URL = "https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit";
let scriptPromise: Promise<void> | null = null;

function loadScript(): Promise<void> {
  if (window.turnstile) return Promise.resolve();
  if (!scriptPromise) {
    scriptPromise = new Promise((resolve, reject) => {
      const el = document.createElement("script");
      el.src = SCRIPT_URL;
      el.async = true;
      el.onload = () => resolve();
      el.onerror = () => {
        scriptPromise = null;
        reject(new Error("turnstile script failed to load"));
      };
      document.head.appendChild(el);
    });
  }
  return scriptPromise;
}

/** TurnstileWidgetProps configure the human check. */
export interface TurnstileWidgetProps {
  siteKey: string;
  onToken: (token: string) => void;
}

/** TurnstileWidget loads Cloudflare's script on demand and renders the check. */
export function TurnstileWidget({ siteKey, onToken }: TurnstileWidgetProps) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let widgetId: string | null = null;
    let cancelled = false;
    loadScript()
      .then(() => {
        if (cancelled || !ref.current || !window.turnstile) return;
        widgetId = window.turnstile.render(ref.current, {
          sitekey: siteKey,
          callback: (token: string) => onToken(token),
          "expired-callback": () => onToken(""),
          "error-callback": () => onToken(""),
        });
      })
      .catch(() => onToken(""));
    return () => {
      cancelled = true;
      if (widgetId && window.turnstile) window.turnstile.remove(widgetId);
    };
  }, [siteKey, onToken]);
  return <div ref={ref} className="turnstile" />;
}

/** TurnstileState tells a form whether the human check is on and what token it produced. */
export interface TurnstileState {
  enabled: boolean;
  token: string;
  /** ready is true when the form may be submitted. */
  ready: boolean;
  widget: ReactNode;
  /** reset draws a fresh check: the server accepts each token once, so call it after every request that sent one. */
  reset: () => void;
}

/** useTurnstile renders the check when the site requires it and tracks its token. */
export function useTurnstile(): TurnstileState {
  useSignals();
  const enabled = status.value.turnstile_check === true;
  const siteKey = status.value.turnstile_site_key ?? "";
  const [token, setToken] = useState("");
  const [round, setRound] = useState(0);
  const reset = useCallback(() => {
    if (!enabled) return;
    setToken("");
    setRound((n) => n + 1);
  }, [enabled]);
  return {
    enabled,
    token,
    ready: !enabled || token !== "",
    widget: enabled ? <TurnstileWidget key={round} siteKey={siteKey} onToken={setToken} /> : null,
    reset,
  };
}
