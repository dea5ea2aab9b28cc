// The billing process of an expanded log row: an audio model's entry shows
// its text and audio parts with the server's rounding, so the result is the
// charged quota; an image generation shows the size, quality and count it
// was priced by instead of a token formula that would come to 0.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel, startFakeUpstream } from "./fake-upstream.mjs";
import { expectToast, gatewaySuite, login, newPage, newUser, putOption, rootApi } from "./harness.mjs";

const AUDIO_MODEL = "gpt-4o-audio-preview";
// A text model whose formula has a fraction: (1000 + 500 × 4) × 0.075 × 1.5 = 337.5, charged 338.
const TEXT_MODEL = "text-model";
const TEXT_MODEL_RATIO = 0.075;
// The audio model's usage: totals with their audio parts, so text is the rest.
const TEXT_IN = 600;
const TEXT_OUT = 200;
const AUDIO_IN = 400;
const AUDIO_OUT = 300;
// The ratios this file sets; audio ratio 40 and audio completion ratio 2 are built in.
const MODEL_RATIO = 1.25;
const COMPLETION_RATIO = 4;
const GROUP_RATIO = 1.5;
const AUDIO_RATIO = 40;
const AUDIO_COMPLETION_RATIO = 2;

let upstream;

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    upstream = await startFakeUpstream({
      chunks: ["Hello!"],
      models: [AUDIO_MODEL, TEXT_MODEL, "dall-e-2", "dall-e-3"],
      usage: () => ({
        prompt_tokens: TEXT_IN + AUDIO_IN,
        completion_tokens: TEXT_OUT + AUDIO_OUT,
        total_tokens: TEXT_IN + AUDIO_IN + TEXT_OUT + AUDIO_OUT,
        prompt_tokens_details: { audio_tokens: AUDIO_IN, text_tokens: TEXT_IN },
        completion_tokens_details: { audio_tokens: AUDIO_OUT, text_tokens: TEXT_OUT },
      }),
    });
    const root = await rootApi(gw.baseURL);
    await putOption(root, "QuotaForNewUser", "50000000");
    await putOption(root, "ModelRatio", JSON.stringify({ [AUDIO_MODEL]: MODEL_RATIO, [TEXT_MODEL]: TEXT_MODEL_RATIO, "dall-e-2": 8 }));
    await putOption(root, "CompletionRatio", JSON.stringify({ [AUDIO_MODEL]: COMPLETION_RATIO, [TEXT_MODEL]: COMPLETION_RATIO }));
    await putOption(root, "ModelPrice", JSON.stringify({ "dall-e-3": 0.04 }));
    await putOption(root, "GroupRatio", JSON.stringify({ default: GROUP_RATIO, vip: 1, svip: 1 }));
    await createChannel(root, upstream.url, [AUDIO_MODEL, TEXT_MODEL, "dall-e-2", "dall-e-3"], "fake-audio-images");
  },
  teardown: () => upstream?.close(),
});

