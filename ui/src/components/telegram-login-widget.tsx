import { useEffect, useRef } from "react";

/** TELEGRAM_WIDGET_URL is Telegram's Login Widget script; the server's CSP allows it only while Telegram login is on. */
const TELEGRAM_WIDGET_URL = "https://telegram.org/js/telegram-widget.js?22";

/** TelegramLoginWidgetProps configure the widget. */
export interface TelegramLoginWidgetProps {
  botName: string;
  /**
   * authUrl receives the signed login as query parameters (data-auth-url). The widget's other mode, data-onauth,
   * evaluates its attribute as code and would need 'unsafe-eval' in the CSP, so it is not used.
   */
  authUrl: string;
}

/** TelegramLoginWidget loads Telegram's script, which draws the login button in an iframe. */
export function TelegramLoginWidget({ botName, authUrl }: TelegramLoginWidgetProps) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const script = document.createElement("script");
    script.src = TELEGRAM_WIDGET_URL;
    script.async = true;
    script.setAttribute("data-telegram-login", botName);
    script.setAttribute("data-size", "large");
    script.setAttribute("data-auth-url", authUrl);
    el.appendChild(script);
    return () => {
      el.replaceChildren();
    };
  }, [botName, authUrl]);
  return <div ref={ref} className="telegram-widget" data-testid="telegram-widget" />;
}
