// Tokens and logs: a user creates a token in the console, reads and copies
// its key, calls the relay with it from Node, and the log page that is already
// open shows the new entry and the new total without a reload.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel, startFakeUpstream } from "./fake-upstream.mjs";
import { expectToast, followPushes, gatewaySuite, login, newPage, newUser, openLogPageTwo, putOption, rootApi } from "./harness.mjs";

let upstream;

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    // Usage large enough that one call moves the two-decimal dollar total on the log page.
    upstream = await startFakeUpstream({ chunks: ["Hello", " from the fake"], usage: { prompt_tokens: 100000, completion_tokens: 50000, total_tokens: 150000 } });
    const root = await rootApi(gw.baseURL);
    await putOption(root, "QuotaForNewUser", "50000000");
    const chats = [{ "Chat A": "https://chat-a.example/#/?key={key}&url={address}" }, { "Chat B": "https://chat-b.example/?k={key}" }];
    await putOption(root, "Chats", JSON.stringify(chats));
    await putOption(root, "ServerAddress", "http://gw.example");
    await createChannel(root, upstream.url, ["gpt-4o-mini"], "fake-openai");
  },
  teardown: () => upstream?.close(),
});

function chat(key, stream = false) {
  return fetch(`${suite.gw.baseURL}/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", stream, messages: [{ role: "user", content: "hello" }] }),
  });
}

test("a user creates a token, reads its key, and the open log page shows the call live", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "tok", "token-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: suite.gw.baseURL });
  await login(page, username, password);
  await page.waitForURL("**/token");
  await page.locator('[data-testid="token-banner"]').waitFor();

  await page.click('[data-testid="copy-selected"]');
  await expectToast(page, "请至少选择一个令牌！");

  await page.click('[data-testid="add-token"]');
  const drawer = page.locator('[data-testid="token-drawer"]');
  await drawer.waitFor();
  await page.fill('[data-testid="token-name-input"]', "e2e-key");
  // The example expiry is a date to come, not one already past.
  const example = (await page.getAttribute('[data-testid="token-expiry"]', "placeholder")).match(/(\d{4})-01-01 00:00:00/);
  assert.ok(example && Number(example[1]) > new Date().getFullYear(), `the expiry example is in the future: ${example?.[0]}`);
  await page.fill('[data-testid="token-expiry"]', "next tuesday");
  await page.click('[data-testid="token-submit"]');
  await expectToast(page, "过期时间格式错误！");
  await drawer.getByRole("button", { name: "一天" }).click();
  assert.match(await page.inputValue('[data-testid="token-expiry"]'), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  await page.click('[data-testid="token-submit"]');
  await expectToast(page, "1个令牌创建成功，请在列表页面点击复制获取令牌！");
  await drawer.waitFor({ state: "detached" });

  const row = page.locator('[data-testid^="token-row-"]', { has: page.locator('[data-testid="token-name"]', { hasText: "e2e-key" }) });
  await row.waitFor();
  assert.match(await row.locator('[data-testid="token-key"]').textContent(), /\*{10}/, "the key starts masked");
  await row.locator('[data-testid="view-key"]').click();
  const key = (await row.locator('[data-testid="token-key"]').textContent()).trim();
  assert.match(key, /^sk-[0-9A-Za-z]{48}$/);

  // Copying puts the same key on the clipboard (or in the manual-copy dialog when the browser refuses).
  await row.locator('[data-testid="copy-key"]').click();
  const manual = page.locator('[data-testid="manual-copy-text"]');
  const copied = await Promise.race([
    expectToast(page, "已复制到剪贴板！").then(() => page.evaluate(() => navigator.clipboard.readText())),
    manual.waitFor().then(() => manual.inputValue()),
  ]);
  assert.equal(copied, key);

  // The chat button fills the first chat template with the key and the server address.
  await context.route(/chat-[ab]\.example/, (route) => route.fulfill({ status: 200, contentType: "text/html", body: "chat" }));
  const [popup] = await Promise.all([page.waitForEvent("popup"), row.locator('[data-testid="chat-token"]').click()]);
  await popup.waitForLoadState();
  assert.equal(popup.url(), `https://chat-a.example/#/?key=${key}&url=${encodeURIComponent("http://gw.example")}`);
  await popup.close();

  // Open the log page inside the console (no reload) and wait for the live socket.
  await page.click('[data-nav="log"]');
  await page.waitForURL("**/log");
  await page.locator('[data-testid="logs-page"]').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.waitForFunction(() => {
    const table = document.querySelector('[data-testid="log-table"]');
    return table && !table.hasAttribute("aria-busy");
  });
  assert.equal(await page.locator('[data-testid="log-token"]', { hasText: "e2e-key" }).count(), 0);
  const quotaBefore = (await page.locator('[data-testid="stat-quota"]').textContent()).trim();
  await page.evaluate(() => {
    window.__sameDocument = true;
  });

  const res = await chat(key);
  assert.equal(res.status, 200, await res.clone().text());
  const body = await res.json();
  assert.equal(body.choices[0].message.content, "Hello from the fake");

  const logRow = page.locator('[data-testid="log-row"]', { has: page.locator('[data-testid="log-token"]', { hasText: "e2e-key" }) });
  await logRow.first().waitFor({ timeout: 10000 });
  assert.equal(await logRow.locator('[data-testid="log-model"]').first().textContent(), "gpt-4o-mini");
  await page.waitForFunction((old) => document.querySelector('[data-testid="stat-quota"]')?.textContent?.trim() !== old, quotaBefore, { timeout: 10000 });
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page was not reloaded");
  assert.match(await page.locator('[data-testid="stat-rpm"]').textContent(), /RPM: [1-9]/);

  // The expanded row shows the billing process; users never see the channel chain.
  await logRow.first().locator('[data-testid="expand-row"]').click();
  const billing = page.locator('[data-testid="billing"]');
  await billing.waitFor();
  assert.match(await billing.textContent(), /模型倍率/);
  assert.match(await billing.textContent(), /提示 100000 \+ 补全 50000/);
  assert.equal(await page.getByRole("columnheader", { name: "重试" }).count(), 0);

  // A streamed call arrives live too.
  const streamed = await chat(key, true);
  assert.equal(streamed.status, 200);
  await streamed.text();
  // (The page already had a second row, the registration gift: wait for the streamed one itself.)
  await page.locator('[data-testid="log-row"]').first().getByText("流", { exact: true }).waitFor({ timeout: 10000 });
  assert.equal(await page.locator('[data-testid="log-row"]').first().getByText("流", { exact: true }).count(), 1);
  await context.close();
});

