import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, TextField } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { copySelectedRedemptions, redemptionKeyword, redemptionsDialog, searchRedemptions } from "../../../stores/redemptions";

/** Toolbar searches by id or name, adds codes and copies the selected ones. */
export function Toolbar() {
  useSignals();
  const { t } = useTranslation();
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void searchRedemptions();
      }}
    >
      <Flex gap="2" wrap="wrap" align="center">
        <TextField.Root
          className="grow"
          style={{ minWidth: 220 }}
          placeholder={t("redemption.searchPlaceholder")}
          aria-label={t("redemption.searchPlaceholder")}
          value={redemptionKeyword.value}
          onChange={(e) => (redemptionKeyword.value = e.target.value)}
          data-testid="redemption-search"
        />
        <Button type="submit" variant="soft">
          {t("redemption.search")}
        </Button>
        <Button type="button" onClick={() => (redemptionsDialog.value = { kind: "add" })} data-testid="redemption-add">
          {t("redemption.add")}
        </Button>
        <Button type="button" variant="soft" color="gray" onClick={() => void copySelectedRedemptions()} data-testid="redemption-copy-selected">
          {t("redemption.copySelected")}
        </Button>
      </Flex>
    </form>
  );
}