/** callsAsNewUser registers a user with a token and makes one audio chat and two image calls; it returns the user and its logs by model. */
async function callsAsNewUser() {
  const { username, password, api } = await newUser(suite.gw.baseURL, "bil", "billing-pass-1");
  const created = await api.call("POST", "/api/token/", { name: "bil-key", remain_quota: 10000000, expired_time: -1 });
  assert.equal(created.status, 200, JSON.stringify(created.json));
  const key = `sk-${(await api.call("GET", "/api/token/?p=0&size=10")).json.data[0].key}`;
  const post = async (path, body) => {
    const res = await fetch(`${suite.gw.baseURL}${path}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
    await res.text();
  };
  await post("/v1/chat/completions", { model: AUDIO_MODEL, messages: [{ role: "user", content: "Say hello" }] });
  await post("/v1/chat/completions", { model: TEXT_MODEL, messages: [{ role: "user", content: "Say hello" }] });
  await post("/v1/images/generations", { model: "dall-e-2", prompt: "a cat", n: 2, size: "512x512" });
  await post("/v1/images/generations", { model: "dall-e-3", prompt: "a cat", size: "1792x1024", quality: "hd" });
  const logs = (await api.call("GET", "/api/log/self/?p=1&page_size=10&type=2")).json.data.items;
  const byModel = Object.fromEntries(logs.map((l) => [l.model_name, l]));
  for (const m of [AUDIO_MODEL, TEXT_MODEL, "dall-e-2", "dall-e-3"]) assert.ok(byModel[m], `no log for ${m}: ${JSON.stringify(logs)}`);
  return { username, password, byModel };
}

/** openLogPage logs in and opens the log page once its table and its summary have loaded. */
async function openLogPage(username, password, { english = false, route } = {}) {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  if (english) await context.addInitScript(() => localStorage.setItem("i18nextLng", "en"));
  if (route) await page.route((url) => url.pathname === "/api/log/self/", route);
  await login(page, username, password);
  await page.goto("/log");
  await page.locator('[data-testid="logs-page"]').waitFor();
  await page.waitForFunction(() => {
    const table = document.querySelector('[data-testid="log-table"]');
    return table && !table.hasAttribute("aria-busy") && table.querySelectorAll('[data-testid="log-row"]').length >= 3;
  });
  // The summary is read beside the table and may answer after it.
  await page.locator('[data-testid="log-stats"]:not([aria-busy])').waitFor();
  return { context, page };
}

/** expandBilling opens the row of model and returns its billing process. */
async function expandBilling(page, model) {
  const row = page.locator('[data-testid="log-row"]', { has: page.locator('[data-testid="log-model"]', { hasText: new RegExp(`^${model}$`) }) });
  await row.locator('[data-testid="expand-row"]').click();
  const billing = row.locator("xpath=following-sibling::tr[1]").locator('[data-testid="billing"]');
  await billing.waitFor();
  return billing;
}

const text = async (loc) => (await loc.textContent()).trim();

test("an audio model's expanded log row shows the text and audio parts that make up the charged quota", async () => {
  const { username, password, byModel } = await callsAsNewUser();
  // The server's formula (relay/pricing.go price.quota), computed here on its own.
  const textPart = Math.round(TEXT_IN + TEXT_OUT * COMPLETION_RATIO);
  const audioPart = Math.round(AUDIO_IN * AUDIO_RATIO + AUDIO_OUT * AUDIO_RATIO * AUDIO_COMPLETION_RATIO);
  const want = Math.round((textPart + audioPart) * MODEL_RATIO * GROUP_RATIO);
  assert.equal(byModel[AUDIO_MODEL].quota, want, "the server charged the audio formula");
  const textFormula = (TEXT_IN + AUDIO_IN + (TEXT_OUT + AUDIO_OUT) * COMPLETION_RATIO) * MODEL_RATIO * GROUP_RATIO;
  assert.notEqual(textFormula, want, "the text formula must differ, or the test proves nothing");

  const { context, page } = await openLogPage(username, password);
  const billing = await expandBilling(page, AUDIO_MODEL);
  assert.equal(await text(billing.locator('[data-testid="billing-text"]')), `文本：提示 ${TEXT_IN} + 补全 ${TEXT_OUT} × 补全倍率 4 = ${textPart}`);
  assert.equal(
    await text(billing.locator('[data-testid="billing-audio"]')),
    `音频：输入 ${AUDIO_IN} × 音频倍率 40 + 输出 ${AUDIO_OUT} × 音频倍率 40 × 音频补全倍率 2 = ${audioPart}`,
  );
  assert.equal(await text(billing.locator('[data-testid="billing-total"]')), `（文本 ${textPart} + 音频 ${audioPart}）× 模型倍率 1.25 × 分组倍率 1.5 = ${want}`);
  assert.match(await text(billing.locator('[data-testid="billing-quota"]')), new RegExp(`^扣除额度：${want}（`));
  const all = await text(billing);
  assert.match(all, /文本：提示 \$3\.75，补全 \$15 \/ 1M tokens；音频：输入 \$150，输出 \$300 \/ 1M tokens/, "prices: 2 × 1.25 × 1.5, × 4 for completion, × 40 for audio, × 2 more for audio output");
  assert.doesNotMatch(all, /提示 1000 \+ 补全 500/, "not the text-only formula over the totals");
  await context.close();

  // The English texts carry the same numbers.
  const en = await openLogPage(username, password, { english: true });
  const enBilling = await expandBilling(en.page, AUDIO_MODEL);
  assert.equal(await text(enBilling.locator('[data-testid="billing-total"]')), `(text ${textPart} + audio ${audioPart}) × model ratio 1.25 × group ratio 1.5 = ${want}`);
  await en.context.close();
});

test("an image generation's expanded log row shows the size, quality and count it was priced by and the charged quota", async () => {
  const { username, password, byModel } = await callsAsNewUser();
  for (const m of ["dall-e-2", "dall-e-3"]) {
    const l = byModel[m];
    assert.equal(l.prompt_tokens + l.completion_tokens, 0, `${m} counts no tokens`);
    assert.ok(l.quota > 0, `${m} was charged`);
  }
  const { context, page } = await openLogPage(username, password);

  const small = await expandBilling(page, "dall-e-2");
  assert.equal(await text(small.locator('[data-testid="billing-image"]')), "图片生成：尺寸 512x512，数量 2");
  assert.match(await text(small), /按图片的尺寸、质量和数量计费（不按 tokens），模型倍率 8 × 分组倍率 1\.5/);
  assert.match(await text(small.locator('[data-testid="billing-quota"]')), new RegExp(`^扣除额度：${byModel["dall-e-2"].quota}（`));
  assert.doesNotMatch(await text(small), /提示 0 \+ 补全 0|= 0(?!\.)/, "no token formula that comes to 0");

  const wide = await expandBilling(page, "dall-e-3");
  assert.equal(await text(wide.locator('[data-testid="billing-image"]')), "图片生成：尺寸 1792x1024，质量 hd，数量 1");
  assert.match(await text(wide), /模型价格 \$0\.04 × 分组倍率 1\.5/);
  assert.match(await text(wide.locator('[data-testid="billing-quota"]')), new RegExp(`^扣除额度：${byModel["dall-e-3"].quota}（`));
  assert.doesNotMatch(await text(wide), /= \$0\.06/, "not the per-call price formula, which ignores size and quality");
  await context.close();

  // An entry written before the server recorded the image fields is still not shown as 0 tokens × ratios.
  const legacy = await openLogPage(username, password, {
    route: async (route) => {
      const response = await route.fetch();
      const json = await response.json();
      for (const l of json.data?.items ?? []) {
        const o = JSON.parse(l.other || "{}");
        delete o.image;
        delete o.size;
        delete o.quality;
        delete o.n;
        l.other = JSON.stringify(o);
      }
      await route.fulfill({ response, json });
    },
  });
  const old = await expandBilling(legacy.page, "dall-e-2");
  assert.equal(await text(old.locator('[data-testid="billing-image"]')), "此条日志未记录图片的尺寸、质量和数量。");
  assert.match(await text(old), /按图片的尺寸、质量和数量计费（不按 tokens），模型倍率 8 × 分组倍率 1\.5/);
  assert.match(await text(old.locator('[data-testid="billing-quota"]')), new RegExp(`^扣除额度：${byModel["dall-e-2"].quota}（`));
  await legacy.context.close();
});

test("a text model's expanded log row ends on the quota charged, rounded like the charge", async () => {
  const { username, password, byModel } = await callsAsNewUser();
  const prompt = TEXT_IN + AUDIO_IN;
  const completion = TEXT_OUT + AUDIO_OUT;
  const exact = (prompt + completion * COMPLETION_RATIO) * TEXT_MODEL_RATIO * GROUP_RATIO;
  const want = Math.round((prompt + Math.round(completion * COMPLETION_RATIO)) * TEXT_MODEL_RATIO * GROUP_RATIO);
  assert.notEqual(exact, want, "the formula must have a fraction, or the test proves nothing");
  assert.equal(byModel[TEXT_MODEL].quota, want, "the server charged the rounded formula");
  const { context, page } = await openLogPage(username, password);
  const billing = await expandBilling(page, TEXT_MODEL);
  const all = await text(billing);
  assert.match(all, new RegExp(`提示 ${prompt} \\+ 补全 ${completion}.*= ${want}(?![0-9.])`));
  assert.doesNotMatch(all, new RegExp(String(exact).replace(".", "\\.")));
  assert.match(await text(billing.locator('[data-testid="billing-quota"]')), new RegExp(`^扣除额度：${want}（`));
  await context.close();
});

test("a fixed-price entry's billing process ends on the quota charged, at the QuotaPerUnit of the charge", async () => {
  // US$0.0157 × group ratio 1.5 at 1000 quota per dollar is 23.55, charged 23 (S §5.8: int(price × QuotaPerUnit × GR)).
  const root = await rootApi(suite.gw.baseURL);
  const { username, password, api } = await newUser(suite.gw.baseURL, "fix", "billing-pass-1");
  const created = await api.call("POST", "/api/token/", { name: "fix-key", remain_quota: 10000000, expired_time: -1 });
  assert.equal(created.status, 200, JSON.stringify(created.json));
  const key = `sk-${(await api.call("GET", "/api/token/?p=0&size=10")).json.data[0].key}`;
  await putOption(root, "ModelPrice", JSON.stringify({ "dall-e-3": 0.04, [TEXT_MODEL]: 0.0157 }));
  await putOption(root, "QuotaPerUnit", "1000");
  try {
    const res = await fetch(`${suite.gw.baseURL}/v1/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model: TEXT_MODEL, messages: [{ role: "user", content: "Say hello" }] }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    await res.text();
  } finally {
    await putOption(root, "ModelPrice", JSON.stringify({ "dall-e-3": 0.04 }));
    await putOption(root, "QuotaPerUnit", "500000");
  }
  const [log] = (await api.call("GET", "/api/log/self/?p=1&page_size=10&type=2")).json.data.items;
  assert.equal(log.quota, 23, "the server charged the truncated price");

  // Read after the rate went back to 500 000: the entry is explained at the rate it was charged at.
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.goto("/log");
  await page.locator('[data-testid="log-model"]', { hasText: TEXT_MODEL }).waitFor();
  const billing = await expandBilling(page, TEXT_MODEL);
  const all = await text(billing);
  assert.match(all, /模型价格 \$0\.0157 × 分组倍率 1\.5 = \$0\.02355/);
  assert.match(all, /× 1000 额度\/美元 = 23(?![0-9.])/, all);
  assert.match(await text(billing.locator('[data-testid="billing-quota"]')), /^扣除额度：23（/);
  await context.close();

  // An entry that does not keep its rate, read at another one, stops at the dollars instead of a quota it was not charged.
  const legacy = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await legacy.page.route(
    (url) => url.pathname === "/api/log/self/",
    async (route) => {
      const response = await route.fetch();
      const json = await response.json();
      for (const l of json.data?.items ?? []) {
        const o = JSON.parse(l.other || "{}");
        delete o.quota_per_unit;
        l.other = JSON.stringify(o);
      }
      await route.fulfill({ response, json });
    },
  );
  await login(legacy.page, username, password);
  await legacy.page.goto("/log");
  await legacy.page.locator('[data-testid="log-model"]', { hasText: TEXT_MODEL }).waitFor();
  const old = await text(await expandBilling(legacy.page, TEXT_MODEL));
  assert.match(old, /模型价格 \$0\.0157 × 分组倍率 1\.5 = \$0\.02355扣除额度：23（/, old);
  assert.doesNotMatch(old, /额度\/美元/);
  await legacy.context.close();
});

