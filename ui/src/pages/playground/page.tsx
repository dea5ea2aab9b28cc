import { Flex, Heading } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { loadOptions } from "../../stores/playground";
import { ChatPanel } from "./parts/chat-panel";
import { SettingsPanel } from "./parts/settings-panel";
import "./playground.css";

/** PlaygroundPage assembles the settings side panel and the chat area. */
export default function PlaygroundPage() {
  const { t } = useTranslation();
  useEffect(() => {
    void loadOptions();
  }, []);
  return (
    <Flex direction="column" gap="4" data-testid="playground-page">
      <Heading size="6">{t("playground.title")}</Heading>
      <div className="playground">
        <SettingsPanel />
        <ChatPanel />
      </div>
    </Flex>
  );
}
