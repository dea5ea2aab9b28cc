import assert from "node:assert/strict";
import { test } from "node:test";
import { expectToast, GATEWAY_BIN, gatewaySuite, login, newPage, putOption, rootApi, startGateway, submitLogin } from "./harness.mjs";

let root;

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    root = await rootApi(gw.baseURL);
  },
});

test("an unknown address shows the not-found page", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await page.goto("/no/such/page");
  const nf = page.locator('[data-testid="not-found"]');
  await nf.waitFor();
  assert.match(await nf.textContent(), /页面不存在/);
  await context.close();
});

test("the default footer shows the version; a custom footer is sanitised", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const version = (await root.call("GET", "/api/status")).json.data.version;
  await page.goto("/about");
  const footer = page.locator('[data-testid="footer"]');
  await footer.waitFor();
  if (version) assert.match(await footer.textContent(), new RegExp(version.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));

  await putOption(
    root,
    "Footer",
    '<b id="ft-bold">custom footer</b><img id="ft-img" src="x" onerror="window.__pwned=1"><script>window.__pwned=2</script><a id="ft-link" href="javascript:window.__pwned=3">x</a>',
  );
  await page.reload();
  await page.locator("#ft-bold", { hasText: "custom footer" }).waitFor();
  const check = await page.evaluate(() => ({
    pwned: window.__pwned ?? null,
    scripts: document.querySelectorAll('[data-testid="footer"] script').length,
    onerror: document.querySelector("#ft-img")?.getAttribute("onerror") ?? null,
    href: document.querySelector("#ft-link")?.getAttribute("href") ?? null,
  }));
  assert.deepEqual(check, { pwned: null, scripts: 0, onerror: null, href: null });
  await putOption(root, "Footer", "");
  await context.close();
});

test("a custom footer cleared by the administrator gives way to the default footer without a reload", async () => {
  await putOption(root, "Footer", '<b id="ft-gone">footer to clear</b>');
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, "root", "123456");
  // Loaded with the custom footer stored in the browser, as every later visit is.
  await page.goto("/about");
  const footer = page.locator('[data-testid="footer"]');
  await footer.locator("#ft-gone").waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await putOption(root, "Footer", "");
  // Footer unset: the default credits (A §3 footer_html, B §2 "if set").
  await footer.getByText("One API").waitFor({ timeout: 10000 });
  assert.equal(await footer.locator("#ft-gone").count(), 0);
  await context.close();
});

test("the home page shows the notice and follows live notice updates", async () => {
  await putOption(root, "Notice", "**first notice**");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await submitLogin(page, "root", "123456");
  await page.waitForURL("**/setting?tab=personal");
  await page.click("a.top-link[href='/']");
  const notice = page.locator('[data-testid="notice"]');
  await notice.locator("strong", { hasText: "first notice" }).waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await putOption(root, "Notice", "second notice");
  await notice.getByText("second notice").waitFor({ timeout: 10000 });
  await putOption(root, "Notice", "");
  await context.close();
});

test("the New Year lantern appears only on lantern days", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await page.clock.setFixedTime(new Date(2026, 1, 12, 10, 0, 0));
  await page.goto("/");
  const lantern = page.locator('[data-testid="lantern"]');
  await lantern.waitFor();
  await lantern.click();
  await page.locator('[data-testid="lantern-show"]').waitFor();
  await context.close();

  const other = await newPage(suite.browser, suite.gw.baseURL);
  await other.page.clock.setFixedTime(new Date(2026, 2, 1, 10, 0, 0));
  await other.page.goto("/");
  await other.page.locator('[data-testid="theme-toggle"]').waitFor();
  assert.equal(await other.page.locator('[data-testid="lantern"]').count(), 0);
  await other.context.close();
});

test("a rate-limited call shows the catalogue's message; a mail code's cooldown keeps the server's", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const limited = (message, headers = {}) => (route) =>
    route.fulfill({ status: 429, headers, contentType: "application/json", body: JSON.stringify({ success: false, message, data: null }) });
  // The status fetch is answered with the general limit.
  await page.route("**/api/about", limited("请求过于频繁，请稍后再试"));
  await page.goto("/about");
  await expectToast(page, "错误：请求次数过多，请稍后再试！");
  // A limited status fetch says so alone: the server is reachable.
  await page.route("**/api/status", limited("请求过于频繁，请稍后再试"));
  await page.goto("/about");
  await expectToast(page, "错误：请求次数过多，请稍后再试！");
  await page.waitForTimeout(500);
  assert.equal(await page.locator(".toast-error", { hasText: "无法正常连接至服务器！" }).count(), 0);
  await page.unroute("**/api/status");
  // The reset mail refused by the rate limit reads as any other call...
  await page.route("**/api/reset_password?**", limited("请求过于频繁，请稍后再试"), { times: 1 });
  await page.goto("/reset");
  await page.fill("#reset-email", "someone@example.com");
  await page.getByRole("button", { name: "提交" }).click();
  await expectToast(page, "错误：请求次数过多，请稍后再试！");
  // ...while its cooldown (told with Retry-After) says how long to wait.
  await page.route("**/api/reset_password?**", limited("请 25 秒后再试", { "Retry-After": "25" }));
  await page.goto("/reset");
  await page.fill("#reset-email", "someone@example.com");
  await page.getByRole("button", { name: "提交" }).click();
  await expectToast(page, "请 25 秒后再试");

  // A 502 (a mail server or a provider failed) says why; a 500 keeps the catalogue's text.
  const failing = (status, message) => (route) =>
    route.fulfill({ status, contentType: "application/json", body: JSON.stringify({ success: false, message, data: null }) });
  await page.unroute("**/api/reset_password?**");
  await page.route("**/api/reset_password?**", failing(502, "邮件发送失败，请检查邮箱地址或联系管理员"));
  await page.getByRole("button", { name: "提交" }).click();
  await expectToast(page, "错误：邮件发送失败，请检查邮箱地址或联系管理员");
  await page.unroute("**/api/reset_password?**");
  await page.route("**/api/reset_password?**", failing(500, "panic detail"));
  await page.getByRole("button", { name: "提交" }).click();
  await expectToast(page, "错误：服务器内部错误，请联系管理员！");
  await context.close();
});

