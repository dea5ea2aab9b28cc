import { Flex, Heading } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { applyQuery, defaultQuery, subscribeLogTail } from "../../stores/logs";
import { FilterForm } from "./parts/filter-form";
import { LogPagination } from "./parts/log-pagination";
import { LogTable } from "./parts/log-table";
import { StatBadges } from "./parts/stat-badges";
import { UserInfoDialog } from "./parts/user-info-dialog";

/** LogsPage shows the usage summary, the filters and the log table, with new entries arriving live. */
export default function LogsPage() {
  const { t } = useTranslation();
  useEffect(() => {
    void applyQuery(defaultQuery(), true);
    return subscribeLogTail();
  }, []);
  return (
    <Flex direction="column" gap="3" data-testid="logs-page">
      <Heading size="6">{t("logs.title")}</Heading>
      <StatBadges />
      <FilterForm />
      <LogTable />
      <LogPagination />
      <UserInfoDialog />
    </Flex>
  );
}
