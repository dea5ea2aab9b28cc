// Channel management page: create a channel against a fake OpenAI upstream,
// never see its key, test it, edit inline, run the confirmed bulk actions,
// and keep the page away from normal users.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";
import { createChannel, startFakeUpstream } from "./fake-upstream.mjs";
import { expectToast, followPushes, gatewaySuite, login, navEntries, newPage, registerUser, rootApi, statusAsStoredUser, uniqueName } from "./harness.mjs";

// The fake upstream lists these models and answers "Hello from the fake".
const FAKE_MODELS = ["gpt-4o-mini", "gpt-3.5-turbo", "fake-upstream-only"];

let upstream;

const suite = gatewaySuite({
  setup: async () => {
    upstream = await startFakeUpstream({ models: FAKE_MODELS, chunks: ["Hello", " from the fake"] });
  },
  teardown: () => upstream?.close(),
});

async function channelByName(api, name) {
  const r = await api.call("GET", `/api/channel/search?keyword=${encodeURIComponent(name)}`);
  return (r.json?.data ?? []).find((c) => c.name === name);
}

test("fetched models replace the type's suggestion that nobody picked", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  await page.click('[data-testid="add-channel"]');
  const drawer = page.locator('[data-testid="channel-drawer"]');
  const chips = drawer.locator('[data-testid="channel-models"] .multi-select-chip');
  // The OpenAI type's suggestion fills the list first, far more than the upstream serves.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="channel-models"] .multi-select-chip').length > 10);
  await page.fill('[data-testid="channel-base-url"]', upstream.url);
  // Without a key the server says so (it checks the type first).
  await page.click('[data-testid="fetch-models"]');
  await expectToast(page, "请填写密钥");
  await page.fill('[data-testid="channel-key"]', "sk-e2e-suggestion");
  await page.click('[data-testid="fetch-models"]');
  await expectToast(page, "获取模型列表成功");
  await drawer.locator('[data-testid="channel-models"] [data-value="fake-upstream-only"]').waitFor();
  const chosen = await chips.evaluateAll((els) => els.map((e) => e.getAttribute("data-value")));
  assert.deepEqual(chosen.sort(), [...FAKE_MODELS].sort(), "the upstream's models, not the suggestion");
  await context.close();
});

test("filling related models on a type that has none keeps the models chosen and says so", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  await page.click('[data-testid="add-channel"]');
  const drawer = page.locator('[data-testid="channel-drawer"]');
  await page.click('[data-testid="channel-type-select"]');
  await page.getByRole("option", { name: "自定义渠道", exact: true }).click();
  await page.click('[data-testid="clear-models"]');
  const custom = drawer.getByPlaceholder(/自定义模型/);
  await custom.fill("my-model");
  await custom.press("Enter");
  await drawer.locator('[data-testid="channel-models"] [data-value="my-model"]').waitFor();
  await page.click('[data-testid="fill-related-models"]');
  await expectToast(page, "该渠道类型没有相关模型，模型列表保持不变");
  assert.equal(await drawer.locator('[data-testid="channel-models"] [data-value="my-model"]').count(), 1, "the chosen model was wiped");
  await context.close();
});

test("groups typed with commas in the channel form become one chip each, as the channel will store them, and the add item names them", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  await page.click('[data-testid="add-channel"]');
  const drawer = page.locator('[data-testid="channel-drawer"]');
  await drawer.waitFor();
  await page.click('[data-testid="channel-groups-open"]');
  // The add item names the values it adds, not the text as typed.
  await page.fill('[data-testid="channel-groups-search"]', "vip, east，west,, vip");
  const add = page.locator(".multi-select-create");
  assert.equal((await add.textContent()).trim(), "添加 3 项：vip、east、west");
  await page.fill('[data-testid="channel-groups-search"]', "vip,");
  assert.equal((await add.textContent()).trim(), "添加“vip”");
  // Nothing new to add: no add item.
  await page.fill('[data-testid="channel-groups-search"]', "default，");
  await add.waitFor({ state: "detached" });
  await page.fill('[data-testid="channel-groups-search"]', "vip, east，west,, vip");
  await page.keyboard.press("Enter");
  const groups = drawer.locator('[data-testid="channel-groups"]');
  await groups.locator('[data-value="west"]').waitFor();
  for (const g of ["default", "vip", "east", "west"]) assert.equal(await groups.locator(`[data-value="${g}"]`).count(), 1, `one ${g} chip`);
  assert.equal(await groups.locator('[data-value*=","]').count(), 0, "no chip holds a comma");
  await context.close();
});

test("models typed with full-width commas in the custom model field become one model each, as in the picker", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  await page.click('[data-testid="add-channel"]');
  const drawer = page.locator('[data-testid="channel-drawer"]');
  await drawer.waitFor();
  await page.click('[data-testid="clear-models"]');
  await page.fill('[data-testid="custom-model-input"]', "m-east，m-west, m-north");
  await page.click('[data-testid="custom-model-add"]');
  const models = drawer.locator('[data-testid="channel-models"]');
  await models.locator('[data-value="m-north"]').waitFor();
  for (const m of ["m-east", "m-west", "m-north"]) assert.equal(await models.locator(`[data-value="${m}"]`).count(), 1, `one ${m} chip`);
  assert.equal(await models.locator('[data-value*="，"]').count(), 0, "no chip holds a comma");
  await context.close();
});

test("a channel another console adds or deletes appears in and leaves an open channel list without a reload", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  await page.locator('[data-testid="add-channel"]').waitFor();
  // The other console's changes reach this one through its live socket, once it is open.
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const name = uniqueName("pushed");
  const [made] = await createChannel(api, upstream.url, ["gpt-4o-mini"], name);
  const row = page.locator(`[data-testid="channel-row-${made.id}"]`);
  await row.waitFor({ timeout: 5000 });
  const gone = await api.call("DELETE", `/api/channel/${made.id}`);
  assert.equal(gone.json?.success, true, JSON.stringify(gone.json));
  await row.waitFor({ state: "detached", timeout: 5000 });
  await context.close();
});

