import { useSignals } from "@preact/signals-react/runtime";
import { Button, Card, Flex, Heading, TextField } from "@radix-ui/themes";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { status } from "../../../stores/status";
import { openTopUpLink, redeem } from "../../../stores/topup";

/** RedeemCard redeems a code and, when the administrator set one, links to where codes are sold. */
export function RedeemCard() {
  useSignals();
  const { t } = useTranslation();
  const [code, setCode] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    try {
      if (await redeem(code)) setCode("");
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card size="3">
      <Heading size="4" mb="3">
        {t("wallet.redeemTitle")}
      </Heading>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Flex direction="column" gap="3">
          <TextField.Root placeholder={t("wallet.codePlaceholder")} aria-label={t("wallet.codePlaceholder")} value={code} onChange={(e) => setCode(e.target.value)} autoComplete="off" data-testid="redeem-code" />
          <Flex gap="2" wrap="wrap">
            <Button type="submit" loading={busy} data-testid="redeem-submit">
              {busy ? t("wallet.redeeming") : t("wallet.redeem")}
            </Button>
            {status.value.top_up_link ? (
              <Button type="button" variant="soft" onClick={openTopUpLink} data-testid="get-code">
                {t("wallet.getCode")}
              </Button>
            ) : null}
          </Flex>
        </Flex>
      </form>
    </Card>
  );
}
