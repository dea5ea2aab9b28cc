import { useSignals } from "@preact/signals-react/runtime";
import { Card, Grid, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { renderNumber } from "../../../lib/quota";
import { totals } from "../../../stores/dashboard";
import { renderQuota } from "../../../stores/status";

function Total({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <Card size="2">
      <Text as="div" size="2" color="gray">
        {label}
      </Text>
      <Text as="div" size="6" weight="bold" data-testid={testId}>
        {value}
      </Text>
    </Card>
  );
}

/** Totals sums quota, requests and tokens over the queried range. */
export function Totals() {
  useSignals();
  const { t } = useTranslation();
  const s = totals.value;
  return (
    <Grid columns={{ initial: "1", sm: "3" }} gap="3">
      <Total label={t("dashboard.totalQuota")} value={renderQuota(s.quota)} testId="detail-total-quota" />
      <Total label={t("dashboard.totalCount")} value={renderNumber(s.count)} testId="detail-total-count" />
      <Total label={t("dashboard.totalTokens")} value={renderNumber(s.tokens)} testId="detail-total-tokens" />
    </Grid>
  );
}
