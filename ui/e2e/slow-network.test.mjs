// The console on a slow network: an answer that arrives after the user moved on
// (closed the drawer, opened another record) must not change what is shown now.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel, startFakeUpstream } from "./fake-upstream.mjs";
import { ApiSession, expectToast, gatewaySuite, login, loginToPersonalSettings, newPage, newUser, putOption, registerUser, rootApi, uniqueName } from "./harness.mjs";

const FAKE_MODELS = ["gpt-4o-mini", "slow-upstream-only"];

let upstream;

const suite = gatewaySuite({
  setup: async () => {
    upstream = await startFakeUpstream({ models: FAKE_MODELS });
  },
  teardown: () => upstream?.close(),
});

async function createNamed(api, name) {
  await createChannel(api, upstream.url, ["gpt-4o-mini"], name);
  return name;
}

async function channelByName(api, name) {
  const r = await api.call("GET", `/api/channel/search?keyword=${encodeURIComponent(name)}`);
  return (r.json?.data ?? []).find((c) => c.name === name);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** holdRoute delays the answers to requests matching url (and method) until release() is called. */
async function holdRoute(page, url, method) {
  let release;
  const gate = new Promise((r) => (release = r));
  const held = [];
  await page.route(url, async (route) => {
    if (method && route.request().method() !== method) return route.fallback();
    held.push(route.request());
    await gate;
    await route.fallback();
  });
  return { release: () => release(), held };
}

/** withWeChatLogin runs run with WeChat login switched on (its server never asked: the tests answer its routes), and off again after. */
async function withWeChatLogin(run) {
  const root = await rootApi(suite.gw.baseURL);
  for (const [key, value] of [
    ["WeChatServerAddress", "http://127.0.0.1:59999"],
    ["WeChatServerToken", "e2e-wechat-token"],
    ["WeChatAuthEnabled", "true"],
  ]) {
    await putOption(root, key, value);
  }
  try {
    await run();
  } finally {
    await putOption(root, "WeChatAuthEnabled", "false");
  }
}

test("a model list fetched for one channel is not added to another channel opened meanwhile", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const a = await channelByName(api, await createNamed(api, uniqueName("cha")));
  const b = await channelByName(api, await createNamed(api, uniqueName("chb")));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  const drawer = page.locator('[data-testid="channel-drawer"]');
  const hold = await holdRoute(page, "**/api/channel/fetch_models", "POST");

  // Channel A: ask its upstream for models, then give up and close the drawer.
  await page.locator(`[data-testid="channel-row-${a.id}"] [data-testid="edit-channel"]`).click();
  await drawer.locator('[data-testid="channel-models"] [data-value="gpt-4o-mini"]').waitFor();
  await page.click('[data-testid="fetch-models"]');
  while (hold.held.length === 0) await sleep(50);
  await drawer.getByRole("button", { name: "取消" }).click();
  await drawer.waitFor({ state: "detached" });

  // Channel B is open when A's answer arrives.
  await page.locator(`[data-testid="channel-row-${b.id}"] [data-testid="edit-channel"]`).click();
  await drawer.locator('[data-testid="channel-models"] [data-value="gpt-4o-mini"]').waitFor();
  await page.unroute("**/api/channel/fetch_models");
  hold.release();
  await sleep(1500);
  const chosen = await drawer.locator('[data-testid="channel-models"] .multi-select-chip').evaluateAll((els) => els.map((e) => e.getAttribute("data-value")));
  assert.deepEqual(chosen, ["gpt-4o-mini"], "channel B's models stay as B has them");
  assert.equal(await page.locator(".toast", { hasText: "获取模型列表成功" }).count(), 0, "no success toast for a fetch of a closed drawer");
  await context.close();
});

test("a token save answered after its drawer was closed does not close the drawer opened since", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const r = await api.call("POST", "/api/token/", { name: "slow-save", remain_quota: 500000, expired_time: -1, unlimited_quota: false });
  assert.equal(r.json?.success, true, JSON.stringify(r.json));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/token");
  const drawer = page.locator('[data-testid="token-drawer"]');
  const row = page.locator("tr", { hasText: "slow-save" });
  await row.waitFor();
  const hold = await holdRoute(page, "**/api/token/", "PUT");

  await row.locator('[data-testid="edit-token"]').click();
  await drawer.locator('[data-testid="token-name-input"]').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid="token-name-input"]')?.value === "slow-save");
  await page.fill('[data-testid="token-name-input"]', "slow-save-2");
  await page.click('[data-testid="token-submit"]');
  while (hold.held.length === 0) await sleep(50);
  // The user gives up waiting and starts a new token instead.
  await drawer.getByRole("button", { name: "取消" }).click();
  await drawer.waitFor({ state: "detached" });
  await page.click('[data-testid="add-token"]');
  await drawer.locator('[data-testid="token-name-input"]').waitFor();
  await page.fill('[data-testid="token-name-input"]', "typed-while-waiting");

  await page.unroute("**/api/token/");
  hold.release();
  await expectToast(page, "令牌更新成功");
  await sleep(500);
  assert.equal(await drawer.count(), 1, "the new token's drawer is still open");
  assert.equal(await page.inputValue('[data-testid="token-name-input"]'), "typed-while-waiting");
  await context.close();
});

