import { Flex, Text } from "@radix-ui/themes";
import { useEffect, useRef, useState, type ReactNode } from "react";
import { handleError } from "../api/client";

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

/** TelegramStartProps configure a Telegram login or binding that asks the server for a state first. */
export interface TelegramStartProps {
  botName: string;
  /** authUrl makes the widget's data-auth-url, with a state fetched for this session, when the button is pressed. */
  authUrl: () => Promise<string>;
  hint: string;
  align: "center" | "end";
  testId: string;
  /** button draws what starts it; busy is true while the state is being fetched. */
  button: (start: () => void, busy: boolean) => ReactNode;
}

/** TelegramStart offers the Telegram widget once a state for this session has been fetched. */
export function TelegramStart({ botName, authUrl, hint, align, testId, button }: TelegramStartProps) {
  const [url, setUrl] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (url) {
    return (
      <Flex direction="column" gap="2" align={align} data-testid={testId}>
        <Text size="1" color="gray">
          {hint}
        </Text>
        <TelegramLoginWidget botName={botName} authUrl={url} />
      </Flex>
    );
  }
  const start = async () => {
    setBusy(true);
    try {
      setUrl(await authUrl());
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  };
  return button(() => void start(), busy);
}
