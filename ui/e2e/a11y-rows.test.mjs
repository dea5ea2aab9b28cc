// The console's tables, pagers and drawers used with the keyboard: an action
// that redraws its row, busies its button or turns the page leaves the
// keyboard on that row or pager, not on the page's body (docs/decisions.md,
// "Console keyboard use").
import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel } from "./fake-upstream.mjs";
import { gatewaySuite, login, newPage, newUser, rootApi, uniqueName } from "./harness.mjs";

const suite = gatewaySuite();

/** focused says which control has the keyboard: its test id (or tag) and the key of its table row. */
function focused(page) {
  return page.evaluate(() => {
    const a = document.activeElement;
    return { testId: a?.dataset?.testid ?? a?.tagName, row: a?.closest("tr")?.dataset?.rowKey ?? null };
  });
}

/** settle waits until the keyboard is on a control again (or gives up after a while) and returns it. */
async function settle(page) {
  await page.waitForFunction(() => document.activeElement && document.activeElement !== document.body && !document.activeElement.disabled, null, { timeout: 5000 }).catch(() => {});
  await page.waitForTimeout(300);
  return focused(page);
}

test("a row action that busies its button or redraws the row (user enable/disable, promote, channel test, priority) keeps the keyboard in that row", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const username = uniqueName("kr");
  assert.equal((await api.call("POST", "/api/user/", { username, password: "12345678", display_name: "" })).json.success, true);
  const chName = uniqueName("kc");
  await createChannel(api, "http://127.0.0.1:9", ["gpt-4o-mini"], chName);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");

  await page.goto("/user");
  const row = page.locator("tr", { hasText: username });
  await row.waitFor();
  const key = await row.getAttribute("data-row-key");
  for (const [press, next] of [
    ["user-disable", "user-enable"],
    ["user-enable", "user-disable"],
    ["user-promote", "user-demote"],
  ]) {
    await row.locator(`[data-testid="${press}"]`).focus();
    await page.keyboard.press("Enter");
    assert.deepEqual(await settle(page), { testId: next, row: key }, `after ${press}`);
  }

  await page.goto("/channel");
  const ch = page.locator("tr", { hasText: chName });
  await ch.waitFor();
  const chKey = await ch.getAttribute("data-row-key");
  await ch.locator('[data-testid="test-channel"]').focus();
  await page.keyboard.press("Enter");
  await page.waitForTimeout(300);
  assert.deepEqual(await settle(page), { testId: "test-channel", row: chKey }, "after a channel test");
  const prio = ch.locator('[data-testid="channel-priority"]');
  await prio.focus();
  await page.keyboard.press("Control+A");
  await page.keyboard.type("7");
  await page.keyboard.press("Enter");
  await page.waitForFunction(async (name) => {
    const r = await (await fetch(`/api/channel/search?keyword=${name}`, { headers: { "New-Api-User": "1" } })).json();
    return r.data.some((c) => c.name === name && c.priority === 7);
  }, chName);
  assert.deepEqual(await settle(page), { testId: "channel-priority", row: chKey }, "after saving the priority with Enter");
  await context.close();
});

test("enable and disable of a token, a channel and a redemption code, busy while the change is on its way, keep the keyboard on the row's toggle", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const tokName = uniqueName("kt");
  assert.equal((await api.call("POST", "/api/token/", { name: tokName, remain_quota: 0, expired_time: -1, unlimited_quota: true })).json.success, true);
  const chName = uniqueName("kd");
  await createChannel(api, "http://127.0.0.1:9", ["gpt-4o-mini"], chName);
  const codeName = uniqueName("kx");
  assert.equal((await api.call("POST", "/api/redemption/", { name: codeName, quota: 1000, count: 1 })).json.success, true);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  // The changes take a while, as on a slow link: the toggle is busy (disabled) meanwhile.
  await page.route(/\/api\/(token|channel|redemption)\/(\?.*)?$/, async (route) => {
    if (route.request().method() === "PUT") await new Promise((r) => setTimeout(r, 500));
    await route.continue();
  });
  await login(page, "root", "123456");
  for (const [path, name, kind] of [
    ["/token", tokName, "token"],
    ["/channel", chName, "channel"],
    ["/redemption", codeName, "redemption"],
  ]) {
    await page.goto(path);
    const row = page.locator("tr[data-row-key]", { hasText: name });
    await row.waitFor();
    const key = await row.getAttribute("data-row-key");
    const [off, on] = kind === "redemption" ? ["redemption-disable", "redemption-enable"] : [`disable-${kind}`, `enable-${kind}`];
    for (const [press, next] of [
      [off, on],
      [on, off],
    ]) {
      await row.locator(`[data-testid="${press}"]`).focus();
      await page.keyboard.press("Enter");
      await row.locator(`[data-testid="${next}"]`).waitFor();
      assert.deepEqual(await settle(page), { testId: next, row: key }, `${kind}: after ${press}`);
    }
  }
  await context.close();
});

