import { useSignals } from "@preact/signals-react/runtime";
import { Button, Card, Flex, Heading, Text, TextField } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { PaymentMethod } from "../../../api/topup";
import { displayInCurrency } from "../../../stores/status";
import { minTopUp, onlineTopUpEnabled, preparePayment, quoteMoney } from "../../../stores/topup";

/** OnlineTopUpCard takes an amount (at least min_topup) and starts an Alipay or WeChat payment. */
export function OnlineTopUpCard() {
  useSignals();
  const { t } = useTranslation();
  const min = minTopUp.value;
  const [amount, setAmount] = useState(String(min));
  const [money, setMoney] = useState<number | null>(null);
  const [busy, setBusy] = useState<PaymentMethod | null>(null);
  const enabled = onlineTopUpEnabled.value;
  const value = Number(amount);

  useEffect(() => setAmount(String(min)), [min]);

  // The price is asked again (debounced) whenever the amount changes.
  useEffect(() => {
    setMoney(null);
    if (!enabled || !Number.isInteger(value) || value < min) return;
    let live = true;
    const timer = setTimeout(() => {
      void quoteMoney(value).then((m) => live && setMoney(m));
    }, 400);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [value, min, enabled]);

  const pay = async (method: PaymentMethod) => {
    setBusy(method);
    try {
      await preparePayment(value, method);
    } finally {
      setBusy(null);
    }
  };

  return (
    <Card size="3">
      <Heading size="4" mb="3">
        {t("wallet.onlineTitle")}
      </Heading>
      <Flex direction="column" gap="3">
        <TextField.Root
          type="number"
          min={min}
          step={1}
          placeholder={t("wallet.amountPlaceholder", { min })}
          aria-label={t("wallet.amount")}
          value={amount}
          onChange={(e) => setAmount(e.target.value)}
          data-testid="topup-amount"
        />
        <Text size="1" color="gray">
          {displayInCurrency.value ? t("wallet.amountUnitDollar") : t("wallet.amountUnitQuota")}
        </Text>
        <Text size="2" data-testid="topup-money">
          {money !== null ? t("wallet.payable", { money: t("wallet.money", { money: money.toFixed(2) }) }) : t("wallet.payableUnknown")}
        </Text>
        <Flex gap="2" wrap="wrap">
          <Button color="blue" loading={busy === "zfb"} disabled={busy !== null} onClick={() => void pay("zfb")} data-testid="pay-zfb">
            {t("wallet.alipay")}
          </Button>
          <Button color="green" loading={busy === "wx"} disabled={busy !== null} onClick={() => void pay("wx")} data-testid="pay-wx">
            {t("wallet.wechat")}
          </Button>
        </Flex>
      </Flex>
    </Card>
  );
}
