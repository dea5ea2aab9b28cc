// Browser tests of the super-administrator settings tabs: operation, system and other.
import assert from "node:assert/strict";
import { test } from "node:test";
import { expectToast, gatewaySuite, getOptions, login, newPage, putOption, registerUser, rootApi } from "./harness.mjs";

/** root reads options from Node as root, to check what the server really stored. */
let root;

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    root = await rootApi(gw.baseURL);
  },
});

/**
 * clickAndExpect closes any toast already saying text (the toaster drops
 * duplicates, so an old one would hide the new), clicks, and waits for text.
 */
async function clickAndExpect(page, selector, text) {
  const old = page.locator(".toast", { hasText: text });
  for (const close of await old.locator(".toast-close").all()) await close.click().catch(() => {});
  await old.first().waitFor({ state: "detached" });
  await page.click(selector);
  await expectToast(page, text);
}

/** rootPage opens a fresh browser context logged in as root, on the given settings tab. */
async function rootPage(tab) {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, "root", "123456");
  if (tab) {
    await page.goto(`/setting?tab=${tab}`);
    await page.locator(`[data-testid="${tab}-tab"]`).waitFor();
  }
  return { context, page };
}

/** waitForValue waits until the field with the given selector holds value. */
async function waitForValue(page, selector, value) {
  await page.waitForFunction(([sel, want]) => document.querySelector(sel)?.value === want, [selector, value]);
}