test("root creates an OpenAI channel on the fake upstream, never sees its key, and tests it", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  await page.locator('[data-testid="channels-page"]').waitFor();
  await page.locator('[data-nav="channel"]').waitFor();

  const name = uniqueName("ch");
  const key = `sk-e2e-${Math.random().toString(36).slice(2, 14)}`;
  await page.click('[data-testid="add-channel"]');
  const drawer = page.locator('[data-testid="channel-drawer"]');
  await drawer.waitFor();

  // Validation comes first: name and key are required on create.
  await page.click('[data-testid="channel-submit"]');
  await expectToast(page, "请填写渠道名称和渠道密钥！");

  await page.fill('[data-testid="channel-name-input"]', name);
  await page.fill('[data-testid="channel-base-url"]', `${upstream.url}///`);
  await page.fill('[data-testid="channel-key"]', key);

  // Groups come from a searchable picker that also takes new names.
  await page.click('[data-testid="channel-groups-open"]');
  await page.fill('[data-testid="channel-groups-search"]', "vip");
  await page.keyboard.press("Enter");
  await drawer.locator('[data-testid="channel-groups"] [data-value="vip"]').waitFor();
  await page.keyboard.press("Escape");
  await page.locator('[data-testid="channel-groups-search"]').waitFor({ state: "detached" });
  await drawer.waitFor();

  // Custom models: a new one is added, a duplicate is refused.
  await page.click('[data-testid="clear-models"]');
  await page.click('[data-testid="channel-submit"]');
  await expectToast(page, "请至少选择一个模型！");
  await page.fill('[data-testid="custom-model-input"]', "gpt-4o-mini");
  await page.click('[data-testid="custom-model-add"]');
  await drawer.locator('[data-testid="channel-models"] [data-value="gpt-4o-mini"]').waitFor();
  await page.fill('[data-testid="custom-model-input"]', "gpt-4o-mini");
  await page.click('[data-testid="custom-model-add"]');
  await expectToast(page, "某些模型已存在！");
  await page.fill('[data-testid="custom-model-input"]', "");

  // The model list is fetched by the server, from the form's base URL and key.
  const callsBefore = upstream.requests.length;
  await page.click('[data-testid="fetch-models"]');
  await expectToast(page, "获取模型列表成功");
  await drawer.locator('[data-testid="channel-models"] [data-value="fake-upstream-only"]').waitFor();
  const listing = upstream.requests.slice(callsBefore).find((c) => c.path === "/v1/models");
  assert.ok(listing, "the gateway asked the upstream for its models");
  assert.equal(listing.headers.authorization, `Bearer ${key}`);

  // Model mapping must be JSON.
  await page.fill('[data-testid="channel-mapping"]', "{not json");
  await page.click('[data-testid="channel-submit"]');
  await expectToast(page, "模型映射必须是合法的 JSON 格式！");
  await page.fill('[data-testid="channel-mapping"]', "");

  await page.click('[data-testid="channel-submit"]');
  await expectToast(page, "渠道创建成功！");
  await drawer.waitFor({ state: "detached" });

  const api = await rootApi(suite.gw.baseURL);
  const saved = await channelByName(api, name);
  assert.ok(saved, "channel stored");
  assert.equal(saved.base_url, upstream.url, "trailing slashes removed");
  assert.equal(saved.type, 1);
  assert.equal(saved.group, "default,vip");
  assert.equal("key" in saved, false, "the list never carries a key");

  const row = page.locator(`[data-testid="channel-row-${saved.id}"]`);
  await row.waitFor();
  assert.match(await row.locator('[data-testid="channel-name"]').textContent(), new RegExp(name));
  assert.equal(await row.locator('[data-testid="response-time"]').textContent(), "未测试");
  const pageText = await page.evaluate(() => document.body.innerText);
  assert.ok(!pageText.includes(key), "the key is not shown anywhere");

  // Test it: the response time appears in the row.
  await row.locator('[data-testid="test-channel"]').click();
  await expectToast(page, "测试成功");
  await page.waitForFunction((id) => Number(document.querySelector(`[data-testid="channel-row-${id}"] [data-testid="response-time"]`)?.dataset.ms) > 0, saved.id);
  assert.match(await row.locator('[data-testid="response-time"]').textContent(), /秒/);
  const chat = upstream.requests.filter((c) => c.path === "/v1/chat/completions").at(-1);
  assert.equal(chat.headers.authorization, `Bearer ${key}`, "the test used the stored key");

  // Editing shows no key; an empty key keeps the stored one.
  await row.locator('[data-testid="edit-channel"]').click();
  await drawer.waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid="channel-name-input"]')?.value !== "");
  assert.equal(await page.inputValue('[data-testid="channel-key"]'), "");
  await page.click('[data-testid="channel-submit"]');
  await expectToast(page, "渠道更新成功！");
  await drawer.waitFor({ state: "detached" });
  await row.locator('[data-testid="test-channel"]').click();
  await expectToast(page, `渠道 ${name} 测试成功`);
  assert.equal(upstream.requests.filter((c) => c.path === "/v1/chat/completions").at(-1).headers.authorization, `Bearer ${key}`);
  await context.close();
});

