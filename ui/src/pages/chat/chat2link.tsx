import { useSignals } from "@preact/signals-react/runtime";
import { Callout, Flex, Spinner, Text } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { Icon } from "../../components/icons";
import { chat2Link, isWebUrl } from "../../lib/chat-links";
import { serverAddress, status, statusLoaded } from "../../stores/status";
import { toast } from "../../stores/toast";
import { useTokenKey } from "./parts/use-token-key";

/** Chat2LinkPage replaces itself with status.chat_link, carrying the first enabled token and the server address. */
export default function Chat2LinkPage() {
  useSignals();
  const { t } = useTranslation();
  // The link the server has now: the copy kept from an earlier visit may name a site the key must no longer go to.
  const loaded = statusLoaded.value;
  const chatLink = loaded ? (status.value.chat_link ?? "") : "";
  const key = useTokenKey(chatLink !== "");
  const address = serverAddress.value;
  const target = key ? chat2Link(chatLink, key, address) : "";
  const problem = !loaded ? null : !chatLink ? t("chatPage.noChats") : key && !isWebUrl(target) ? t("chatPage.badLink") : null;

  useEffect(() => {
    if (problem) toast.error(problem);
  }, [problem]);
  useEffect(() => {
    if (target && isWebUrl(target)) window.location.replace(target);
  }, [target]);

  if (problem) {
    return (
      <Callout.Root color="orange" data-testid="chat2link-problem">
        <Callout.Icon>
          <Icon name="alert" />
        </Callout.Icon>
        <Callout.Text>{problem}</Callout.Text>
      </Callout.Root>
    );
  }
  return (
    <Flex justify="center" align="center" gap="2" py="6" data-testid="chat2link">
      {key !== null ? <Spinner /> : null}
      <Text color="gray">{key === null ? t("chatPage.noToken") : t("chatPage.redirecting")}</Text>
    </Flex>
  );
}
