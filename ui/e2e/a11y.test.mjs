// The console used with the keyboard and a screen reader: overlays give the
// keyboard back to the control that opened them, and every form field has a
// name (a tied <label> or aria-label) in the current language.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel } from "./fake-upstream.mjs";
import { gatewaySuite, login, newPage, putOption, registerUser, rootApi, uniqueName } from "./harness.mjs";

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

test("the fields of dialogs and popovers (model picker, add quota, delete account, manual copy, WeChat code) are named in the page's language", async () => {
  const names = {
    zh: { search: "搜索…", addQuota: "需要添加的额度（支持负数）", deleteAccount: "请输入你的账户名以确认：", copy: "要复制的内容", wechat: "验证码" },
    en: { search: "Search…", addQuota: "Quota to add (may be negative)", deleteAccount: "Type your username to confirm:", copy: "Text to copy", wechat: "Verification code" },
  };
  const root = await rootApi(suite.gw.baseURL);
  await root.call("POST", "/api/token/", { name: "a11y", remain_quota: 0, expired_time: -1, unlimited_quota: true });
  await putOption(root, "WeChatServerAddress", "http://127.0.0.1:9");
  await putOption(root, "WeChatServerToken", "a11y-token");
  await putOption(root, "WeChatAuthEnabled", "true");
  const labelled = async (page, name, testId, what) => {
    const field = page.getByLabel(name, { exact: true });
    assert.equal(await field.count(), 1, `${what}: no field labelled ${JSON.stringify(name)}`);
    assert.equal(await field.getAttribute("data-testid"), testId, what);
  };
  for (const locale of ["zh", "en"]) {
    const n = names[locale];
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { locale: locale === "zh" ? "zh-CN" : "en-US", viewport: { width: 1400, height: 900 } });
    await page.addInitScript(() => {
      Object.defineProperty(navigator, "clipboard", { value: { writeText: () => Promise.reject(new Error("denied")) } });
    });
    await page.goto("/login");
    await page.click('[data-testid="oauth-wechat"]');
    await page.getByRole("dialog").waitFor();
    await page.getByRole("dialog").getByRole("textbox").evaluate((el) => el.setAttribute("data-testid", "wechat-code-probe"));
    await labelled(page, n.wechat, "wechat-code-probe", "WeChat code");
    await page.keyboard.press("Escape");
    await login(page, "root", "123456");

    await page.goto("/token");
    await page.click('[data-testid="add-token"]');
    await page.click('[data-testid="token-limits-enabled"]');
    await page.locator('[data-testid="token-models-open"]').focus();
    await page.keyboard.press("Enter");
    await page.locator('[data-testid="token-models-search"]').waitFor();
    await labelled(page, n.search, "token-models-search", "model picker");
    await page.keyboard.press("Escape");
    await page.locator('[data-testid="token-models-search"]').waitFor({ state: "detached" });
    await page.waitForFunction(() => document.activeElement?.dataset.testid === "token-models-open");
    await page.keyboard.press("Escape");
    await page.locator('[data-testid="token-drawer"]').waitFor({ state: "detached" });

    await page.locator('[data-testid="copy-key"]').first().click();
    await page.locator('[data-testid="manual-copy-text"]').waitFor();
    await labelled(page, n.copy, "manual-copy-text", "manual copy");
    await page.keyboard.press("Escape");

    await page.goto("/user");
    await page.locator('[data-testid="user-edit"]').first().click();
    await page.click('[data-testid="user-add-quota"]');
    await page.locator('[data-testid="add-quota-input"]').waitFor();
    await labelled(page, n.addQuota, "add-quota-input", "add quota");
    await page.keyboard.press("Escape");

    await context.close();

    // Root cannot delete its account: a common user opens the deletion dialog.
    const member = await registerUser(suite.gw.baseURL, "a11yd", "a11y-pass-1");
    const other = await newPage(suite.browser, suite.gw.baseURL, { locale: locale === "zh" ? "zh-CN" : "en-US", viewport: { width: 1400, height: 900 } });
    await login(other.page, member.username, "a11y-pass-1");
    await other.page.goto("/setting?tab=personal");
    await other.page.click('[data-testid="delete-account"]');
    await other.page.locator('[data-testid="delete-confirm-input"]').waitFor();
    await labelled(other.page, n.deleteAccount, "delete-confirm-input", "delete account");
    await other.context.close();
  }
  await putOption(root, "WeChatAuthEnabled", "false");
});