test("a channel search answered late does not replace the result of the search made after it", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const old = await createNamed(api, uniqueName("olds"));
  const fresh = await createNamed(api, uniqueName("news"));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  await page.locator('[data-testid="channel-name"]').first().waitFor();
  const hold = await holdRoute(page, (u) => u.pathname === "/api/channel/search" && u.searchParams.get("keyword") === old);

  // The first search is slow; the user then searches another name, in a group.
  await page.fill('[data-testid="channel-search-keyword"]', old);
  await page.keyboard.press("Enter");
  while (hold.held.length === 0) await sleep(50);
  await page.fill('[data-testid="channel-search-keyword"]', fresh);
  await page.getByRole("combobox", { name: "分组" }).click();
  await page.getByRole("option", { name: "default", exact: true }).click();
  const names = page.locator('[data-testid="channel-name"]');
  await names.filter({ hasText: fresh }).waitFor();

  hold.release();
  await sleep(1500);
  assert.deepEqual(await names.allTextContents(), [fresh], "the newer search's result stays");
  await context.close();
});

test("a user search answered late does not replace the result of the search made after it", async () => {
  const old = (await registerUser(suite.gw.baseURL, "olds", "password123")).username;
  const fresh = (await registerUser(suite.gw.baseURL, "news", "password123")).username;
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/user");
  await page.locator('[data-testid="user-username"]').first().waitFor();
  const hold = await holdRoute(page, (u) => u.pathname === "/api/user/search" && u.searchParams.get("keyword") === old);

  await page.fill('[data-testid="user-search"]', old);
  await page.keyboard.press("Enter");
  while (hold.held.length === 0) await sleep(50);
  await page.fill('[data-testid="user-search"]', fresh);
  await page.keyboard.press("Enter");
  const names = page.locator('[data-testid="user-username"]');
  await names.filter({ hasText: fresh }).waitFor();

  hold.release();
  await sleep(1500);
  assert.deepEqual(await names.allTextContents(), [fresh], "the newer search's result stays");
  await context.close();
});

test("copying a channel on a slow network is not offered again until the copy answered", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const name = await createNamed(api, uniqueName("cpy"));
  const ch = await channelByName(api, name);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  const row = page.locator(`[data-testid="channel-row-${ch.id}"]`);
  await row.waitFor();
  const hold = await holdRoute(page, `**/api/channel/copy/${ch.id}`, "POST");

  // Nothing seems to happen: the user picks "copy" once more.
  await row.locator('[data-testid="channel-menu"]').click();
  await page.locator('[data-testid="copy-channel"]').click();
  while (hold.held.length === 0) await sleep(50);
  // The menu closes (its exit animation ends) before the user opens it again.
  await page.getByRole("menu").waitFor({ state: "detached" });
  await row.locator('[data-testid="channel-menu"]').click();
  const again = page.locator('[data-testid="copy-channel"]');
  await again.waitFor();
  await again.click({ timeout: 2000 }).catch(() => {});
  await page.keyboard.press("Escape");
  await sleep(500);
  hold.release();
  await expectToast(page, "渠道复制成功");
  await sleep(1000);
  const copies = ((await api.call("GET", `/api/channel/search?keyword=${encodeURIComponent(name)}`)).json?.data ?? []).filter((c) => c.name !== name);
  assert.equal(hold.held.length, 1, "one copy request");
  assert.equal(copies.length, 1, "one copy stored");
  await context.close();
});