test("deleting a row by keyboard gives the keyboard to the same button of the row now in its place, or of the row before when it was the last", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const names = [uniqueName("kd"), uniqueName("kd"), uniqueName("kd")];
  for (const name of names) assert.equal((await api.call("POST", "/api/token/", { name, remain_quota: 0, expired_time: -1, unlimited_quota: true })).json.success, true);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/token");
  const rowOf = (name) => page.locator('[data-testid="token-table"] tr', { hasText: name });
  await rowOf(names[0]).waitFor();
  const rowKeys = () => page.locator('[data-testid="token-table"] tr[data-row-key]').evaluateAll((rows) => rows.map((r) => r.dataset.rowKey));
  // names[1] has a row after it (names[0]); names[0] is then the last row when no older token is listed.
  for (const name of [names[1], names[0]]) {
    const keys = await rowKeys();
    const at = keys.indexOf(await rowOf(name).getAttribute("data-row-key"));
    await rowOf(name).locator('[data-testid="delete-token"]').focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("alertdialog");
    await dialog.waitFor();
    await page.waitForTimeout(400);
    await dialog.getByRole("button", { name: "确定" }).press("Enter");
    await dialog.waitFor({ state: "detached" });
    await rowOf(name).waitFor({ state: "detached" });
    const left = keys.filter((k, i) => i !== at);
    assert.deepEqual(await settle(page), { testId: "delete-token", row: left[Math.min(at, left.length - 1)] }, `after deleting row ${at} of ${keys.length}`);
  }
  await context.close();
});

test("Enter in a single-line field of the token and channel drawers submits, as it does in the user and redemption drawers; a textarea and the custom model field keep their Enter", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");

  await page.goto("/token");
  const tokenName = uniqueName("ke");
  await page.locator('[data-testid="add-token"]').focus();
  await page.keyboard.press("Enter");
  const tokenDrawer = page.locator('[data-testid="token-drawer"]');
  await tokenDrawer.waitFor();
  // A new line in the IP allow-list, not a submit.
  await page.locator("#tk-ips").focus();
  await page.keyboard.type("10.0.0.1");
  await page.keyboard.press("Enter");
  await page.keyboard.type("10.0.0.2");
  assert.equal(await page.locator("#tk-ips").inputValue(), "10.0.0.1\n10.0.0.2");
  await page.locator("#tk-ips").fill("");
  await page.locator("#tk-name").fill(tokenName);
  await page.locator("#tk-name").press("Enter");
  await tokenDrawer.waitFor({ state: "detached" });
  const tokens = await api.call("GET", `/api/token/search?keyword=${tokenName}`);
  assert.equal(tokens.json.data.filter((x) => x.name === tokenName).length, 1, "one token saved by Enter");

  await page.goto("/channel");
  const chName = uniqueName("ke");
  await page.locator('[data-testid="add-channel"]').focus();
  await page.keyboard.press("Enter");
  const channelDrawer = page.locator('[data-testid="channel-drawer"]');
  await channelDrawer.waitFor();
  await page.locator("#ch-name").fill(chName);
  await page.locator("#ch-key").fill("sk-enter");
  await page.click('[data-testid="clear-models"]');
  // Enter in the custom model field adds the model and does not send the form.
  await page.locator('[data-testid="custom-model-input"]').fill("gpt-4o-mini");
  await page.locator('[data-testid="custom-model-input"]').press("Enter");
  await channelDrawer.locator('[data-testid="channel-models"] [data-value="gpt-4o-mini"]').waitFor();
  await page.waitForTimeout(300);
  assert.ok(await channelDrawer.isVisible(), "the drawer stays open");
  await page.locator("#ch-name").press("Enter");
  await channelDrawer.waitFor({ state: "detached" });
  const channels = await api.call("GET", `/api/channel/search?keyword=${chName}`);
  assert.equal(channels.json.data.filter((c) => c.name === chName).length, 1, "one channel saved by Enter");
  await context.close();
});

