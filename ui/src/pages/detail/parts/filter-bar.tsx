import { useSignals } from "@preact/signals-react/runtime";
import { Button, Card, Flex, SegmentedControl, Text, TextField } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { parseDateTime, toDateTimeLocal } from "../../../components/format";
import { dashboardLoading, filter, GRANULARITIES, loadDashboard, resetFilter, setGranularity, updateFilter, type Granularity } from "../../../stores/dashboard";
import { isAdmin } from "../../../stores/user";

/** FilterBar picks the time range, the granularity and (administrators) a username. */
export function FilterBar() {
  useSignals();
  const { t } = useTranslation();
  const f = filter.value;
  return (
    <Card size="2">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void loadDashboard();
        }}
      >
        <Flex gap="3" wrap="wrap" align="end">
          <label className="field">
            <Text size="2" weight="medium">
              {t("dashboard.start")}
            </Text>
            <TextField.Root
              type="datetime-local"
              step={1}
              value={toDateTimeLocal(f.start)}
              onChange={(e) => {
                const v = parseDateTime(e.target.value);
                if (v !== null) updateFilter({ start: v });
              }}
              data-testid="detail-start"
            />
          </label>
          <label className="field">
            <Text size="2" weight="medium">
              {t("dashboard.end")}
            </Text>
            <TextField.Root
              type="datetime-local"
              step={1}
              value={toDateTimeLocal(f.end)}
              onChange={(e) => {
                const v = parseDateTime(e.target.value);
                if (v !== null) updateFilter({ end: v });
              }}
              data-testid="detail-end"
            />
          </label>
          {isAdmin.value ? (
            <label className="field">
              <Text size="2" weight="medium">
                {t("dashboard.username")}
              </Text>
              <TextField.Root placeholder={t("dashboard.usernamePlaceholder")} value={f.username} onChange={(e) => updateFilter({ username: e.target.value })} data-testid="detail-username" />
            </label>
          ) : null}
          <div className="field">
            <Text size="2" weight="medium">
              {t("dashboard.granularity")}
            </Text>
            <SegmentedControl.Root value={f.granularity} onValueChange={(v) => setGranularity(v as Granularity)} aria-label={t("dashboard.granularity")} data-testid="detail-granularity">
              {GRANULARITIES.map((g) => (
                <SegmentedControl.Item key={g} value={g} data-testid={`detail-granularity-${g}`}>
                  {t(`dashboard.${g}`)}
                </SegmentedControl.Item>
              ))}
            </SegmentedControl.Root>
          </div>
          <Flex gap="2">
            <Button type="submit" loading={dashboardLoading.value} data-testid="detail-query">
              {t("dashboard.query")}
            </Button>
            <Button
              type="button"
              variant="soft"
              color="gray"
              onClick={() => {
                resetFilter();
                void loadDashboard();
              }}
            >
              {t("dashboard.reset")}
            </Button>
          </Flex>
        </Flex>
      </form>
    </Card>
  );
}