test("the open token list follows a token's used and remaining quota live, down to exhausted", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "tlive", "token-pass-1");
  // One call costs (100000 + 50000 × 4) × 0.075 = 22500: the token pays for one and a bit.
  const created = await api.call("POST", "/api/token/", { name: "live-tok", remain_quota: 30000, expired_time: -1 });
  assert.equal(created.json?.success, true, JSON.stringify(created.json));
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data.find((x) => x.name === "live-tok");
  const key = "sk-" + tok.key;
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.waitForURL("**/token");
  const row = page.locator(`[data-testid="token-row-${tok.id}"]`);
  await row.waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.evaluate(() => {
    window.__sameDocument = true;
  });
  assert.match(await row.textContent(), /\$0\.00.*\$0\.06/);

  const first = await chat(key);
  assert.equal(first.status, 200, await first.clone().text());
  await first.text();
  // Used $0.045, remaining $0.015.
  await row.filter({ hasText: /\$0\.0[45].*\$0\.0[12]/ }).waitFor({ timeout: 10000 });
  assert.equal(await row.locator('[data-testid="token-status"]').textContent(), "已启用");

  const second = await chat(key);
  assert.equal(second.status, 200, await second.clone().text());
  await second.text();
  await row.locator('[data-testid="token-status"]', { hasText: "已耗尽" }).waitFor({ timeout: 10000 });
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page was not reloaded");
  await context.close();
});

test("a token list read answered after a charge's push keeps the pushed quota", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "tread", "token-pass-1");
  // One call costs 22500 of the token's 1 000 000.
  const created = await api.call("POST", "/api/token/", { name: "read-tok", remain_quota: 1000000, expired_time: -1 });
  assert.equal(created.json?.success, true, JSON.stringify(created.json));
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data.find((x) => x.name === "read-tok");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  // The token page's first read is answered by the server before the charge, and reaches the page
  // only after the page took the charge's token.usage push (a push that had only reached the
  // browser could still be handled after the read's answer, which then tested nothing).
  const usageTaken = await followPushes(page, "token.usage");
  let held = false;
  await page.route(/\/api\/token\/\?p=0/, async (route) => {
    if (held) return route.continue();
    held = true;
    const answer = await route.fetch();
    const body = await answer.text();
    // The page's live socket, opened at the login as this read went out, is open before the
    // charge: the charge's push is what the read is answered after.
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    const call = await chat("sk-" + tok.key);
    assert.equal(call.status, 200, await call.clone().text());
    await call.text();
    await usageTaken();
    await route.fulfill({ response: answer, body });
  });
  await login(page, username, password);
  await page.waitForURL("**/token");
  const row = page.locator(`[data-testid="token-row-${tok.id}"]`);
  await row.waitFor();
  await page.waitForTimeout(500);
  const fresh = (await api.call("GET", "/api/token/?p=0&size=10")).json.data.find((x) => x.id === tok.id);
  assert.equal(fresh.used_quota, 22500, "the call was charged");
  // As a reload shows it: used $0.045, remaining $1.955.
  assert.match(await row.textContent(), /\$0\.0[45].*\$1\.9[56]/);
  await context.close();
});

test("batch creation names tokens name-XXXXXX; status, edit, unlimited quota and delete work", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "bat", "token-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.waitForURL("**/token");

  await page.click('[data-testid="add-token"]');
  const drawer = page.locator('[data-testid="token-drawer"]');
  await drawer.waitFor();
  // Names are limited in bytes, as the server counts them; a batch leaves room for the suffix.
  await page.fill('[data-testid="token-name-input"]', "一二三四五六七八九十一");
  await page.click('[data-testid="token-submit"]');
  await expectToast(page, "令牌名称过长");
  await page.fill('[data-testid="token-name-input"]', "一二三四五六七八");
  await page.fill('[data-testid="token-count"]', "3");
  await page.click('[data-testid="token-submit"]');
  await expectToast(page, "批量创建时令牌名称不能超过 23 字节");
  assert.equal((await api.call("GET", "/api/token/?p=0&size=10")).json.data.length, 0, "nothing was created");
  await page.fill('[data-testid="token-name-input"]', "bat");
  await page.click('[data-testid="token-unlimited"]');
  assert.equal(await page.locator('[data-testid="token-quota"]').isDisabled(), true);
  assert.equal(await page.locator('[data-testid="quota-preset"]').first().isDisabled(), true);
  await page.click('[data-testid="token-submit"]');
  await expectToast(page, "3个令牌创建成功");
  await drawer.waitFor({ state: "detached" });
  const list = (await api.call("GET", "/api/token/?p=0&size=10")).json.data;
  const names = list.map((x) => x.name).sort();
  assert.equal(names.length, 3);
  assert.equal(names[0], "bat");
  for (const n of names.slice(1)) assert.match(n, /^bat-[0-9A-Za-z]{6}$/);
  assert.ok(list.every((x) => x.unlimited_quota === true));

  const first = list.find((x) => x.name === "bat");
  const row = page.locator(`[data-testid="token-row-${first.id}"]`);
  await row.waitFor();
  await row.locator('[data-testid="disable-token"]').click();
  await row.locator('[data-testid="token-status"]', { hasText: "已禁用" }).waitFor();
  await row.locator('[data-testid="enable-token"]').click();
  await row.locator('[data-testid="token-status"]', { hasText: "已启用" }).waitFor();

  await row.locator('[data-testid="edit-token"]').click();
  await drawer.waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid="token-name-input"]')?.value === "bat");
  await page.fill('[data-testid="token-name-input"]', "");
  await page.click('[data-testid="token-submit"]');
  await expectToast(page, "请输入令牌名称！");
  await page.fill('[data-testid="token-name-input"]', "bat-renamed");
  await page.click('[data-testid="token-limits-enabled"]');
  await drawer.getByText("未选择任何模型：启用模型限制后，该令牌无法调用任何模型").waitFor();
  await page.click('[data-testid="token-submit"]');
  await expectToast(page, "令牌更新成功！");
  await drawer.waitFor({ state: "detached" });
  // The keyboard is back on the button that opened the drawer.
  await page.waitForFunction((id) => document.activeElement?.closest(`[data-testid="token-row-${id}"]`) && document.activeElement.dataset.testid === "edit-token", first.id);
  await row.locator('[data-testid="token-name"]', { hasText: "bat-renamed" }).waitFor();
  await row.locator('[data-testid="token-status"]', { hasText: "已启用（限制模型）" }).waitFor();

  // Copy selected: two rows, one line each.
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: suite.gw.baseURL });
  await page.locator('[data-testid="select-all"]').click();
  await page.click('[data-testid="copy-selected"]');
  await expectToast(page, "已复制到剪贴板！");
  const text = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(text.split("\n").length, 3);
  assert.match(text, /bat-renamed\s+sk-[0-9A-Za-z]{48}/);

  await row.locator('[data-testid="delete-token"]').click();
  await page.getByRole("alertdialog").waitFor();
  await page.keyboard.press("Escape");
  await page.getByRole("alertdialog").waitFor({ state: "detached" });
  await page.waitForFunction(() => document.activeElement?.dataset.testid === "delete-token");
  await row.locator('[data-testid="delete-token"]').click();
  await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
  await row.waitFor({ state: "detached" });
  assert.equal((await api.call("GET", "/api/token/?p=0&size=10")).json.data.length, 2);
  await context.close();
});

