import { useSignals } from "@preact/signals-react/runtime";
import { Flex, Heading } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { Pagination } from "../../components/pagination";
import { loadRedemptions, redemptionKeyword, redemptionsList } from "../../stores/redemptions";
import { RedemptionsDialogs } from "./parts/redemptions-dialogs";
import { RedemptionsTable } from "./parts/redemptions-table";
import { Toolbar } from "./parts/toolbar";

/** RedemptionsPage assembles the toolbar, the table, the pager and the dialogs. */
export default function RedemptionsPage() {
  useSignals();
  const { t } = useTranslation();
  useEffect(() => {
    // A visit lists every code, so the search box starts empty too.
    redemptionKeyword.value = "";
    void loadRedemptions();
  }, []);
  return (
    <Flex direction="column" gap="4" data-testid="redemptions-page">
      <Heading size="6">{t("redemption.title")}</Heading>
      <Toolbar />
      <div>
        <RedemptionsTable />
        <Pagination
          page={redemptionsList.page.value}
          pageSize={redemptionsList.pageSize.value}
          itemCount={redemptionsList.visible.value.length}
          total={redemptionsList.total.value}
          hasMore={redemptionsList.hasMore.value}
          disabled={redemptionsList.loading.value}
          onPageChange={(p) => void redemptionsList.goTo(p).catch(() => {})}
          onPageSizeChange={(s) => void redemptionsList.setPageSize(s).catch(() => {})}
        />
      </div>
      <RedemptionsDialogs />
    </Flex>
  );
}