test("priority, weight and status are edited in place; copy, test-all and bulk delete work", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const name = uniqueName("in");
  await createChannel(api, upstream.url, ["gpt-4o-mini"], name);
  const ch = await channelByName(api, name);

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  const row = page.locator(`[data-testid="channel-row-${ch.id}"]`);
  await row.waitFor();

  // Priority below the minimum becomes -999; a negative weight becomes 0.
  const prio = row.locator('[data-testid="channel-priority"]');
  await prio.fill("-5000");
  await prio.press("Enter");
  await expectToast(page, "操作成功完成！");
  await page.waitForFunction(async (id) => (await (await fetch(`/api/channel/${id}`, { headers: { "New-Api-User": "1" } })).json()).data.priority === -999, ch.id);
  assert.equal(await prio.inputValue(), "-999");
  const weight = row.locator('[data-testid="channel-weight"]');
  await weight.fill("-3");
  await weight.press("Enter");
  await page.waitForFunction(() => document.querySelectorAll(".toast").length > 0);
  assert.equal((await channelByName(api, name)).weight, 0);
  // A fraction is refused with a message, not dropped in silence.
  await prio.fill("2.7");
  await prio.press("Enter");
  await expectToast(page, "优先级必须是整数");
  assert.equal(await prio.inputValue(), "-999");
  assert.equal((await channelByName(api, name)).priority, -999);

  // Disable greys the row; enable brings it back.
  await row.locator('[data-testid="disable-channel"]').click();
  await row.locator('[data-testid="channel-status"][data-status="2"]').waitFor();
  assert.match(await row.getAttribute("class"), /data-table-muted/);
  await row.locator('[data-testid="enable-channel"]').click();
  await row.locator('[data-testid="channel-status"][data-status="1"]').waitFor();

  // Copy on the server keeps the key: the copy can be tested.
  await row.locator('[data-testid="channel-menu"]').click();
  await page.locator('[data-testid="copy-channel"]').click();
  await expectToast(page, "渠道复制成功");
  const copy = await channelByName(api, `${name}_复制`);
  assert.ok(copy, "copy stored");
  const test = await api.call("GET", `/api/channel/test/${copy.id}`);
  assert.equal(test.json?.success, true, JSON.stringify(test.json));

  // Test all, confirmed, with live progress.
  await page.click('[data-testid="test-all"]');
  await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
  await page.locator('[data-testid="channel-progress"]').waitFor();
  await page.locator('[data-testid="test-all-status"]', { hasText: "测试完成" }).waitFor({ timeout: 20000 });

  // Bulk delete mode: select the copy and delete it.
  await page.click('[data-testid="refresh-channels"]');
  const copyRow = page.locator(`[data-testid="channel-row-${copy.id}"]`);
  await copyRow.waitFor();
  await page.click('[data-testid="bulk-mode"]');
  // Nothing picked yet: the button says so instead of asking.
  await page.click('[data-testid="delete-selected"]');
  await expectToast(page, "请先选择要删除的通道！");
  await copyRow.locator('[data-testid="select-row"]').click();
  await page.click('[data-testid="delete-selected"]');
  await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
  await expectToast(page, "已删除 1 个通道！");
  await copyRow.waitFor({ state: "detached" });
  assert.equal(await channelByName(api, `${name}_复制`), undefined);

  // Fix asks first and warns.
  await page.click('[data-testid="fix-channels"]');
  const dialog = page.getByRole("alertdialog");
  await dialog.getByText("进行该操作时，可能导致渠道访问错误").waitFor();
  await dialog.getByRole("button", { name: "确定" }).click();
  await expectToast(page, "已修复");
  await context.close();
});

test("a channel of a type the relay does not implement can be saved and its test says so", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const name = uniqueName("cl");
  const created = await api.call("POST", "/api/channel/", { type: 14, name, key: "sk-claude", models: "claude-3-haiku-20240307", group: "default" });
  assert.equal(created.status, 200, JSON.stringify(created.json));
  const ch = await channelByName(api, name);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  const row = page.locator(`[data-testid="channel-row-${ch.id}"]`);
  await row.waitFor();
  assert.equal(await row.locator('[data-testid="channel-type"]').textContent(), "Anthropic Claude");
  await row.locator('[data-testid="test-channel"]').click();
  await expectToast(page, "尚未支持");
  await context.close();
});

test("a normal user has no channel entry and /channel is refused", async () => {
  const { username, password } = await registerUser(suite.gw.baseURL, "nch", "normal-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, username, password);
  await page.locator('[data-testid="sidebar"]').waitFor();
  const entries = await navEntries(page);
  assert.ok(entries.includes("token") && entries.includes("log"), `token and log entries expected, got ${entries}`);
  assert.ok(!entries.includes("channel"), "no channel entry for a normal user");
  await page.goto("/channel");
  await page.locator('[data-testid="forbidden"]').waitFor();
  assert.equal(await page.locator('[data-testid="channels-page"]').count(), 0);
  assert.equal(await statusAsStoredUser(page, "/api/channel/"), 403);
  await context.close();
});

test("/channel/add opens the add drawer directly; a channel is created and closing returns to /channel", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel/add");
  await page.locator('[data-testid="channels-page"]').waitFor();
  const drawer = page.locator('[data-testid="channel-drawer"]');
  await drawer.waitFor();
  await drawer.getByText("创建新的渠道").waitFor();
  assert.deepEqual(await navEntries(page).then((e) => e.filter((k) => k === "channel")), ["channel"], "one channel entry, none for the new routes");

  // A new type brings its own suggestions while the list is still the previous type's.
  await drawer.locator('[data-testid="channel-models"] [data-value="gpt-4o-mini"]').waitFor();
  await page.click('[data-testid="channel-type-select"]');
  await page.getByRole("option", { name: "Midjourney Proxy", exact: true }).click();
  await drawer.locator('[data-testid="channel-models"] [data-value="mj_imagine"]').waitFor();
  assert.equal(await drawer.locator('[data-testid="channel-models"] [data-value="gpt-4o-mini"]').count(), 0, "the OpenAI suggestion is replaced");
  await page.click('[data-testid="channel-type-select"]');
  await page.getByRole("option", { name: "OpenAI", exact: true }).click();
  await drawer.locator('[data-testid="channel-models"] [data-value="gpt-4o-mini"]').waitFor();

  const name = uniqueName("ad");
  await page.fill('[data-testid="channel-name-input"]', name);
  await page.fill('[data-testid="channel-key"]', "sk-e2e-direct-add");

  // A provider that refuses the model list gets one toast: the server's reason.
  await page.fill('[data-testid="channel-base-url"]', `${upstream.url}/broken`);
  await page.click('[data-testid="fetch-models"]');
  await expectToast(page, "获取模型列表失败：");
  await page.waitForTimeout(500);
  assert.equal(await page.locator(".toast", { hasText: "获取模型列表失败" }).count(), 1, "a single error toast");

  await page.fill('[data-testid="channel-base-url"]', upstream.url);
  await page.click('[data-testid="clear-models"]');
  await page.fill('[data-testid="custom-model-input"]', "gpt-4o-mini");
  await page.click('[data-testid="custom-model-add"]');
  await drawer.locator('[data-testid="channel-models"] [data-value="gpt-4o-mini"]').waitFor();
  await page.click('[data-testid="channel-submit"]');
  await expectToast(page, "渠道创建成功！");
  await drawer.waitFor({ state: "detached" });
  await page.waitForURL((u) => u.pathname === "/channel");

  const api = await rootApi(suite.gw.baseURL);
  const saved = await channelByName(api, name);
  assert.ok(saved, "channel stored");
  assert.equal(saved.base_url, upstream.url);
  assert.equal(saved.models, "gpt-4o-mini");

  // From the list, the add button moves to /channel/add; cancel goes back to
  // /channel, and Forward reopens the drawer, which Escape closes again.
  await page.click('[data-testid="add-channel"]');
  await drawer.waitFor();
  await page.waitForURL((u) => u.pathname === "/channel/add");
  await drawer.getByRole("button", { name: "取消" }).click();
  await drawer.waitFor({ state: "detached" });
  await page.waitForURL((u) => u.pathname === "/channel");
  await page.goForward();
  await drawer.waitFor();
  await page.keyboard.press("Escape");
  await drawer.waitFor({ state: "detached" });
  await page.waitForURL((u) => u.pathname === "/channel");
  await page.locator('[data-testid="channels-page"]').waitFor();
  await context.close();
});