test("copying selected tokens takes those ticked on other pages too", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "pages", "token-pass-4");
  // Eleven tokens: the list (newest first, 10 a page) holds tok-10 … tok-1 on
  // page one and tok-0 alone on page two.
  for (let i = 0; i <= 10; i++) {
    const r = await api.call("POST", "/api/token/", { name: `tok-${i}`, remain_quota: 1000, expired_time: -1, unlimited_quota: false });
    assert.equal(r.json?.success, true, JSON.stringify(r.json));
  }
  const all = [...(await api.call("GET", "/api/token/?p=0&size=20")).json.data];
  const byName = new Map(all.map((x) => [x.name, x]));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: suite.gw.baseURL });
  await login(page, username, password);
  await page.waitForURL("**/token");
  const first = page.locator(`[data-testid="token-row-${byName.get("tok-10").id}"]`);
  await first.locator('[data-testid="select-row"]').click();
  await page.click('[data-testid="page-next"]');
  const last = page.locator(`[data-testid="token-row-${byName.get("tok-0").id}"]`);
  await last.waitFor();
  // Only the tick of page one so far: it is copied from page two.
  await page.click('[data-testid="copy-selected"]');
  await expectToast(page, "已复制到剪贴板！");
  let text = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(text, /^tok-10\s+sk-[0-9A-Za-z]{48}$/);
  await last.locator('[data-testid="select-row"]').click();
  await page.click('[data-testid="copy-selected"]');
  await page.waitForFunction(() => navigator.clipboard.readText().then((t) => t.split("\n").length === 2));
  text = await page.evaluate(() => navigator.clipboard.readText());
  const full = (k) => (k.startsWith("sk-") ? k : `sk-${k}`);
  assert.deepEqual(text.split("\n"), [`tok-10    ${full(byName.get("tok-10").key)}`, `tok-0    ${full(byName.get("tok-0").key)}`]);
  await context.close();
});

test("deleting a token keeps the next page of the token list reachable", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "tdel", "token-pass-6");
  // Twelve tokens, 10 a page: tok-11 … tok-2 on page one, tok-1 and tok-0 on page two.
  for (let i = 0; i <= 11; i++) {
    const r = await api.call("POST", "/api/token/", { name: `tok-${i}`, remain_quota: 1000, expired_time: -1, unlimited_quota: false });
    assert.equal(r.json?.success, true, JSON.stringify(r.json));
  }
  const all = [...(await api.call("GET", "/api/token/?p=0&size=20")).json.data];
  const byName = new Map(all.map((x) => [x.name, x]));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.waitForURL("**/token");
  const victim = page.locator(`[data-testid="token-row-${byName.get("tok-11").id}"]`);
  await victim.waitFor();
  assert.equal(await page.locator('[data-testid^="token-row-"]').count(), 10);
  assert.equal(await page.locator('[data-testid="page-next"]').isDisabled(), false);

  await victim.locator('[data-testid="delete-token"]').click();
  await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
  await victim.waitFor({ state: "detached" });
  // Eleven tokens are left: page one fills up again and page two is still offered (B §2 token list, §9 page sizes).
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="token-row-"]').length === 10, null, { timeout: 5000 });
  assert.equal(await page.locator('[data-testid="page-next"]').isDisabled(), false);
  await page.click('[data-testid="page-next"]');
  await page.locator(`[data-testid="token-row-${byName.get("tok-0").id}"]`).waitFor();
  await context.close();
});

test("a page past the last of a list without a total says it is empty, not that the list holds 0 rows", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "tpast", "token-pass-6");
  // Exactly a page of tokens: the list cannot tell whether a next page exists, and offers it.
  for (let i = 0; i < 10; i++) {
    const r = await api.call("POST", "/api/token/", { name: `past-${i}`, remain_quota: 1000, expired_time: -1, unlimited_quota: false });
    assert.equal(r.json?.success, true, JSON.stringify(r.json));
  }
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.waitForURL("**/token");
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="token-row-"]').length === 10, null, { timeout: 5000 });
  const footer = async () => (await page.locator('[data-testid="pagination"] >> nth=0').innerText()).split("\n")[0].trim();
  assert.equal(await footer(), "第 1 - 10 条");
  await page.click('[data-testid="page-next"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="token-row-"]').length === 0, null, { timeout: 5000 });
  await page.locator('[data-testid="page-next"]:disabled').waitFor();
  assert.equal(await footer(), "本页无数据");
  await context.close();
});

test("a token search with more matches than a page shows them a page at a time", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "tsrch", "token-pass-7");
  // 23 tokens match "many" (newest first: many-22 … many-0), one does not.
  for (let i = 0; i < 23; i++) {
    const r = await api.call("POST", "/api/token/", { name: `many-${i}`, remain_quota: 1000, expired_time: -1, unlimited_quota: false });
    assert.equal(r.json?.success, true, JSON.stringify(r.json));
  }
  assert.equal((await api.call("POST", "/api/token/", { name: "other", remain_quota: 1000, expired_time: -1, unlimited_quota: false })).json?.success, true);
  const all = [...(await api.call("GET", "/api/token/?p=0&size=100")).json.data];
  const byName = new Map(all.map((x) => [x.name, x]));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.waitForURL("**/token");
  await page.locator('[data-testid^="token-row-"]').first().waitFor();
  await page.fill('[data-testid="token-search-name"]', "many");
  await page.locator('[data-testid="token-search-name"]').press("Enter");
  const footer = page.locator('[data-testid="pagination"]');
  const rows = page.locator('[data-testid^="token-row-"]');
  const names = async () => (await page.locator('[data-testid="token-name"]').allTextContents()).map((x) => x.trim());
  // Every match is found, and shown 10 at a time, as the list is (B §9 page sizes).
  await footer.getByText("第 1 - 10 条，共 23 条").waitFor();
  assert.equal(await rows.count(), 10);
  assert.deepEqual(await names(), Array.from({ length: 10 }, (_, i) => `many-${22 - i}`));
  await page.locator(`[data-testid="token-row-${byName.get("many-22").id}"] [data-testid="select-row"]`).click();
  await page.click('[data-testid="page-next"]');
  await footer.getByText("第 11 - 20 条，共 23 条").waitFor();
  assert.deepEqual(await names(), Array.from({ length: 10 }, (_, i) => `many-${12 - i}`));
  await page.click('[data-testid="page-next"]');
  await footer.getByText("第 21 - 23 条，共 23 条").waitFor();
  assert.deepEqual(await names(), ["many-2", "many-1", "many-0"]);
  // A deleted match leaves the page where it is.
  const victim = page.locator(`[data-testid="token-row-${byName.get("many-1").id}"]`);
  await victim.locator('[data-testid="delete-token"]').click();
  await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
  await victim.waitFor({ state: "detached" });
  await footer.getByText("第 21 - 22 条，共 22 条").waitFor();
  assert.deepEqual(await names(), ["many-2", "many-0"]);
  // A tick made on another page of the result is still copied.
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: suite.gw.baseURL });
  await page.click('[data-testid="copy-selected"]');
  await expectToast(page, "已复制到剪贴板！");
  assert.match(await page.evaluate(() => navigator.clipboard.readText()), /^many-22\s+sk-[0-9A-Za-z]{48}$/);
  await context.close();
});

