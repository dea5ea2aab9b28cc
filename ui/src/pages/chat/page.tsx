import { useSignals } from "@preact/signals-react/runtime";
import { Button, Callout, Flex, Link as ThemeLink, Spinner, Text } from "@radix-ui/themes";
import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import { Link, useParams } from "wouter";
import { ChatSubmenu } from "../../components/chat-submenu";
import { Icon } from "../../components/icons";
import { chatTargets, fillChatLink, isAppLink, isWebUrl } from "../../lib/chat-links";
import { serverAddress, status, statusLoaded } from "../../stores/status";
import { toast } from "../../stores/toast";
import { isLoggedIn } from "../../stores/user";
import { useTokenKey } from "./parts/use-token-key";
import "./chat.css";

function Notice({ text, testId }: { text: string; testId: string }) {
  return (
    <Callout.Root color="orange" data-testid={testId}>
      <Callout.Icon>
        <Icon name="alert" />
      </Callout.Icon>
      <Callout.Text>{text}</Callout.Text>
    </Callout.Root>
  );
}

/** ChatPage frames status.chats[id] with the user's first enabled token and the server address filled in. */
export default function ChatPage() {
  useSignals();
  const { t } = useTranslation();
  const { id } = useParams<{ id?: string }>();
  const targets = chatTargets(status.value.chats);
  const index = id === undefined ? 0 : Number(id);
  const target = targets?.find((c) => c.index === index) ?? null;
  const loggedIn = isLoggedIn.value;
  // The targets the server has now: the copy kept from an earlier visit may name a site the key must no longer go to.
  const loaded = statusLoaded.value;
  const key = useTokenKey(loaded && loggedIn && target !== null && target.template !== "");
  const address = serverAddress.value;
  const link = target && key ? fillChatLink(target.template, key, address) : "";
  const linkOk = link !== "" && isWebUrl(link);
  // A desktop or mobile chat app cannot be framed: it is opened from a link.
  const appLink = link !== "" && !linkOk && isAppLink(link);

  // Configuration errors are also toasted once per target, as the sidebar entries are.
  const told = useRef<string | null>(null);
  let problem: string | null = null;
  if (!loaded) problem = null;
  else if (targets === null) problem = t("chatPage.parseFailed");
  else if (targets.length === 0) problem = t("chatPage.noChats");
  else if (!target || !target.template || (key && !linkOk && !appLink)) problem = t("chatPage.badLink");
  useEffect(() => {
    if (problem && told.current !== `${index}:${problem}`) {
      told.current = `${index}:${problem}`;
      toast.error(problem);
    }
  }, [problem, index]);

  return (
    <Flex direction="column" gap="3" className="chat-page" data-testid="chat-page">
      <ChatSubmenu variant="tabs" />
      {problem ? (
        <Notice text={problem} testId="chat-problem" />
      ) : !loggedIn ? (
        <Callout.Root color="orange" data-testid="chat-login">
          <Callout.Icon>
            <Icon name="info" />
          </Callout.Icon>
          <Callout.Text>
            {t("chatPage.loginNeeded")}{" "}
            <Button asChild size="1" variant="soft">
              <Link href="/login">{t("chatPage.login")}</Link>
            </Button>
          </Callout.Text>
        </Callout.Root>
      ) : key === undefined ? (
        <Flex justify="center" align="center" gap="2" py="6">
          <Spinner />
          <Text color="gray">{t("chatPage.redirecting")}</Text>
        </Flex>
      ) : key === null ? (
        <Notice text={t("chatPage.noToken")} testId="chat-no-token" />
      ) : appLink ? (
        <Callout.Root color="blue" data-testid="chat-app">
          <Callout.Text>
            {t("chatPage.appHint", { name: target?.name ?? "" })}{" "}
            <Button asChild size="1" variant="soft">
              <a href={link} data-testid="chat-app-open">
                {t("chatPage.openApp")}
              </a>
            </Button>
          </Callout.Text>
        </Callout.Root>
      ) : (
        <>
          <Flex justify="end">
            <ThemeLink href={link} target="_blank" rel="noopener noreferrer" size="2">
              {t("chatPage.openNew")}
            </ThemeLink>
          </Flex>
          <iframe
            className="chat-frame"
            src={link}
            title={target?.name ?? "chat"}
            sandbox="allow-scripts allow-same-origin allow-forms allow-popups allow-downloads allow-modals"
            allow="clipboard-read; clipboard-write; microphone"
            referrerPolicy="no-referrer"
            data-testid="chat-frame"
          />
        </>
      )}
    </Flex>
  );
}
