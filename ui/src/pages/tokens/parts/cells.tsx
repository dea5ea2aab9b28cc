import { useSignals } from "@preact/signals-react/runtime";
import { Badge, Button, Code, Flex } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import type { Token } from "../../../api/tokens";
import { copyText } from "../../../stores/clipboard";
import { toast } from "../../../stores/toast";
import { fullKey, maskedKey, shownKeys, TOKEN_DISABLED, TOKEN_ENABLED, TOKEN_EXHAUSTED, TOKEN_EXPIRED, toggleKey } from "../../../stores/tokens";

/** TokenStatus shows enabled (or enabled with limited models), disabled, expired or exhausted. */
export function TokenStatus({ token }: { token: Token }) {
  const { t } = useTranslation();
  switch (token.status) {
    case TOKEN_ENABLED:
      return token.model_limits_enabled ? (
        <Badge color="teal" data-testid="token-status">
          {t("tokens.status.limited")}
        </Badge>
      ) : (
        <Badge color="green" data-testid="token-status">
          {t("tokens.status.enabled")}
        </Badge>
      );
    case TOKEN_DISABLED:
      return (
        <Badge color="red" data-testid="token-status">
          {t("tokens.status.disabled")}
        </Badge>
      );
    case TOKEN_EXPIRED:
      return (
        <Badge color="yellow" data-testid="token-status">
          {t("tokens.status.expired")}
        </Badge>
      );
    case TOKEN_EXHAUSTED:
      return (
        <Badge color="gray" data-testid="token-status">
          {t("tokens.status.exhausted")}
        </Badge>
      );
    default:
      return (
        <Badge color="gray" data-testid="token-status">
          {t("tokens.status.unknown")}
        </Badge>
      );
  }
}

/** KeyCell shows the key masked or in full, with view and copy buttons; a refused copy opens the manual-copy dialog. */
export function KeyCell({ token }: { token: Token }) {
  useSignals();
  const { t } = useTranslation();
  const shown = shownKeys.value.has(token.id);
  const copy = async () => {
    if (await copyText(fullKey(token))) toast.success(t("tokens.msg.copied"));
  };
  return (
    <Flex gap="1" align="center" wrap="wrap">
      <Code variant="ghost" className={shown ? "mono" : "mono nowrap"} data-testid="token-key">
        {shown ? fullKey(token) : maskedKey(token)}
      </Code>
      <Button size="1" variant="ghost" onClick={() => toggleKey(token.id)} data-testid="view-key">
        {shown ? t("tokens.row.hide") : t("tokens.row.view")}
      </Button>
      <Button size="1" variant="ghost" onClick={() => void copy()} data-testid="copy-key">
        {t("tokens.row.copy")}
      </Button>
    </Flex>
  );
}