test("the log page's summary badges keep up while calls keep coming, not only once they stop", async () => {
  const { api } = await newUser(suite.gw.baseURL, "busy", "token-pass-8");
  const r = await api.call("POST", "/api/token/", { name: "busy-key", remain_quota: 0, expired_time: -1, unlimited_quota: true });
  assert.equal(r.json?.success, true, JSON.stringify(r.json));
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data[0];
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/log");
  await page.locator('[data-testid="log-filter-username"]').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.waitForLoadState("networkidle");
  const before = Number((await page.locator('[data-testid="stat-rpm"]').textContent()).replace(/\D+/g, ""));
  // A busy gateway: a call every 100 ms or so, for as long as the check runs.
  let running = true;
  let made = 0;
  const traffic = (async () => {
    const end = Date.now() + 20000;
    while (running && Date.now() < end) {
      const res = await chat(`sk-${tok.key}`);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      made++;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    // The rows arrive live, and so must the badges (quota, RPM, TPM) that sum them.
    await page.waitForFunction((n) => Number((document.querySelector('[data-testid="stat-rpm"]')?.textContent ?? "").replace(/\D+/g, "")) > n, before, {
      timeout: 5000,
    });
    assert.ok(running && made > 0);
  } finally {
    running = false;
    await traffic;
  }
  await context.close();
});

test("a log page of 100 rows draws the entries of a busy gateway about once a second, not once per entry", async () => {
  const { api } = await newUser(suite.gw.baseURL, "draw", "token-pass-9");
  const r = await api.call("POST", "/api/token/", { name: "draw-key", remain_quota: 0, expired_time: -1, unlimited_quota: true });
  assert.equal(r.json?.success, true, JSON.stringify(r.json));
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data[0];
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/log");
  await page.locator('[data-testid="log-filter-username"]').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.locator('[data-testid="page-size"]').click();
  await page.getByRole("option", { name: /^100/ }).click();
  const footer = page.locator('[data-testid="pagination"]');
  await footer.getByText(/100 条\/页/).waitFor();
  await page.waitForLoadState("networkidle");
  const total = async () => Number((await footer.textContent()).match(/共 (\d+) 条/)[1]);
  const before = await total();
  // Count the redraws of the table's rows (each React commit that changes them is one batch of mutations).
  await page.evaluate(() => {
    window.__draws = 0;
    const body = document.querySelector('[data-testid="log-table"] tbody');
    new MutationObserver(() => window.__draws++).observe(body, { childList: true });
  });
  // A busy gateway: a call about every 100 ms for 4 s.
  let made = 0;
  const end = Date.now() + 4000;
  while (Date.now() < end) {
    const res = await chat(`sk-${tok.key}`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    made++;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(made >= 20, `${made} calls`);
  // Every call is shown, in the rows and in the total...
  await page.waitForFunction(
    ([n, want]) => Number(document.querySelector('[data-testid="pagination"]')?.textContent?.match(/共 (\d+) 条/)?.[1]) === n + want,
    [before, made],
    { timeout: 5000 },
  );
  assert.equal(await page.locator('[data-testid="log-row"]', { has: page.locator('[data-testid="log-token"]', { hasText: "draw-key" }) }).count(), made);
  // ...but the 100 rows are not drawn again for each of them: that kept the page busy all the time.
  const draws = await page.evaluate(() => window.__draws);
  assert.ok(draws <= 8, `the table was redrawn ${draws} times for ${made} calls in 4 s`);
  await context.close();
});

test("a page size picked on one list is the size of the lists opened after it in the same tab", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "sizes", "token-pass-6");
  for (let i = 0; i < 11; i++) {
    const r = await api.call("POST", "/api/token/", { name: `size-${i}`, remain_quota: 1000, expired_time: -1, unlimited_quota: false });
    assert.equal(r.json?.success, true, JSON.stringify(r.json));
  }
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  const logSizes = [];
  page.on("request", (req) => {
    const u = new URL(req.url());
    if (u.pathname === "/api/log/self/") logSizes.push(u.searchParams.get("page_size") ?? u.searchParams.get("size"));
  });
  await login(page, username, password);
  await page.waitForURL("**/token");
  // The log list is opened once with the stored size, then left; within
  // the page, with no reload between the lists.
  await page.locator('[data-testid="sidebar"] [data-nav="log"]').click();
  await page.locator('[data-testid="log-table"]:not([aria-busy])').waitFor();
  await page.locator('[data-testid="sidebar"] [data-nav="token"]').click();
  const rows = page.locator('[data-testid^="token-row-"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="token-row-"]').length === 10);
  await page.locator('[data-testid="page-size"]').click();
  await page.getByRole("option", { name: /^20/ }).click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="token-row-"]').length === 11);
  await page.locator('[data-testid="sidebar"] [data-nav="log"]').click();
  await page.waitForURL("**/log");
  for (let i = 0; logSizes.length < 2 && i < 100; i++) await page.waitForTimeout(50);
  assert.deepEqual(logSizes, ["10", "20"]);
  await page.locator('[data-testid="sidebar"] [data-nav="token"]').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="token-row-"]').length === 11);
  assert.equal(await rows.count(), 11);
  await context.close();
});

/**
 * refreshHeld clicks the token page's refresh and holds its list read: answered by the server at once
 * (answerFirst) or only once released, it reaches the page when the returned release is called.
 */
async function refreshHeld(page, answerFirst) {
  let release, reach;
  const reached = new Promise((resolve) => (reach = resolve));
  const go = new Promise((r) => (release = r));
  await page.route(
    /\/api\/token\/\?p=/,
    async (route) => {
      const response = answerFirst ? await route.fetch() : null;
      reach();
      await go;
      await route.fulfill({ response: response ?? (await route.fetch()) });
    },
    { times: 1 },
  );
  await page.locator('[data-testid="tokens-page"]').getByRole("button", { name: "刷新" }).click();
  await reached;
  return release;
}

/**
 * pushedDuringRead opens a user's log page, starts a read of page one and makes a call while the
 * read is held: with readFirst the read reaches the server before the call (its answer lacks the
 * call's entry), otherwise after it (its answer has the entry, which was also pushed). It returns
 * how many rows the call has once the read is done.
 */
