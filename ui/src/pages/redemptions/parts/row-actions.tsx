import { useSignals } from "@preact/signals-react/runtime";
import { Button, Code, Flex } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { REDEMPTION_DISABLED, REDEMPTION_UNUSED, REDEMPTION_USED, type Redemption } from "../../../api/redemptions";
import { Popover } from "../../../components/ui/popover";
import { keepRowFocus } from "../../../lib/keep-focus";
import { copyRedemptionKey, redemptionsDialog, setRedemptionStatus, statusChanging } from "../../../stores/redemptions";

/**
 * RowActions are view, copy, delete, enable/disable and edit. A used code
 * cannot be enabled, only an unused one can be disabled, and only an unused
 * one can be edited.
 */
export function RowActions({ row }: { row: Redemption }) {
  useSignals();
  const { t } = useTranslation();
  const used = row.status === REDEMPTION_USED;
  const changing = statusChanging.value.has(row.id);
  return (
    <Flex gap="1" wrap="wrap">
      <Popover.Root>
        <Popover.Trigger>
          <Button size="1" variant="soft" color="gray" data-testid="redemption-view">
            {t("redemption.view")}
          </Button>
        </Popover.Trigger>
        <Popover.Content aria-label={t("redemption.viewTitle")}>
          <Code size="2" className="selectable break-all" data-testid="redemption-key">
            {row.key}
          </Code>
        </Popover.Content>
      </Popover.Root>
      <Button size="1" variant="soft" onClick={() => void copyRedemptionKey(row.key)} data-testid="redemption-copy">
        {t("redemption.copy")}
      </Button>
      <Button size="1" variant="soft" color="red" onClick={() => (redemptionsDialog.value = { kind: "delete", row })} data-testid="redemption-delete">
        {t("redemption.delete")}
      </Button>
      {row.status === REDEMPTION_UNUSED ? (
        <Button size="1" variant="soft" color="orange" loading={changing} onClick={(e) => void keepRowFocus(e.currentTarget, setRedemptionStatus(row, REDEMPTION_DISABLED))} data-testid="redemption-disable">
          {t("redemption.disable")}
        </Button>
      ) : (
        <Button
          size="1"
          variant="soft"
          color="green"
          loading={changing}
          disabled={used || changing}
          title={used ? t("redemption.usedCannotEnable") : undefined}
          onClick={(e) => void keepRowFocus(e.currentTarget, setRedemptionStatus(row, REDEMPTION_UNUSED))}
          data-testid="redemption-enable"
        >
          {t("redemption.enable")}
        </Button>
      )}
      <Button
        size="1"
        variant="soft"
        color="gray"
        disabled={row.status !== REDEMPTION_UNUSED}
        title={row.status !== REDEMPTION_UNUSED ? t("redemption.editOnlyUnused") : undefined}
        onClick={() => (redemptionsDialog.value = { kind: "edit", id: row.id })}
        data-testid="redemption-edit"
      >
        {t("redemption.edit")}
      </Button>
    </Flex>
  );
}
