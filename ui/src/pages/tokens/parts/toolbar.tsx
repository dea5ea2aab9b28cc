import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { copyText } from "../../../stores/clipboard";
import { toast } from "../../../stores/toast";
import { chosenTokens, fullKey, refreshTokens, tokensLoading } from "../../../stores/tokens";
import { openEditor } from "../dialogs";

/** TokenToolbar adds a token, copies the selected ones (name and key per line, whichever page they were ticked on) and refreshes. */
export function TokenToolbar() {
  useSignals();
  const { t } = useTranslation();
  const copySelected = async () => {
    const chosen = chosenTokens();
    if (chosen.length === 0) {
      toast.error(t("tokens.msg.selectOne"));
      return;
    }
    const text = chosen.map((x) => `${x.name}    ${fullKey(x)}`).join("\n");
    if (await copyText(text)) toast.success(t("tokens.msg.copied"));
  };
  return (
    <Flex gap="2" wrap="wrap">
      <Button onClick={() => openEditor()} data-testid="add-token">
        {t("tokens.action.add")}
      </Button>
      <Button variant="soft" onClick={() => void copySelected()} data-testid="copy-selected">
        {t("tokens.action.copySelected")}
      </Button>
      <Button variant="soft" color="gray" onClick={() => void refreshTokens()} loading={tokensLoading.value}>
        {t("tokens.action.refresh")}
      </Button>
    </Flex>
  );
}