async function pushedDuringRead(prefix, password, readFirst) {
  const { username, api } = await newUser(suite.gw.baseURL, prefix, password);
  const tokenName = `${prefix}-key`;
  const created = await api.call("POST", "/api/token/", { name: tokenName, remain_quota: 500000, expired_time: -1 });
  assert.equal(created.json?.success, true, JSON.stringify(created.json));
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data[0];
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.goto("/log");
  await page.locator('[data-testid="log-table"]:not([aria-busy])').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  let started;
  const held = new Promise((resolve) => (started = resolve));
  let release;
  const released = new Promise((resolve) => (release = resolve));
  await page.route(
    (url) => url.pathname === "/api/log/self/",
    async (route) => {
      const early = readFirst ? await route.fetch() : null;
      started();
      await released;
      await route.fulfill({ response: early ?? (await route.fetch()) });
    },
    { times: 1 },
  );
  await page.click('[data-testid="log-query"]');
  await held;
  assert.equal((await chat(`sk-${tok.key}`)).status, 200);
  const row = page.locator('[data-testid="log-row"]', { has: page.locator('[data-testid="log-token"]', { hasText: tokenName }) });
  await row.first().waitFor();
  release();
  await page.waitForFunction(() => !document.querySelector('[data-testid="log-table"]')?.hasAttribute("aria-busy"));
  await page.waitForTimeout(300);
  const n = await row.count();
  await context.close();
  return n;
}

test("an entry pushed while the log page is being read again stays on it", async () => {
  assert.equal(await pushedDuringRead("race", "token-pass-5", true), 1, "the pushed entry was dropped by the page read before it");
});

test("an entry pushed while the log page is being read, and in its answer too, is shown once", async () => {
  // A user's entries carry no id: the pushed one and the answer's are the same call.
  assert.equal(await pushedDuringRead("twice", "token-pass-7", false), 1, "the entry is shown twice");
});

test("saving a token edit keeps a remaining quota that changed while the form was open", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "keep", "token-pass-2");
  const created = await api.call("POST", "/api/token/", { name: "keep", remain_quota: 5000, expired_time: -1, unlimited_quota: false });
  assert.equal(created.json?.success, true, JSON.stringify(created.json));
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data[0];
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.waitForURL("**/token");
  const row = page.locator(`[data-testid="token-row-${tok.id}"]`);
  await row.locator('[data-testid="edit-token"]').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="token-quota"]')?.value === "5000");
  // Meanwhile the quota moves (calls, another tab).
  const moved = await api.call("PUT", "/api/token/", { ...tok, name: "keep", remain_quota: 7000 });
  assert.equal(moved.json?.success, true, JSON.stringify(moved.json));
  await page.fill('[data-testid="token-name-input"]', "keep-renamed");
  await page.click('[data-testid="token-submit"]');
  await expectToast(page, "令牌更新成功！");
  await row.locator('[data-testid="token-name"]', { hasText: "keep-renamed" }).waitFor();
  const after = (await api.call("GET", `/api/token/${tok.id}`)).json.data;
  assert.equal(after.remain_quota, 7000, "the save sent the quota the form had loaded");
  // A quota the user types is still checked and sent.
  await row.locator('[data-testid="edit-token"]').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="token-quota"]')?.value === "7000");
  await page.fill('[data-testid="token-quota"]', "-5");
  await page.click('[data-testid="token-submit"]');
  await expectToast(page, "额度必须是非负整数！");
  // Past 2^53 a browser number loses digits (…993 would be sent as …992): refused as typed.
  await page.fill('[data-testid="token-quota"]', "9007199254740993");
  await page.click('[data-testid="token-submit"]');
  await expectToast(page, "额度不能超过 9007199254740992");
  assert.equal((await api.call("GET", `/api/token/${tok.id}`)).json.data.remain_quota, 7000);
  await page.fill('[data-testid="token-quota"]', "9000");
  await page.click('[data-testid="token-submit"]');
  // The toast of the first save may still be up (and a second one like it is not shown):
  // the drawer closes only once this save is answered.
  await page.locator('[data-testid="token-drawer"]').waitFor({ state: "detached" });
  await expectToast(page, "令牌更新成功！");
  assert.equal((await api.call("GET", `/api/token/${tok.id}`)).json.data.remain_quota, 9000);
  await context.close();
});

test("a token saved while the list is being read again keeps what was saved when that read answers", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "reread", "token-pass-2");
  assert.equal((await api.call("POST", "/api/token/", { name: "old-name", remain_quota: 5000, expired_time: -1 })).json?.success, true);
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data[0];
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.waitForURL("**/token");
  const row = page.locator(`[data-testid="token-row-${tok.id}"]`);
  await row.locator('[data-testid="token-name"]', { hasText: "old-name" }).waitFor();
  // The next list read is answered by the server at once, but reaches the page only when released.
  const release = await refreshHeld(page, true);
  await row.locator('[data-testid="edit-token"]').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="token-name-input"]')?.value === "old-name");
  await page.fill('[data-testid="token-name-input"]', "new-name");
  await page.click('[data-testid="token-submit"]');
  await page.locator('[data-testid="token-drawer"]').waitFor({ state: "detached" });
  await row.locator('[data-testid="token-name"]', { hasText: "new-name" }).waitFor();
  release();
  await page.waitForFunction(() => !document.querySelector('[data-testid="token-table"]')?.hasAttribute("aria-busy"));
  assert.equal((await api.call("GET", `/api/token/${tok.id}`)).json.data.name, "new-name");
  assert.equal((await row.locator('[data-testid="token-name"]').textContent()).trim(), "new-name", "the read that began before the save undid it on the page");
  await context.close();
});

test("a token saved while the list is read again, then emptied by a call before that read, shows the read's exhausted status", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "rerd2", "token-pass-2");
  const created = await api.call("POST", "/api/token/", { name: "soon-empty", remain_quota: 5000, expired_time: -1 });
  assert.equal(created.json?.success, true);
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data[0];
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.waitForURL("**/token");
  const row = page.locator(`[data-testid="token-row-${tok.id}"]`);
  await row.locator('[data-testid="token-name"]', { hasText: "soon-empty" }).waitFor();
  // The next list read reaches the server only when released: after the save and a call that empties the token.
  const release = await refreshHeld(page, false);
  await row.locator('[data-testid="edit-token"]').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="token-name-input"]')?.value === "soon-empty");
  await page.fill('[data-testid="token-name-input"]', "emptied");
  await page.click('[data-testid="token-submit"]');
  await page.locator('[data-testid="token-drawer"]').waitFor({ state: "detached" });
  await row.locator('[data-testid="token-name"]', { hasText: "emptied" }).waitFor();
  // A call costs more than the 5 000 the token holds: its commit stores the token exhausted. It is
  // made once the page's live socket is open, or nothing would push the charge.
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const call = await chat("sk-" + tok.key);
  assert.equal(call.status, 200, await call.clone().text());
  await call.text();
  for (let i = 0; i < 50 && (await api.call("GET", `/api/token/${tok.id}`)).json.data.status !== 4; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal((await api.call("GET", `/api/token/${tok.id}`)).json.data.status, 4);
  // The charge's usage push reaches the page while the read is held: the row shows the token exhausted.
  await row.locator('[data-testid="token-status"]', { hasText: "已耗尽" }).waitFor();
  release();
  await page.waitForFunction(() => !document.querySelector('[data-testid="token-table"]')?.hasAttribute("aria-busy"));
  await page.waitForTimeout(1500);
  assert.equal((await row.locator('[data-testid="token-name"]').textContent()).trim(), "emptied");
  assert.equal((await row.locator('[data-testid="token-status"]').textContent()).trim(), "已耗尽", "the save's enabled status was put over the exhausted token the later read listed");
  await context.close();
});