test("a channel save answered after its drawer was closed does not close the drawer opened since", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const a = await channelByName(api, await createNamed(api, uniqueName("sva")));
  const b = await channelByName(api, await createNamed(api, uniqueName("svb")));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/channel");
  const drawer = page.locator('[data-testid="channel-drawer"]');
  const hold = await holdRoute(page, "**/api/channel/", "PUT");

  await page.locator(`[data-testid="channel-row-${a.id}"] [data-testid="edit-channel"]`).click();
  await page.waitForFunction((name) => document.querySelector('[data-testid="channel-name-input"]')?.value === name, a.name);
  await page.click('[data-testid="channel-submit"]');
  while (hold.held.length === 0) await sleep(50);
  await drawer.getByRole("button", { name: "取消" }).click();
  await drawer.waitFor({ state: "detached" });
  await page.locator(`[data-testid="channel-row-${b.id}"] [data-testid="edit-channel"]`).click();
  await page.waitForFunction((name) => document.querySelector('[data-testid="channel-name-input"]')?.value === name, b.name);
  await page.fill('[data-testid="channel-name-input"]', "typed-while-waiting");

  await page.unroute("**/api/channel/");
  hold.release();
  await expectToast(page, "渠道更新成功");
  await sleep(800);
  assert.equal(await drawer.count(), 1, "channel B's drawer is still open");
  assert.equal(await page.inputValue('[data-testid="channel-name-input"]'), "typed-while-waiting");
  assert.ok(page.url().endsWith(`/channel/edit/${b.id}`), page.url());
  await context.close();
});

test("a user save answered after its drawer was closed does not close the drawer opened since", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const ua = (await registerUser(suite.gw.baseURL, "sva", "password123")).username;
  const ub = (await registerUser(suite.gw.baseURL, "svb", "password123")).username;
  const idOf = async (name) => (await api.call("GET", `/api/user/search?keyword=${name}&group=`)).json.data.find((u) => u.username === name).id;
  const [ida, idb] = [await idOf(ua), await idOf(ub)];
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/user");
  await page.locator(`[data-testid="user-row-${ida}"]`).waitFor();
  const drawer = page.locator('[data-testid="user-edit-drawer"]');
  const hold = await holdRoute(page, "**/api/user/", "PUT");

  await page.locator(`[data-testid="user-row-${ida}"] [data-testid="user-edit"]`).click();
  await page.waitForFunction((name) => document.querySelector("#edit-user-username")?.value === name, ua);
  await page.click('[data-testid="user-edit-submit"]');
  while (hold.held.length === 0) await sleep(50);
  await drawer.getByRole("button", { name: "取消" }).click();
  await drawer.waitFor({ state: "detached" });
  await page.locator(`[data-testid="user-row-${idb}"] [data-testid="user-edit"]`).click();
  await page.waitForFunction((name) => document.querySelector("#edit-user-username")?.value === name, ub);
  await page.fill("#edit-user-display", "typed-while-waiting");

  await page.unroute("**/api/user/");
  hold.release();
  await expectToast(page, "用户信息更新成功！");
  await sleep(800);
  assert.equal(await drawer.count(), 1, "user B's drawer is still open");
  assert.equal(await page.inputValue("#edit-user-display"), "typed-while-waiting");
  await context.close();
});

test("a profile save answered after its dialog was closed does not close the e-mail dialog opened since", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "prof", "password123");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await loginToPersonalSettings(page, username, password);
  const hold = await holdRoute(page, "**/api/user/self", "PUT");

  await page.click('[data-testid="edit-profile"]');
  await page.locator('[data-testid="save-profile"]').click();
  while (hold.held.length === 0) await sleep(50);
  // The user gives up on the profile and binds an e-mail address instead.
  await page.keyboard.press("Escape");
  await page.locator('[data-testid="save-profile"]').waitFor({ state: "detached" });
  await page.click('[data-testid="bind-email"]');
  await page.fill("#bind-email", "typed@example.com");

  await page.unroute("**/api/user/self");
  hold.release();
  await sleep(1500);
  assert.equal(await page.locator("#bind-email").count(), 1, "the e-mail dialog is still open");
  assert.equal(await page.inputValue("#bind-email"), "typed@example.com");
  await context.close();
});

