import { useSignals } from "@preact/signals-react/runtime";
import { Button, Card, Flex, Heading, Text } from "@radix-ui/themes";
import { useEffect, useRef, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { useLocation, useSearch } from "wouter";
import { handleError } from "../../../../api/client";
import { TelegramStart } from "../../../../components/telegram-login-widget";
import { serverText } from "../../../../i18n/server";
import { startGitHubOAuth, startLinuxDOOAuth, takeTelegramBind, telegramBindAuthUrl } from "../../../../lib/oauth";
import { status } from "../../../../stores/status";
import { toast } from "../../../../stores/toast";
import { refreshSelf, user } from "../../../../stores/user";
import { showDialog } from "./dialogs";

function Row({ name, value, action, testId }: { name: string; value: ReactNode; action?: ReactNode; testId: string }) {
  return (
    <Flex justify="between" align="center" gap="3" className="binding-row" data-testid={testId}>
      <Flex direction="column" className="min-w-0">
        <Text size="2" weight="medium">
          {name}
        </Text>
        <Text size="1" color="gray" className="break-all">
          {value}
        </Text>
      </Flex>
      {action}
    </Flex>
  );
}

/**
 * useBindResult reports the outcome of the Telegram binding, which comes back as a browser redirect to
 * /setting?tab=personal with bind=telegram or error=<message>, and then drops those parameters from the address. Only
 * a binding this tab started is reported: anyone may link to the page with an error= of their own words.
 */
function useBindResult() {
  const { t } = useTranslation();
  const search = useSearch();
  const [, navigate] = useLocation();
  const handled = useRef("");
  useEffect(() => {
    const q = new URLSearchParams(search);
    const bound = q.get("bind");
    const error = q.get("error");
    if ((!bound && error === null) || handled.current === search) return;
    handled.current = search;
    // A result no binding of this tab asked for came from a link elsewhere: its text is not the server's.
    const started = takeTelegramBind();
    if (started && bound) {
      toast.success(bound === "telegram" ? t("oauth.telegramBound") : t("profile.bindSuccess"));
      void refreshSelf().catch(() => {});
    } else if (started && error !== null) {
      toast.error(t("oauth.bindFailed", { message: serverText(error) }));
    }
    navigate("/setting?tab=personal", { replace: true });
  }, [search, navigate, t]);
}

/** TelegramBind offers the Telegram widget once a state for this session has been fetched. */
function TelegramBind({ botName }: { botName: string }) {
  const { t } = useTranslation();
  return (
    <TelegramStart
      botName={botName}
      authUrl={telegramBindAuthUrl}
      hint={t("oauth.telegramHint")}
      align="end"
      testId="telegram-bind"
      button={(start, busy) => (
        <Button size="1" variant="soft" loading={busy} onClick={start} data-testid="bind-telegram">
          {t("profile.bind")}
        </Button>
      )}
    />
  );
}

/** BindingsCard shows the e-mail and third-party accounts bound to the user and offers the enabled bindings. */
export function BindingsCard() {
  useSignals();
  const { t } = useTranslation();
  useBindResult();
  const u = user.value;
  const s = status.value;
  if (!u) return null;
  const unbound = t("profile.unbound");
  const bound = (v: unknown) => (v ? String(v) : unbound);
  return (
    <Card size="3">
      <Heading size="4" mb="3">
        {t("profile.bindings")}
      </Heading>
      <Flex direction="column" gap="3">
        <Row
          testId="binding-email"
          name={t("profile.email")}
          value={bound(u.email)}
          action={
            <Button size="1" variant="soft" onClick={() => showDialog("email")} data-testid="bind-email">
              {u.email ? t("profile.changeBinding") : t("profile.bind")}
            </Button>
          }
        />
        <Row
          testId="binding-github"
          name="GitHub"
          value={bound(u.github_id)}
          action={
            s.github_oauth && s.github_client_id && !u.github_id ? (
              <Button
                size="1"
                variant="soft"
                data-testid="bind-github"
                onClick={() => startGitHubOAuth(s.github_client_id as string).catch(handleError)}
              >
                {t("profile.bind")}
              </Button>
            ) : undefined
          }
        />
        <Row
          testId="binding-wechat"
          name={t("auth.wechat")}
          value={u.wechat_id ? t("profile.bound") : unbound}
          action={
            s.wechat_login && !u.wechat_id ? (
              <Button size="1" variant="soft" onClick={() => showDialog("wechat")} data-testid="bind-wechat">
                {t("profile.bind")}
              </Button>
            ) : undefined
          }
        />
        <Row
          testId="binding-telegram"
          name="Telegram"
          value={bound(u.telegram_id)}
          action={s.telegram_oauth && s.telegram_bot_name && !u.telegram_id ? <TelegramBind botName={s.telegram_bot_name} /> : undefined}
        />
        <Row
          testId="binding-linuxdo"
          name="LinuxDO"
          value={bound(u.linux_do_id)}
          action={
            s.linuxdo_oauth && s.linuxdo_client_id && !u.linux_do_id ? (
              <Button
                size="1"
                variant="soft"
                data-testid="bind-linuxdo"
                onClick={() => startLinuxDOOAuth(s.linuxdo_client_id as string).catch(handleError)}
              >
                {t("profile.bind")}
              </Button>
            ) : undefined
          }
        />
      </Flex>
    </Card>
  );
}
