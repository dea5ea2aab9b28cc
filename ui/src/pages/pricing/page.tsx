import { Flex, Heading } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { loadPricing } from "../../stores/pricing";
import "./pricing.css";
import { GroupBanner } from "./parts/group-banner";
import { PricingTable } from "./parts/pricing-table";
import { PricingToolbar } from "./parts/pricing-toolbar";

/** PricingPage assembles the group banner, the search bar and the model table. */
export default function PricingPage() {
  const { t } = useTranslation();
  useEffect(() => {
    void loadPricing();
  }, []);
  return (
    <Flex direction="column" gap="4" data-testid="pricing-page">
      <Heading size="6">{t("pricing.title")}</Heading>
      <GroupBanner />
      <PricingToolbar />
      <PricingTable />
    </Flex>
  );
}
