// Server messages: the server writes its messages in Chinese in either language
// (clients match on them); the English console shows them in English through
// its catalogue (src/i18n/server.en.json), the Chinese console as they came.
import assert from "node:assert/strict";
import { test } from "node:test";
import { expectToast, gatewaySuite, login, newPage, newUser, putOption, rootApi, submitLogin } from "./harness.mjs";

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    // Log contents then name quota in points ("500 点额度"), a server text inside another.
    await putOption(await rootApi(gw.baseURL), "DisplayInCurrencyEnabled", "false");
  },
});

/** open starts a page in a fresh context whose console speaks lang. */
async function open(lang) {
  const opened = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await opened.context.addInitScript((l) => localStorage.setItem("i18nextLng", l), lang);
  return opened;
}

const WRONG_LOGIN = { zh: "用户名或密码错误，或用户已被封禁", en: "Wrong username or password, or the user is banned" };
const DEFAULT_PASSWORD = { zh: "您正在使用默认密码，请立即修改密码！", en: "You are using the default password, please change it now!" };

for (const lang of ["en", "zh"]) {
  test(`a refused login and the default-password warning read in the console's language (${lang})`, async () => {
    const { context, page } = await open(lang);
    // The wire keeps the Chinese text whatever the console's language.
    const answer = page.waitForResponse((r) => r.url().includes("/api/user/login"));
    await submitLogin(page, "root", "not-the-password");
    assert.equal((await (await answer).json()).message, WRONG_LOGIN.zh);
    await expectToast(page, WRONG_LOGIN[lang]);
    if (lang === "en") assert.equal(await page.locator(".toast", { hasText: WRONG_LOGIN.zh }).count(), 0);

    await login(page, "root", "123456");
    await expectToast(page, DEFAULT_PASSWORD[lang]);
    await context.close();
  });
}

test("a refusal with a value in it (a pattern) keeps the value in its place in English", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "msg", "message-pass-1");
  const want = {
    zh: "IP 白名单中的 1.2.3.999 不是合法的 IP 或 CIDR",
    en: "1.2.3.999 in the IP whitelist is not a valid IP or CIDR",
  };
  for (const lang of ["en", "zh"]) {
    const { context, page } = await open(lang);
    await login(page, username, password);
    await page.goto("/token");
    await page.click('[data-testid="add-token"]');
    await page.locator('[data-testid="token-drawer"]').waitFor();
    await page.fill('[data-testid="token-name-input"]', "bad-ips");
    await page.fill("#tk-ips", "10.0.0.0/8\n1.2.3.999");
    await page.click('[data-testid="token-submit"]');
    await expectToast(page, want[lang]);
    await context.close();
  }
});

test("a top-up log's content reads in English, the quota text inside it too", async () => {
  const root = await rootApi(suite.gw.baseURL);
  const made = await root.call("POST", "/api/redemption/", { name: "msg-code", quota: 500, count: 1 });
  assert.equal(made.json?.success, true, JSON.stringify(made.json));
  const { username, password, api } = await newUser(suite.gw.baseURL, "top", "message-pass-1");
  const redeemed = await api.call("POST", "/api/user/topup", { key: made.json.data[0] });
  assert.equal(redeemed.json?.success, true, JSON.stringify(redeemed.json));
  const logs = (await api.call("GET", "/api/log/self/?p=1&page_size=10&type=1")).json.data.items;
  const content = logs.map((l) => l.content).find((c) => c.startsWith("通过兑换码充值"));
  const id = content?.match(/^通过兑换码充值 500 点额度，兑换码ID (\d+)$/)?.[1];
  assert.ok(id, `the server's content is the Chinese template: ${JSON.stringify(logs)}`);

  const want = { zh: content, en: `Topped up 500 quota points with a redemption code, code ID ${id}` };
  for (const lang of ["en", "zh"]) {
    const { context, page } = await open(lang);
    await login(page, username, password);
    await page.goto("/log");
    const table = page.locator('[data-testid="log-table"]');
    await table.getByText(want[lang], { exact: true }).waitFor();
    if (lang === "en") assert.equal(await table.getByText(content).count(), 0, "no Chinese content left in the English table");
    await context.close();
  }
});

test("a relay error in the playground reads in English, its request id kept", async () => {
  const root = await rootApi(suite.gw.baseURL);
  // A model no ratio or price is set for: the relay refuses it before calling the upstream.
  const made = await root.call("POST", "/api/channel/", {
    type: 1, name: "no-price", key: "sk-no-price", base_url: "http://127.0.0.1:9", models: "msg-no-price-model", group: "default",
  });
  assert.equal(made.json?.success, true, JSON.stringify(made.json));
  const { username, password } = await newUser(suite.gw.baseURL, "pg", "message-pass-1");
  const zh = "模型 msg-no-price-model 的倍率或价格未配置，请联系管理员设置";
  const en = "No ratio or price is set for the model msg-no-price-model, please ask the administrator to set one";
  for (const lang of ["en", "zh"]) {
    const { context, page } = await open(lang);
    await login(page, username, password);
    await page.goto("/playground");
    await page.locator('[data-testid="pg-model"]', { hasText: "msg-no-price-model" }).waitFor();
    const answer = page.waitForResponse((r) => r.request().method() === "POST" && r.url().includes("/chat/completions"));
    await page.fill('[data-testid="pg-input"]', "hello");
    await page.click('[data-testid="pg-send"]');
    // The wire keeps the Chinese text, with the request id after it.
    const wire = (await (await answer).json()).error.message;
    const id = wire.match(/^(.*) \(request id: (\w+)\)$/);
    assert.equal(id?.[1], zh, wire);
    const reply = page.locator('[data-testid="message-assistant"][data-status="error"]');
    await reply.waitFor();
    const text = await reply.textContent();
    assert.ok(text.includes(`${lang === "en" ? en : zh} (request id: ${id[2]})`), text);
    if (lang === "en") assert.ok(!text.includes(zh), text);
    await context.close();
  }
});