test("an open console shows quota the new way as soon as the display options change", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await submitLogin(page, "root", "123456");
  await page.waitForURL("**/setting?tab=personal");
  const quota = (await root.call("GET", "/api/user/self")).json.data.quota;
  await page.goto("/topup");
  const balance = page.locator('[data-testid="wallet-balance"]');
  await balance.waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const before = (await balance.textContent()).trim();
  assert.equal(before, "$" + (quota / 500000).toFixed(2));

  await putOption(root, "QuotaPerUnit", "1000000");
  await balance.filter({ hasText: "$" + (quota / 1000000).toFixed(2) }).waitFor({ timeout: 10000 });
  await putOption(root, "DisplayInCurrencyEnabled", "false");
  await balance.filter({ hasNotText: "$" }).waitFor({ timeout: 10000 });

  await putOption(root, "DisplayInCurrencyEnabled", "true");
  await putOption(root, "QuotaPerUnit", "500000");
  await balance.filter({ hasText: before }).waitFor({ timeout: 10000 });

  // The token form gives a quota's money equivalent only while quota is shown as money
  // (otherwise it would repeat the number typed).
  await page.goto("/token");
  await page.click('[data-testid="add-token"]');
  const drawer = page.locator('[data-testid="token-drawer"]');
  await drawer.getByText(/等价金额：\$/).waitFor();
  // The page the goto opened follows the options once its own live socket is open.
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await putOption(root, "DisplayInCurrencyEnabled", "false");
  await drawer.getByText("等价金额").waitFor({ state: "detached", timeout: 10000 });
  await putOption(root, "DisplayInCurrencyEnabled", "true");
  await context.close();
});

test("the default home page tells where OpenAI clients point", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await page.goto("/");
  // No public address saved: the one the console was opened at.
  await page.locator('[data-testid="api-base"]', { hasText: `${suite.gw.baseURL}/v1` }).waitFor();
  await putOption(root, "ServerAddress", "https://gw.example.com/");
  try {
    await page.reload();
    await page.locator('[data-testid="api-base"]', { hasText: "https://gw.example.com/v1" }).waitFor();
  } finally {
    await putOption(root, "ServerAddress", "");
  }
  await context.close();
});

test("a message raised in a drawer shows above it, on a wide screen and on a phone", async () => {
  for (const viewport of [{ width: 1400, height: 900 }, { width: 390, height: 844 }]) {
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport });
    await login(page, "root", "123456");
    await page.goto("/user");
    await page.click('[data-testid="user-add"]');
    await page.locator('[data-testid="user-add-drawer"]').waitFor();
    await page.click('[data-testid="user-add-submit"]');
    const toast = page.locator(".toast").first();
    await toast.waitFor();
    // The point in the middle of the message belongs to the message, not to the drawer over it.
    const onTop = await toast.evaluate((el) => {
      const r = el.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return el.contains(hit);
    });
    assert.ok(onTop, `the message is under the drawer at ${viewport.width}px`);
    await context.close();
  }
});

test("a balance below zero shows its sign before the dollar sign, and one that rounds to nothing shows none", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await submitLogin(page, "root", "123456");
  await page.waitForURL("**/setting?tab=personal");
  // A call may end past what it reserved, leaving the account a little below zero.
  let quota = -250000;
  await page.route(
    (url) => url.pathname === "/api/user/self",
    async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      body.data.quota = quota;
      await route.fulfill({ response: res, body: JSON.stringify(body) });
    },
  );
  await page.goto("/topup");
  const balance = page.locator('[data-testid="wallet-balance"]');
  await balance.filter({ hasText: "-$0.50" }).waitFor({ timeout: 10000 });
  quota = -1;
  await page.reload();
  await balance.filter({ hasText: /^\$0\.00$/ }).waitFor({ timeout: 10000 });
  await context.close();
});

test("the gateway the tests start is told of no variable it does not know", async (t) => {
  // make test-e2e names the binary in GATEWAY_BIN, which is the harness's, not a setting of the gateway.
  process.env.GATEWAY_BIN ??= GATEWAY_BIN;
  const gw = await startGateway();
  t.after(() => gw.stop());
  assert.doesNotMatch(gw.logs.join(""), /is not a setting/);
});