test("the redemption code's view popover and the model and group pickers are dialogs named in the page's language", async () => {
  const root = await rootApi(suite.gw.baseURL);
  const name = uniqueName("kv");
  assert.equal((await root.call("POST", "/api/redemption/", { name, count: 1, quota: 1000 })).json.success, true);
  const names = {
    zh: { view: "兑换码", tokenModels: "模型限制列表", channelModels: "模型", channelGroups: "分组" },
    en: { view: "Redemption code", tokenModels: "Allowed models", channelModels: "Models", channelGroups: "Groups" },
  };
  for (const locale of ["zh", "en"]) {
    const n = names[locale];
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { locale: locale === "zh" ? "zh-CN" : "en-US", viewport: { width: 1400, height: 900 } });
    await login(page, "root", "123456");
    const named = async (opener, name, what) => {
      await page.locator(opener).first().focus();
      await page.keyboard.press("Enter");
      await page.locator('[role="dialog"][data-state="open"]').last().waitFor();
      assert.equal(await page.getByRole("dialog", { name, exact: true }).count(), 1, `${locale}: ${what} is no dialog named ${JSON.stringify(name)}`);
      await page.keyboard.press("Escape");
      await page.waitForFunction((sel) => document.activeElement === document.querySelector(sel), opener);
    };
    await page.goto("/redemption");
    await page.locator("tr", { hasText: name }).waitFor();
    await named(`tr[data-row-key] [data-testid="redemption-view"]`, n.view, "the view popover");

    await page.goto("/token");
    await page.click('[data-testid="add-token"]');
    await page.click('[data-testid="token-limits-enabled"]');
    await named('[data-testid="token-models-open"]', n.tokenModels, "the token's model picker");
    await page.keyboard.press("Escape");

    await page.goto("/channel");
    await page.click('[data-testid="add-channel"]');
    await named('[data-testid="channel-models-open"]', n.channelModels, "the channel's model picker");
    await named('[data-testid="channel-groups-open"]', n.channelGroups, "the channel's group picker");
    await context.close();
  }
});

test("turning the token list's pages and changing its page size by keyboard keeps the keyboard in the pager", async () => {
  const { username, api } = await newUser(suite.gw.baseURL, "kp", "12345678");
  for (let i = 0; i < 25; i++) assert.equal((await api.call("POST", "/api/token/", { name: `p${i}`, remain_quota: 0, expired_time: -1, unlimited_quota: true })).json.success, true);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, username, "12345678");
  await page.goto("/token");
  const pager = page.locator('[data-testid="pagination"]');
  await pager.getByText("第 1 - 10 条").waitFor();
  const where = () => page.evaluate(() => document.activeElement?.dataset.testid ?? document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.tagName);
  await page.locator('[data-testid="page-next"]').focus();
  await page.keyboard.press("Enter");
  await pager.getByText("第 11 - 20 条").waitFor();
  assert.equal(await settle(page).then(where), "page-next", "after the next page");
  await page.keyboard.press("Enter");
  await pager.getByText("第 21 - 25 条").waitFor();
  // The last page: next is off, the keyboard goes to the previous page's button.
  assert.equal(await settle(page).then(where), "上一页", "after the last page");
  await page.keyboard.press("Enter");
  await pager.getByText("第 11 - 20 条").waitFor();
  assert.equal(await settle(page).then(where), "上一页", "after the previous page");
  await page.locator('[data-testid="page-size"]').focus();
  await page.keyboard.press("Enter");
  // The list opens on the chosen size; the arrow moves to the next one once that has the keyboard.
  await page.waitForFunction(() => document.activeElement?.getAttribute("role") === "option" && document.activeElement.textContent.includes("10 条/页"));
  await page.keyboard.press("ArrowDown");
  await page.getByRole("option", { name: "20 条/页" }).and(page.locator("[data-highlighted]")).waitFor();
  await page.keyboard.press("Enter");
  await page.locator('[data-testid="page-size"]', { hasText: "20 条/页" }).waitFor();
  await page.locator('[data-testid="token-table"]:not([aria-busy])').waitFor();
  assert.equal(await settle(page).then(where), "page-size", "after the page size");
  await context.close();
});