test("/channel/edit/{id} opens the filled edit drawer and saves; an unknown id only shows the error", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const name = uniqueName("ed");
  await createChannel(api, upstream.url, ["gpt-4o-mini", "gpt-3.5-turbo"], name);
  const ch = await channelByName(api, name);

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto(`/channel/edit/${ch.id}`);
  const drawer = page.locator('[data-testid="channel-drawer"]');
  await drawer.waitFor();
  await drawer.getByText("更新渠道信息").waitFor();
  await page.waitForFunction((n) => document.querySelector('[data-testid="channel-name-input"]')?.value === n, name);
  assert.equal(await page.inputValue('[data-testid="channel-base-url"]'), upstream.url);
  await drawer.locator('[data-testid="channel-models"] [data-value="gpt-3.5-turbo"]').waitFor();
  assert.equal(await page.inputValue('[data-testid="channel-key"]'), "", "the key is never shown");

  // Fetching models on edit uses the stored key only where the channel points:
  // a form moved to another base URL must bring its key.
  const callsBefore = upstream.requests.length;
  await page.fill('[data-testid="channel-base-url"]', `${upstream.url}/elsewhere`);
  await page.click('[data-testid="fetch-models"]');
  await expectToast(page, "更换了类型或 Base URL，请重新填写密钥");
  assert.ok(!upstream.requests.slice(callsBefore).some((c) => c.path.includes("/elsewhere")), "the stored key went nowhere");
  // Saving it so is refused too, by the form, before anything is sent.
  const moveMessage = "更换了类型或 Base URL，请重新填写密钥";
  const puts = [];
  const onRequest = (req) => {
    if (req.method() === "PUT" && new URL(req.url()).pathname === "/api/channel/") puts.push(req.url());
  };
  page.on("request", onRequest);
  const shown = await page.locator(".toast", { hasText: moveMessage }).count();
  await page.click('[data-testid="channel-submit"]');
  await page.waitForFunction(
    ([text, before]) => [...document.querySelectorAll(".toast")].filter((e) => e.textContent.includes(text)).length > before,
    [moveMessage, shown],
  );
  page.off("request", onRequest);
  assert.deepEqual(puts, [], "the form sent the move");
  assert.equal((await api.call("GET", `/api/channel/${ch.id}`)).json.data.base_url, upstream.url, "nothing was saved");
  await page.fill('[data-testid="channel-base-url"]', upstream.url);
  // An emptied name is the form's to say, in the console's language, before anything is sent.
  await page.fill('[data-testid="channel-name-input"]', "");
  page.on("request", onRequest);
  await page.click('[data-testid="channel-submit"]');
  await expectToast(page, "请填写渠道名称！");
  page.off("request", onRequest);
  assert.deepEqual(puts, [], "the form sent an empty name");
  await page.fill('[data-testid="channel-name-input"]', name);
  await page.click('[data-testid="fetch-models"]');
  await expectToast(page, "获取模型列表成功");
  await drawer.locator('[data-testid="channel-models"] [data-value="fake-upstream-only"]').waitFor();
  const listing = upstream.requests.slice(callsBefore).find((c) => c.path === "/v1/models");
  assert.equal(listing?.headers.authorization, "Bearer sk-fake-upstream-key", "the stored key was sent");

  await page.fill('[data-testid="channel-name-input"]', `${name}x`);
  await page.click('[data-testid="channel-submit"]');
  await expectToast(page, "渠道更新成功！");
  await drawer.waitFor({ state: "detached" });
  await page.waitForURL((u) => u.pathname === "/channel");
  const saved = await (await api.call("GET", `/api/channel/${ch.id}`)).json.data;
  assert.equal(saved.name, `${name}x`);
  assert.match(saved.models, /^gpt-4o-mini,gpt-3\.5-turbo,.*fake-upstream-only/, "fetched models are added to the chosen ones");

  // From a row, edit moves to /channel/edit/{id}; the browser's Back closes
  // the drawer, and the page keeps its search meanwhile.
  await page.fill('[data-testid="channel-search-keyword"]', `${name}x`);
  await page.keyboard.press("Enter");
  const row = page.locator(`[data-testid="channel-row-${ch.id}"]`);
  await row.waitFor();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="channel-row-"]').length === 1);
  await row.locator('[data-testid="edit-channel"]').click();
  await drawer.waitFor();
  await page.waitForURL((u) => u.pathname === `/channel/edit/${ch.id}`);
  await page.waitForFunction((n) => document.querySelector('[data-testid="channel-name-input"]')?.value === n, `${name}x`);
  await page.goBack();
  await drawer.waitFor({ state: "detached" });
  await page.waitForURL((u) => u.pathname === "/channel");
  assert.equal(await page.locator('[data-testid^="channel-row-"]').count(), 1, "the search result is still shown");

  // An id the server does not know: its message, and no drawer.
  await page.goto("/channel/edit/987654");
  await expectToast(page, "渠道未找到");
  await page.waitForURL((u) => u.pathname === "/channel");
  await page.locator('[data-testid="channels-page"]').waitFor();
  assert.equal(await drawer.count(), 0, "no drawer for an unknown channel");
  await context.close();
});

test("a normal user opening /channel/edit/{id} or /channel/add is refused like on /channel", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const name = uniqueName("nr");
  await createChannel(api, upstream.url, ["gpt-4o-mini"], name);
  const ch = await channelByName(api, name);
  const { username, password } = await registerUser(suite.gw.baseURL, "nce", "normal-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, username, password);
  await page.locator('[data-testid="sidebar"]').waitFor();
  assert.ok(!(await navEntries(page)).includes("channel"), "no channel entry for a normal user");
  for (const path of [`/channel/edit/${ch.id}`, "/channel/add"]) {
    await page.goto(path);
    await page.locator('[data-testid="forbidden"]').waitFor();
    assert.equal(await page.locator('[data-testid="channels-page"]').count(), 0, path);
    assert.equal(await page.locator('[data-testid="channel-drawer"]').count(), 0, path);
  }
  assert.equal(await statusAsStoredUser(page, `/api/channel/${ch.id}`), 403);
  await context.close();
});