test("a token enabled while the list is read again, then emptied by a call before that read, shows the read's exhausted status", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "rerd3", "token-pass-2");
  assert.equal((await api.call("POST", "/api/token/", { name: "off-then-on", remain_quota: 5000, expired_time: -1 })).json?.success, true);
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data[0];
  assert.equal((await api.call("PUT", "/api/token/?status_only=true", { id: tok.id, status: 2 })).json?.success, true);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.waitForURL("**/token");
  const row = page.locator(`[data-testid="token-row-${tok.id}"]`);
  await row.locator('[data-testid="token-status"]', { hasText: "已禁用" }).waitFor();
  const release = await refreshHeld(page, false);
  await row.locator('[data-testid="enable-token"]').click();
  await row.locator('[data-testid="token-status"]', { hasText: "已启用" }).waitFor();
  // The call that empties the token is pushed to the page only once its live socket is open.
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const call = await chat("sk-" + tok.key);
  assert.equal(call.status, 200, await call.clone().text());
  await call.text();
  await row.locator('[data-testid="token-status"]', { hasText: "已耗尽" }).waitFor();
  release();
  await page.waitForFunction(() => !document.querySelector('[data-testid="token-table"]')?.hasAttribute("aria-busy"));
  await page.waitForTimeout(1500);
  assert.equal((await api.call("GET", `/api/token/${tok.id}`)).json.data.status, 4);
  assert.equal((await row.locator('[data-testid="token-status"]').textContent()).trim(), "已耗尽", "the enable's status was put over the exhausted token the later read listed");
  await context.close();
});

test("an administrator's log page has channel and username filters, the retry chain and the user dialog", async () => {
  const { username, api } = await newUser(suite.gw.baseURL, "adm", "token-pass-1");
  const created = await api.call("POST", "/api/token/", { name: "adm-key", remain_quota: 500000, expired_time: -1 });
  assert.equal(created.status, 200, JSON.stringify(created.json));
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data[0];

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/log");
  await page.locator('[data-testid="log-filter-channel"]').waitFor();
  await page.locator('[data-testid="log-filter-username"]').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });

  const res = await chat(`sk-${tok.key}`);
  assert.equal(res.status, 200);
  const logRow = page.locator('[data-testid="log-row"]', { has: page.locator('[data-testid="log-token"]', { hasText: "adm-key" }) });
  await logRow.first().waitFor({ timeout: 10000 });
  assert.match(await logRow.first().textContent(), /渠道：\d+/);

  // Filtering by username keeps the entry; another username hides it.
  await page.fill('[data-testid="log-filter-username"]', username);
  await page.click('[data-testid="log-query"]');
  await logRow.first().waitFor();
  await page.fill('[data-testid="log-filter-username"]', "nobody-here");
  await page.click('[data-testid="log-query"]');
  await page.locator('[data-testid="log-table"]').getByText("暂无数据").waitFor();
  // An empty list's footer counts no rows, not "rows 0 - 0".
  assert.equal((await page.locator('[data-testid="pagination"] >> nth=0').innerText()).split("\n")[0].trim(), "共 0 条");
  await page.fill('[data-testid="log-filter-username"]', "");
  await page.click('[data-testid="log-query"]');
  await logRow.first().waitFor();

  // Channel 0 is no channel filter, for the server and for the live tail alike.
  await page.fill('[data-testid="log-filter-channel"]', "0");
  await page.click('[data-testid="log-query"]');
  await logRow.first().waitFor();
  const shown = await logRow.count();
  assert.equal((await chat(`sk-${tok.key}`)).status, 200);
  for (let i = 0; i < 100 && (await logRow.count()) <= shown; i++) await page.waitForTimeout(100);
  assert.ok((await logRow.count()) > shown, "the live entry was dropped under channel filter 0");
  await page.fill('[data-testid="log-filter-channel"]', "");
  await page.click('[data-testid="log-query"]');
  await logRow.first().waitFor();

  await logRow.first().locator('[data-testid="log-user"]').click();
  const info = page.locator('[data-testid="user-info"]');
  await info.waitFor();
  assert.match(await info.textContent(), new RegExp(username));
  await context.close();
});

test("a later log page keeps its rows while new calls arrive, and its total counts them", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "lpage", "token-pass-1");
  const created = await api.call("POST", "/api/token/", { name: "page-tok", unlimited_quota: true, expired_time: -1 });
  assert.equal(created.json?.success, true, JSON.stringify(created.json));
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data.find((x) => x.name === "page-tok");
  const key = "sk-" + tok.key;
  for (let i = 0; i < 11; i++) {
    const r = await chat(key);
    assert.equal(r.status, 200, await r.clone().text());
    await r.text();
  }
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  // The 11 calls and the account's own entries (its first quota).
  const { footer, total } = await openLogPageTwo(page);
  assert.ok(total >= 11, `total ${total}`);
  const r = await chat(key);
  assert.equal(r.status, 200, await r.clone().text());
  await r.text();
  // The reader's rows stay; the total follows.
  await footer.getByText(`第 11 - ${total} 条，共 ${total + 1} 条`).waitFor({ timeout: 10000 });
  await context.close();
});

test("a user's expanded entry without a request id (the registration gift) stays open while calls keep arriving", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "expand", "token-pass-1");
  const created = await api.call("POST", "/api/token/", { name: "expand-tok", unlimited_quota: true, expired_time: -1 });
  assert.equal(created.json?.success, true, JSON.stringify(created.json));
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data.find((x) => x.name === "expand-tok");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.goto("/log");
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const gift = page.locator('[data-testid="log-row"]', { hasText: "新用户注册赠送" });
  await gift.locator('[data-testid="expand-row"]').click();
  await page.locator('[data-testid="log-row"]', { hasText: "新用户注册赠送" }).locator('[aria-expanded="true"]').waitFor();
  // Calls of the user's own: their entries are pushed, and the page is read again once they pause.
  for (let i = 0; i < 3; i++) {
    const r = await chat(`sk-${tok.key}`);
    assert.equal(r.status, 200, await r.clone().text());
    await r.text();
  }
  await page.locator('[data-testid="log-row"]').nth(3).waitFor();
  await page.waitForTimeout(1500);
  assert.equal(
    await page.locator('[data-testid="log-row"]', { hasText: "新用户注册赠送" }).locator('[data-testid="expand-row"]').getAttribute("aria-expanded"),
    "true",
    "the expanded entry was closed by the page's own read",
  );
  await context.close();
});

