import { useSignals } from "@preact/signals-react/runtime";
import { Avatar, Badge, Box, Button, Card, Flex, Grid, Heading, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { roleLabelKey } from "../../../../lib/roles";
import { renderQuota } from "../../../../stores/status";
import { user } from "../../../../stores/user";
import { showDialog } from "./dialogs";
import { initial } from "../../../../components/format";

function Stat({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <Box className="stat">
      <Text as="div" size="1" color="gray">
        {label}
      </Text>
      <Text as="div" size="5" weight="bold" data-testid={testId}>
        {value}
      </Text>
    </Box>
  );
}

/** ProfileCard shows who the user is and their balance, usage and request count. */
export function ProfileCard() {
  useSignals();
  const { t } = useTranslation();
  const u = user.value;
  if (!u) return null;
  return (
    <Card size="3" className="span-2">
      <Flex gap="4" align="center" wrap="wrap" justify="between">
        <Flex gap="3" align="center">
          <Avatar size="5" radius="full" fallback={initial(u.username)} />
          <Box>
            <Heading size="5" data-testid="profile-display-name">
              {u.display_name || u.username}
            </Heading>
            <Flex gap="2" align="center" mt="1" wrap="wrap">
              <Text size="2" color="gray" data-testid="profile-username">
                {u.username}
              </Text>
              <Badge color="indigo">{t(roleLabelKey(u.role))}</Badge>
              <Badge color="gray" data-testid="profile-group">
                {t("profile.group")}: {u.group || "default"}
              </Badge>
            </Flex>
          </Box>
        </Flex>
        <Button variant="soft" onClick={() => showDialog("profile")} data-testid="edit-profile">
          {t("profile.edit")}
        </Button>
      </Flex>
      <Grid columns={{ initial: "1", sm: "3" }} gap="4" mt="4">
        <Stat label={t("profile.balance")} value={renderQuota(u.quota ?? 0)} testId="balance" />
        <Stat label={t("profile.usedQuota")} value={renderQuota(u.used_quota ?? 0)} testId="used-quota" />
        <Stat label={t("profile.requestCount")} value={String(u.request_count ?? 0)} testId="request-count" />
      </Grid>
    </Card>
  );
}