test("a log query whose end is not after its start is refused with a message instead of an empty table", async () => {
  const { username, password } = await callsAsNewUser();
  const { context, page } = await openLogPage(username, password);
  let queries = 0;
  await page.route((url) => url.pathname === "/api/log/self/", (route) => {
    queries++;
    return route.continue();
  });
  await page.fill("#log-start", "2026-11-22T10:00");
  await page.fill("#log-end", "2026-11-22T09:00");
  await page.click('[data-testid="log-query"]');
  await expectToast(page, "结束时间必须晚于起始时间");
  assert.equal(queries, 0, "no query was sent");
  assert.ok((await page.locator('[data-testid="log-row"]').count()) >= 3, "the rows shown before stay");
  await context.close();
});

test("a summary that fails to load says so", async () => {
  const { username, password } = await callsAsNewUser();
  const { context, page } = await openLogPage(username, password);
  await page.route((url) => url.pathname === "/api/log/self/stat", (route) =>
    route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ success: false, message: "统计暂不可用", data: null }) }),
  );
  await page.click('[data-testid="log-query"]');
  await expectToast(page, "统计暂不可用");
  await context.close();
});

test("a stream's first-token time shows when it came within the millisecond, and a non-stream row shows none", async () => {
  const { username, password } = await callsAsNewUser();
  // The calls are answered at once; two of their rows are shown as streams, one with a first byte at 0 ms.
  const route = async (r) => {
    const res = await r.fetch();
    const body = await res.json();
    const items = body.data.items;
    const withFrt = (l, frt) => ({ ...l, is_stream: true, other: JSON.stringify({ ...JSON.parse(l.other || "{}"), frt }) });
    items[0] = withFrt(items[0], 0);
    items[1] = withFrt(items[1], 2500);
    items[2] = { ...items[2], is_stream: false };
    await r.fulfill({ response: res, json: body });
  };
  const { context, page } = await openLogPage(username, password, { route });
  const rows = page.locator('[data-testid="log-row"]');
  assert.equal(await text(rows.nth(0).locator('[data-testid="first-token-time"]')), "0.0 s");
  assert.equal(await text(rows.nth(1).locator('[data-testid="first-token-time"]')), "2.5 s");
  assert.equal(await rows.nth(2).locator('[data-testid="first-token-time"]').count(), 0);
  await context.close();
});