test("a double click on a token's or a channel's disable button sends one request", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const tokenName = uniqueName("dbl");
  assert.equal((await api.call("POST", "/api/token/", { name: tokenName, remain_quota: 500000, expired_time: -1, unlimited_quota: false })).json?.success, true);
  const ch = await channelByName(api, await createNamed(api, uniqueName("dbl")));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");

  await page.goto("/token");
  const row = page.locator("tr", { hasText: tokenName });
  await row.waitFor();
  let hold = await holdRoute(page, "**/api/token/?status_only=true", "PUT");
  await row.locator('[data-testid="disable-token"]').dblclick();
  await sleep(500);
  hold.release();
  await row.locator('[data-testid="enable-token"]').waitFor();
  await sleep(500);
  assert.equal(hold.held.length, 1, "one token status change sent");
  await page.unrouteAll();

  await page.goto("/channel");
  const chRow = page.locator(`[data-testid="channel-row-${ch.id}"]`);
  await chRow.waitFor();
  hold = await holdRoute(page, "**/api/channel/", "PUT");
  await chRow.locator('[data-testid="disable-channel"]').dblclick();
  await sleep(500);
  hold.release();
  await chRow.locator('[data-testid="enable-channel"]').waitFor();
  await sleep(500);
  assert.equal(hold.held.length, 1, "one channel status change sent");
  await context.close();
});

/**
 * deleteDismissedThenAnother confirms a delete (openA opens its confirmation, confirm names the
 * confirming button), holds its request (url, method), dismisses the confirmation while it is on
 * its way, opens another's (openB), and then lets the first delete answer.
 */
async function deleteDismissedThenAnother(page, url, method, confirm, openA, openB) {
  const dialog = page.getByRole("alertdialog");
  const hold = await holdRoute(page, url, method);
  await openA();
  await dialog.getByRole("button", { name: confirm }).click();
  for (let i = 0; i < 200 && hold.held.length === 0; i++) await sleep(50);
  assert.equal(hold.held.length, 1, "the delete was sent");
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "detached" });
  await openB();
  await dialog.waitFor();
  // Only the dismissed confirmation's action is on its way: the one opened since is ready.
  assert.equal(await dialog.getByRole("button", { name: confirm }).isEnabled(), true, "the second confirmation is not shown busy");
  await page.unrouteAll();
  hold.release();
}

test("a delete answered after its confirmation was dismissed does not close the confirmation of another row", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const [ta, tb] = [uniqueName("dla"), uniqueName("dlb")];
  for (const name of [ta, tb]) assert.equal((await api.call("POST", "/api/token/", { name, remain_quota: 500000, expired_time: -1, unlimited_quota: false })).json?.success, true);
  const ca = await channelByName(api, await createNamed(api, uniqueName("dla")));
  const cb = await channelByName(api, await createNamed(api, uniqueName("dlb")));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  const dialog = page.getByRole("alertdialog");

  // Tokens.
  await page.goto("/token");
  await page.locator("tr", { hasText: ta }).waitFor();
  const tokenDelete = (name) => page.locator("tr", { hasText: name }).locator('[data-testid="delete-token"]').click();
  await deleteDismissedThenAnother(page, "**/api/token/*/", "DELETE", "确定", () => tokenDelete(ta), () => tokenDelete(tb));
  await page.locator("tr", { hasText: ta }).waitFor({ state: "detached" });
  await sleep(800);
  assert.equal(await dialog.count(), 1, "the confirmation of token B is still open (B was not deleted)");
  await page.keyboard.press("Escape");

  // Channels.
  await page.goto("/channel");
  await page.locator(`[data-testid="channel-row-${ca.id}"]`).waitFor();
  const channelDelete = async (id) => {
    await page.locator(`[data-testid="channel-row-${id}"] [data-testid="channel-menu"]`).click();
    await page.locator('[data-testid="delete-channel"]').click();
  };
  await deleteDismissedThenAnother(page, `**/api/channel/${ca.id}/`, "DELETE", "确定", () => channelDelete(ca.id), () => channelDelete(cb.id));
  await page.locator(`[data-testid="channel-row-${ca.id}"]`).waitFor({ state: "detached" });
  await sleep(800);
  assert.equal(await dialog.count(), 1, "the confirmation of channel B is still open (B was not deleted)");
  await page.keyboard.press("Escape");

  // Users.
  const [ua, ub] = [uniqueName("dla"), uniqueName("dlb")];
  for (const username of [ua, ub]) assert.equal((await api.call("POST", "/api/user/", { username, password: "12345678", display_name: "" })).json?.success, true);
  await page.goto("/user");
  await page.locator("tr", { hasText: ub }).waitFor();
  const userDelete = (name) => page.locator("tr", { hasText: name }).locator('[data-testid="user-delete"]').click();
  await deleteDismissedThenAnother(page, "**/api/user/manage", "POST", "注销", () => userDelete(ua), () => userDelete(ub));
  await expectToast(page, "操作成功");
  await sleep(800);
  assert.equal(await dialog.count(), 1, "the confirmation of user B is still open (B was not deleted)");
  await context.close();
});

