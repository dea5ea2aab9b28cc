import { useSignals } from "@preact/signals-react/runtime";
import { Badge, Button, Card, Flex, Heading, Text } from "@radix-ui/themes";
import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { listTopUpOrders, TOPUP_ORDERS_PAGE_SIZE, type TopUpOrder } from "../../../api/topup";
import { DataTable, type Column } from "../../../components/data-table";
import { formatTimestamp } from "../../../components/format";
import { renderQuota } from "../../../stores/status";

/** METHOD_NAMES maps an order's payment method, as the server stores it, to the i18n key of its name (a method not listed shows as stored). */
const METHOD_NAMES = new Map([
  ["alipay", "wallet.alipay"],
  ["wxpay", "wallet.wechat"],
]);

/** TopUpOrdersCard lists every user's online top-up orders, ten a page (admins only). */
export function TopUpOrdersCard() {
  useSignals();
  const { t } = useTranslation();
  const [page, setPage] = useState(0);
  const [rows, setRows] = useState<TopUpOrder[]>([]);
  const [loading, setLoading] = useState(false);

  const load = useCallback(async (p: number) => {
    setLoading(true);
    try {
      setRows(await listTopUpOrders(p));
      setPage(p);
    } catch {
      /* the client already showed the error */
    } finally {
      setLoading(false);
    }
  }, []);

  useEffect(() => {
    void load(0);
  }, [load]);

  const columns: Column<TopUpOrder>[] = [
    { key: "id", header: t("topupOrders.colId"), cell: (o) => o.id, width: "64px" },
    { key: "user", header: t("topupOrders.colUser"), cell: (o) => <span data-testid="topup-order-user">{o.user_id}</span> },
    // What the order credits, shown as every quota is: the stored amount is whole dollars,
    // truncated for an order asked for in quota units (750 000 showed as 1).
    { key: "amount", header: t("topupOrders.colAmount"), cell: (o) => <span data-testid="topup-order-amount">{renderQuota(o.quota)}</span> },
    { key: "money", header: t("topupOrders.colMoney"), cell: (o) => <span data-testid="topup-order-money">{t("wallet.money", { money: Number(o.money).toFixed(2) })}</span> },
    // The order keeps the provider's code for its method (alipay, wxpay); the list names it as the pay buttons do.
    {
      key: "method",
      header: t("topupOrders.colMethod"),
      cell: (o) => {
        const name = METHOD_NAMES.get(o.payment_method);
        return <span data-testid="topup-order-method">{name ? t(name) : o.payment_method}</span>;
      },
    },
    {
      key: "status",
      header: t("topupOrders.colStatus"),
      cell: (o) => (
        <Badge color={o.status === "success" ? "green" : "gray"} data-testid="topup-order-status">
          {o.status === "success" ? t("topupOrders.statusSuccess") : t("topupOrders.statusPending")}
        </Badge>
      ),
    },
    { key: "created", header: t("topupOrders.colCreated"), cell: (o) => <span className="nowrap">{formatTimestamp(o.create_time)}</span> },
    { key: "completed", header: t("topupOrders.colCompleted"), cell: (o) => <span className="nowrap">{formatTimestamp(o.complete_time)}</span> },
  ];

  return (
    <Card size="3" data-testid="topup-orders">
      <Flex align="center" justify="between" gap="3" mb="3" wrap="wrap">
        <Heading size="4">{t("topupOrders.title")}</Heading>
        <Button variant="soft" size="1" onClick={() => void load(page)} disabled={loading} data-testid="topup-orders-refresh">
          {t("topupOrders.refresh")}
        </Button>
      </Flex>
      <DataTable
        rows={rows}
        columns={columns}
        rowKey={(o) => o.id}
        loading={loading}
        empty={t("topupOrders.empty")}
        testId="topup-orders-table"
        rowTestId={(o) => `topup-order-${o.id}`}
      />
      <Flex align="center" justify="end" gap="2" mt="3">
        <Button variant="soft" color="gray" size="1" disabled={loading || page <= 0} onClick={() => void load(page - 1)} data-testid="topup-orders-prev">
          {t("topupOrders.prev")}
        </Button>
        <Text size="2" data-testid="topup-orders-page">
          {t("topupOrders.page", { page: page + 1 })}
        </Text>
        <Button
          variant="soft"
          color="gray"
          size="1"
          disabled={loading || rows.length < TOPUP_ORDERS_PAGE_SIZE}
          onClick={() => void load(page + 1)}
          data-testid="topup-orders-next"
        >
          {t("topupOrders.next")}
        </Button>
      </Flex>
    </Card>
  );
}
