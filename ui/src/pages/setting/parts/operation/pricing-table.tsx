import { useSignals } from "@preact/signals-react/runtime";
import { Badge, Button, Flex, IconButton, Table, Text, TextField } from "@radix-ui/themes";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { OptionSection } from "../option-form/option-section";
import { editModelRow } from "./dialogs";
import { applyPricing, deleteModelRow, discardPricing, pricingDirty, pricingRows } from "./pricing";

/** PAGE_SIZE is how many models one table page shows. */
const PAGE_SIZE = 10;

const num = (v: number | null) => (v === null ? "—" : String(v));

/** PricingTable edits model prices and ratios row by row; applying writes ModelPrice, ModelRatio and CompletionRatio. */
export function PricingTable() {
  useSignals();
  const { t } = useTranslation();
  const l = (k: string, o?: Record<string, unknown>) => t(`options.pricing.${k}`, o);
  const [query, setQuery] = useState("");
  const [page, setPage] = useState(0);
  const [busy, setBusy] = useState(false);
  const q = query.trim().toLowerCase();
  const rows = pricingRows.value.filter((r) => r.model.toLowerCase().includes(q));
  const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
  const current = Math.min(page, pages - 1);
  const shown = rows.slice(current * PAGE_SIZE, (current + 1) * PAGE_SIZE);
  const apply = async () => {
    setBusy(true);
    try {
      await applyPricing();
    } finally {
      setBusy(false);
    }
  };
  return (
    <OptionSection
      id="pricing"
      className="span-2"
      title={l("title")}
      description={l("description")}
      onSave={() => void apply()}
      saveLabel={l("apply")}
      saving={busy}
      actions={
        <>
          <Button variant="soft" onClick={() => editModelRow(null)} data-testid="pricing-add">
            {l("add")}
          </Button>
          {pricingDirty.value ? (
            <Button variant="soft" color="gray" onClick={discardPricing} data-testid="pricing-discard">
              {l("discard")}
            </Button>
          ) : null}
        </>
      }
    >
      <Flex gap="3" align="center" wrap="wrap">
        <TextField.Root
          className="grow"
          placeholder={l("search")}
          aria-label={l("search")}
          value={query}
          onChange={(e) => {
            setQuery(e.target.value);
            setPage(0);
          }}
          data-testid="pricing-search"
        />
        {pricingDirty.value ? (
          <Badge color="amber" data-testid="pricing-dirty">
            {l("unsaved")}
          </Badge>
        ) : null}
      </Flex>
      <div className="option-table-wrap">
        <Table.Root variant="surface" size="1">
          <Table.Header>
            <Table.Row>
              <Table.ColumnHeaderCell>{l("model")}</Table.ColumnHeaderCell>
              <Table.ColumnHeaderCell>{l("mode")}</Table.ColumnHeaderCell>
              <Table.ColumnHeaderCell>{l("price")}</Table.ColumnHeaderCell>
              <Table.ColumnHeaderCell>{l("ratio")}</Table.ColumnHeaderCell>
              <Table.ColumnHeaderCell>{l("completion")}</Table.ColumnHeaderCell>
              <Table.ColumnHeaderCell>{l("actions")}</Table.ColumnHeaderCell>
            </Table.Row>
          </Table.Header>
          <Table.Body>
            {shown.map((r) => (
              <Table.Row key={r.model} data-testid="pricing-row" data-model={r.model}>
                <Table.RowHeaderCell className="break-all">{r.model}</Table.RowHeaderCell>
                <Table.Cell>
                  <Badge color={r.price !== null ? "violet" : "blue"}>{r.price !== null ? l("byPrice") : l("byRatio")}</Badge>
                </Table.Cell>
                <Table.Cell>{num(r.price)}</Table.Cell>
                <Table.Cell>{num(r.ratio)}</Table.Cell>
                <Table.Cell>{r.completion === null && r.price === null ? l("builtIn") : num(r.completion)}</Table.Cell>
                <Table.Cell>
                  <Flex gap="2" className="nowrap">
                    <Button size="1" variant="soft" onClick={() => editModelRow(r.model)} data-testid="pricing-edit">
                      {l("edit")}
                    </Button>
                    <Button size="1" variant="soft" color="red" onClick={() => deleteModelRow(r.model)} data-testid="pricing-delete">
                      {l("remove")}
                    </Button>
                  </Flex>
                </Table.Cell>
              </Table.Row>
            ))}
            {shown.length === 0 ? (
              <Table.Row>
                <Table.Cell colSpan={6}>
                  <Text size="2" color="gray">
                    {l("empty")}
                  </Text>
                </Table.Cell>
              </Table.Row>
            ) : null}
          </Table.Body>
        </Table.Root>
      </div>
      <Flex gap="2" align="center" justify="end">
        <Text size="1" color="gray" data-testid="pricing-page">
          {l("page", { page: current + 1, pages, total: rows.length })}
        </Text>
        <IconButton size="1" variant="soft" disabled={current === 0} onClick={() => setPage(current - 1)} aria-label={l("prev")}>
          ‹
        </IconButton>
        <IconButton size="1" variant="soft" disabled={current >= pages - 1} onClick={() => setPage(current + 1)} aria-label={l("next")}>
          ›
        </IconButton>
      </Flex>
    </OptionSection>
  );
}