test("the download offer that replaces the redemption drawer gives the keyboard back to the add button when it closes", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/redemption");
  for (const close of ["Escape", "cancel"]) {
    await page.locator('[data-testid="redemption-add"]').focus();
    await page.keyboard.press("Enter");
    await page.locator("#redemption-name").waitFor();
    await page.locator("#redemption-name").fill(uniqueName("kb"));
    await page.keyboard.press("Enter");
    const offer = page.getByRole("dialog").filter({ has: page.locator('[data-testid="redemption-download-dialog"]') });
    await offer.waitFor();
    await page.waitForTimeout(500);
    assert.ok(await page.evaluate(() => !!document.activeElement?.closest('[role="dialog"]')), "the focus is in the offer");
    if (close === "Escape") await page.keyboard.press("Escape");
    else await offer.getByRole("button", { name: "取消" }).press("Enter");
    await offer.waitFor({ state: "detached" });
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid ?? document.activeElement?.tagName), "redemption-add", `closed by ${close}`);
  }
  await context.close();
});

test("the dashboard's granularity choice is a group named in the page's language", async () => {
  for (const [locale, name] of [["zh-CN", "时间粒度"], ["en-US", "Granularity"]]) {
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { locale, viewport: { width: 1400, height: 900 } });
    await login(page, "root", "123456");
    await page.goto("/detail");
    await page.locator('[data-testid="detail-granularity-day"]').waitFor();
    const group = page.getByRole("radiogroup", { name, exact: true });
    assert.equal(await group.count(), 1, `${locale}: no radio group named ${JSON.stringify(name)}`);
    assert.equal(await group.getAttribute("data-testid"), "detail-granularity");
    // Operable by keyboard: the arrow keys move the choice.
    await page.waitForTimeout(500);
    await page.locator('[data-testid="detail-granularity-hour"]').focus();
    await page.keyboard.press("ArrowRight");
    await page.waitForFunction(() => document.activeElement?.dataset.testid === "detail-granularity-day");
    await page.keyboard.press("Space");
    await page.locator('[data-testid="detail-granularity-day"][aria-checked="true"]').waitFor();
    await context.close();
  }
});

test("saving a redemption code's edit gives the keyboard back to that row's edit button", async () => {
  const root = await rootApi(suite.gw.baseURL);
  const name = uniqueName("ed");
  assert.equal((await root.call("POST", "/api/redemption/", { name, count: 1, quota: 1000 })).json.success, true);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/redemption");
  const row = page.locator("tr", { hasText: name });
  await row.locator('[data-testid="redemption-edit"]').focus();
  await page.keyboard.press("Enter");
  const drawer = page.getByRole("dialog");
  await page.locator("#redemption-name").waitFor();
  await page.waitForFunction(() => document.querySelector("#redemption-name")?.value !== "");
  await page.locator("#redemption-name").fill(name + "x");
  await drawer.locator('[data-testid="redemption-submit"]').press("Enter");
  await drawer.waitFor({ state: "detached" });
  await page.locator("tr", { hasText: name + "x" }).waitFor();
  await page.waitForTimeout(500);
  const focused = await page.evaluate(() => ({ testId: document.activeElement?.dataset.testid ?? document.activeElement?.tagName, row: document.activeElement?.closest("tr")?.textContent ?? "" }));
  assert.equal(focused.testId, "redemption-edit");
  assert.ok(focused.row.includes(name + "x"), "the edited row's button");
  await context.close();
});

test("the model price dialog's billing choice is a radio group named by its label", async () => {
  for (const [locale, name] of [["zh-CN", "计费方式"], ["en-US", "Billing"]]) {
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { locale, viewport: { width: 1400, height: 900 } });
    await login(page, "root", "123456");
    await page.goto("/setting?tab=operation");
    await page.locator('[data-testid="pricing-add"]').focus();
    await page.keyboard.press("Enter");
    await page.locator("#model-row-name").waitFor();
    const group = page.getByRole("dialog").getByRole("radiogroup", { name, exact: true });
    assert.equal(await group.count(), 1, `${locale}: no radio group named ${JSON.stringify(name)}`);
    assert.equal(await page.getByLabel(name, { exact: true }).getAttribute("id"), "model-row-mode");
    await context.close();
  }
});
