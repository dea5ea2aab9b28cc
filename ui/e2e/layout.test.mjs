import assert from "node:assert/strict";
import { test } from "node:test";
import { gatewaySuite, login, newPage, putOption, rootApi } from "./harness.mjs";

// Layout on a phone and on a laptop screen: the controls a page needs stay
// usable and inside the screen.

let root;

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    root = await rootApi(gw.baseURL);
    const ch = await root.call("POST", "/api/channel/", {
      name: "layout-channel",
      type: 1,
      key: "sk-layout",
      base_url: "http://127.0.0.1:9",
      models: "gpt-4o-mini",
      group: "default",
    });
    assert.equal(ch.json?.success, true, JSON.stringify(ch.json));
    const tok = await root.call("POST", "/api/token/", { name: "layout-token", unlimited_quota: true, expired_time: -1 });
    assert.equal(tok.json?.success, true, JSON.stringify(tok.json));
  },
});

const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1366, height: 850 };

async function openAsRoot(viewport, lang) {
  const opened = await newPage(suite.browser, suite.gw.baseURL, { viewport });
  if (lang) await opened.context.addInitScript((l) => localStorage.setItem("i18nextLng", l), lang);
  await login(opened.page, "root", "123456");
  return opened;
}

test("on a phone the channel search box, the price table and an empty order list stay usable", async () => {
  const { context, page } = await openAsRoot(PHONE);

  await page.goto("/channel");
  const keyword = page.locator('[data-testid="channel-search-keyword"]');
  await keyword.waitFor();
  const kb = await keyword.boundingBox();
  assert.ok(kb.width >= 200 && kb.x + kb.width <= PHONE.width, `the channel search box: ${JSON.stringify(kb)}`);

  await page.goto("/setting?tab=operation");
  const model = page.locator('[data-testid="pricing-row"] th').first();
  await model.waitFor();
  const mb = await model.boundingBox();
  assert.ok(mb.width >= 100, `a model name gets a readable column: ${JSON.stringify(mb)}`);
  assert.ok(mb.height <= 60, `a model name is not broken into a character a line: ${JSON.stringify(mb)}`);

  await page.goto("/topup");
  const empty = page.getByText("暂无充值订单");
  await empty.waitFor();
  const eb = await empty.boundingBox();
  assert.ok(eb.x >= 0 && eb.x + eb.width <= PHONE.width, `the empty order list says so on screen: ${JSON.stringify(eb)}`);
  // Screen readers hear the notification region in the console's language.
  await page.locator('[role="region"][aria-label="通知 (F8)"]').waitFor({ state: "attached" });
  await context.close();
});

test("on a laptop screen in English the token actions fit, the sidebar's chat links keep their icons, and pages do not scroll for nothing", async () => {
  const { context, page } = await openAsRoot(LAPTOP, "en");
  await page.goto("/token");
  await page.locator('[role="region"][aria-label="Notifications (F8)"]').waitFor({ state: "attached" });
  const table = page.locator('[data-testid="token-table"]');
  const del = page.locator('[data-testid="delete-token"]').first();
  await del.waitFor();
  const tb = await table.boundingBox();
  const db = await del.boundingBox();
  assert.ok(db.x >= tb.x && db.x + db.width <= tb.x + tb.width, `Delete lies inside the table: ${JSON.stringify({ table: tb, button: db })}`);

  const chat = page.locator('[data-testid="sidebar"] [data-chat]').first();
  await chat.waitFor();
  const icon = await chat.locator("svg").boundingBox();
  assert.ok(icon && icon.width > 0, `the chat link keeps its icon: ${JSON.stringify(icon)}`);
  const sidebar = await page.locator('[data-testid="sidebar"]').boundingBox();
  const label = await chat.boundingBox();
  assert.ok(label.x + label.width <= sidebar.x + sidebar.width, `the chat link stays in the sidebar: ${JSON.stringify({ sidebar, label })}`);

  for (const path of ["/token", "/pricing", "/chat/0"]) {
    await page.goto(path);
    await page.waitForLoadState("networkidle");
    const h = await page.evaluate(() => document.documentElement.scrollHeight);
    assert.equal(h, LAPTOP.height, `${path} is as tall as the window`);
  }
  await context.close();
});