test("a key typed for a batch and sent without it makes one channel; the drawer's priority and weight must be whole numbers", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel/add");
  const drawer = page.locator('[data-testid="channel-drawer"]');
  await drawer.waitFor();
  await drawer.locator('[data-testid="channel-models"] [data-value="gpt-4o-mini"]').waitFor();
  const name = uniqueName("one");
  await page.fill('[data-testid="channel-name-input"]', name);
  await page.fill('[data-testid="channel-base-url"]', upstream.url);
  await page.click('[data-testid="channel-batch"]');
  await page.fill('[data-testid="channel-key"]', "sk-line-one\nsk-line-two");
  await page.click('[data-testid="channel-batch"]');
  assert.equal(await page.inputValue('[data-testid="channel-key"]'), "sk-line-onesk-line-two", "the field shows one key");

  // Numbers a person may type that are not whole are refused, not read as something else.
  for (const [field, value, message] of [["#ch-priority", "1e3", "优先级必须是整数"], ["#ch-weight", "2.9", "权重必须是整数"]]) {
    await page.fill(field, value);
    await page.click('[data-testid="channel-submit"]');
    await expectToast(page, message);
    await page.fill(field, "");
  }
  await page.fill("#ch-priority", "3");
  await page.click('[data-testid="channel-submit"]');
  await expectToast(page, "渠道创建成功！");
  await drawer.waitFor({ state: "detached" });
  const r = await api.call("GET", `/api/channel/search?keyword=${encodeURIComponent(name)}`);
  const made = (r.json?.data ?? []).filter((c) => c.name === name);
  assert.equal(made.length, 1, `one channel, got ${JSON.stringify(made)}`);
  assert.equal(made[0].priority, 3);
  await context.close();
});

test("deleting a row keeps the next page reachable; deleting the disabled channels leaves none of them selected", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const prefix = uniqueName("pg");
  for (let i = 0; i < 12; i++) await createChannel(api, upstream.url, ["gpt-4o-mini"], `${prefix}-${i}`);
  const off = await channelByName(api, `${prefix}-11`);
  const put = await api.call("PUT", "/api/channel/", { id: off.id, status: 2 });
  assert.equal(put.json?.success, true, JSON.stringify(put.json));

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  const offRow = page.locator(`[data-testid="channel-row-${off.id}"]`);
  await offRow.waitFor();
  const rows = page.locator('[data-testid^="channel-row-"]');
  assert.equal(await rows.count(), 10);

  // A disabled channel picked for bulk delete, then all disabled channels deleted.
  await page.click('[data-testid="bulk-mode"]');
  await offRow.locator('[data-testid="select-row"]').click();
  await page.click('[data-testid="delete-disabled"]');
  await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
  await expectToast(page, "已删除所有禁用渠道");
  await offRow.waitFor({ state: "detached" });
  await page.click('[data-testid="delete-selected"]');
  await expectToast(page, "请先选择要删除的通道！");

  // One row deleted: the page fills up again and the next one stays reachable.
  const victim = page.locator(`[data-testid="channel-row-${(await channelByName(api, `${prefix}-10`)).id}"]`);
  await victim.locator('[data-testid="channel-menu"]').click();
  await page.locator('[data-testid="delete-channel"]').click();
  await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
  await victim.waitFor({ state: "detached" });
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="channel-row-"]').length === 10);
  assert.equal(await page.locator('[data-testid="page-next"]').isDisabled(), false);
  await context.close();
});

test("a channel search with more matches than a page shows them a page at a time; bulk delete picks across its pages", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const prefix = uniqueName("sr");
  // 23 channels match (newest first: -22 … -0, all of priority 0).
  for (let i = 0; i < 23; i++) await createChannel(api, upstream.url, ["gpt-4o-mini"], `${prefix}-${i}`);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  await page.locator('[data-testid^="channel-row-"]').first().waitFor();
  await page.fill('[data-testid="channel-search-keyword"]', prefix);
  await page.locator('[data-testid="channel-search-keyword"]').press("Enter");
  const footer = page.locator('[data-testid="pagination"]');
  const rows = page.locator('[data-testid^="channel-row-"]');
  const names = async () => (await page.locator('[data-testid="channel-name"]').allTextContents()).map((x) => x.trim());
  // Every match is found, and shown 10 at a time, as the list is (B §2 channel list page sizes).
  await footer.getByText("第 1 - 10 条，共 23 条").waitFor();
  assert.equal(await rows.count(), 10);
  assert.deepEqual(await names(), Array.from({ length: 10 }, (_, i) => `${prefix}-${22 - i}`));
  await page.click('[data-testid="bulk-mode"]');
  const first = await channelByName(api, `${prefix}-22`);
  await page.locator(`[data-testid="channel-row-${first.id}"] [data-testid="select-row"]`).click();
  await page.click('[data-testid="page-next"]');
  await footer.getByText("第 11 - 20 条，共 23 条").waitFor();
  assert.deepEqual(await names(), Array.from({ length: 10 }, (_, i) => `${prefix}-${12 - i}`));
  const second = await channelByName(api, `${prefix}-5`);
  await page.locator(`[data-testid="channel-row-${second.id}"] [data-testid="select-row"]`).click();
  // The ticks of both pages are deleted; the search stays on the page shown.
  await page.click('[data-testid="delete-selected"]');
  await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
  await expectToast(page, "已删除 2 个通道！");
  await footer.getByText("第 11 - 20 条，共 21 条").waitFor();
  assert.deepEqual(await names(), [11, 10, 9, 8, 7, 6, 4, 3, 2, 1].map((i) => `${prefix}-${i}`));
  assert.equal(await channelByName(api, `${prefix}-22`), undefined);
  assert.equal(await channelByName(api, `${prefix}-5`), undefined);
  await context.close();
});

