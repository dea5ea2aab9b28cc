import { Button } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { SpecSection } from "../option-form/spec-section";

/** CHATS_TEMPLATE is an example chat list: {key} becomes the user's token and {address} the server address. */
export const CHATS_TEMPLATE = JSON.stringify(
  [
    { "ChatGPT Next Web": 'https://app.nextchat.dev/#/?settings={"key":"{key}","url":"{address}"}' },
    { "Lobe Chat": 'https://chat-preview.lobehub.com/?settings={"keyVaults":{"openai":{"apiKey":"{key}","baseURL":"{address}/v1"}}}' },
    { "AMA 问天": "ama://set-api-key?server={address}&key={key}" },
    { OpenCat: "opencat://team/join?domain={address}&token={key}" },
  ],
  null,
  2,
);

/** ChatsSection edits the chat links offered beside each token, as a JSON list. */
export function ChatsSection() {
  const { t } = useTranslation();
  return (
    <SpecSection
      id="chats"
      title={t("options.chats.title")}
      saveLabel={t("options.chats.save")}
      fields={[{ key: "Chats", kind: "textarea", json: "chats", checkInput: true, rows: 10, label: t("options.chats.Chats"), hint: t("options.chats.hint") }]}
      actions={(draft) => (
        <Button variant="soft" onClick={() => draft.set("Chats", CHATS_TEMPLATE)} data-testid="chats-template">
          {t("options.chats.template")}
        </Button>
      )}
    />
  );
}
