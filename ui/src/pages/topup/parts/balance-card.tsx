import { useSignals } from "@preact/signals-react/runtime";
import { Card, Flex, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { Icon } from "../../../components/icons";
import { renderQuota } from "../../../stores/status";
import { user } from "../../../stores/user";

/** BalanceCard shows the balance; the user.self topic keeps it current. */
export function BalanceCard() {
  useSignals();
  const { t } = useTranslation();
  return (
    <Card size="3">
      <Flex align="center" gap="3">
        <Icon name="wallet" size={28} />
        <div>
          <Text as="div" size="2" color="gray">
            {t("wallet.balance")}
          </Text>
          <Text as="div" size="7" weight="bold" data-testid="wallet-balance">
            {renderQuota(user.value?.quota ?? 0)}
          </Text>
        </div>
      </Flex>
    </Card>
  );
}
