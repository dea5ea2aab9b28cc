import { Flex, Spinner, Text } from "@radix-ui/themes";
import { memo, useMemo } from "react";
import { useTranslation } from "react-i18next";
import type { PlaygroundMessage } from "../../../stores/playground";
import { renderReply } from "./render-reply";

/** MessageBubble shows one message; replies are rendered as sanitised Markdown. */
export const MessageBubble = memo(function MessageBubble({ message }: { message: PlaygroundMessage }) {
  const { t } = useTranslation();
  const html = useMemo(() => (message.role === "assistant" && message.status !== "error" ? renderReply(message.content) : ""), [message.role, message.status, message.content]);
  return (
    <div className="playground-bubble" data-role={message.role} data-status={message.status} data-testid={`message-${message.role}`}>
      {message.role === "user" ? (
        message.content
      ) : message.status === "loading" ? (
        <Flex align="center" gap="2">
          <Spinner />
          <Text size="2" color="gray">
            {t("playground.loading")}
          </Text>
        </Flex>
      ) : message.status === "error" ? (
        <Flex direction="column" gap="1">
          <Text size="1" weight="bold">
            {t("playground.errorLabel")}
          </Text>
          <Text size="2" style={{ whiteSpace: "pre-wrap" }}>
            {message.content}
          </Text>
        </Flex>
      ) : (
        <>
          <div className={`rich-content ${message.status === "incomplete" && !message.stopped ? "playground-cursor" : ""}`} dangerouslySetInnerHTML={{ __html: html }} />
          {message.stopped ? (
            <Text size="1" color="gray" data-testid="message-stopped">
              {t("playground.stopped")}
            </Text>
          ) : null}
        </>
      )}
    </div>
  );
});