test("the data dashboard says it is loading, not that there is no data, while its first read is in flight", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "dash", "password123");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  const hold = await holdRoute(page, "**/api/data/self?*", "GET");
  await page.goto("/detail");
  for (let i = 0; i < 200 && hold.held.length === 0; i++) await sleep(50);
  assert.equal(hold.held.length, 1, "the dashboard read was sent");
  await page.locator('[data-testid="detail-page"]').waitFor();
  await sleep(300);
  assert.equal(await page.getByText("所选时间范围内没有数据").count(), 0, "no 'no data' while the read is in flight");
  hold.release();
  await page.getByText("所选时间范围内没有数据").first().waitFor();
  await context.close();
});

test("a double click on a mail button (send code, reset mail) sends one request while the first is in flight", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "mail", "password123");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });

  // The reset page's submit button.
  await page.goto("/reset");
  await page.fill("#reset-email", "someone@example.com");
  let hold = await holdRoute(page, "**/api/reset_password?*", "GET");
  await page.getByRole("button", { name: "提交" }).dblclick();
  await sleep(500);
  hold.release();
  await sleep(800);
  assert.equal(hold.held.length, 1, "one reset mail asked for");
  await page.unrouteAll();

  // The e-mail binding's send-code button.
  await loginToPersonalSettings(page, username, password);
  await page.click('[data-testid="bind-email"]');
  await page.fill("#bind-email", "someone@example.com");
  hold = await holdRoute(page, "**/api/verification?*", "GET");
  await page.locator('[data-testid="send-code"]').dblclick();
  await sleep(500);
  hold.release();
  await sleep(800);
  assert.equal(hold.held.length, 1, "one code asked for");
  await context.close();
});

test("a double click on a user row's action (promote) sends one request while the first is in flight", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const { username } = await registerUser(suite.gw.baseURL, "prom", "password123");
  const id = (await api.call("GET", `/api/user/search?keyword=${username}&group=`)).json.data.find((u) => u.username === username).id;
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/user");
  const row = page.locator(`[data-testid="user-row-${id}"]`);
  await row.waitFor();
  const hold = await holdRoute(page, "**/api/user/manage", "POST");
  await row.locator('[data-testid="user-promote"]').dblclick();
  await sleep(500);
  hold.release();
  await row.locator('[data-testid="user-role"]', { hasText: "管理员" }).waitFor();
  await sleep(800);
  assert.equal(hold.held.length, 1, "one promotion sent");
  await context.close();
});

test("a double click on a redemption code's disable button sends one request", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const name = uniqueName("rs");
  const r = await api.call("POST", "/api/redemption/", { name, quota: 100000, count: 1 });
  assert.equal(r.json?.success, true, JSON.stringify(r.json));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/redemption");
  const row = page.locator("tr", { hasText: name });
  await row.waitFor();
  const hold = await holdRoute(page, "**/api/redemption/?status_only=true", "PUT");
  await row.locator('[data-testid="redemption-disable"]').dblclick();
  await sleep(500);
  hold.release();
  await row.locator('[data-testid="redemption-enable"]').waitFor();
  await sleep(800);
  assert.equal(hold.held.length, 1, "one status change sent");
  await context.close();
});

/** clearingDismissed confirms a log clearing as root, holds its request and dismisses the confirmation while it is on its way. */
async function clearingDismissed() {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/setting?tab=operation");
  await page.locator("#log-clear-date").fill("2000-01-01T00:00");
  const clearing = await holdRoute(page, "**/api/log/?*", "DELETE");
  await page.click('[data-testid="clear-logs"]');
  const dialog = page.getByRole("alertdialog");
  await dialog.locator("button").filter({ hasNotText: "取消" }).click();
  while (clearing.held.length === 0) await sleep(50);
  await dialog.getByRole("button", { name: "取消" }).click();
  await dialog.waitFor({ state: "detached" });
  return { context, page, dialog, clearing };
}

test("a log clearing answered after its confirmation was dismissed does not close the ratio reset confirmation opened since", async () => {
  const { context, page, dialog, clearing: hold } = await clearingDismissed();
  // Nothing seems to happen on a slow link: the administrator gave up and opens the ratio reset instead.
  await page.click('[data-testid="reset-model-ratio"]');
  await dialog.waitFor();
  const reset = dialog.getByRole("button", { name: "重置模型倍率" });
  assert.equal(await reset.isEnabled(), true, "the ratio reset is not shown busy with the clearing");
  hold.release();
  await expectToast(page, /日志/);
  await sleep(500);
  assert.equal(await dialog.count(), 1, "the ratio reset confirmation is still open");
  assert.equal(await reset.isEnabled(), true);
  await context.close();
});