test("deleting the only row of the last page shows the page before, not an empty one", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const total = async () => (await api.call("GET", "/api/channel/?p=0&page_size=1000")).json.data.length;
  // The last page (10 a page) holds exactly one channel.
  let n = await total();
  while (n < 11 || n % 10 !== 1) {
    await createChannel(api, upstream.url, ["gpt-4o-mini"], uniqueName("lp"));
    n++;
  }
  const last = Math.floor(n / 10) + 1;

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  const rows = page.locator('[data-testid^="channel-row-"]');
  const pager = page.locator('[data-testid="pagination"]');
  await rows.first().waitFor();
  for (let p = 2; p <= last; p++) {
    await page.click('[data-testid="page-next"]');
    await pager.getByText(`第 ${p} 页`).waitFor();
  }
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="channel-row-"]').length === 1);

  const victim = rows.first();
  await victim.locator('[data-testid="channel-menu"]').click();
  await page.locator('[data-testid="delete-channel"]').click();
  await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
  await expectToast(page, "操作成功完成！");
  // The page before, full, instead of "第 0 - 10 条" on an empty page.
  await pager.getByText(`第 ${last - 1} 页`).waitFor();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="channel-row-"]').length === 10);
  await context.close();
});

/** slowUpstream starts an upstream on 127.0.0.1 that answers every chat completion after ms milliseconds. */
async function slowUpstream(ms) {
  const slow = createServer(async (req, res) => {
    for await (const _ of req);
    await new Promise((r) => setTimeout(r, ms));
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ id: "slow", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
  });
  await new Promise((r) => slow.listen(0, "127.0.0.1", r));
  return slow;
}

test("a test of all channels that ends while the admin is on another page does not stay running on the channel page", async () => {
  // An upstream that takes 2 s a test, so the run outlives a visit to the channel page.
  const slow = await slowUpstream(2000);
  const api = await rootApi(suite.gw.baseURL);
  await createChannel(api, `http://127.0.0.1:${slow.address().port}`, ["gpt-4o-mini"], uniqueName("slow"));

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  // A second administrator's console watches the run to its end.
  const watcher = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  try {
    await login(watcher.page, "root", "123456");
    await watcher.page.goto("/channel");
    await watcher.page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    await login(page, "root", "123456");
    await page.goto("/channel");
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    await page.locator('[data-testid^="channel-row-"]').first().waitFor();

    await page.click('[data-testid="test-all"]');
    await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
    await page.locator('[data-testid="test-all-status"]', { hasText: "正在测试" }).waitFor();
    // Away to the token list (in the console, no reload) while the run ends.
    await page.click('[data-nav="token"]');
    await page.waitForURL(/\/token$/);
    await watcher.page.locator('[data-testid="test-all-status"]', { hasText: "测试完成" }).waitFor({ timeout: 30000 });

    await page.click('[data-nav="channel"]');
    await page.locator('[data-testid^="channel-row-"]').first().waitFor();
    await page.waitForTimeout(500);
    assert.equal(await page.locator('[data-testid="test-all-status"]', { hasText: "正在测试" }).count(), 0, "no run shown as still going");
    assert.equal(await page.locator('[data-testid="test-all"]').isDisabled(), false, "test all can be started again");
  } finally {
    await watcher.context.close();
    await context.close();
    slow.closeAllConnections?.();
    slow.close();
  }
});

test("a channel list read answered after a channel.health push keeps the pushed health", async () => {
  const root = await rootApi(suite.gw.baseURL);
  const name = uniqueName("race");
  await createChannel(root, upstream.url, ["gpt-4o-mini"], name);
  const ch = await channelByName(root, name);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  // The list is answered by the server before another administrator disables the channel, and
  // reaches the page only after the page took the push that tells of it (a push that had only
  // reached the browser could still be handled after the answer, which then tested nothing).
  const healthTaken = await followPushes(page, "channel.health", [`"id":${ch.id},`]);
  let held = false;
  await page.route(/\/api\/channel\/\?/, async (route) => {
    if (held) return route.continue();
    held = true;
    const answer = await route.fetch();
    const body = await answer.text();
    // The page opened by the goto below has a live socket of its own, opened as this read went
    // out: the channel is disabled once it is open, or nothing would push the change.
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    const off = await root.call("PUT", "/api/channel/", { id: ch.id, status: 2 });
    assert.equal(off.json?.success, true, JSON.stringify(off.json));
    await healthTaken();
    await route.fulfill({ response: answer, body });
  });
  await page.goto("/channel");
  const row = page.locator(`[data-testid="channel-row-${ch.id}"]`);
  await row.waitFor();
  await page.waitForTimeout(500);
  // As a reload shows it: disabled.
  assert.equal(await row.locator('[data-testid="channel-status"]').getAttribute("data-status"), "2");
  await context.close();
});

test("updating all balances names at most ten of the channels that failed, and counts them all", async () => {
  // The fake upstream has no balance endpoint: every OpenAI channel on it fails.
  const api = await rootApi(suite.gw.baseURL);
  for (let i = 0; i < 12; i++) await createChannel(api, upstream.url, ["gpt-4o-mini"], uniqueName("bal"));
  const enabled = (await api.call("GET", "/api/channel/?p=0&page_size=1000")).json.data.filter((c) => c.status === 1 && c.type === 1);
  assert.ok(enabled.length >= 12, `${enabled.length} enabled OpenAI channels`);

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  await page.click('[data-testid="update-all-balances"]');
  await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
  const toast = await expectToast(page, "个渠道余额更新失败");
  const text = await toast.innerText();
  const m = text.match(/(\d+) 个渠道余额更新失败（ID：([^）]*)）/);
  assert.ok(m, text);
  assert.ok(Number(m[1]) >= 12, text);
  assert.match(m[2], / …$/, "the rest is elided");
  const ids = m[2].replace(/ …$/, "").split(", ");
  assert.equal(ids.filter((s) => /^\d+$/.test(s)).length, 10, `ten ids named: ${text}`);
  await context.close();
});

