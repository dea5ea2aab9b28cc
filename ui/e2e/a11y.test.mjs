// The console used with the keyboard and a screen reader: overlays give the
// keyboard back to the control that opened them, and every form field has a
// name (a tied <label> or aria-label) in the current language.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel } from "./fake-upstream.mjs";
import { gatewaySuite, login, newPage, rootApi, uniqueName } from "./harness.mjs";

const suite = gatewaySuite();

test("a channel's delete confirmation, opened from the row's menu by keyboard, gives the focus back to the menu button on cancel", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const name = uniqueName("kb");
  await createChannel(api, "http://127.0.0.1:9", ["gpt-4o-mini"], name);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto(`/channel`);
  const menu = page.locator('[data-testid="channel-menu"]').first();
  await menu.focus();
  await page.keyboard.press("Enter");
  await page.locator('[data-testid="delete-channel"]').waitFor();
  await page.keyboard.press("End");
  await page.waitForFunction(() => document.activeElement?.dataset.testid === "delete-channel");
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("alertdialog");
  await dialog.waitFor();
  // As a person reads the question: the menu is gone and the focus is in the dialog.
  await page.getByRole("menu").waitFor({ state: "detached" });
  await page.waitForFunction(() => document.activeElement?.closest('[role="alertdialog"]'));
  await page.waitForTimeout(500);
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "detached" });
  // Focus back on the row's menu button, not lost to the page.
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid ?? document.activeElement?.tagName), "channel-menu");
  // And by keyboard the menu opens again from there and the dialog's Cancel button closes it the same way.
  await page.keyboard.press("Enter");
  await page.locator('[data-testid="delete-channel"]').waitFor();
  await page.keyboard.press("End");
  await page.waitForFunction(() => document.activeElement?.dataset.testid === "delete-channel");
  await page.keyboard.press("Enter");
  await dialog.waitFor();
  await page.getByRole("menu").waitFor({ state: "detached" });
  await page.waitForTimeout(500);
  await dialog.getByRole("button", { name: "取消" }).press("Enter");
  await page.waitForTimeout(300);
  await dialog.waitFor({ state: "detached" });
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid ?? document.activeElement?.tagName), "channel-menu");
  assert.ok(await api.call("GET", `/api/channel/search?keyword=${name}`).then((r) => r.json.data.some((c) => c.name === name)), "the channel is kept");
  await context.close();
});

test("the search fields of the user list, the redemption list and the model price table are named in the page's language", async () => {
  const fields = [
    { path: "/user", testId: "user-search", zh: "支持搜索用户的 ID、用户名、显示名称和邮箱地址 ...", en: "ID, username, display name or e-mail" },
    { path: "/redemption", testId: "redemption-search", zh: "关键字(id或者名称)", en: "Keyword (id or name)" },
    { path: "/setting?tab=operation", testId: "pricing-search", zh: "搜索模型名称", en: "Search models" },
  ];
  for (const locale of ["zh", "en"]) {
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { locale: locale === "zh" ? "zh-CN" : "en-US", viewport: { width: 1400, height: 900 } });
    await login(page, "root", "123456");
    for (const f of fields) {
      await page.goto(f.path);
      await page.locator(`[data-testid="${f.testId}"]`).waitFor();
      const byLabel = page.getByLabel(f[locale], { exact: true });
      assert.equal(await byLabel.count(), 1, `${f.path} (${locale}): no field labelled ${JSON.stringify(f[locale])}`);
      assert.equal(await byLabel.getAttribute("data-testid"), f.testId);
    }
    await context.close();
  }
});