test("an invite transfer that succeeded closes its dialog and says so even when the refresh of the user after it fails", async () => {
  const root = await rootApi(suite.gw.baseURL);
  await putOption(root, "QuotaForInviter", "1000000");
  try {
    const inviter = await newUser(suite.gw.baseURL, "afs", "aff-pass-11");
    const code = (await inviter.api.call("GET", "/api/user/aff")).json.data;
    const r = await new ApiSession(suite.gw.baseURL).call("POST", "/api/user/register?turnstile=", { username: uniqueName("afsd"), password: "affd-pass-11", password2: "affd-pass-11", aff_code: code });
    assert.equal(r.json?.success, true, JSON.stringify(r.json));
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
    await loginToPersonalSettings(page, inviter.username, inviter.password);
    await page.getByRole("button", { name: "划转到余额" }).click();
    await page.fill("#transfer-amount", "600000");
    // The transfer is answered; the read of the user after it fails.
    await page.route("**/api/user/self", (route) => (route.request().method() === "GET" ? route.fulfill({ status: 500, body: "down" }) : route.fallback()));
    await page.getByRole("dialog").getByRole("button", { name: "确定" }).click();
    await expectToast(page, "划转成功");
    await page.locator("#transfer-amount").waitFor({ state: "detached", timeout: 3000 });
    assert.equal(await page.locator(".toast-error").count(), 0, "the failed refresh does not read as a failed transfer");
    assert.equal((await inviter.api.call("GET", "/api/user/self")).json.data.aff_quota, 400000);
    await context.close();
  } finally {
    await putOption(root, "QuotaForInviter", "0");
  }
});

test("an e-mail binding that succeeded closes its dialog even when the refresh of the user after it fails", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "ebs", "password123");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await loginToPersonalSettings(page, username, password);
  let binds = 0;
  await page.route("**/api/oauth/email/bind?*", (route) => {
    binds++;
    // The code is used up by the first binding: a second one is refused.
    return route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(binds === 1 ? { success: true, message: "" } : { success: false, message: "验证码错误或已过期" }) });
  });
  await page.route("**/api/user/self", (route) => (route.request().method() === "GET" ? route.abort() : route.fallback()));
  await page.click('[data-testid="bind-email"]');
  await page.fill("#bind-email", "bound@example.com");
  await page.fill("#bind-code", "123456");
  await page.click('[data-testid="confirm-bind-email"]');
  await expectToast(page, "邮箱账户绑定成功");
  await page.locator("#bind-email").waitFor({ state: "detached", timeout: 3000 });
  assert.equal(await page.locator(".toast-error").count(), 0, "the failed refresh does not read as a failed binding");
  assert.equal(binds, 1);
  await context.close();
});

test("a profile save that succeeded closes its dialog even when the refresh of the user after it fails", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "pfs", "password123");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await loginToPersonalSettings(page, username, password);
  await page.route("**/api/user/self", (route) => (route.request().method() === "GET" ? route.abort() : route.fallback()));
  await page.click('[data-testid="edit-profile"]');
  await page.fill("#profile-display-name", "Saved Name");
  await page.click('[data-testid="save-profile"]');
  await expectToast(page, "用户信息更新成功！");
  await page.locator('[data-testid="save-profile"]').waitFor({ state: "detached", timeout: 3000 });
  assert.equal(await page.locator(".toast-error").count(), 0, "the failed refresh does not read as a failed save");
  await context.close();
});

test("the WeChat binding code is sent once while the first binding is in flight (button or Enter)", async () => {
  await withWeChatLogin(async () => {
    const { username, password } = await newUser(suite.gw.baseURL, "wxb", "password123");
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
    await loginToPersonalSettings(page, username, password);
    let release;
    const gate = new Promise((r) => (release = r));
    const held = [];
    await page.route("**/api/oauth/wechat/bind?*", async (route) => {
      held.push(route.request());
      await gate;
      await route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ success: false, message: "验证码错误或已过期" }) }).catch(() => {});
    });
    await page.click('[data-testid="bind-wechat"]');
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("textbox").fill("246810");
    await dialog.getByRole("button", { name: "绑定" }).click();
    while (held.length === 0) await sleep(50);
    await dialog.getByRole("textbox").press("Enter");
    await dialog.getByRole("button", { name: "绑定" }).click({ force: true, timeout: 2000 }).catch(() => {});
    await sleep(500);
    assert.equal(held.length, 1, "one binding request while the first is in flight");
    release();
    await expectToast(page, "验证码错误或已过期");
    await page.unrouteAll();
    await context.close();
  });
});

