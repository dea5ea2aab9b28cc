import { useSignals } from "@preact/signals-react/runtime";
import { Button, Card, Flex, Text, TextArea } from "@radix-ui/themes";
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { clearContext, messages, send, stop, streaming } from "../../../stores/playground";
import { MessageBubble } from "./message-bubble";

/** ChatPanel shows the conversation, the composer and the clear-context action. */
export function ChatPanel() {
  useSignals();
  const { t } = useTranslation();
  const [draft, setDraft] = useState("");
  const list = useRef<HTMLDivElement>(null);
  const msgs = messages.value;
  const busy = streaming.value;
  const last = msgs[msgs.length - 1];

  // Follow the reply while it grows.
  useEffect(() => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [msgs.length, last?.content, last?.status]);

  const submit = () => {
    if (!draft.trim() || busy) return;
    // A message the store refuses (no model chosen) stays in the box.
    if (send(draft)) setDraft("");
  };

  return (
    <Card size="2" className="playground-chat">
      <div className="playground-messages" ref={list} data-testid="pg-messages" aria-live="polite">
        {msgs.length === 0 ? (
          <Flex justify="center" align="center" className="grow">
            <Text color="gray">{t("playground.empty")}</Text>
          </Flex>
        ) : (
          msgs.map((m) => <MessageBubble key={m.id} message={m} />)
        )}
      </div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <Flex direction="column" gap="2" pt="2">
          <TextArea
            rows={3}
            placeholder={t("playground.inputPlaceholder")}
            aria-label={t("playground.inputPlaceholder")}
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
                e.preventDefault();
                submit();
              }
            }}
            data-testid="pg-input"
          />
          <Flex gap="2" justify="end">
            <Button type="button" variant="soft" color="gray" onClick={clearContext} data-testid="pg-clear">
              {t("playground.clear")}
            </Button>
            {busy ? (
              <Button type="button" color="red" variant="soft" onClick={stop} data-testid="pg-stop">
                {t("playground.stop")}
              </Button>
            ) : (
              <Button type="submit" disabled={!draft.trim()} data-testid="pg-send">
                {t("playground.send")}
              </Button>
            )}
          </Flex>
        </Flex>
      </form>
    </Card>
  );
}