test("on a phone the top bar keeps About and a long site name on screen, and Escape closes the sidebar", async () => {
  const name = "Acme Enterprise AI Gateway Portal For Everyone";
  const before = (await root.call("GET", "/api/status")).json.data.system_name;
  assert.equal((await root.call("PUT", "/api/option/", { key: "SystemName", value: name })).json?.success, true);
  try {
    const { context, page } = await openAsRoot(PHONE);
    await page.goto("/token");
    const about = page.locator('.top-bar a[href="/about"]');
    await about.waitFor();
    const ab = await about.boundingBox();
    assert.ok(ab && ab.x >= 0 && ab.x + ab.width <= PHONE.width, `About is on screen: ${JSON.stringify(ab)}`);
    await page.locator(".brand", { hasText: "Acme" }).waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= PHONE.width, `the page does not scroll sideways: ${width}`);
    const brand = await page.locator(".brand").boundingBox();
    const lang = await page.locator('[data-testid="language-switch"]').boundingBox();
    assert.ok(brand.x + brand.width <= lang.x, `the name stops before the icons: ${JSON.stringify({ brand, lang })}`);

    await page.getByRole("button", { name: "展开或收起侧边栏" }).click();
    const sidebar = page.locator('[data-testid="sidebar"]');
    await sidebar.waitFor({ state: "visible" });
    await page.keyboard.press("Escape");
    await sidebar.waitFor({ state: "hidden" });
    await context.close();
  } finally {
    await root.call("PUT", "/api/option/", { key: "SystemName", value: before });
  }
});

test("in English on an American browser the home page and the clear-logs question write dates as the rest of the console does", async () => {
  const DATE = /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/;
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: LAPTOP, locale: "en-US" });
  await context.addInitScript(() => localStorage.setItem("i18nextLng", "en"));
  await login(page, "root", "123456");
  await page.goto("/");
  const started = page.locator(".rt-DataListItem", { hasText: "Started" }).locator(".rt-DataListValue");
  await started.waitFor();
  assert.match((await started.textContent()).trim(), new RegExp(`^${DATE.source}$`), "the start time");

  await page.goto("/setting?tab=operation");
  const when = page.getByLabel("Log time");
  await when.waitFor();
  await when.fill("2025-03-04T05:06");
  await page.getByRole("button", { name: "Clear old logs" }).click();
  const dialog = page.getByRole("alertdialog");
  await dialog.waitFor();
  assert.match(await dialog.textContent(), /before 2025-03-04 05:06:00 will be deleted/, "the clear-logs question");
  await page.keyboard.press("Escape");
  await context.close();
});

test("on a laptop screen in English the channel drawer keeps priority and weight side by side at one width", async () => {
  const { context, page } = await openAsRoot(LAPTOP, "en");
  await page.goto("/channel");
  await page.locator('[data-testid="add-channel"]').click();
  const prio = page.locator("#ch-priority");
  const weight = page.locator("#ch-weight");
  await weight.waitFor();
  await weight.scrollIntoViewIfNeeded();
  const pb = await prio.boundingBox();
  const wb = await weight.boundingBox();
  assert.equal(Math.round(pb.y), Math.round(wb.y), `weight sits beside priority: ${JSON.stringify({ pb, wb })}`);
  assert.ok(Math.abs(pb.width - wb.width) <= 1, `both inputs are as wide: ${JSON.stringify({ pb, wb })}`);
  await page.keyboard.press("Escape");
  await context.close();
});

/** inView asserts that box lies inside a viewport of the given width. */
function assertInView(box, width, what) {
  assert.ok(box && box.x >= 0 && box.x + box.width <= width, `${what} is on screen: ${JSON.stringify(box)}`);
}