test("the data dashboard's totals say they are loading, not $0.00, while the first read is in flight", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "dtot", "password123");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, password);
  const hold = await holdRoute(page, "**/api/data/self?*", "GET");
  await page.goto("/detail");
  for (let i = 0; i < 200 && hold.held.length === 0; i++) await sleep(50);
  assert.equal(hold.held.length, 1, "the dashboard read was sent");
  const quota = page.locator('[data-testid="detail-total-quota"]');
  await quota.waitFor();
  await sleep(300);
  for (const id of ["detail-total-quota", "detail-total-count", "detail-total-tokens"]) {
    const text = (await page.locator(`[data-testid="${id}"]`).textContent()) ?? "";
    assert.doesNotMatch(text, /\d/, `${id} shows no figure while the read is in flight: ${text}`);
  }
  hold.release();
  await page.locator('[data-testid="detail-total-count"]', { hasText: /^0$/ }).waitFor();
  await context.close();
});

test("a WeChat binding that succeeded closes its dialog even when the refresh of the user after it fails", async () => {
  await withWeChatLogin(async () => {
    const { username, password } = await newUser(suite.gw.baseURL, "wxr", "password123");
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
    await loginToPersonalSettings(page, username, password);
    let binds = 0;
    await page.route("**/api/oauth/wechat/bind?*", (route) => {
      binds++;
      // The code is used up by the first binding: a second one is refused.
      return route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(binds === 1 ? { success: true, message: "" } : { success: false, message: "验证码错误或已过期" }) });
    });
    await page.route("**/api/user/self", (route) => (route.request().method() === "GET" ? route.fulfill({ status: 500, body: "down" }) : route.fallback()));
    await page.click('[data-testid="bind-wechat"]');
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("textbox").fill("246810");
    await dialog.getByRole("button", { name: "绑定" }).click();
    await expectToast(page, "微信账户绑定成功");
    await dialog.waitFor({ state: "detached", timeout: 3000 });
    assert.equal(await page.locator(".toast-error").count(), 0, "the failed refresh does not read as a failed binding");
    assert.equal(binds, 1);
    await context.close();
  });
});

test("a redemption code's delete answered after its confirmation was dismissed does not close the confirmation of another code", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const [na, nb] = [uniqueName("rda"), uniqueName("rdb")];
  for (const name of [na, nb]) assert.equal((await api.call("POST", "/api/redemption/", { name, quota: 100000, count: 1 })).json?.success, true);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  const dialog = page.getByRole("alertdialog");
  await page.goto("/redemption");
  await page.locator("tr", { hasText: nb }).waitFor();
  const codeDelete = (name) => page.locator("tr", { hasText: name }).locator('[data-testid="redemption-delete"]').click();
  await deleteDismissedThenAnother(page, "**/api/redemption/*/", "DELETE", "删除", () => codeDelete(na), () => codeDelete(nb));
  await page.locator("tr", { hasText: na }).waitFor({ state: "detached" });
  await sleep(800);
  assert.equal(await dialog.count(), 1, "the confirmation of code B is still open (B was not deleted)");
  await context.close();
});

test("a redemption code's save answered after its drawer was closed does not close the drawer opened since", async () => {
  const { context, page, na, row, drawer } = await openCodesWithOne("rsa");
  const hold = await holdRoute(page, "**/api/redemption/", "PUT");
  await row.locator('[data-testid="redemption-edit"]').click();
  await page.waitForFunction((name) => document.querySelector("#redemption-name")?.value === name, na);
  await page.click('[data-testid="redemption-submit"]');
  for (let i = 0; i < 200 && hold.held.length === 0; i++) await sleep(50);
  assert.equal(hold.held.length, 1, "the save was sent");
  await drawer.getByRole("button", { name: "取消" }).click();
  await drawer.waitFor({ state: "detached" });
  await page.click('[data-testid="redemption-add"]');
  await page.locator("#redemption-name").waitFor();
  await page.fill("#redemption-name", "typed-wait");

  await page.unrouteAll();
  hold.release();
  await expectToast(page, "兑换码更新成功");
  await sleep(800);
  assert.equal(await drawer.count(), 1, "the new code's drawer is still open");
  assert.equal(await page.inputValue("#redemption-name"), "typed-wait");
  await context.close();
});