test("the log table shows the answer of the filters chosen last, even when an earlier query answers after it", async () => {
  const { username, password, byModel } = await callsAsNewUser();
  const { context, page } = await openLogPage(username, password);
  const rows = page.locator('[data-testid="log-row"]');
  const all = await rows.count();
  assert.ok(all >= 4, `the page shows the user's entries: ${all}`);
  const quotaBadge = page.locator('[data-testid="stat-quota"]');
  const everything = await text(quotaBadge);
  // A query by model is slow to answer (its list and its summary); the reset that follows it is not.
  let slowSent;
  const slowStarted = new Promise((resolve) => (slowSent = resolve));
  let slowDone;
  const slowAnswered = new Promise((resolve) => (slowDone = resolve));
  await page.route(
    (url) => url.pathname === "/api/log/self/stat" && url.searchParams.get("model_name") === "dall-e-3",
    async (route) => {
      const res = await route.fetch();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.fulfill({ response: res });
    },
  );
  await page.route(
    (url) => url.pathname === "/api/log/self/" && url.searchParams.get("model_name") === "dall-e-3",
    async (route) => {
      const res = await route.fetch();
      slowSent();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.fulfill({ response: res });
      slowDone();
    },
  );
  await page.fill("#log-model", "dall-e-3");
  await page.click('[data-testid="log-query"]');
  await slowStarted;
  await page.getByRole("button", { name: "重置" }).click();
  await slowAnswered;
  await page.waitForFunction(() => !document.querySelector('[data-testid="log-table"]')?.hasAttribute("aria-busy"));
  await page.waitForTimeout(300);
  // The form shows no model filter, and neither does the table: every entry is listed, not dall-e-3's alone.
  assert.equal(await page.inputValue("#log-model"), "");
  assert.equal(await rows.count(), all, "the rows are those of the reset query");
  await page.waitForTimeout(500);
  assert.equal(await text(quotaBadge), everything, "the summary is that of the reset query");
  assert.ok(byModel["dall-e-3"].quota > 0);
  await context.close();
});

