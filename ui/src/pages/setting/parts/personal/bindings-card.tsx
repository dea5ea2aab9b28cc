import { useSignals } from "@preact/signals-react/runtime";
import { Badge, Button, Card, Flex, Heading, Text } from "@radix-ui/themes";
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../../../../api/client";
import { startGitHubOAuth, startLinuxDOOAuth } from "../../../../lib/oauth";
import { status } from "../../../../stores/status";
import { user } from "../../../../stores/user";
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

/** BindingsCard shows the e-mail and third-party accounts bound to the user and offers the enabled bindings. */
export function BindingsCard() {
  useSignals();
  const { t } = useTranslation();
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
              <Button size="1" variant="soft" onClick={() => startGitHubOAuth(s.github_client_id as string).catch(handleError)}>
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
              <Button size="1" variant="soft" onClick={() => showDialog("wechat")}>
                {t("profile.bind")}
              </Button>
            ) : undefined
          }
        />
        <Row
          testId="binding-telegram"
          name="Telegram"
          value={bound(u.telegram_id)}
          action={s.telegram_oauth && s.telegram_bot_name ? <Badge color="gray">@{s.telegram_bot_name}</Badge> : undefined}
        />
        <Row
          testId="binding-linuxdo"
          name="LinuxDO"
          value={bound(u.linux_do_id)}
          action={
            s.linuxdo_oauth && s.linuxdo_client_id && !u.linux_do_id ? (
              <Button size="1" variant="soft" onClick={() => startLinuxDOOAuth(s.linuxdo_client_id as string).catch(handleError)}>
                {t("profile.bind")}
              </Button>
            ) : undefined
          }
        />
      </Flex>
    </Card>
  );
}
