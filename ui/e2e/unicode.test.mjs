import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel, startFakeUpstream } from "./fake-upstream.mjs";
import { ApiSession, expectToast, gatewaySuite, getOptions, login, newPage, putOption, rootApi } from "./harness.mjs";

/** EMOJI_MODEL is a model name with Chinese and an emoji (two UTF-16 units, one character). */
const EMOJI_MODEL = "文心一言🙂";

let upstream;
const suite = gatewaySuite({
  setup: async ({ gw }) => {
    upstream = await startFakeUpstream({ chunks: ["好"], delayMs: 0, models: [EMOJI_MODEL] });
    const root = await rootApi(gw.baseURL);
    await createChannel(root, upstream.url, [EMOJI_MODEL], "中文渠道");
    const ratios = JSON.parse((await getOptions(root)).ModelRatio || "{}");
    await putOption(root, "ModelRatio", JSON.stringify({ ...ratios, [EMOJI_MODEL]: 1 }));
  },
  teardown: () => upstream?.close(),
});

/** LONE_SURROGATE finds half of a surrogate pair: a character cut in two. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** loneSurrogates lists the text nodes of the page that hold half a character. */
function loneSurrogates(page) {
  return page.evaluate((src) => {
    const re = new RegExp(src);
    const out = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) if (re.test(n.data)) out.push(JSON.stringify(n.data));
    return out;
  }, LONE_SURROGATE.source);
}

test("an avatar of a username that starts with an emoji shows the whole emoji", async () => {
  const username = "😀小明" + Math.random().toString(36).slice(2, 6);
  const password = "emoji-pass-1";
  await new ApiSession(suite.gw.baseURL).register(username, password);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, username, password);
  await page.locator('[data-testid="user-menu"]').waitFor();
  assert.equal((await page.locator('[data-testid="user-menu"] .rt-AvatarFallback').textContent()).trim(), "😀");
  await page.goto("/setting?tab=personal");
  await page.locator('[data-testid="edit-profile"]').waitFor();
  assert.deepEqual(await loneSurrogates(page), []);
  await context.close();
});

test("the profile dialog takes a display name of 20 characters as the server does, emoji included", async () => {
  const username = "emo" + Math.random().toString(36).slice(2, 8);
  const password = "emoji-pass-2";
  await new ApiSession(suite.gw.baseURL).register(username, password);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, username, password);
  await page.goto("/setting?tab=personal");
  await page.click('[data-testid="edit-profile"]');
  const name = "🐼".repeat(15); // 15 characters: the server takes up to 20
  await page.locator("#profile-display-name").click();
  await page.locator("#profile-display-name").press("ControlOrMeta+a");
  await page.keyboard.insertText(name);
  assert.equal(await page.locator("#profile-display-name").inputValue(), name);
  await page.click('[data-testid="save-profile"]');
  await page.locator('h1[data-testid="profile-display-name"], [data-testid="profile-display-name"]', { hasText: name }).first().waitFor();
  await context.close();
});

test("registration counts a password's characters as the server does, emoji included", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const password = "🔑".repeat(10) + "a"; // 11 characters (44 bytes): within 8-20 and 72 bytes
  await page.goto("/register");
  await page.fill("#reg-username", "pw" + Math.random().toString(36).slice(2, 8));
  await page.fill("#reg-password", password);
  await page.fill("#reg-password2", password);
  await page.click('[data-testid="register-submit"]');
  await expectToast(page, "注册成功！");
  await context.close();
});

test("a live entry joins a log list filtered by a model pattern whose _ stands for an emoji, as the server matches it", async () => {
  const root = await rootApi(suite.gw.baseURL);
  const made = await root.call("POST", "/api/token/", { name: "表情令牌", unlimited_quota: true });
  assert.equal(made.json?.success, true, JSON.stringify(made.json));
  const key = made.json.data.key;
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, "root", "123456");
  await page.goto("/log");
  await page.fill("#log-model", "文心一言_");
  await page.locator('[data-testid="log-query"]').click();
  await page.waitForFunction(() => !document.querySelector('[data-testid="log-table"]')?.hasAttribute("aria-busy"));
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.waitForTimeout(1000);
  assert.equal(await page.locator('[data-testid="log-row"]').count(), 0, "no entry of the model yet");
  // The page's own reads are held back: the entry must join from its push, matched by the console.
  await page.route(/\/api\/log\/\?/, async (route) => {
    await new Promise((r) => setTimeout(r, 8000));
    await route.continue().catch(() => {});
  });
  const res = await fetch(`${suite.gw.baseURL}/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer sk-${key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: EMOJI_MODEL, messages: [{ role: "user", content: "你好" }] }),
  });
  assert.equal(res.status, 200, await res.text());
  // The server lists it under this filter ...
  const listed = await root.call("GET", `/api/log/?p=1&type=2&model_name=${encodeURIComponent("文心一言_")}`);
  assert.equal(listed.json.data.items.filter((l) => l.model_name === EMOJI_MODEL).length, 1, JSON.stringify(listed.json));
  // ... and so does the page, live, from the push alone.
  await page.locator('[data-testid="log-model"]', { hasText: EMOJI_MODEL }).first().waitFor({ timeout: 5000 });
  await context.close();
});

test("the pricing page's fuzzy search finds a model by a subsequence with an emoji in it", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, "root", "123456");
  await page.goto("/pricing");
  const names = page.locator('[data-testid="pricing-model-name"]');
  await names.filter({ hasText: EMOJI_MODEL }).first().waitFor();
  await page.fill('[data-testid="pricing-search"]', "文🙂");
  await page.waitForTimeout(300);
  assert.deepEqual(await names.allTextContents(), [EMOJI_MODEL]);
  await context.close();
});