async function tabIds(page) {
  await page.goto("/setting");
  await page.locator('[data-testid="tab-personal"]').waitFor();
  return page.locator('[data-testid^="tab-"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-testid")));
}

test("the operation, system and other tabs appear for root only", async () => {
  const { username, password } = await registerUser(suite.gw.baseURL, "set", "settings-pass-1");
  const normal = await newPage(suite.browser, suite.gw.baseURL);
  await login(normal.page, username, password);
  assert.deepEqual(await tabIds(normal.page), ["tab-personal"]);
  // Asking for a root tab by URL falls back to the personal tab.
  await normal.page.goto("/setting?tab=system");
  await normal.page.locator('[data-testid="personal-tab"]').waitFor();
  assert.equal(await normal.page.locator('[data-testid="system-tab"]').count(), 0);
  await normal.context.close();

  const { context, page } = await rootPage();
  assert.deepEqual(await tabIds(page), ["tab-personal", "tab-operation", "tab-system", "tab-other"]);
  await page.click('[data-testid="tab-system"]');
  await page.locator('[data-testid="system-tab"]').waitFor();
  assert.match(page.url(), /tab=system/);
  await context.close();
});

test("the data dashboard's interval field says it changes nothing, as the dashboard is written with each charge", async () => {
  const { context, page } = await rootPage("operation");
  const field = page.locator(".field", { has: page.locator("#opt-DataExportInterval") });
  await field.waitFor();
  const text = await field.innerText();
  // docs/options.md: stored but without effect; the rows are written with the charges, not flushed on a timer.
  assert.ok(!text.includes("影响数据库性能"), text);
  assert.match(text, /不影响|无效/, text);
  await context.close();
});

test("saving an unchanged section says nothing was changed", async () => {
  const { context, page } = await rootPage("operation");
  await clickAndExpect(page, '[data-testid="save-general"]', "你似乎并没有修改什么");
  await context.close();
});

test("bad JSON in ModelRatio is refused with the spec message and the server keeps its value", async () => {
  const before = (await getOptions(root)).ModelRatio;
  const { context, page } = await rootPage("operation");
  await page.fill("#opt-ModelRatio", '{"gpt-4": 15,');
  await clickAndExpect(page, '[data-testid="save-ratio"]', "模型倍率不是合法的 JSON 字符串");
  // The catalogue's message for a failed JSON check (A §8), naming the field (A §5).
  await expectToast(page, "请检查输入");
  await page.fill("#opt-ModelRatio", '{"gpt-4": "fifteen"}');
  await clickAndExpect(page, '[data-testid="save-ratio"]', "模型倍率不是合法的 JSON 字符串");
  assert.equal((await getOptions(root)).ModelRatio, before);
  await context.close();
});

test("a section the server refuses in part says so with the spec's message", async () => {
  const before = await getOptions(root);
  const { context, page } = await rootPage("operation");
  // The threshold is refused (above its bound), the interval is stored.
  await page.fill("#opt-ChannelDisableThreshold", "2000000");
  await page.fill("#opt-ChannelBalanceInterval", String(Number(before.ChannelBalanceInterval || 0) + 7));
  await clickAndExpect(page, '[data-testid="save-monitor"]', "部分保存失败，请重试");
  await expectToast(page, "ChannelDisableThreshold");
  const after = await getOptions(root);
  assert.equal(after.ChannelDisableThreshold, before.ChannelDisableThreshold);
  assert.equal(after.ChannelBalanceInterval, String(Number(before.ChannelBalanceInterval || 0) + 7));
  // Only the refused key left: nothing saved.
  await page.fill("#opt-ChannelDisableThreshold", "3000000");
  await clickAndExpect(page, '[data-testid="save-monitor"]', "保存失败，请重试");
  await page.locator(".toast-text", { hasText: /^保存失败，请重试$/ }).first().waitFor();
  await root.call("PUT", "/api/option/", { key: "ChannelBalanceInterval", value: before.ChannelBalanceInterval || "0" });
  await context.close();
});

test("a slow option list read for an earlier save does not put back a value saved after it", async () => {
  const before = await getOptions(root);
  const retries = String(Number(before.RetryTimes || 0) + 3);
  const { context, page } = await rootPage("operation");
  // The option list read after the first save answers late, with what the server held then.
  let answered;
  const lateAnswer = new Promise((resolve) => (answered = resolve));
  let delayed = false;
  await page.route(
    (url) => url.pathname === "/api/option/",
    async (route) => {
      if (route.request().method() !== "GET" || delayed) return route.fallback();
      delayed = true;
      const res = await route.fetch();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await route.fulfill({ response: res });
      answered();
    },
  );
  await page.fill("#opt-QuotaForNewUser", String(Number(before.QuotaForNewUser || 0) + 11));
  await page.click('[data-testid="save-quota"]');
  // Meanwhile another section is saved, and its own read answers at once.
  await page.fill("#opt-RetryTimes", retries);
  await clickAndExpect(page, '[data-testid="save-general"]', "保存成功");
  await lateAnswer;
  await page.waitForTimeout(300);
  assert.equal((await getOptions(root)).RetryTimes, retries);
  assert.equal(await page.inputValue("#opt-RetryTimes"), retries, "the form shows the value the server holds");
  await root.call("PUT", "/api/option/", { key: "RetryTimes", value: before.RetryTimes || "0" });
  await root.call("PUT", "/api/option/", { key: "QuotaForNewUser", value: before.QuotaForNewUser || "0" });
  await context.close();
});

test("a valid GroupRatio is saved and persists across a reload", async () => {
  const want = { default: 1, vip: 1.5, svip: 2, edu: 0.5 };
  const { context, page } = await rootPage("operation");
  await page.fill("#opt-GroupRatio", JSON.stringify(want));
  await clickAndExpect(page, '[data-testid="save-ratio"]', "保存成功");
  assert.deepEqual(JSON.parse((await getOptions(root)).GroupRatio), want);
  await page.reload();
  await page.locator('[data-testid="operation-tab"]').waitFor();
  assert.deepEqual(JSON.parse(await page.inputValue("#opt-GroupRatio")), want);
  // Saving again without edits changes nothing.
  await clickAndExpect(page, '[data-testid="save-ratio"]', "你似乎并没有修改什么");
  await context.close();
});

test("the model table adds a fixed-price model and applying writes ModelPrice", async () => {
  const { context, page } = await rootPage("operation");
  await page.click('[data-testid="pricing-add"]');
  await page.fill("#model-row-name", "e2e-fixed-model");
  await page.click('[data-testid="model-row-mode-price"]');
  await page.fill("#model-row-price", "0.05");
  await page.click('[data-testid="model-row-save"]');
  await page.fill('[data-testid="pricing-search"]', "e2e-fixed");
  await page.locator('[data-testid="pricing-row"][data-model="e2e-fixed-model"]').waitFor();
  await page.locator('[data-testid="pricing-dirty"]').waitFor();
  await clickAndExpect(page, '[data-testid="save-pricing"]', "保存成功");
  await page.locator('[data-testid="pricing-dirty"]').waitFor({ state: "detached" });
  assert.equal(JSON.parse((await getOptions(root)).ModelPrice)["e2e-fixed-model"], 0.05);
  // The untouched JSON field follows the saved value.
  assert.equal(JSON.parse(await page.inputValue("#opt-ModelPrice"))["e2e-fixed-model"], 0.05);

  await page.locator('[data-testid="pricing-row"][data-model="e2e-fixed-model"] [data-testid="pricing-delete"]').click();
  await clickAndExpect(page, '[data-testid="save-pricing"]', "保存成功");
  assert.equal(JSON.parse((await getOptions(root)).ModelPrice)["e2e-fixed-model"], undefined);
  await context.close();
});

test("applying the model table keeps a price saved meanwhile by another administrator", async () => {
  const { context, page } = await rootPage("operation");
  // Another administrator prices a model and raises a ratio after this page read the options.
  const other = await rootApi(suite.gw.baseURL);
  const price = JSON.parse((await getOptions(other)).ModelPrice);
  const ratio = JSON.parse((await getOptions(other)).ModelRatio);
  price["e2e-other-admin"] = 0.3;
  ratio["gpt-4"] = 20;
  await other.call("PUT", "/api/option/", { key: "ModelPrice", value: JSON.stringify(price) });
  await other.call("PUT", "/api/option/", { key: "ModelRatio", value: JSON.stringify(ratio) });

  // This page adds its own fixed-price model and applies the table.
  await page.click('[data-testid="pricing-add"]');
  await page.fill("#model-row-name", "e2e-this-admin");
  await page.click('[data-testid="model-row-mode-price"]');
  await page.fill("#model-row-price", "0.2");
  await page.click('[data-testid="model-row-save"]');
  await clickAndExpect(page, '[data-testid="save-pricing"]', "保存成功");

  const after = await getOptions(root);
  assert.equal(JSON.parse(after.ModelPrice)["e2e-this-admin"], 0.2);
  assert.equal(JSON.parse(after.ModelPrice)["e2e-other-admin"], 0.3, "the other administrator's new price was dropped");
  assert.equal(JSON.parse(after.ModelRatio)["gpt-4"], 20, "the other administrator's ratio was reverted");
  await context.close();
});

test("a ratio model needs its model ratio; an empty completion ratio is the built-in one", async () => {
  const { context, page } = await rootPage("operation");
  await page.click('[data-testid="pricing-add"]');
  await page.fill("#model-row-name", "e2e-ratio-model");
  await page.fill("#model-row-completion", "3");
  await clickAndExpect(page, '[data-testid="model-row-save"]', "请填写模型倍率：只有补全倍率的模型无法计费");
  await page.fill("#model-row-completion", "");
  // A ratio far below 1 is priced to six significant digits, never $0: it is charged.
  await page.fill("#model-row-ratio", "0.0000001");
  await page.getByText("输入价格：$0.0000002 / 1M tokens").waitFor();
  await page.fill("#model-row-ratio", "1.5");
  await page.getByText("补全价格：按内置补全倍率").waitFor();
  await page.click('[data-testid="model-row-save"]');
  await page.fill('[data-testid="pricing-search"]', "e2e-ratio");
  const row = page.locator('[data-testid="pricing-row"][data-model="e2e-ratio-model"]');
  await row.getByText("内置").waitFor();
  // Numbers are written as the server reads them: an integer in digits, a
  // decimal with an exponent too.
  await page.fill("#opt-QuotaForNewUser", "1e3");
  await clickAndExpect(page, '[data-testid="save-quota"]', "新用户初始额度必须是数字");
  await page.fill("#opt-ChannelDisableThreshold", "1.5e1");
  await clickAndExpect(page, '[data-testid="save-monitor"]', "保存成功");
  assert.equal((await getOptions(root)).ChannelDisableThreshold, "1.5e1");
  await page.fill("#opt-ChannelDisableThreshold", "5");
  await clickAndExpect(page, '[data-testid="save-monitor"]', "保存成功");
  await context.close();
});

test("clearing logs asks for a date, then for confirmation", async () => {
  const { context, page } = await rootPage("operation");
  await clickAndExpect(page, '[data-testid="clear-logs"]', "请选择日志记录时间");
  assert.equal(await page.getByRole("alertdialog").count(), 0);
  await page.fill("#log-clear-date", "2001-01-01T00:00");
  await page.click('[data-testid="clear-logs"]');
  const dialog = page.getByRole("alertdialog");
  await dialog.waitFor();
  await dialog.getByRole("button", { name: "清除历史日志" }).click();
  await expectToast(page, "0 条日志已清理！");
  await dialog.waitFor({ state: "detached" });
  await context.close();
});

test("changing SystemName updates the top bar", async () => {
  const { context, page } = await rootPage("other");
  await page.fill("#opt-SystemName", "E2E 网关");
  await clickAndExpect(page, '[data-testid="save-SystemName"]', "保存成功");
  await page.locator(".brand", { hasText: "E2E 网关" }).waitFor();
  assert.equal((await getOptions(root)).SystemName, "E2E 网关");
  await clickAndExpect(page, '[data-testid="save-SystemName"]', "你似乎并没有修改什么");
  await context.close();
});

test("a slow status read after an earlier save does not put back the name saved after it", async () => {
  const { context, page } = await rootPage("other");
  // The status read after the first save answers late, with what the server held then.
  let answered;
  const lateAnswer = new Promise((resolve) => (answered = resolve));
  let delayed = false;
  await page.route(
    (url) => url.pathname === "/api/status",
    async (route) => {
      if (delayed) return route.fallback();
      delayed = true;
      const res = await route.fetch();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await route.fulfill({ response: res });
      answered();
    },
  );
  await page.fill("#opt-SystemName", "E2E 先存的名称");
  await clickAndExpect(page, '[data-testid="save-SystemName"]', "保存成功");
  await page.fill("#opt-SystemName", "E2E 后存的名称");
  await clickAndExpect(page, '[data-testid="save-SystemName"]', "保存成功");
  await page.locator(".brand", { hasText: "E2E 后存的名称" }).waitFor();
  await lateAnswer;
  await page.waitForTimeout(300);
  assert.equal((await page.locator(".brand").textContent()).trim(), "E2E 后存的名称", "the top bar went back to a name saved before");
  assert.equal(await page.title(), "E2E 后存的名称");
  await root.call("PUT", "/api/option/", { key: "SystemName", value: "" });
  await context.close();
});

test("clearing SystemName gives the default name back to the top bar and the browser title at once", async () => {
  const { context, page } = await rootPage("other");
  await page.fill("#opt-SystemName", "E2E 临时名称");
  await clickAndExpect(page, '[data-testid="save-SystemName"]', "保存成功");
  await page.waitForFunction(() => document.title === "E2E 临时名称");
  await page.fill("#opt-SystemName", "");
  await clickAndExpect(page, '[data-testid="save-SystemName"]', "保存成功");
  await page.locator(".brand", { hasText: "New API" }).waitFor();
  assert.equal(await page.title(), "New API");
  await context.close();
});

/**
 * switchSettled waits until the switch shows state and its save is over: a
 * live switch shows the new state while the save is still in flight
 * (disabled), so the server may not have it yet.
 */
async function switchSettled(page, selector, state) {
  await page.waitForFunction(
    ([sel, want]) => {
      const el = document.querySelector(sel);
      return el?.getAttribute("aria-checked") === want && !el.disabled;
    },
    [selector, state],
  );
}

test("enabling GitHub login without a client id shows the server's refusal; with one it is enabled", async () => {
  const { context, page } = await rootPage("system");
  const toggle = page.locator("#opt-GitHubOAuthEnabled");
  assert.equal(await toggle.getAttribute("aria-checked"), "false");
  await toggle.click();
  await page.locator(".toast-error", { hasText: "GitHubClientId" }).first().waitFor();
  await switchSettled(page, "#opt-GitHubOAuthEnabled", "false");
  assert.equal((await getOptions(root)).GitHubOAuthEnabled, "false");

  await page.fill("#opt-GitHubClientId", "e2e-client-id");
  // The secret is never shown; it is sent only when filled.
  assert.equal(await page.inputValue("#opt-GitHubClientSecret"), "");
  assert.match(await page.getAttribute("#opt-GitHubClientSecret", "placeholder"), /留空则保持不变/);
  await clickAndExpect(page, '[data-testid="save-github"]', "保存成功");
  await toggle.click();
  await switchSettled(page, "#opt-GitHubOAuthEnabled", "true");
  assert.equal((await getOptions(root)).GitHubOAuthEnabled, "true");
  await context.close();
});

test("payment needs the server address, and addresses lose their trailing slashes", async () => {
  const { context, page } = await rootPage("system");
  await page.fill("#opt-Price", "7.5");
  await clickAndExpect(page, '[data-testid="save-payment"]', "请先填写服务器地址");
  assert.equal((await getOptions(root)).Price, "7.3");

  await page.fill("#opt-ServerAddress", "https://gw.example.com//");
  await clickAndExpect(page, '[data-testid="save-server"]', "保存成功");
  assert.equal((await getOptions(root)).ServerAddress, "https://gw.example.com");
  await waitForValue(page, "#opt-ServerAddress", "https://gw.example.com");
  assert.equal((await page.locator('[data-testid="github-callback"]').textContent()).trim(), "https://gw.example.com/oauth/github");

  await page.fill("#opt-TopupGroupRatio", "{nope");
  await clickAndExpect(page, '[data-testid="save-payment"]', "充值分组倍率不是合法的 JSON 字符串");
  await page.fill("#opt-TopupGroupRatio", '{"default": 1, "vip": 0.9}');
  await clickAndExpect(page, '[data-testid="save-payment"]', "保存成功");
  const opts = await getOptions(root);
  assert.equal(opts.Price, "7.5");
  assert.deepEqual(JSON.parse(opts.TopupGroupRatio), { default: 1, vip: 0.9 });
  await context.close();
});

test("turning password login off asks first; cancelling keeps it on", async () => {
  const { context, page } = await rootPage("system");
  const toggle = page.locator("#opt-PasswordLoginEnabled");
  assert.equal(await toggle.getAttribute("aria-checked"), "true");
  await toggle.click();
  const dialog = page.getByRole("alertdialog");
  await dialog.waitFor();
  await dialog.getByRole("button", { name: "取消" }).click();
  await dialog.waitFor({ state: "detached" });
  assert.equal(await toggle.getAttribute("aria-checked"), "true");
  assert.equal((await getOptions(root)).PasswordLoginEnabled, "true");
  await context.close();
});

test("the e-mail whitelist does not take a domain twice; port 465 turns SMTP SSL on", async () => {
  const { context, page } = await rootPage("system");
  const tags = page.locator('[data-testid="whitelist-tag"]');
  const count = await tags.count();
  await page.fill("#whitelist-input", "gmail.com");
  await clickAndExpect(page, '[data-testid="whitelist-add"]', "该域名已在白名单中");
  assert.equal(await tags.count(), count);
  // Several at once: the one already listed is not added again.
  await page.fill("#whitelist-input", "example.org, GMAIL.com,example.org");
  await page.click('[data-testid="whitelist-add"]');
  assert.equal(await tags.count(), count + 1);
  await clickAndExpect(page, '[data-testid="save-whitelist"]', "保存成功");
  const saved = (await getOptions(root)).EmailDomainWhitelist.split(",");
  assert.ok(saved.includes("example.org"));
  assert.equal(new Set(saved).size, saved.length, `a domain twice in ${saved}`);

  assert.equal(await page.locator("#opt-SMTPSSLEnabled").getAttribute("aria-checked"), "false");
  await page.fill("#opt-SMTPPort", "465");
  assert.equal(await page.locator("#opt-SMTPSSLEnabled").getAttribute("aria-checked"), "true");
  // It stays on while 465 is the port.
  await page.click("#opt-SMTPSSLEnabled");
  assert.equal(await page.locator("#opt-SMTPSSLEnabled").getAttribute("aria-checked"), "true");
  await page.fill("#opt-SMTPToken", "smtp-secret");
  await clickAndExpect(page, '[data-testid="save-smtp"]', "保存成功");
  const opts = await getOptions(root);
  assert.equal(opts.SMTPPort, "465");
  assert.equal(opts.SMTPSSLEnabled, "true");
  assert.equal(opts.SMTPToken, undefined, "secrets are never listed");
  await waitForValue(page, "#opt-SMTPToken", "");
  await context.close();
});

test("a stored secret is cleared with its own confirmed button, and not while an enabled option needs it", async () => {
  // Logged in first: with the human check on, a login needs a Turnstile token.
  const { context, page } = await rootPage("system");
  try {
    await putOption(root, "TurnstileSiteKey", "e2e-site-key");
    await putOption(root, "TurnstileSecretKey", "e2e-secret-key");
    await putOption(root, "TurnstileCheckEnabled", "true");
    const clear = async () => {
      await page.click('[data-testid="clear-secret-TurnstileSecretKey"]');
      const dialog = page.getByRole("alertdialog");
      await dialog.getByText("清除已保存的密钥？").waitFor();
      await dialog.getByRole("button", { name: "清除" }).click();
    };
    // The human check is on: the secret it needs stays.
    await clear();
    await expectToast(page, "无法清空 TurnstileSecretKey，请先关闭 TurnstileCheckEnabled");
    await page.getByRole("alertdialog").getByRole("button", { name: "取消" }).click();
    let r = await root.call("PUT", "/api/option/", { key: "TurnstileCheckEnabled", value: "true" });
    assert.equal(r.json.success, true, "the secret is still there");

    await putOption(root, "TurnstileCheckEnabled", "false");
    await clear();
    await expectToast(page, "保存成功");
    await page.getByRole("alertdialog").waitFor({ state: "detached" });
    // Now the check cannot be turned on: the server holds no secret any more.
    r = await root.call("PUT", "/api/option/", { key: "TurnstileCheckEnabled", value: "true" });
    assert.equal(r.json.success, false);
    assert.equal(r.json.message, "无法启用 TurnstileCheckEnabled，请先填入 TurnstileSecretKey");
  } finally {
    await putOption(root, "TurnstileCheckEnabled", "false");
    await context.close();
  }
});

test("an open system tab shows the options another administrator saves, without a reload", async () => {
  const { context, page } = await rootPage("system");
  // The page has read the options, and its live socket is open, before the other administrator saves.
  await page.waitForFunction(() => document.querySelector("#opt-LinuxDOOAuthEnabled")?.getAttribute("aria-checked") === "false");
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const other = await rootApi(suite.gw.baseURL);
  await putOption(other, "LinuxDOClientId", "e2e-other-linuxdo");
  await putOption(other, "LinuxDOOAuthEnabled", "true");
  await waitForValue(page, "#opt-LinuxDOClientId", "e2e-other-linuxdo");
  await switchSettled(page, "#opt-LinuxDOOAuthEnabled", "true");
  await putOption(other, "LinuxDOOAuthEnabled", "false");
  await switchSettled(page, "#opt-LinuxDOOAuthEnabled", "false");
  await context.close();
});

test("saving the e-mail whitelist keeps a domain another administrator added meanwhile", async () => {
  const { context, page } = await rootPage("system");
  await page.fill("#whitelist-input", "e2e-gone.example");
  await page.click('[data-testid="whitelist-add"]');
  await clickAndExpect(page, '[data-testid="save-whitelist"]', "保存成功");
  // This page takes a domain off; before it saves, another administrator adds one, which the page
  // learns of through its live socket.
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.click('[aria-label*="e2e-gone.example"]');
  const other = await rootApi(suite.gw.baseURL);
  const list = (await getOptions(other)).EmailDomainWhitelist;
  await putOption(other, "EmailDomainWhitelist", `${list},e2e-other.example`);
  await page.locator('[data-testid="whitelist-tag"]', { hasText: "e2e-other.example" }).waitFor();
  await clickAndExpect(page, '[data-testid="save-whitelist"]', "保存成功");
  const saved = (await getOptions(root)).EmailDomainWhitelist.split(",");
  assert.ok(saved.includes("e2e-other.example"), `the other administrator's domain was dropped: ${saved}`);
  assert.ok(!saved.includes("e2e-gone.example"), `the domain taken off is still there: ${saved}`);
  await context.close();
});
