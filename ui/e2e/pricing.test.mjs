import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel, startFakeUpstream } from "./fake-upstream.mjs";
import { gatewaySuite, getOptions, login, newPage, putOption, rootApi } from "./harness.mjs";

let upstream;
let root;

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    upstream = await startFakeUpstream();
    root = await rootApi(gw.baseURL);
    await createChannel(root, upstream.url, ["gpt-4o-mini", "zz-fixed-model", "aa-model"]);
  },
  teardown: () => upstream?.close(),
});

test("a ratio changed through the option API shows on the public pricing page", async () => {
  const opts = await getOptions(root);
  const ratios = JSON.parse(opts.ModelRatio || "{}");
  ratios["gpt-4o-mini"] = 7.5;
  ratios["aa-model"] = 1;
  await putOption(root, "ModelRatio", JSON.stringify(ratios));
  const prices = JSON.parse(opts.ModelPrice || "{}");
  prices["zz-fixed-model"] = 0.25;
  await putOption(root, "ModelPrice", JSON.stringify(prices));
  const completion = JSON.parse(opts.CompletionRatio || "{}");
  completion["gpt-4o-mini"] = 4;
  await putOption(root, "CompletionRatio", JSON.stringify(completion));
  const groups = JSON.parse(opts.GroupRatio || "{}");
  groups.vip = 2;
  await putOption(root, "GroupRatio", JSON.stringify(groups));

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await page.goto("/pricing");
  await page.locator('[data-testid="pricing-not-logged-in"]').waitFor();
  assert.match(await page.locator('[data-testid="pricing-not-logged-in"]').textContent(), /您还未登陆，显示的价格为默认分组倍率：1/);

  const row = page.locator('[data-testid="pricing-row-gpt-4o-mini"]');
  await row.waitFor();
  // prompt $/1M = 2 × 7.5 × 1; completion = that × 4.
  await row.locator('[data-testid="pricing-price"]', { hasText: "提示 $15 / 1M tokens" }).waitFor();
  assert.match(await row.locator('[data-testid="pricing-price"]').textContent(), /补全 \$60 \/ 1M tokens/);
  assert.match(await row.textContent(), /按量计费/);
  const fixed = page.locator('[data-testid="pricing-row-zz-fixed-model"]');
  assert.match(await fixed.textContent(), /按次计费/);
  assert.match(await fixed.locator('[data-testid="pricing-price"]').textContent(), /模型价格：\$0\.25/);

  // gpt-named models come first.
  const order = await page.locator('[data-testid^="pricing-row-"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-testid").slice("pricing-row-".length)));
  assert.equal(order[0], "gpt-4o-mini");
  assert.deepEqual(order.slice(1), [...order.slice(1)].sort((a, b) => a.localeCompare(b)));

  // Switching to the vip group by click doubles the prices.
  await page.locator('[data-testid="pricing-groups"] button[data-group="vip"]').click();
  await page.locator('[data-testid="pricing-viewing-group"]').waitFor();
  await row.locator('[data-testid="pricing-price"]', { hasText: "提示 $30 / 1M tokens" }).waitFor();
  assert.match(await fixed.locator('[data-testid="pricing-price"]').textContent(), /模型价格：\$0\.5/);
  // The channel serves only the default group, so vip cannot use the model.
  assert.equal(await row.locator("[data-available]").getAttribute("data-available"), "false");

  // A changed ratio shows after a reload, without a restart.
  ratios["gpt-4o-mini"] = 0.1;
  await putOption(root, "ModelRatio", JSON.stringify(ratios));
  await page.reload();
  await row.locator('[data-testid="pricing-price"]', { hasText: "提示 $0.2 / 1M tokens" }).waitFor();

  // Fuzzy search narrows the list.
  await page.fill('[data-testid="pricing-search"]', "g4o");
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="pricing-row-"]').length === 1);
  await context.close();
});

test("a logged-in user sees their own group and can copy selected model names", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { permissions: ["clipboard-read", "clipboard-write"] });
  await login(page, "root", "123456");
  await page.goto("/pricing");
  await page.locator('[data-testid="pricing-own-group"]', { hasText: "您的分组为：default" }).waitFor();
  await page.locator('[data-nav="pricing"]').waitFor();

  await page.locator('[data-testid="pricing-copy-selected"]').click();
  await page.locator(".toast", { hasText: "请至少选择一个模型！" }).waitFor();
  await page.locator('[data-testid="pricing-row-gpt-4o-mini"] [data-testid="select-row"]').click();
  await page.locator('[data-testid="pricing-row-aa-model"] [data-testid="select-row"]').click();
  await page.locator('[data-testid="pricing-copy-selected"]').click();
  await page.locator(".toast", { hasText: "已复制到剪贴板！" }).waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.deepEqual(copied.split(",").sort(), ["aa-model", "gpt-4o-mini"]);
  await context.close();
});

