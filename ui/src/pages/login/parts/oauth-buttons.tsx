import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, Separator, Text } from "@radix-ui/themes";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../../../api/client";
import { TelegramStart } from "../../../components/telegram-login-widget";
import { startGitHubOAuth, startLinuxDOOAuth, telegramLoginAuthUrl } from "../../../lib/oauth";
import { readString } from "../../../lib/storage";
import { status } from "../../../stores/status";
import { WeChatLoginDialog } from "./wechat-login-dialog";

/** OAuthButtons lists the third-party logins the site has switched on. */
export function OAuthButtons() {
  useSignals();
  const { t } = useTranslation();
  const [wechatOpen, setWechatOpen] = useState(false);
  const s = status.value;
  // Read when clicked: the register page stores ?aff= after its first render.
  const aff = () => readString("aff") ?? undefined;
  const github = s.github_oauth === true && !!s.github_client_id;
  const linuxdo = s.linuxdo_oauth === true && !!s.linuxdo_client_id;
  const wechat = s.wechat_login === true;
  const telegram = s.telegram_oauth === true && !!s.telegram_bot_name;
  if (!github && !linuxdo && !wechat && !telegram) return null;
  return (
    <Flex direction="column" gap="3">
      <Flex align="center" gap="2">
        <Separator size="4" />
        <Text size="1" color="gray" className="nowrap">
          {t("auth.otherLogin")}
        </Text>
        <Separator size="4" />
      </Flex>
      <Flex gap="2" justify="center" wrap="wrap">
        {github ? (
          <Button
            variant="outline"
            data-testid="oauth-github"
            onClick={() => startGitHubOAuth(s.github_client_id as string, aff()).catch(handleError)}
          >
            GitHub
          </Button>
        ) : null}
        {linuxdo ? (
          <Button
            variant="outline"
            data-testid="oauth-linuxdo"
            onClick={() => startLinuxDOOAuth(s.linuxdo_client_id as string, aff()).catch(handleError)}
          >
            LinuxDO
          </Button>
        ) : null}
        {wechat ? (
          <Button variant="outline" data-testid="oauth-wechat" onClick={() => setWechatOpen(true)}>
            {t("auth.wechat")}
          </Button>
        ) : null}
      </Flex>
      {telegram ? <TelegramLogin botName={s.telegram_bot_name as string} /> : null}
      {wechat ? <WeChatLoginDialog open={wechatOpen} onOpenChange={setWechatOpen} /> : null}
    </Flex>
  );
}

/**
 * TelegramLogin offers the Telegram widget once a state for this session has been fetched: the widget sends the
 * browser to /oauth/telegram with that state, and the server signs in only the browser that asked for it.
 */
function TelegramLogin({ botName }: { botName: string }) {
  const { t } = useTranslation();
  return (
    <TelegramStart
      botName={botName}
      authUrl={telegramLoginAuthUrl}
      hint={t("oauth.telegramLoginHint")}
      align="center"
      testId="telegram-login"
      button={(start, busy) => (
        <Flex justify="center">
          <Button variant="outline" loading={busy} onClick={start} data-testid="oauth-telegram">
            Telegram
          </Button>
        </Flex>
      )}
    />
  );
}
