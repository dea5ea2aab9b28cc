import { useSignals } from "@preact/signals-react/runtime";
import { Card, Grid, Spinner, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { renderNumber } from "../../../lib/quota";
import { dashboardLoading, rows, totals } from "../../../stores/dashboard";
import { renderSpent } from "../../../stores/status";

function Total({ label, value, testId, loading }: { label: string; value: string; testId: string; loading: string | null }) {
  return (
    <Card size="2">
      <Text as="div" size="2" color="gray">
        {label}
      </Text>
      {loading !== null ? (
        // A read in flight with no rows yet: $0.00 would read as "no usage".
        <Text as="div" size="6" weight="bold" color="gray" data-testid={testId} aria-busy="true" title={loading}>
          <Spinner aria-label={loading} />
        </Text>
      ) : (
        <Text as="div" size="6" weight="bold" data-testid={testId}>
          {value}
        </Text>
      )}
    </Card>
  );
}

/** Totals sums quota, requests and tokens over the queried range. */
export function Totals() {
  useSignals();
  const { t } = useTranslation();
  const s = totals.value;
  const loading = rows.value.length === 0 && dashboardLoading.value ? t("table.loading") : null;
  return (
    <Grid columns={{ initial: "1", sm: "3" }} gap="3">
      <Total label={t("dashboard.totalQuota")} value={renderSpent(s.quota)} testId="detail-total-quota" loading={loading} />
      <Total label={t("dashboard.totalCount")} value={renderNumber(s.count)} testId="detail-total-count" loading={loading} />
      <Total label={t("dashboard.totalTokens")} value={renderNumber(s.tokens)} testId="detail-total-tokens" loading={loading} />
    </Grid>
  );
}
