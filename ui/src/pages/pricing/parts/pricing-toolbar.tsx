import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, TextField } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { copySelectedModels, pricingSearch } from "../../../stores/pricing";

/** PricingToolbar holds the fuzzy search and the copy-selected button. */
export function PricingToolbar() {
  useSignals();
  const { t } = useTranslation();
  return (
    <Flex gap="2" wrap="wrap" align="center">
      <TextField.Root
        className="grow"
        style={{ minWidth: 220 }}
        placeholder={t("pricing.searchPlaceholder")}
        aria-label={t("pricing.searchPlaceholder")}
        value={pricingSearch.value}
        onChange={(e) => (pricingSearch.value = e.target.value)}
        data-testid="pricing-search"
      />
      <Button variant="soft" onClick={() => void copySelectedModels()} data-testid="pricing-copy-selected">
        {t("pricing.copySelected")}
      </Button>
    </Flex>
  );
}
