import { Button, Flex, Text, TextField } from "@radix-ui/themes";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { Popover } from "../../../components/ui/popover";
import { MAX_QUOTA, quotaWithinBound } from "../../../lib/quota";
import { renderQuota } from "../../../stores/status";

/**
 * AddQuotaPopover asks how much quota to add (negative numbers take quota
 * away) and hands the new total to the form. It is a popover rather than a
 * modal so that it layers correctly above the edit drawer.
 */
export function AddQuotaPopover({ quota, onApply }: { quota: number; onApply: (next: number) => void }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const [amount, setAmount] = useState("");
  const delta = Number.parseInt(amount, 10);
  // A whole number only: a number field takes 1e6 or 2.5, which parseInt would read as 1 and 2.
  const whole = /^-?\d+$/.test(amount.trim());
  // The sum stays within the server's bound, as the drawer's own check then sees it.
  const valid = whole && Number.isFinite(delta) && quotaWithinBound(amount) && Math.abs(quota + delta) <= Number(MAX_QUOTA);
  const apply = () => {
    if (!valid) return;
    onApply(quota + delta);
    setOpen(false);
  };
  return (
    <Popover.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        if (o) setAmount("");
      }}
    >
      <Popover.Trigger>
        <Button type="button" variant="soft" data-testid="user-add-quota">
          {t("userAdmin.addQuota")}
        </Button>
      </Popover.Trigger>
      <Popover.Content width="320px" aria-label={t("userAdmin.addQuotaTitle")} data-testid="add-quota-dialog">
        <Flex direction="column" gap="2">
          <Text weight="bold">{t("userAdmin.addQuotaTitle")}</Text>
          <Text size="2" color="gray" data-testid="add-quota-preview">
            {t("userAdmin.newQuota", { quota: `${renderQuota(quota + (valid ? delta : 0))} (${quota + (valid ? delta : 0)})` })}
          </Text>
          <TextField.Root
            type="number"
            step={1}
            placeholder={t("userAdmin.addQuotaPlaceholder")}
            aria-label={t("userAdmin.addQuotaPlaceholder")}
            value={amount}
            onChange={(e) => setAmount(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                apply();
              }
            }}
            autoFocus
            data-testid="add-quota-input"
          />
          {amount.trim() !== "" && !whole ? (
            <Text size="1" color="red" data-testid="add-quota-invalid">
              {t("userAdmin.quotaInvalid")}
            </Text>
          ) : null}
          <Flex gap="2" justify="end">
            <Popover.Close>
              <Button type="button" variant="soft" color="gray">
                {t("userAdmin.cancel")}
              </Button>
            </Popover.Close>
            <Button type="button" disabled={!valid} onClick={apply} data-testid="add-quota-confirm">
              {t("common.confirm")}
            </Button>
          </Flex>
        </Flex>
      </Popover.Content>
    </Popover.Root>
  );
}