test("Enter pressed again while a drawer's save is on its way does not save again: one addition to a user's quota, one batch of codes", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const username = uniqueName("kq");
  assert.equal((await api.call("POST", "/api/user/", { username, password: "12345678", display_name: "" })).json.success, true);
  const before = (await api.call("GET", `/api/user/search?keyword=${username}`)).json.data.find((u) => u.username === username);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  // The saves take a while, as on a slow link.
  await page.route(/\/api\/(user|redemption)\/$/, async (route) => {
    if (["PUT", "POST"].includes(route.request().method())) await new Promise((r) => setTimeout(r, 600));
    await route.continue();
  });
  await login(page, "root", "123456");

  await page.goto("/user");
  const row = page.locator("tr", { hasText: username });
  await row.locator('[data-testid="user-edit"]').click();
  await page.locator("#edit-user-username").waitFor();
  await page.click('[data-testid="user-add-quota"]');
  await page.locator('[data-testid="add-quota-input"]').fill("1000");
  await page.locator('[data-testid="add-quota-input"]').press("Enter");
  await page.locator('[data-testid="add-quota-dialog"]').waitFor({ state: "detached" });
  await page.locator("#edit-user-display").focus();
  await page.keyboard.press("Enter");
  await page.waitForTimeout(100);
  await page.keyboard.press("Enter");
  await page.locator("#edit-user-username").waitFor({ state: "detached" });
  await page.waitForTimeout(1500);
  const after = (await api.call("GET", `/api/user/search?keyword=${username}`)).json.data.find((u) => u.username === username);
  assert.equal(after.quota, before.quota + 1000, "the addition is made once");

  await page.goto("/redemption");
  const name = uniqueName("kq");
  await page.click('[data-testid="redemption-add"]');
  await page.locator("#redemption-name").fill(name);
  // The first save is answered (600 ms and a round trip, longer on a busy machine) before the codes
  // are counted; a second one would have been sent 100 ms after it.
  const saved = page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/api/redemption/");
  await page.locator("#redemption-name").press("Enter");
  await page.waitForTimeout(100);
  await page.locator("#redemption-name").press("Enter").catch(() => {});
  await saved;
  await page.waitForTimeout(1500);
  const codes = (await api.call("GET", `/api/redemption/search?keyword=${name}`)).json.data.filter((r) => r.name === name);
  assert.equal(codes.length, 1, "one code made");
  await context.close();
});

test("deleting a user by keyboard leaves the keyboard in the user table, not on the page's body", async () => {
  const api = await rootApi(suite.gw.baseURL);
  const username = uniqueName("ku");
  assert.equal((await api.call("POST", "/api/user/", { username, password: "12345678", display_name: "" })).json.success, true);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/user");
  const row = page.locator("tr", { hasText: username });
  await row.waitFor();
  await row.locator('[data-testid="user-delete"]').focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("alertdialog");
  await dialog.waitFor();
  await page.waitForTimeout(400);
  await dialog.getByRole("button", { name: "注销" }).press("Enter");
  await dialog.waitFor({ state: "detached" });
  await row.locator('[data-testid="user-delete"]').waitFor({ state: "detached" });
  await page.waitForTimeout(1000);
  const where = await page.evaluate(() => {
    const a = document.activeElement;
    return { body: a === document.body || a === null, inTable: !!a?.closest('[data-testid="users-page"] .data-table, [data-testid="users-page"] table') };
  });
  assert.equal(where.body, false, "the keyboard is not dropped on the page's body");
  assert.equal(where.inTable, true, "the keyboard stays in the user table");
  await context.close();
});