test("a test of all channels still going when the admin comes back to the channel page shows at once, with its count so far", async () => {
  // Tests that take 6 s each: the run's next push is seconds away when the page is opened again.
  const slow = await slowUpstream(6000);
  const api = await rootApi(suite.gw.baseURL);
  for (let i = 0; i < 2; i++) await createChannel(api, `http://127.0.0.1:${slow.address().port}`, ["gpt-4o-mini"], uniqueName("slow"));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  // While the page is back, the run's frames are kept from it: only its own read of the run can
  // show it (a wait short enough to beat the next frame failed on a busy machine).
  let framesHeld = false;
  await page.routeWebSocket(/\/api\/ws$/, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((m) => {
      if (!(framesHeld && typeof m === "string" && m.includes('"task.progress"'))) ws.send(m);
    });
  });
  try {
    await login(page, "root", "123456");
    await page.goto("/channel");
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    await page.locator('[data-testid^="channel-row-"]').first().waitFor();
    await page.click('[data-testid="test-all"]');
    await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
    await page.locator('[data-testid="test-all-status"]', { hasText: "正在测试" }).waitFor();
    // The newest channels are tested first: the run is now in the first slow test.
    await page.click('[data-nav="token"]');
    await page.waitForURL(/\/token$/);
    await page.waitForTimeout(1000);
    const state = (await api.call("GET", "/api/channel/test/progress")).json.data;
    assert.equal(state.running, true, "the run still goes");

    framesHeld = true;
    await page.click('[data-nav="channel"]');
    const status = page.locator('[data-testid="test-all-status"]', { hasText: "正在测试" });
    await status.waitFor();
    const now = (await api.call("GET", "/api/channel/test/progress")).json.data;
    const shown = Number((await status.textContent()).match(/(\d+)\D+(\d+)/)?.[1]);
    assert.ok(shown >= state.done && shown <= now.done, `the count so far: ${await status.textContent()} (done ${state.done} before, ${now.done} after)`);
    assert.match(await status.textContent(), new RegExp(`${shown}\\D+${state.total}`), "the count so far");
    assert.equal(await page.locator('[data-testid="test-all"]').isDisabled(), true, "no second run offered");
    framesHeld = false;
    await page.locator('[data-testid="test-all-status"]', { hasText: "测试完成" }).waitFor({ timeout: 30000 });
  } finally {
    await context.close();
    slow.closeAllConnections?.();
    slow.close();
  }
});

test("a test-all run that ends while the channel page's read of its progress is on its way is not shown as still going", async () => {
  // Tests that take 3 s each: the run is going when the page opens, and ends before the held read answers.
  const slow = await slowUpstream(3000);
  const api = await rootApi(suite.gw.baseURL);
  await createChannel(api, `http://127.0.0.1:${slow.address().port}`, ["gpt-4o-mini"], uniqueName("slowend"));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  try {
    await login(page, "root", "123456");
    await page.goto("/token");
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    // The page's read of the run is answered by the server at once (the run going), but reaches
    // the page only after the run's last frame did: the two travel on different connections.
    let held, delivered;
    const answered = new Promise((r) => (held = r));
    const fulfilled = new Promise((r) => (delivered = r));
    await page.route("**/api/channel/test/progress", async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      held(body);
      await page.locator('[data-testid="test-all-status"]', { hasText: "测试完成" }).waitFor({ timeout: 30000 }).catch(() => {});
      await route.fulfill({ response, json: body });
      delivered();
    });
    assert.equal((await api.call("GET", "/api/channel/test")).json.success, true);
    await page.click('[data-nav="channel"]');
    const read = await answered;
    assert.equal(read.data?.running, true, "the server answered while the run went");
    await fulfilled;
    await page.waitForTimeout(500);
    const text = await page.locator('[data-testid="test-all-status"]').textContent().catch(() => "");
    assert.doesNotMatch(text ?? "", /正在测试/, "the ended run is not shown as going");
    assert.equal(await page.locator('[data-testid="test-all"]').isDisabled(), false, "a new run may be started");
  } finally {
    await context.close();
    slow.closeAllConnections?.();
    slow.close();
  }
});