test("a token search answered after its account logged out shows nothing of it to the next account in the tab", async () => {
  const a = await newUser(suite.gw.baseURL, "leaka", "token-pass-1");
  const made = await a.api.call("POST", "/api/token/", { name: "secret-of-a", unlimited_quota: true, expired_time: -1 });
  assert.equal(made.json?.success, true, JSON.stringify(made.json));
  const b = await newUser(suite.gw.baseURL, "leakb", "token-pass-2");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, a.username, a.password);
  await page.waitForURL("**/token");
  const rowOfA = page.locator('[data-testid^="token-row-"]', { hasText: "secret-of-a" });
  await rowOfA.waitFor();
  // A's search leaves the server at once, but its answer reaches the page only after B logged in.
  let asked;
  const sent = new Promise((r) => (asked = r));
  let release;
  const held = new Promise((r) => (release = r));
  await page.route(
    /\/api\/token\/search/,
    async (route) => {
      const response = await route.fetch();
      asked();
      await held;
      await route.fulfill({ response });
    },
    { times: 1 },
  );
  await page.fill('[data-testid="token-search-name"]', "secret");
  await page.locator('[data-testid="token-search"]').evaluate((f) => f.requestSubmit());
  await sent;
  await page.click('[data-testid="user-menu"]');
  await page.click('[data-testid="logout"]');
  await page.waitForURL("**/login");
  await page.fill("#login-username", b.username);
  await page.fill("#login-password", b.password);
  const listOfB = page.waitForResponse((r) => /\/api\/token\/\?p=0/.test(r.url()));
  await page.click('[data-testid="login-submit"]');
  await page.waitForURL("**/token");
  await listOfB;
  await page.waitForTimeout(300);
  release();
  await page.waitForTimeout(1000);
  assert.equal(await rowOfA.count(), 0, "B's token list shows A's token (and its key)");
  await context.close();
});

test("the token list's chat button opens no chat link with a script or data scheme", async () => {
  const root = await rootApi(suite.gw.baseURL);
  const original = [{ "Chat A": "https://chat-a.example/#/?key={key}&url={address}" }, { "Chat B": "https://chat-b.example/?k={key}" }];
  await putOption(root, "Chats", JSON.stringify([{ Evil: "javascript:alert('{key}')" }, { Data: "data:text/html,<p>{key}</p>" }]));
  try {
    const { username, password, api } = await newUser(suite.gw.baseURL, "tchat", "token-pass-1");
    const created = await api.call("POST", "/api/token/", { name: "chat-tok", unlimited_quota: true, expired_time: -1 });
    assert.equal(created.json?.success, true, JSON.stringify(created.json));
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
    const popups = [];
    page.on("popup", (p) => popups.push(p.url()));
    await login(page, username, password);
    await page.waitForURL("**/token");
    const row = page.locator('[data-testid^="token-row-"]', { has: page.locator('[data-testid="token-name"]', { hasText: "chat-tok" }) });
    await row.waitFor();
    await row.locator('[data-testid="chat-token"]').click();
    await expectToast(page, "聊天链接配置错误，请联系管理员");
    assert.deepEqual(popups, []);
    await context.close();
  } finally {
    await putOption(root, "Chats", JSON.stringify(original));
  }
});

/**
 * withKeptChatLinks gives a new user a token and a browser that kept a status naming an old chat link, then
 * replaces the link on the server and opens the token list in a new page of that browser, whose /api/status
 * answers through status (a route handler). It hands run the page, the token's chat button and the popups opened.
 */
async function withKeptChatLinks(prefix, status, run) {
  const root = await rootApi(suite.gw.baseURL);
  const original = [{ "Chat A": "https://chat-a.example/#/?key={key}&url={address}" }, { "Chat B": "https://chat-b.example/?k={key}" }];
  await putOption(root, "Chats", JSON.stringify([{ Old: "https://old-chat.example/?k={key}" }]));
  try {
    const { username, password, api } = await newUser(suite.gw.baseURL, prefix, "token-pass-1");
    const name = `${prefix}-tok`;
    const created = await api.call("POST", "/api/token/", { name, unlimited_quota: true, expired_time: -1 });
    assert.equal(created.json?.success, true, JSON.stringify(created.json));
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
    await context.route(/^https:\/\/[a-z-]+\.example\//, (route) => route.fulfill({ status: 200, contentType: "text/html", body: "chat" }));
    await login(page, username, password);
    await page.waitForURL("**/token");
    assert.match(await page.evaluate(() => localStorage.getItem("status")), /old-chat/);
    await page.close();
    // Replaced while no console of this browser is open.
    await putOption(root, "Chats", JSON.stringify([{ New: "https://new-chat.example/?k={key}" }]));
    const later = await context.newPage();
    const popups = [];
    later.on("popup", (p) => popups.push(p.url()));
    await later.route("**/api/status", status);
    await later.goto("/token");
    const row = later.locator('[data-testid^="token-row-"]', { has: later.locator('[data-testid="token-name"]', { hasText: name }) });
    const button = row.locator('[data-testid="chat-token"]');
    await button.waitFor();
    await run(later, button, popups);
    await context.close();
  } finally {
    await putOption(root, "Chats", JSON.stringify(original));
  }
}

test("the token list's chat button follows the chat links the server has now, never those the browser kept", async () => {
  const slow = async (route) => {
    await new Promise((r) => setTimeout(r, 2000));
    await route.continue();
  };
  await withKeptChatLinks("tkept", slow, async (page, button, popups) => {
    await button.click({ force: true });
    await page.waitForTimeout(300);
    assert.deepEqual(popups, [], "the key went to a chat link before the server's status arrived");
    const [popup] = await Promise.all([page.waitForEvent("popup"), button.click()]);
    await popup.waitForLoadState();
    assert.match(popup.url(), /^https:\/\/new-chat\.example\/\?k=/);
  });
});

test("a log row of nobody's (a scheduled channel test) names the system and opens no user info", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  const now = Math.floor(Date.now() / 1000);
  const row = {
    id: 900001, user_id: 0, created_at: now, type: 2, content: "模型测试", username: "系统", token_name: "模型测试",
    model_name: "gpt-4o-mini", quota: 3, prompt_tokens: 1, completion_tokens: 1, use_time: 0, is_stream: false, channel: 1,
    other: JSON.stringify({ model_ratio: 0.075, completion_ratio: 4, group_ratio: 1, model_price: -1, frt: -1000 }),
  };
  // The scheduled test writes such rows; the list is answered with one.
  await page.route(/\/api\/log\/\?/, (route) =>
    route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ success: true, message: "", data: { items: [row], total: 1, page: 1, page_size: 10 } }) }),
  );
  await page.goto("/log");
  const system = page.locator('[data-testid="log-user-system"]');
  await system.waitFor();
  assert.match(await system.textContent(), /系统/);
  assert.equal(await page.locator('[data-testid="log-user"]').count(), 0, "the system's row offers the user info of an account that does not exist");
  await system.click();
  await page.waitForTimeout(300);
  assert.equal(await page.locator('[data-testid="user-info"]').count(), 0);
  await context.close();
});