test("the summary's consumed quota of a few cheap calls reads as their rows do, not $0.00", async () => {
  const { username, password, byModel } = await callsAsNewUser();
  const quota = byModel[TEXT_MODEL].quota;
  // The text call costs well under half a cent: two decimals would read $0.00.
  assert.ok(quota > 0 && quota / 500000 < 0.005, `quota ${quota}`);
  const { context, page } = await openLogPage(username, password);
  await page.fill('[data-testid="log-filter-model"]', TEXT_MODEL);
  await page.click('[data-testid="log-query"]');
  const dollars = `$${(quota / 500000).toFixed(6)}`;
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="log-row"]').length === 1);
  assert.equal(await text(page.locator('[data-testid="log-quota"]').first()), dollars);
  await page.waitForFunction((d) => document.querySelector('[data-testid="stat-quota"]')?.textContent?.endsWith(d), dollars, { timeout: 5000 });
  await context.close();
});

test("a text model's expanded log row shows a ratio and prices below a millionth as they are, not 0", async () => {
  const { username, password } = await callsAsNewUser();
  // The entry as charged at a model ratio of 0.0000001 (ratios take any decimals): it read 模型倍率 0 and $0 prices.
  const { context, page } = await openLogPage(username, password, {
    route: async (route) => {
      const response = await route.fetch();
      const json = await response.json();
      for (const l of json.data?.items ?? []) {
        if (l.model_name !== TEXT_MODEL) continue;
        const o = JSON.parse(l.other || "{}");
        o.model_ratio = 0.0000001;
        l.other = JSON.stringify(o);
      }
      await route.fulfill({ response, json });
    },
  });
  const all = await text(await expandBilling(page, TEXT_MODEL));
  assert.match(all, /模型倍率 0\.0000001 ×/, all);
  assert.doesNotMatch(all, /模型倍率 0 ×/, all);
  // 0.0000001 × $2 per 1M tokens × group ratio 1.5, and × the completion ratio 4.
  assert.match(all, /\$0\.0000003 \/ 1M tokens/, all);
  assert.match(all, /\$0\.0000012 \/ 1M tokens/, all);
  await context.close();
});
