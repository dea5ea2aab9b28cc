import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../../components/confirm-dialog";
import { Dialog } from "../../../components/ui/dialog";
import { renderQuota } from "../../../stores/status";
import { confirmPayment, pendingPayment, redeemedQuota } from "../../../stores/topup";

/** TopUpDialogs shows the redemption result and the payment confirmation. */
export function TopUpDialogs() {
  useSignals();
  const { t } = useTranslation();
  const added = redeemedQuota.value;
  const p = pendingPayment.value;
  return (
    <>
      <Dialog
        open={added !== null}
        onOpenChange={(open) => !open && (redeemedQuota.value = null)}
        title={t("wallet.redeemSuccess")}
        footer={<Button onClick={() => (redeemedQuota.value = null)}>{t("common.confirm")}</Button>}
      >
        <Text size="2" data-testid="redeemed-quota">
          {t("wallet.redeemedQuota", { quota: renderQuota(added ?? 0) })}
        </Text>
      </Dialog>
      <ConfirmDialog
        open={p !== null}
        onOpenChange={(open) => !open && (pendingPayment.value = null)}
        title={t("wallet.confirmTitle")}
        confirmLabel={t("wallet.pay")}
        onConfirm={() => void confirmPayment()}
      >
        {p ? (
          <Flex direction="column" gap="1" mt="2" data-testid="pay-confirm">
            <Text size="2">{t("wallet.confirmAmount", { amount: p.amount })}</Text>
            <Text size="2">{t("wallet.confirmMoney", { money: t("wallet.money", { money: p.money.toFixed(2) }) })}</Text>
            <Text size="2">{t("wallet.confirmMethod", { method: p.method === "zfb" ? t("wallet.alipay") : t("wallet.wechat") })}</Text>
          </Flex>
        ) : null}
      </ConfirmDialog>
    </>
  );
}