test("a redemption code's creation answered after its drawer was closed does not replace the drawer opened since with the download offer", async () => {
  const { context, page, na, row, drawer } = await openCodesWithOne("rsc");
  const hold = await holdRoute(page, "**/api/redemption/", "POST");
  await page.click('[data-testid="redemption-add"]');
  await page.fill("#redemption-name", uniqueName("rsn"));
  await page.click('[data-testid="redemption-submit"]');
  for (let i = 0; i < 200 && hold.held.length === 0; i++) await sleep(50);
  assert.equal(hold.held.length, 1, "the creation was sent");
  await drawer.getByRole("button", { name: "取消" }).click();
  await drawer.waitFor({ state: "detached" });
  // Nothing seems to happen on a slow link: the administrator edits another code meanwhile.
  await row.locator('[data-testid="redemption-edit"]').click();
  await page.waitForFunction((name) => document.querySelector("#redemption-name")?.value === name, na);
  await page.fill("#redemption-name", "typed-wait");

  await page.unrouteAll();
  hold.release();
  await expectToast(page, "兑换码创建成功");
  await sleep(800);
  assert.equal(await page.locator('[data-testid="redemption-download-dialog"]').count(), 0, "the download offer replaced the edit drawer");
  assert.equal(await drawer.count(), 1, "the edit drawer is still open");
  assert.equal(await page.inputValue("#redemption-name"), "typed-wait");
  await context.close();
});

test("a new user's save answered after its drawer was closed does not close the drawer opened since", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const ub = (await registerUser(suite.gw.baseURL, "nub", "password123")).username;
  const idb = (await api.call("GET", `/api/user/search?keyword=${ub}&group=`)).json.data.find((u) => u.username === ub).id;
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/user");
  await page.locator(`[data-testid="user-row-${idb}"]`).waitFor();
  const hold = await holdRoute(page, "**/api/user/", "POST");
  await page.getByRole("button", { name: "添加用户" }).click();
  const add = page.locator('[data-testid="user-add-drawer"]');
  await page.fill("#add-user-username", uniqueName("nua"));
  await page.fill("#add-user-password", "password123");
  await page.click('[data-testid="user-add-submit"]');
  for (let i = 0; i < 200 && hold.held.length === 0; i++) await sleep(50);
  assert.equal(hold.held.length, 1, "the creation was sent");
  await add.getByRole("button", { name: "取消" }).click();
  await add.waitFor({ state: "detached" });
  const drawer = page.locator('[data-testid="user-edit-drawer"]');
  await page.locator(`[data-testid="user-row-${idb}"] [data-testid="user-edit"]`).click();
  await page.waitForFunction((name) => document.querySelector("#edit-user-username")?.value === name, ub);
  await page.fill("#edit-user-display", "typed-wait");

  await page.unrouteAll();
  hold.release();
  await expectToast(page, "用户账户创建成功！");
  await sleep(800);
  assert.equal(await drawer.count(), 1, "user B's drawer is still open");
  assert.equal(await page.inputValue("#edit-user-display"), "typed-wait");
  await context.close();
});

test("a log clearing answered while the ratio reset opened since is on its way leaves the reset busy, so it is not sent twice", async () => {
  const { context, page, dialog, clearing } = await clearingDismissed();
  const resetting = await holdRoute(page, "**/api/option/rest_model_ratio", "POST");
  await page.click('[data-testid="reset-model-ratio"]');
  await dialog.waitFor();
  const reset = dialog.getByRole("button", { name: "重置模型倍率" });
  await reset.click();
  while (resetting.held.length === 0) await sleep(50);
  assert.equal(await reset.isEnabled(), false, "the reset is busy while it is on its way");
  // The clearing answers first: the reset is still on its way.
  clearing.release();
  await expectToast(page, /日志/);
  await sleep(300);
  assert.equal(await reset.isEnabled(), false, "the reset is still busy while it is on its way");
  await reset.click({ force: true }).catch(() => {});
  resetting.release();
  await sleep(1000);
  assert.equal(resetting.held.length, 1, "one ratio reset sent");
  await context.close();
});

/** openCodesWithOne creates a code named from prefix and opens root's code list showing it. */
async function openCodesWithOne(prefix) {
  const api = await rootApi(suite.gw.baseURL);
  const na = uniqueName(prefix);
  assert.equal((await api.call("POST", "/api/redemption/", { name: na, quota: 100000, count: 1 })).json?.success, true);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/redemption");
  const row = page.locator("tr", { hasText: na });
  await row.waitFor();
  return { context, page, na, row, drawer: page.locator('[data-testid="redemption-drawer"]') };
}