test("a test-all run's frame that reaches the channel page before the read of the run's figures does adds to them: the failures before the page opened are kept", async () => {
  const slow = await slowUpstream(3000);
  const failing = createServer(async (req, res) => {
    for await (const _ of req);
    res.writeHead(500, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ error: { message: "upstream down", type: "server_error" } }));
  });
  await new Promise((r) => failing.listen(0, "127.0.0.1", r));
  const api = await rootApi(suite.gw.baseURL);
  // The newest channel is tested first: the failing one, then the two slow ones.
  await createChannel(api, `http://127.0.0.1:${slow.address().port}`, ["gpt-4o-mini"], uniqueName("slowc"));
  await createChannel(api, `http://127.0.0.1:${slow.address().port}`, ["gpt-4o-mini"], uniqueName("slowb"));
  await createChannel(api, `http://127.0.0.1:${failing.address().port}`, ["gpt-4o-mini"], uniqueName("faila"));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  try {
    await login(page, "root", "123456");
    await page.goto("/token");
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    let held;
    const answered = new Promise((r) => (held = r));
    await page.route("**/api/channel/test/progress", async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      held(body);
      // The next channel's frame reaches the page first.
      const next = body.data ? `正在测试所有渠道：${body.data.done + 1}/` : "";
      await page.locator('[data-testid="test-all-status"]', { hasText: next }).waitFor({ timeout: 30000 }).catch(() => {});
      await route.fulfill({ response, json: body });
    });
    assert.equal((await api.call("GET", "/api/channel/test")).json.success, true);
    // The failing channel is done and the first slow one under way.
    const deadline = Date.now() + 10000;
    for (;;) {
      const st = (await api.call("GET", "/api/channel/test/progress")).json.data;
      if (st.failed >= 1) break;
      assert.ok(Date.now() < deadline, `the failing channel tested: ${JSON.stringify(st)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await page.click('[data-nav="channel"]');
    const read = (await answered).data;
    assert.equal(read.running, true, "the server answered while the run went");
    assert.ok(read.failed >= 1, `the server counted the failure: ${JSON.stringify(read)}`);
    await page.locator('[data-testid="test-all-status"]', { hasText: "测试完成" }).waitFor({ timeout: 30000 });
    const st = (await api.call("GET", "/api/channel/test/progress")).json.data;
    assert.equal(st.running, false);
    const text = await page.locator('[data-testid="test-all-status"]').textContent();
    assert.match(text, new RegExp(`失败 ${st.failed} 个`), `the page's count is the server's (${JSON.stringify(st)})`);
  } finally {
    await context.close();
    for (const s of [slow, failing]) {
      s.closeAllConnections?.();
      s.close();
    }
  }
});

test("the channel page calls a channel 渠道 throughout: its toolbar and the dialogs its bulk actions open", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1366, height: 768 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  const toolbar = page.locator('[data-testid="channel-toolbar"]');
  await toolbar.getByRole("button", { name: "添加渠道" }).waitFor();
  for (const name of ["测试所有渠道", "更新所有已启用渠道余额", "删除禁用渠道"]) {
    await toolbar.getByRole("button", { name, exact: true }).waitFor();
  }
  assert.doesNotMatch(await toolbar.innerText(), /通道/);
  for (const [button, title] of [
    ["test-all", "确定是否要测试所有渠道？"],
    ["update-all-balances", "确定是否要更新所有已启用渠道余额？"],
    ["delete-disabled", "确定是否要删除禁用渠道？"],
  ]) {
    await page.click(`[data-testid="${button}"]`);
    const dialog = page.getByRole("alertdialog").or(page.getByRole("dialog"));
    await dialog.getByText(title, { exact: true }).waitFor();
    assert.doesNotMatch(await dialog.innerText(), /通道/);
    await dialog.getByRole("button", { name: "取消" }).click();
    await dialog.waitFor({ state: "hidden" });
  }
  await context.close();
});

test("a channel's balance is called 余额 in its tooltip, as the button and toasts that update it say", async () => {
  const root = await rootApi(suite.gw.baseURL);
  const name = uniqueName("bal");
  await createChannel(root, upstream.url, ["gpt-4o-mini"], name);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1366, height: 768 } });
  await login(page, "root", "123456");
  await page.goto(`/channel`);
  await page.fill('[data-testid="channel-search"] input >> nth=0', name);
  await page.keyboard.press("Enter");
  const row = page.locator("tr", { hasText: name });
  await row.locator('[data-testid="channel-balance"]').hover();
  const tip = page.getByRole("tooltip");
  await tip.first().waitFor();
  const text = await tip.first().innerText();
  assert.match(text, /^余额，点击更新/);
  assert.doesNotMatch(text, /额度/);
  await context.close();
});

test("each type's channel reads back as typed in the drawer, and an edit of its name leaves every other field as stored", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  const drawer = page.locator('[data-testid="channel-drawer"]');
  // One type of each kind of form: OpenAI (organization), Azure and Spark (version), Vertex (JSON region and key), custom, Cloudflare.
  const types = [
    { type: 1, option: "OpenAI", key: "sk-roundtrip-1" },
    { type: 3, option: "Azure OpenAI", key: "azure-roundtrip-3", other: "2024-02-01" },
    { type: 18, option: "讯飞星火认知", key: "app|secret|apikey", other: "v3.5" },
    { type: 41, option: "Vertex AI", key: '{"type":"service_account","project_id":"p-41"}', other: '{"default":"us-east1"}' },
    { type: 8, option: "自定义渠道", key: "sk-roundtrip-8" },
    { type: 39, option: "Cloudflare", key: "cf-roundtrip-39", other: "cf-account-39" },
  ];
  for (const { type, option, key, other } of types) {
    const name = uniqueName(`rt${type}-`);
    // Compact JSON as an operator or a script may write it: an edit of another field keeps it byte for byte.
    const mapping = `{"m-${type}":"up-${type}","gpt-4":"gpt-4-0613"}`;
    const statusMapping = `{"429":"500","400":"503"}`;
    await page.goto("/channel/add");
    await drawer.waitFor();
    await page.click('[data-testid="channel-type-select"]');
    await page.getByRole("option", { name: option, exact: true }).click();
    await page.fill('[data-testid="channel-name-input"]', name);
    await page.fill('[data-testid="channel-key"]', key);
    await page.fill("#ch-base", `${upstream.url}/b${type}`);
    if (other !== undefined) await page.fill("#ch-other", other);
    if (type === 1) await page.fill("#ch-org", "org-roundtrip");
    await page.click('[data-testid="clear-models"]');
    await page.fill('[data-testid="custom-model-input"]', `m-${type}, m2-${type}`);
    await page.click('[data-testid="custom-model-add"]');
    await page.click('[data-testid="channel-groups-open"]');
    await page.fill('[data-testid="channel-groups-search"]', "vip");
    await page.keyboard.press("Enter");
    await drawer.locator('[data-testid="channel-groups"] [data-value="vip"]').waitFor();
    await page.keyboard.press("Escape");
    await page.locator('[data-testid="channel-groups-search"]').waitFor({ state: "detached" });
    await page.fill("#ch-mapping", mapping);
    await page.fill("#ch-status-mapping", statusMapping);
    await page.fill("#ch-test-model", `m2-${type}`);
    await page.click('[data-testid="channel-auto-ban"]');
    await page.fill("#ch-priority", "7");
    await page.fill("#ch-weight", "3");
    await page.click('[data-testid="channel-submit"]');
    await drawer.waitFor({ state: "detached" });

    const { id } = await channelByName(api, name);
    const stored = (await api.call("GET", `/api/channel/${id}`)).json.data;
    const typed = {
      type,
      name,
      base_url: `${upstream.url}/b${type}`,
      other: other ?? "",
      openai_organization: type === 1 ? "org-roundtrip" : "",
      models: `m-${type},m2-${type}`,
      group: "default,vip",
      model_mapping: mapping,
      status_code_mapping: statusMapping,
      test_model: `m2-${type}`,
      auto_ban: 0,
      priority: 7,
      weight: 3,
    };
    for (const [field, value] of Object.entries(typed)) assert.equal(stored[field], value, `type ${type}: ${field} as typed`);

    // Reopened, the drawer shows what was saved; only the name changes.
    await page.goto(`/channel/edit/${id}`);
    const nameInput = page.locator('[data-testid="channel-name-input"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="channel-name-input"]')?.value !== "");
    assert.equal(await page.inputValue("#ch-base"), typed.base_url, `type ${type}: base URL shown`);
    if (other !== undefined) assert.equal(await page.inputValue("#ch-other"), other, `type ${type}: other shown`);
    assert.deepEqual(JSON.parse(await page.inputValue("#ch-mapping")), JSON.parse(mapping), `type ${type}: mapping shown`);
    assert.equal(await page.inputValue("#ch-test-model"), typed.test_model, `type ${type}: test model shown`);
    assert.equal(await page.inputValue("#ch-priority"), "7", `type ${type}: priority shown`);
    assert.equal(await page.inputValue("#ch-weight"), "3", `type ${type}: weight shown`);
    await nameInput.fill(`${name}e`);
    await page.click('[data-testid="channel-submit"]');
    await drawer.waitFor({ state: "detached" });
    const edited = (await api.call("GET", `/api/channel/${id}`)).json.data;
    for (const field of Object.keys(stored)) {
      if (field !== "name") assert.deepEqual(edited[field], stored[field], `type ${type}: ${field} kept by an edit of the name`);
    }
    assert.equal(edited.name, `${name}e`);
  }
  await context.close();
});
