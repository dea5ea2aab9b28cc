import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel, startFakeUpstream } from "./fake-upstream.mjs";
import { gatewaySuite, login, newPage, putOption, rootApi } from "./harness.mjs";

// The log and pricing pages at the widths people use, with the long model and
// token names real deployments have: the rows and their details stay readable
// on screen.

const LONG_MODEL = "claude-3-5-sonnet-20241022-extended-thinking-preview";
// As long as the longest names upstreams list (dated previews with suffixes).
const LONGER_MODEL = "gemini-1.5-pro-002-experimental-0827-with-a-rather-long-suffix";
const MODELS = ["gpt-4o-mini", LONG_MODEL, LONGER_MODEL];
let upstream;

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    upstream = await startFakeUpstream({ chunks: ["Hi"], models: MODELS, usage: { prompt_tokens: 1234, completion_tokens: 5678, total_tokens: 6912 } });
    const root = await rootApi(gw.baseURL);
    await putOption(root, "ModelRatio", JSON.stringify({ [LONG_MODEL]: 1.5, [LONGER_MODEL]: 2, "gpt-4o-mini": 0.075 }));
    await createChannel(root, upstream.url, MODELS, "layout-logs-upstream");
    const tok = await root.call("POST", "/api/token/", { name: "production-backend-key", remain_quota: 50000000, expired_time: -1 });
    assert.equal(tok.json?.success, true, JSON.stringify(tok.json));
    const key = `sk-${(await root.call("GET", "/api/token/?p=0&size=10")).json.data[0].key}`;
    for (const model of [...MODELS, LONG_MODEL]) {
      const res = await fetch(`${gw.baseURL}/v1/chat/completions`, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
      });
      const text = await res.text();
      assert.equal(res.status, 200, text);
    }
  },
  teardown: () => upstream?.close(),
});

async function openLogs(viewport, lang) {
  const opened = await newPage(suite.browser, suite.gw.baseURL, { viewport });
  await opened.context.addInitScript((l) => localStorage.setItem("i18nextLng", l), lang);
  await login(opened.page, "root", "123456");
  await opened.page.goto("/log");
  await opened.page.locator('[data-testid="log-model"]', { hasText: LONG_MODEL }).first().waitFor();
  return opened;
}

test("on a phone an expanded log row shows its billing process within the screen", async () => {
  const PHONE = { width: 390, height: 844 };
  const { context, page } = await openLogs(PHONE, "en");
  await page.locator('[data-testid="expand-row"]').first().click();
  const billing = page.locator('[data-testid="billing"]');
  await billing.waitFor();
  const table = await page.locator('[data-testid="log-table"]').boundingBox();
  for (const loc of [page.locator('[data-testid="log-detail"]'), billing, page.locator('[data-testid="billing-quota"]')]) {
    const b = await loc.boundingBox();
    assert.ok(b.x >= table.x && b.x + b.width <= Math.min(table.x + table.width, PHONE.width), `the detail lies within the table on screen: ${JSON.stringify({ table, detail: b })}`);
  }
  await context.close();
});

test("on a 1366- or 1280-pixel laptop the admin's log table fits beside the open sidebar in Chinese and in English", async () => {
  for (const LAPTOP of [{ width: 1366, height: 768 }, { width: 1280, height: 720 }])
  for (const lang of ["zh", "en"]) {
    const { context, page } = await openLogs(LAPTOP, lang);
    await page.locator('[data-testid="sidebar"] .sidebar-label').first().waitFor();
    const viewport = page.locator('[data-testid="log-table"] .rt-ScrollAreaViewport');
    const { scrollWidth, clientWidth } = await viewport.evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }));
    assert.ok(scrollWidth <= clientWidth + 1, `${LAPTOP.width} ${lang}: the table needs no sideways scrolling: ${scrollWidth} > ${clientWidth}`);
    const table = await page.locator('[data-testid="log-table"]').boundingBox();
    const last = await page.locator('[data-testid="log-table"] thead th').last().boundingBox();
    assert.ok(last.x + last.width <= table.x + table.width + 1 && table.x + table.width <= LAPTOP.width, `${lang}: the last column is in view: ${JSON.stringify({ table, last })}`);
    const model = page.locator('[data-testid="log-model"]', { hasText: LONG_MODEL }).first();
    const cell = page.locator('[data-testid="log-row"] [data-col="model"]', { has: model }).first();
    const mb = await model.boundingBox();
    const cb = await cell.boundingBox();
    assert.ok(mb.x >= cb.x && mb.x + mb.width <= cb.x + cb.width, `${lang}: the long model name stays in its cell: ${JSON.stringify({ model: mb, cell: cb })}`);
    await context.close();
  }
});

test("on a 1366-pixel laptop in English the pricing table fits beside the open sidebar and wraps a long model name", async () => {
  const LAPTOP = { width: 1366, height: 768 };
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: LAPTOP });
  await context.addInitScript(() => localStorage.setItem("i18nextLng", "en"));
  await login(page, "root", "123456");
  await page.goto("/pricing");
  const chip = page.locator('[data-testid="pricing-model-name"]', { hasText: LONGER_MODEL });
  await chip.waitFor();
  const viewport = page.locator('[data-testid="pricing-table"] .rt-ScrollAreaViewport');
  const { scrollWidth, clientWidth } = await viewport.evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }));
  assert.ok(scrollWidth <= clientWidth + 1, `the table needs no sideways scrolling: ${scrollWidth} > ${clientWidth}`);
  const price = await page.locator('[data-testid="pricing-price"]').first().boundingBox();
  assert.ok(price.x + price.width <= LAPTOP.width, `the price column is on screen: ${JSON.stringify(price)}`);
  await chip.click();
  await context.close();
});