test("on a phone in English a visitor's top bar keeps Log in on screen and the page does not scroll sideways", async () => {
  const before = (await root.call("GET", "/api/status")).json.data.system_name;
  await putOption(root, "SystemName", "Acme Enterprise AI Gateway Portal For Everyone");
  try {
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: PHONE });
    await context.addInitScript(() => localStorage.setItem("i18nextLng", "en"));
    await page.goto("/pricing");
    await page.locator(".brand", { hasText: "Acme" }).waitFor();
    const loginButton = page.locator(".top-bar").getByRole("button", { name: "Log in" });
    assertInView(await loginButton.boundingBox(), PHONE.width, "Log in");
    for (const name of ["Change language", "Switch to dark mode"]) {
      assertInView(await page.locator(".top-bar").getByRole("button", { name }).boundingBox(), PHONE.width, name);
    }
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= PHONE.width, `the page does not scroll sideways: ${width}`);
    await loginButton.click();
    await page.waitForURL(/\/login$/);
    await context.close();
  } finally {
    await putOption(root, "SystemName", before);
  }
});

test("on a tablet a visitor's top bar offers both Log in and Sign up, on screen", async () => {
  const TABLET = { width: 768, height: 1024 };
  const before = (await root.call("GET", "/api/status")).json.data.system_name;
  await putOption(root, "SystemName", "Acme Enterprise AI Gateway Portal For Everyone");
  try {
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: TABLET });
    await context.addInitScript(() => localStorage.setItem("i18nextLng", "en"));
    await page.goto("/pricing");
    await page.locator(".brand", { hasText: "Acme" }).waitFor();
    const bar = page.locator(".top-bar");
    for (const name of ["Log in", "Sign up"]) assertInView(await bar.getByRole("button", { name }).boundingBox(), TABLET.width, name);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= TABLET.width, `the page does not scroll sideways: ${width}`);
    await bar.getByRole("button", { name: "Sign up" }).click();
    await page.waitForURL(/\/register$/);
    await context.close();
  } finally {
    await putOption(root, "SystemName", before);
  }
});

test("a tablet turned from landscape to portrait folds the sidebar away instead of covering the page, and turned back shows it again", async () => {
  const { context, page } = await openAsRoot({ width: 1024, height: 768 }, "en");
  await page.goto("/token");
  const sidebar = page.locator('[data-testid="sidebar"]');
  await sidebar.locator(".sidebar-label").first().waitFor();
  await page.setViewportSize({ width: 768, height: 1024 });
  await sidebar.waitFor({ state: "hidden" });
  await page.click('[data-testid="add-token"]');
  await page.locator(".sheet-content").waitFor();
  await page.keyboard.press("Escape");
  await page.locator(".sheet-content").waitFor({ state: "detached" });
  await page.setViewportSize({ width: 1024, height: 768 });
  await sidebar.locator(".sidebar-label").first().waitFor();
  await context.close();
});

test("on a phone a channel's test-with-a-model menu stays within the screen and shows a long model name whole", async () => {
  const LONG = "claude-3-5-sonnet-20241022-extended-thinking-preview-long-name";
  const ch = await root.call("POST", "/api/channel/", {
    name: "layout-long-models",
    type: 1,
    key: "sk-layout-long",
    base_url: "http://127.0.0.1:9",
    models: `gpt-4o-mini,${LONG}`,
    group: "default",
  });
  assert.equal(ch.json?.success, true, JSON.stringify(ch.json));
  const id = (await root.call("GET", "/api/channel/search?keyword=layout-long-models")).json.data.find((c) => c.name === "layout-long-models").id;
  try {
    const { context, page } = await openAsRoot(PHONE, "en");
    await page.goto("/channel");
    await page.locator(`[data-row-key="${id}"] [data-testid="test-model-menu"]`).click();
    const menu = page.getByRole("menu");
    await menu.waitFor();
    assertInView(await menu.boundingBox(), PHONE.width, "the menu");
    const item = menu.locator(`[data-model="${LONG}"]`);
    const ib = await item.boundingBox();
    assertInView(ib, PHONE.width, "the long model's item");
    const whole = await item.evaluate((el) => el.scrollWidth <= el.clientWidth);
    assert.ok(whole, "the long model name is not cut off");
    await page.keyboard.press("Escape");
    await context.close();
  } finally {
    await root.call("DELETE", `/api/channel/${id}`);
  }
});