test("the token list's chat button sends no key to the kept chat links when the server's status cannot be read", async () => {
  const failing = (route) => route.fulfill({ status: 502, contentType: "text/plain", body: "bad gateway" });
  await withKeptChatLinks("tfail", failing, async (page, button, popups) => {
    await page.waitForTimeout(500);
    await button.click({ force: true });
    await page.waitForTimeout(500);
    assert.deepEqual(popups, [], "the key went to the chat link the browser kept, the server's status never arrived");
  });
});

test("the token form's quota presets name the amount they set at any QuotaPerUnit", async () => {
  const root = await rootApi(suite.gw.baseURL);
  // 1 000 000 quota per dollar: the 500 000 preset is half a dollar.
  await putOption(root, "QuotaPerUnit", "1000000");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  try {
    const { username, password } = await newUser(suite.gw.baseURL, "pre", "preset-pass-1");
    await login(page, username, password);
    await page.goto("/token");
    await page.click('[data-testid="add-token"]');
    await page.locator('[data-testid="token-drawer"]').waitFor();
    const presets = page.locator('[data-testid="quota-preset"]');
    await presets.first().waitFor();
    for (let i = 0; i < (await presets.count()); i++) {
      const label = (await presets.nth(i).textContent()).trim();
      await presets.nth(i).click();
      const set = Number(await page.inputValue('[data-testid="token-quota"]'));
      assert.equal(Number(label.replace("$", "")) * 1000000, set, `the preset labelled ${label} sets ${set} quota`);
    }
  } finally {
    await putOption(root, "QuotaPerUnit", "500000");
    await context.close();
  }
});

test("the token form's model picker offers the models of the group chosen for the token", async () => {
  const root = await rootApi(suite.gw.baseURL);
  // Only the vip group serves this model; the account's own group (default) does not.
  const r = await root.call("POST", "/api/channel/", { type: 1, name: "vip-only", key: "sk-vip-only", base_url: upstream.url, models: "vip-only-model", group: "vip", status: 1 });
  assert.equal(r.json?.success, true, JSON.stringify(r.json));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  try {
    const { username, password } = await newUser(suite.gw.baseURL, "grp", "group-pass-1");
    await login(page, username, password);
    await page.goto("/token");
    await page.click('[data-testid="add-token"]');
    await page.locator('[data-testid="token-drawer"]').waitFor();
    await page.click('[data-testid="token-limits-enabled"]');
    // The names the picker offers once it lists want (an option the group it reads has).
    const offered = async (want) => {
      await page.click('[data-testid="token-models-open"]');
      await page.locator('[data-testid="token-models-search"]').waitFor();
      await page.locator(".multi-select-option", { hasText: want }).waitFor({ timeout: 5000 }).catch(() => {});
      const names = (await page.locator(".multi-select-option").allTextContents()).map((s) => s.trim());
      await page.keyboard.press("Escape");
      await page.locator('[data-testid="token-models-search"]').waitFor({ state: "detached" });
      return names;
    };
    let names = await offered("gpt-4o-mini");
    assert.ok(names.includes("gpt-4o-mini") && !names.includes("vip-only-model"), `the account's group: ${names}`);

    await page.click("#tk-group");
    await page.getByRole("option", { name: /^vip/ }).click();
    names = await offered("vip-only-model");
    assert.deepEqual(names, ["vip-only-model"], "the vip group's models");
  } finally {
    await context.close();
    const list = (await root.call("GET", "/api/channel/search?keyword=vip-only")).json.data ?? [];
    for (const c of list) await root.call("DELETE", `/api/channel/${c.id}`);
  }
});

test("a stored page size above the largest offered is read as the default: the lists' pages stay reachable", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "bigsize", "token-pass-7");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  // Another console left a size the server's lists do not answer in full (they stop at 100).
  await context.addInitScript(() => localStorage.setItem("page-size", "500"));
  const sizes = [];
  page.on("request", (req) => {
    const u = new URL(req.url());
    if (u.pathname === "/api/token/") sizes.push(u.searchParams.get("size"));
  });
  await login(page, username, password);
  await page.waitForURL("**/token");
  await page.locator('[data-testid="token-banner"]').waitFor();
  for (let i = 0; sizes.length < 1 && i < 100; i++) await page.waitForTimeout(50);
  assert.deepEqual([...new Set(sizes)], ["10"]);
  await context.close();
});

test("a listed token whose expiry passes while the page is open shows as expired, as the server then refuses it", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "expo", "token-pass-2");
  const expiry = Math.floor(Date.now() / 1000) + 4;
  const created = await api.call("POST", "/api/token/", { name: "soon-over", remain_quota: 500000, expired_time: expiry });
  assert.equal(created.json?.success, true, JSON.stringify(created.json));
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data[0];
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  await page.waitForURL("**/token");
  const row = page.locator(`[data-testid="token-row-${tok.id}"]`);
  await row.locator('[data-testid="token-status"]', { hasText: "已启用" }).waitFor();
  assert.ok(Date.now() / 1000 < expiry + 1, "the page opened before the expiry passed");
  // Once its second has passed the server refuses the token, and the row says so without a reload.
  while (Date.now() / 1000 < expiry + 1) await new Promise((r) => setTimeout(r, 100));
  const call = await chat("sk-" + tok.key);
  assert.equal(call.status, 401, await call.clone().text());
  await call.text();
  await row.locator('[data-testid="token-status"]', { hasText: "已过期" }).waitFor({ timeout: 3000 });
  assert.equal(await row.locator('[data-testid="enable-token"]').count(), 1, "the expired row offers enable, as a listed expired one does");
  await context.close();
});

test("the token page follows the next expiry with one timer, and leaves none behind when it closes", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "expt", "token-pass-3");
  const now = Math.floor(Date.now() / 1000);
  for (const [name, expired_time] of [
    ["first-over", now + 3],
    ["later-over", now + 150],
  ]) {
    const created = await api.call("POST", "/api/token/", { name, remain_quota: 500000, expired_time });
    assert.equal(created.json?.success, true, JSON.stringify(created.json));
  }
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  // The page's pending timers that wait for the later expiry (no other waits that long).
  await context.addInitScript(() => {
    const pending = new Set();
    const set = window.setTimeout.bind(window);
    const clear = window.clearTimeout.bind(window);
    window.__expiryTimers = () => pending.size;
    window.setTimeout = (fn, ms, ...args) => {
      const long = typeof ms === "number" && ms > 100_000 && ms < 200_000;
      const id = set(
        (...a) => {
          pending.delete(id);
          if (typeof fn === "function") fn(...a);
        },
        ms,
        ...args,
      );
      if (long) pending.add(id);
      return id;
    };
    window.clearTimeout = (id) => {
      pending.delete(id);
      clear(id);
    };
  });
  await login(page, username, password);
  await page.waitForURL("**/token");
  await page.locator('[data-testid="token-status"]', { hasText: "已过期" }).waitFor({ timeout: 8000 });
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => window.__expiryTimers()), 1, "one timer waits for the next expiry");
  await page.locator('[data-testid="sidebar"] [data-nav="log"]').click();
  await page.waitForURL("**/log");
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => window.__expiryTimers()), 0, "a timer of the token page outlived it");
  await context.close();
});
