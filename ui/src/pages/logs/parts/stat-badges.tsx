import { useSignals } from "@preact/signals-react/runtime";
import { Badge, Flex, Spinner } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { logStat, statLoading } from "../../../stores/logs";
import { renderSpent } from "../../../stores/status";

/** StatBadges show the consumed quota under the filters and the last minute's RPM and TPM. */
export function StatBadges() {
  useSignals();
  const { t } = useTranslation();
  const s = logStat.value;
  return (
    <Flex gap="2" align="center" wrap="wrap" data-testid="log-stats" aria-busy={statLoading.value || undefined}>
      <Badge size="3" color="green" data-testid="stat-quota">
        {t("logs.totalQuota")}: {renderSpent(s.quota)}
      </Badge>
      <Badge size="3" color="blue" data-testid="stat-rpm">
        {t("logs.rpm")}: {s.rpm}
      </Badge>
      <Badge size="3" color="purple" data-testid="stat-tpm">
        {t("logs.tpm")}: {s.tpm}
      </Badge>
      {statLoading.value ? <Spinner /> : null}
    </Flex>
  );
}
