import { useSignals } from "@preact/signals-react/runtime";
import { Button, Card, Code, Flex, Grid, Heading, Text } from "@radix-ui/themes";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../../../../api/client";
import { getAffCode } from "../../../../api/user";
import { copyText } from "../../../../stores/clipboard";
import { renderQuota } from "../../../../stores/status";
import { toast } from "../../../../stores/toast";
import { user } from "../../../../stores/user";
import { showDialog } from "./dialogs";

/** inviteLink builds the registration link carrying an invite code. */
export function inviteLink(code: string): string {
  return `${location.origin}/register?aff=${encodeURIComponent(code)}`;
}

/** InviteCard shows invite earnings, copies the invite link and opens the transfer dialog. */
export function InviteCard() {
  useSignals();
  const { t } = useTranslation();
  const [link, setLink] = useState("");
  const [busy, setBusy] = useState(false);
  const u = user.value;
  if (!u) return null;
  const copyLink = async () => {
    setBusy(true);
    try {
      const code = u.aff_code || (await getAffCode());
      const next = inviteLink(code);
      setLink(next);
      if (await copyText(next)) toast.success(t("invite.copied"));
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card size="3">
      <Heading size="4" mb="3">
        {t("invite.title")}
      </Heading>
      <Grid columns="3" gap="3" mb="3">
        <Flex direction="column">
          <Text size="1" color="gray">
            {t("invite.pending")}
          </Text>
          <Text weight="bold" data-testid="aff-quota">
            {renderQuota(u.aff_quota ?? 0)}
          </Text>
        </Flex>
        <Flex direction="column">
          <Text size="1" color="gray">
            {t("invite.total")}
          </Text>
          <Text weight="bold">{renderQuota(u.aff_history_quota ?? 0)}</Text>
        </Flex>
        <Flex direction="column">
          <Text size="1" color="gray">
            {t("invite.count")}
          </Text>
          <Text weight="bold">{u.aff_count ?? 0}</Text>
        </Flex>
      </Grid>
      {link ? (
        <Code className="break-all" data-testid="invite-link">
          {link}
        </Code>
      ) : null}
      <Flex gap="2" mt="3" wrap="wrap">
        <Button onClick={copyLink} loading={busy} data-testid="copy-invite">
          {t("invite.copyLink")}
        </Button>
        <Button variant="soft" onClick={() => showDialog("transfer")}>
          {t("invite.transfer")}
        </Button>
      </Flex>
    </Card>
  );
}
