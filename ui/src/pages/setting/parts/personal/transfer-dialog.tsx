import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, Text, TextField } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../../../../api/client";
import { transferAffQuota } from "../../../../api/user";
import { Dialog } from "../../../../components/ui/dialog";
import { Field } from "../../../../components/ui/field";
import { quotaPerUnit, renderQuota } from "../../../../stores/status";
import { toast } from "../../../../stores/toast";
import { refreshSelf, user } from "../../../../stores/user";

/** TransferDialog moves invite earnings into the balance; the minimum is one quota unit. */
export function TransferDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  useSignals();
  const { t } = useTranslation();
  const [amount, setAmount] = useState("");
  const [busy, setBusy] = useState(false);
  // Whole quota: a decimal QuotaPerUnit (1000.5) is rounded up, as the server's least transfer.
  const min = Math.ceil(quotaPerUnit.value);
  useEffect(() => {
    if (open) setAmount(String(min));
  }, [open, min]);
  const value = Math.floor(Number(amount));
  const submit = async () => {
    // Quota is whole: 600000.5 is refused, not moved as 600000.
    if (!/^\d+$/.test(amount.trim())) {
      toast.error(t("userAdmin.quotaInvalid"));
      return;
    }
    if (!Number.isFinite(value) || value < min) {
      toast.error(t("invite.transferMin", { amount: renderQuota(min) }));
      return;
    }
    setBusy(true);
    try {
      await transferAffQuota(value);
      toast.success(t("invite.transferDone"));
      onOpenChange(false);
      // Done: the dialog closes whatever the refresh after it does; its failure is not the action's.
      void refreshSelf(true).catch(() => {});
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title={t("invite.transfer")}
      footer={
        <>
          <Button variant="soft" color="gray" onClick={() => onOpenChange(false)}>
            {t("common.cancel")}
          </Button>
          <Button loading={busy} onClick={submit}>
            {t("common.confirm")}
          </Button>
        </>
      }
    >
      <Flex direction="column" gap="3">
        <Text size="2">
          {t("invite.available")}: <strong>{renderQuota(user.value?.aff_quota ?? 0)}</strong>
        </Text>
        <Field id="transfer-amount" label={t("invite.amount")} hint={Number.isFinite(value) ? renderQuota(value) : undefined}>
          <TextField.Root id="transfer-amount" type="number" min={min} step={1} value={amount} onChange={(e) => setAmount(e.target.value)} />
        </Field>
      </Flex>
    </Dialog>
  );
}