test("with another QuotaPerUnit the pricing page shows what a call is charged", async () => {
  const opts = await getOptions(root);
  const ratios = JSON.parse(opts.ModelRatio || "{}");
  ratios["aa-model"] = 1;
  await putOption(root, "ModelRatio", JSON.stringify(ratios));
  // 1 000 000 quota per dollar: a token at ratio 1 costs one quota unit, US$1 per 1M tokens.
  await putOption(root, "QuotaPerUnit", "1000000");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  try {
    const made = await root.call("POST", "/api/token/", { name: "qpu-price", remain_quota: 0, expired_time: -1, unlimited_quota: true });
    assert.equal(made.json?.success, true, JSON.stringify(made.json));
    const res = await fetch(`${suite.gw.baseURL}/v1/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer sk-${made.json.data.key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model: "aa-model", messages: [{ role: "user", content: "hello" }] }),
    });
    const answer = await res.json();
    assert.equal(res.status, 200, JSON.stringify(answer));
    const logs = await root.call("GET", "/api/log/?p=0&type=2&model_name=aa-model");
    const row = logs.json.data.items[0];
    const charged = row.quota / 1000000;

    await login(page, "root", "123456");
    await page.goto("/pricing");
    const price = page.locator('[data-testid="pricing-row-aa-model"] [data-testid="pricing-price"]');
    await price.waitFor();
    const text = await price.textContent();
    const prompt = Number(/提示 \$([\d.]+) \/ 1M tokens/.exec(text)[1]);
    const completion = Number(/补全 \$([\d.]+) \/ 1M tokens/.exec(text)[1]);
    const shown = (row.prompt_tokens * prompt + row.completion_tokens * completion) / 1e6;
    assert.ok(Math.abs(shown - charged) < 1e-12, `the page prices ${row.prompt_tokens}+${row.completion_tokens} tokens at $${shown}, the call was charged $${charged} (${row.quota} quota): ${text}`);
    assert.match(await page.locator('[data-testid="pricing-formula"]').textContent(), /\/ 1000000/);
  } finally {
    await putOption(root, "QuotaPerUnit", opts.QuotaPerUnit ?? "500000");
    await context.close();
  }
});

test("the pricing page does not keep the previous account's chosen group and ticked models after a logout and another login", async () => {
  const { newUser } = await import("./harness.mjs");
  const other = await newUser(suite.gw.baseURL, "prc", "password123");
  const opts = await getOptions(root);
  const groups = JSON.parse(opts.GroupRatio || "{}");
  groups.vip = 2;
  await putOption(root, "GroupRatio", JSON.stringify(groups));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { permissions: ["clipboard-read", "clipboard-write"] });
  await login(page, "root", "123456");
  await page.goto("/pricing");
  await page.locator('[data-testid="pricing-own-group"]', { hasText: "default" }).waitFor();
  await page.locator('[data-testid="pricing-groups"] [data-group="vip"]').click();
  await page.locator('[data-testid="pricing-viewing-group"]').waitFor();
  await page.locator('[data-testid="pricing-row-gpt-4o-mini"] [data-testid="select-row"]').click();

  await page.click('[data-testid="user-menu"]');
  await page.click('[data-testid="logout"]');
  await page.waitForURL("**/login");
  await page.fill("#login-username", other.username);
  await page.fill("#login-password", other.password);
  await page.click('[data-testid="login-submit"]');
  await page.waitForURL((u) => u.pathname !== "/login");
  await page.click('[data-nav="pricing"]');
  await page.locator('[data-testid="pricing-own-group"]', { hasText: "default" }).waitFor();
  await page.locator('[data-testid="pricing-row-gpt-4o-mini"]').waitFor();
  assert.equal(await page.locator('[data-testid="pricing-viewing-group"]').count(), 0, "the previous account's chosen group is not shown");
  assert.equal(await page.locator('[data-testid="pricing-groups"] [data-group="default"]').getAttribute("aria-pressed"), "true");
  await page.locator('[data-testid="pricing-copy-selected"]').click();
  await page.locator(".toast", { hasText: "请至少选择一个模型！" }).waitFor({ timeout: 3000 });
  await context.close();
});

test("a price below a millionth of a dollar shows its digits, not $0", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  // A model ratio of 0.0000001 (ratios take any decimals) and a fixed price of $0.0000004.
  await page.route(
    (url) => url.pathname === "/api/pricing",
    async (route) => {
      const response = await route.fetch();
      const json = await response.json();
      const base = (json.data ?? []).find((m) => m.model_name === "gpt-4o-mini");
      assert.ok(base, JSON.stringify(json));
      json.data.push({ ...base, model_name: "tiny-ratio", quota_type: 0, model_ratio: 0.0000001, completion_ratio: 1.5 });
      json.data.push({ ...base, model_name: "tiny-price", quota_type: 1, model_price: 0.0000004 });
      await route.fulfill({ response, json });
    },
  );
  await page.goto("/pricing");
  const row = page.locator('[data-testid="pricing-row-tiny-ratio"]');
  await row.waitFor();
  // prompt $/1M = 2 × 0.0000001 × group ratio 1; completion = that × 1.5.
  const prices = await row.locator('[data-testid="pricing-price"]').textContent();
  assert.match(prices, /提示 \$0\.0000002 \/ 1M tokens/, prices);
  assert.match(prices, /补全 \$0\.0000003 \/ 1M tokens/, prices);
  assert.match(await page.locator('[data-testid="pricing-row-tiny-price"] [data-testid="pricing-price"]').textContent(), /模型价格：\$0\.0000004/);
  await context.close();
});
