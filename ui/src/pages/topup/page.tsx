import { useSignals } from "@preact/signals-react/runtime";
import { Flex, Grid, Heading } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { isAdmin, refreshSelf } from "../../stores/user";
import { BalanceCard } from "./parts/balance-card";
import { OnlineTopUpCard } from "./parts/online-topup-card";
import { RedeemCard } from "./parts/redeem-card";
import { TopUpDialogs } from "./parts/topup-dialogs";
import { TopUpOrdersCard } from "./parts/topup-orders-card";

/** TopUpPage assembles the live balance, the redeem form, online top-up, the order list for admins and the dialogs. */
export default function TopUpPage() {
  useSignals();
  const { t } = useTranslation();
  useEffect(() => {
    void refreshSelf(true).catch(() => {});
  }, []);
  return (
    <Flex direction="column" gap="4" data-testid="topup-page">
      <Heading size="6">{t("wallet.title")}</Heading>
      <BalanceCard />
      <Grid columns={{ initial: "1", md: "2" }} gap="4" align="start">
        <RedeemCard />
        <OnlineTopUpCard />
      </Grid>
      {isAdmin.value ? <TopUpOrdersCard /> : null}
      <TopUpDialogs />
    </Flex>
  );
}
