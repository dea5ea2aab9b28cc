import { useSignals } from "@preact/signals-react/runtime";
import { Badge, Button, Card, Code, Flex, Heading, Text } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../../../../api/client";
import { generateAccessToken } from "../../../../api/user";
import { copyText } from "../../../../stores/clipboard";
import { toast } from "../../../../stores/toast";
import { refreshSelf, user } from "../../../../stores/user";

/** AccessTokenCard generates a new system access token and shows it once. */
export function AccessTokenCard() {
  useSignals();
  const { t } = useTranslation();
  const hasToken = user.value?.has_access_token === true;
  const currentId = user.value?.access_token_id ?? "";
  const [token, setToken] = useState("");
  // shownId names the token shown, once the record read after making it tells it.
  const [shownId, setShownId] = useState("");
  const [busy, setBusy] = useState(false);
  // A token revoked meanwhile (a new password ends it), or replaced by one made in another tab, is no
  // longer shown as the current one.
  useEffect(() => {
    if (!hasToken || (shownId && currentId !== shownId)) {
      setToken("");
      setShownId("");
    }
  }, [hasToken, currentId, shownId]);
  const generate = async () => {
    setBusy(true);
    try {
      const next = await generateAccessToken();
      setToken(next);
      setShownId("");
      void refreshSelf(true)
        .then((u) => setShownId(u?.access_token_id ?? ""))
        .catch(() => {});
      if (await copyText(next)) toast.success(t("accessToken.resetCopied"));
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card size="3">
      <Flex justify="between" align="center" mb="2" gap="2">
        <Heading size="4">{t("accessToken.title")}</Heading>
        <Badge color={hasToken || token ? "green" : "gray"} data-testid="access-token-state">
          {hasToken || token ? t("accessToken.exists") : t("accessToken.none")}
        </Badge>
      </Flex>
      <Text as="p" size="2" color="gray" mb="3">
        {t("accessToken.hint")}
      </Text>
      {token ? (
        <Flex direction="column" gap="2" mb="3">
          <Code className="break-all selectable" data-testid="access-token">
            {token}
          </Code>
          <Text size="1" color="amber">
            {t("accessToken.onlyOnce")}
          </Text>
        </Flex>
      ) : null}
      <Button onClick={generate} loading={busy} data-testid="generate-token">
        {token || hasToken ? t("accessToken.regenerate") : t("accessToken.generate")}
      </Button>
    </Card>
  );
}
