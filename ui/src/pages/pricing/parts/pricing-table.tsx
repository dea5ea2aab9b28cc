import { useSignals } from "@preact/signals-react/runtime";
import { Badge, Flex, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import type { PricingItem } from "../../../api/pricing";
import { DataTable, type Column } from "../../../components/data-table";
import { Tooltip } from "../../../components/ui/tooltip";
import {
  chooseGroup,
  copyModelName,
  filteredPricing,
  formatPrice,
  priceFor,
  pricingLoading,
  ratioOf,
  selectedModels,
  viewedGroup,
} from "../../../stores/pricing";
import { quotaPerUnit } from "../../../stores/status";

/** shownRatio writes a ratio to six significant digits (a computed 4/3 is 1.33333, not 1.3333333333333333). */
function shownRatio(r: number): string {
  return String(Number(r.toPrecision(6)));
}

/** PricingTable lists the models with availability, billing type, groups, ratios and prices for the viewed group. */
export function PricingTable() {
  useSignals();
  const { t } = useTranslation();
  const group = viewedGroup.value;
  const ratio = ratioOf(group);
  const perUnit = quotaPerUnit.value;
  const columns: Column<PricingItem>[] = [
    {
      key: "available",
      header: t("pricing.colAvailable"),
      cell: (m) => {
        const ok = m.enable_groups.includes(group);
        return (
          <Tooltip content={ok ? t("pricing.available") : t("pricing.unavailable")}>
            <Text color={ok ? "green" : "red"} size="3" aria-label={ok ? t("pricing.available") : t("pricing.unavailable")} data-available={ok}>
              {ok ? "✓" : "✗"}
            </Text>
          </Tooltip>
        );
      },
      width: "72px",
    },
    {
      key: "model",
      header: t("pricing.colModel"),
      cell: (m) => (
        <Tooltip content={t("pricing.clickToCopy")}>
          <Badge asChild variant="soft" className="pricing-chip badge-wrap">
            <button type="button" onClick={() => void copyModelName(m.model_name)} data-testid="pricing-model-name">
              {m.model_name}
            </button>
          </Badge>
        </Tooltip>
      ),
    },
    {
      key: "type",
      header: t("pricing.colType"),
      cell: (m) => <Badge color={m.quota_type === 1 ? "teal" : "violet"}>{m.quota_type === 1 ? t("pricing.perCall") : t("pricing.perUsage")}</Badge>,
    },
    {
      key: "groups",
      header: t("pricing.colGroups"),
      cell: (m) => (
        <Flex gap="1" wrap="wrap">
          {m.enable_groups.map((g) => (
            <Badge key={g} asChild color={g === group ? "indigo" : "gray"} variant={g === group ? "solid" : "soft"} className="pricing-chip">
              <button type="button" onClick={() => chooseGroup(g)} title={t("pricing.groupsHint")} data-group={g}>
                {g}
              </button>
            </Badge>
          ))}
        </Flex>
      ),
    },
    {
      key: "ratio",
      header: t("pricing.colRatio"),
      cell: (m) => (
        <Flex direction="column" className="nowrap" data-testid="pricing-ratios">
          <Text size="1">{t("pricing.modelRatio", { ratio: m.quota_type === 1 ? t("pricing.noRatio") : shownRatio(m.model_ratio) })}</Text>
          <Text size="1">{t("pricing.completionRatio", { ratio: m.quota_type === 1 ? t("pricing.noRatio") : shownRatio(m.completion_ratio) })}</Text>
          <Text size="1">{t("pricing.groupRatio", { ratio })}</Text>
        </Flex>
      ),
    },
    {
      key: "price",
      header: t("pricing.colPrice"),
      cell: (m) => {
        const p = priceFor(m, ratio, perUnit);
        return p.fixed ? (
          <Text size="2" className="nowrap" data-testid="pricing-price">
            {t("pricing.fixedPrice", { price: formatPrice(p.price) })}
          </Text>
        ) : (
          <Flex direction="column" className="nowrap" data-testid="pricing-price">
            <Text size="2">{t("pricing.prompt", { price: formatPrice(p.prompt) })}</Text>
            <Text size="2">{t("pricing.completion", { price: formatPrice(p.completion) })}</Text>
          </Flex>
        );
      },
    },
  ];
  return (
    <DataTable
      rows={filteredPricing.value}
      columns={columns}
      rowKey={(m) => m.model_name}
      loading={pricingLoading.value}
      empty={t("pricing.empty")}
      selected={selectedModels.value}
      onSelectedChange={(next) => (selectedModels.value = next)}
      testId="pricing-table"
      rowTestId={(m) => `pricing-row-${m.model_name}`}
    />
  );
}
