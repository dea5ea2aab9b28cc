import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { ApiSession, expectToast, gatewaySuite, login, money, newPage, newUser, putOption, quotaPerUnit, registerUser, rootApi, uniqueName } from "./harness.mjs";

let root;
let perUnit;

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    root = await rootApi(gw.baseURL);
    perUnit = await quotaPerUnit(root);
  },
});

test("an admin creates and downloads codes; a user redeems one and the balance follows live", async () => {
  const name = uniqueName("code");
  const quota = perUnit * 3;

  // The administrator creates three codes and downloads them.
  const admin = await newPage(suite.browser, suite.gw.baseURL, { acceptDownloads: true });
  await login(admin.page, "root", "123456");
  await admin.page.goto("/redemption");
  await admin.page.locator('[data-testid="redemption-add"]').click();
  const drawer = admin.page.locator('[data-testid="redemption-drawer"]');
  await drawer.waitFor();
  assert.equal(await drawer.locator("#redemption-quota").inputValue(), "100000");
  assert.equal(await drawer.locator("#redemption-count").inputValue(), "1");
  // An empty name does nothing, silently: not even the browser's own
  // "fill out this field" (it follows an invalid event).
  const name0 = drawer.locator("#redemption-name");
  await name0.evaluate((el) => el.addEventListener("invalid", () => (window.__invalidName = true)));
  await name0.press("Enter");
  await admin.page.locator('[data-testid="redemption-submit"]').click();
  await admin.page.waitForTimeout(300);
  assert.equal(await admin.page.evaluate(() => window.__invalidName ?? false), false);
  assert.equal(await admin.page.locator(".toast").count(), 0);
  assert.equal(await drawer.isVisible(), true);
  // The console checks what the server checks: a name of at most 20 bytes, a quota above 0.
  await drawer.locator("#redemption-name").fill("七个汉字的名称");
  await admin.page.locator('[data-testid="redemption-submit"]').click();
  await expectToast(admin.page, "兑换码名称长度必须在 1-20 之间");
  await drawer.locator("#redemption-name").fill(name);
  await drawer.locator("#redemption-quota").fill("0");
  await admin.page.locator('[data-testid="redemption-submit"]').click();
  await expectToast(admin.page, "兑换码额度必须大于 0");
  await drawer.locator("#redemption-quota").fill(String(quota));
  await drawer.locator("#redemption-count").fill("3");
  // A double click sends the form once.
  await admin.page.locator('[data-testid="redemption-submit"]').dblclick();
  await expectToast(admin.page, "兑换码创建成功！");
  await admin.page.locator('[data-testid="redemption-download-dialog"]').waitFor();
  const [download] = await Promise.all([admin.page.waitForEvent("download"), admin.page.locator('[data-testid="redemption-download"]').click()]);
  assert.equal(download.suggestedFilename(), `${name}.txt`);
  const keys = (await readFile(await download.path(), "utf8")).split("\n").filter(Boolean);
  assert.equal(keys.length, 3);
  for (const k of keys) assert.match(k, /^[0-9a-f]{32}$/i);
  // The new codes are listed as unused.
  await admin.page.locator('[data-testid="redemption-name"]', { hasText: name }).first().waitFor();
  assert.equal(await admin.page.locator('[data-testid^="redemption-row-"]', { hasText: name }).count(), 3);
  const made = (await root.call("GET", `/api/redemption/search?keyword=${encodeURIComponent(name)}`)).json.data;
  assert.equal(made.length, 3, "one creation of three codes");

  // A user redeems one in the wallet.
  const { username, password, api: userApi } = await newUser(suite.gw.baseURL, "pay", "wallet-pass-1");
  const user = await newPage(suite.browser, suite.gw.baseURL);
  await login(user.page, username, password);
  await user.page.goto("/topup");
  const balance = user.page.locator('[data-testid="wallet-balance"]');
  await balance.waitFor();
  await user.page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const start = (await userApi.call("GET", "/api/user/self")).json.data.quota;
  assert.equal((await balance.textContent()).trim(), money(start, perUnit));

  await user.page.locator('[data-testid="redeem-submit"]').click();
  await expectToast(user.page, "请输入兑换码！");
  await user.page.fill('[data-testid="redeem-code"]', keys[0]);
  await user.page.locator('[data-testid="redeem-submit"]').click();
  await expectToast(user.page, "兑换成功！");
  await user.page.locator('[data-testid="redeemed-quota"]', { hasText: money(quota, perUnit) }).waitFor();
  await user.page.getByRole("dialog").getByRole("button", { name: "确定" }).click();
  await user.page.locator('[data-testid="redeemed-quota"]').waitFor({ state: "detached" });
  await user.page.waitForFunction((want) => document.querySelector('[data-testid="wallet-balance"]')?.textContent?.trim() === want, money(start + quota, perUnit), { timeout: 10000 });

  // A redemption made elsewhere reaches the open wallet through the live socket alone.
  const r = await userApi.call("POST", "/api/user/topup", { key: keys[1] });
  assert.equal(r.json?.success, true, JSON.stringify(r.json));
  await user.page.waitForFunction((want) => document.querySelector('[data-testid="wallet-balance"]')?.textContent?.trim() === want, money(start + 2 * quota, perUnit), { timeout: 10000 });

  // A used code cannot be redeemed again; the server's message is shown.
  await user.page.fill('[data-testid="redeem-code"]', keys[0]);
  await user.page.locator('[data-testid="redeem-submit"]').click();
  await user.page.locator(".toast-error").first().waitFor();

  // The administrator sees the used code as used, with its enable button off and edit off.
  await admin.page.reload();
  await admin.page.fill('[data-testid="redemption-search"]', name);
  await admin.page.keyboard.press("Enter");
  const usedRow = admin.page.locator('[data-testid^="redemption-row-"]', { hasText: "已使用" }).first();
  await usedRow.waitFor();
  assert.equal(await usedRow.locator('[data-testid="redemption-enable"]').isDisabled(), true);
  assert.equal(await usedRow.locator('[data-testid="redemption-edit"]').isDisabled(), true);
  await admin.context.close();
  await user.context.close();
});

test("editing a code found by a search keeps the search's result on screen", async () => {
  const name = uniqueName("srch");
  const other = uniqueName("oth");
  for (const [n, count] of [
    [other, 5],
    [name, 1],
  ]) {
    const r = await root.call("POST", "/api/redemption/", { name: n, quota: 100000, count });
    assert.equal(r.json?.success, true, JSON.stringify(r.json));
  }
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, "root", "123456");
  await page.goto("/redemption");
  const rows = page.locator('[data-testid^="redemption-row-"]');
  await rows.first().waitFor();
  await page.fill('[data-testid="redemption-search"]', name);
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="redemption-row-"]').length === 1);
  const row = rows.first();
  assert.match(await row.textContent(), new RegExp(name));

  await row.locator('[data-testid="redemption-edit"]').click();
  const drawer = page.locator('[data-testid="redemption-drawer"]');
  await drawer.locator("#redemption-quota").waitFor();
  await drawer.locator("#redemption-quota").fill(String(perUnit * 2));
  await page.locator('[data-testid="redemption-submit"]').click();
  await expectToast(page, "兑换码更新成功！");
  await drawer.waitFor({ state: "hidden" });
  // The list still answers the search in the box (as after a delete), with the edited code updated.
  await page.locator('[data-testid^="redemption-row-"]', { hasText: money(perUnit * 2, perUnit) }).waitFor();
  await page.waitForTimeout(500);
  assert.equal(await rows.count(), 1);
  assert.match(await rows.first().textContent(), new RegExp(name));
  await context.close();
});

test("the wallet explains missing top-up settings", async () => {
  const { username, password } = await registerUser(suite.gw.baseURL, "wal", "wallet-pass-2");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, username, password);
  await page.goto("/topup");
  // Without a top-up link there is nothing to link to: no button.
  await page.locator('[data-testid="redeem-code"]').waitFor();
  assert.equal(await page.locator('[data-testid="get-code"]').count(), 0);
  await page.locator('[data-testid="pay-zfb"]').click();
  await expectToast(page, "管理员未开启在线充值！");
  // With a link set, the button appears.
  await putOption(root, "TopUpLink", "https://shop.example/codes");
  try {
    await page.reload();
    await page.locator('[data-testid="get-code"]').waitFor();
  } finally {
    await putOption(root, "TopUpLink", "");
  }
  await context.close();
});

test("an addition to a user's quota that is not a whole number is refused, not truncated", async () => {
  const { username } = await registerUser(suite.gw.baseURL, "frac", "frac-pass-11");
  const found = await root.call("GET", `/api/user/search?keyword=${username}&group=`);
  const { id, quota: before } = found.json.data.find((u) => u.username === username);

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, "root", "123456");
  await page.goto(`/user/edit/${id}`);
  const drawer = page.locator('[data-testid="user-edit-drawer"]');
  await page.waitForFunction((name) => document.querySelector("#edit-user-username")?.value === name, username);
  await drawer.locator('[data-testid="user-add-quota"]').click();
  // A number field takes 1e6 and 2.5 as typed: read as 1 and 2 they would add
  // a millionth of what was asked, or less than it, without a word.
  for (const typed of ["1e6", "2.5"]) {
    await page.locator('[data-testid="add-quota-input"]').fill(typed);
    assert.equal(await page.locator('[data-testid="add-quota-confirm"]').isDisabled(), true, `${typed} accepted`);
    assert.equal(await page.locator('[data-testid="add-quota-invalid"]').textContent(), "额度必须是整数");
    await page.locator('[data-testid="add-quota-input"]').press("Enter");
    assert.equal(await drawer.locator("#edit-user-quota").inputValue(), String(before), `${typed} applied`);
  }
  await context.close();
});

test("root edits a user's quota, also by a negative addition, and the row updates", async () => {
  const { username } = await registerUser(suite.gw.baseURL, "edt", "edit-pass-11");
  const found = await root.call("GET", `/api/user/search?keyword=${username}&group=`);
  const id = found.json.data.find((u) => u.username === username).id;
  const before = found.json.data.find((u) => u.username === username).quota;

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, "root", "123456");
  await page.goto("/user");
  await page.locator('[data-testid="users-table"]').waitFor();
  await page.fill('[data-testid="user-search"]', username);
  await page.click('[data-testid="user-search-submit"]');
  const row = page.locator(`[data-testid="user-row-${id}"]`);
  await row.waitFor();
  assert.equal((await row.locator('[data-testid="user-quota"]').textContent()).trim(), money(before, perUnit));

  const addQuota = async (delta) => {
    await row.locator('[data-testid="user-edit"]').click();
    const drawer = page.locator('[data-testid="user-edit-drawer"]');
    await drawer.locator("#edit-user-quota").waitFor();
    await drawer.locator('[data-testid="user-add-quota"]').click();
    await page.locator('[data-testid="add-quota-input"]').fill(String(delta));
    await page.locator('[data-testid="add-quota-confirm"]').click();
    await page.locator('[data-testid="user-edit-submit"]').click();
    await expectToast(page, "用户信息更新成功！");
    await drawer.waitFor({ state: "detached" });
  };
  await addQuota(perUnit * 4);
  await row.locator('[data-testid="user-quota"]', { hasText: money(before + perUnit * 4, perUnit) }).waitFor();
  await addQuota(-perUnit);
  await row.locator('[data-testid="user-quota"]', { hasText: money(before + perUnit * 3, perUnit) }).waitFor();
  const stored = await root.call("GET", `/api/user/${id}`);
  assert.equal(stored.json.data.quota, before + perUnit * 3);

  // An addition keeps what changed the balance while the drawer was open.
  await row.locator('[data-testid="user-edit"]').click();
  const drawer = page.locator('[data-testid="user-edit-drawer"]');
  await drawer.locator("#edit-user-quota").waitFor();
  await drawer.locator('[data-testid="user-add-quota"]').click();
  await page.locator('[data-testid="add-quota-input"]').fill(String(perUnit));
  await page.locator('[data-testid="add-quota-confirm"]').click();
  const meanwhile = await root.call("PUT", "/api/user/", { id, add_quota: perUnit * 2 });
  assert.equal(meanwhile.json?.success, true, JSON.stringify(meanwhile.json));
  await page.locator('[data-testid="user-edit-submit"]').click();
  await expectToast(page, "用户信息更新成功！");
  await drawer.waitFor({ state: "detached" });
  assert.equal((await root.call("GET", `/api/user/${id}`)).json.data.quota, before + perUnit * 6);
  await row.locator('[data-testid="user-quota"]', { hasText: money(before + perUnit * 6, perUnit) }).waitFor();

  // /user/edit/{id} opens that user's drawer by its address; closing it returns to /user.
  assert.equal((await root.call("PUT", "/api/user/", { id, display_name: "Shown Name" })).json?.success, true);
  await page.goto(`/user/edit/${id}`);
  await page.waitForFunction(() => document.querySelector("#edit-user-display")?.value === "Shown Name");
  const byAddress = page.locator('[data-testid="user-edit-drawer"]');
  await page.waitForFunction((name) => document.querySelector("#edit-user-username")?.value === name, username);
  // An emptied display name falls back to the username instead of being ignored.
  await page.fill("#edit-user-display", "");
  await page.locator('[data-testid="user-edit-submit"]').click();
  await expectToast(page, "用户信息更新成功！");
  await byAddress.waitFor({ state: "detached" });
  await page.waitForURL((u) => u.pathname === "/user");
  assert.equal((await root.call("GET", `/api/user/${id}`)).json.data.display_name, username);
  // /user/edit, an account's own edit page, is the personal settings tab.
  await page.goto("/user/edit");
  await page.waitForURL((u) => u.pathname === "/setting" && u.search.includes("tab=personal"));
  await page.goto("/user");
  await page.fill('[data-testid="user-search"]', username);
  await page.click('[data-testid="user-search-submit"]');
  await row.waitFor();

  // Row actions update the row from the server's answer.
  await row.locator('[data-testid="user-disable"]').click();
  await row.getByText("已封禁").waitFor();
  await row.locator('[data-testid="user-promote"]').click();
  await row.locator('[data-testid="user-role"]', { hasText: "管理员" }).waitFor();
  await row.locator('[data-testid="user-delete"]').click();
  await page.getByRole("alertdialog").getByRole("button", { name: "注销" }).click();
  await row.getByText("已注销").waitFor();
  assert.equal(await row.locator("button").count(), 0);
  await context.close();
});

test("an administrator's user rows offer only the actions the server allows, saying why the others are off", async () => {
  const idOf = async (username) => (await root.call("GET", `/api/user/search?keyword=${username}&group=`)).json.data.find((u) => u.username === username).id;
  const admin = await registerUser(suite.gw.baseURL, "adm", "admin-pass-1");
  const peer = await registerUser(suite.gw.baseURL, "peer", "admin-pass-2");
  const common = await registerUser(suite.gw.baseURL, "cmn", "admin-pass-3");
  for (const u of [admin, peer]) {
    assert.equal((await root.call("POST", "/api/user/manage", { id: await idOf(u.username), action: "promote" })).json?.success, true);
  }
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, admin.username, "admin-pass-1");
  await page.goto("/user");
  await page.locator('[data-testid="users-table"]').waitFor();
  const rowOf = async (username) => {
    await page.fill('[data-testid="user-search"]', username);
    await page.click('[data-testid="user-search-submit"]');
    const row = page.locator(`[data-testid="user-row-${await idOf(username)}"]`);
    await row.waitFor();
    return row;
  };
  const state = async (row, action) => {
    const b = row.locator(`[data-testid="user-${action}"]`);
    return { disabled: await b.isDisabled(), title: await b.getAttribute("title") };
  };

  // Another administrator: nothing, as the server would refuse it all.
  let row = await rowOf(peer.username);
  for (const action of ["promote", "demote", "delete", "disable", "edit"]) {
    assert.deepEqual(await state(row, action), { disabled: true, title: "无权获取或更新同权限等级或更高权限等级的用户信息" }, action);
  }
  // A common user: no promotion (root only) nor demotion; the rest works.
  row = await rowOf(common.username);
  assert.deepEqual(await state(row, "promote"), { disabled: true, title: "普通管理员用户无法提升其他用户为管理员" });
  assert.deepEqual(await state(row, "demote"), { disabled: true, title: "该用户已经是普通用户" });
  for (const action of ["delete", "disable", "edit"]) {
    assert.deepEqual(await state(row, action), { disabled: false, title: null }, action);
  }
  await row.locator('[data-testid="user-disable"]').click();
  await row.getByText("已封禁").waitFor();
  await context.close();
});

test("the users table shows client pages of any size over the server's pages of ten", async () => {
  // Fill the list to more than two server pages.
  const have = async () => {
    let n = 0;
    for (let p = 0; ; p++) {
      const r = await root.call("GET", `/api/user/?p=${p}`);
      n += r.json.data.length;
      if (r.json.data.length < 10) return n;
    }
  };
  const api = new ApiSession(suite.gw.baseURL);
  for (let n = await have(); n < 25; n++) await api.register(uniqueName("pg"), "paging-pass-1");
  const total = await have();

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const fetched = [];
  page.on("request", (req) => {
    const m = req.url().match(/\/api\/user\/\?p=(\d+)/);
    if (m) fetched.push(Number(m[1]));
  });
  await login(page, "root", "123456");
  await page.goto("/user");
  const rows = page.locator('[data-testid^="user-row-"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="user-row-"]').length === 10);
  // The first client page is also the last fetched one, so the next server page was read.
  assert.deepEqual([...new Set(fetched)].sort(), [0, 1]);
  assert.equal(await page.locator('[data-testid="page-next"]').isDisabled(), false);

  await page.locator('[data-testid="page-size"]').click();
  await page.getByRole("option", { name: /^20/ }).click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="user-row-"]').length === 20);
  assert.ok(new Set(fetched).has(2), "reaching the last client page reads the next server page");
  await page.locator('[data-testid="page-next"]').click();
  await page.waitForFunction((want) => document.querySelectorAll('[data-testid^="user-row-"]').length === want, total - 20);
  assert.equal(await rows.count(), total - 20);
  assert.equal(await page.locator('[data-testid="page-next"]').isDisabled(), true);
  await context.close();
});

test("deleting a code on a later page of the codes reads again only the pages from there on", async () => {
  const name = uniqueName("del");
  // At least five server pages of ten codes, the newest of them this test's.
  const r = await root.call("POST", "/api/redemption/", { name, quota: 100000, count: 50 });
  assert.equal(r.json?.success, true, JSON.stringify(r.json));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const fetched = [];
  page.on("request", (req) => {
    const m = req.url().match(/\/api\/redemption\/\?p=(\d+)/);
    if (m) fetched.push(Number(m[1]));
  });
  await login(page, "root", "123456");
  await page.goto("/redemption");
  const rows = page.locator('[data-testid^="redemption-row-"]');
  await rows.first().waitFor();
  for (let p = 2; p <= 4; p++) {
    await page.locator('[data-testid="page-next"]').click();
    await page.locator(".pagination-current", { hasText: `第 ${p} 页` }).waitFor();
  }
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="redemption-row-"]').length === 10);
  // Page 4 shows the codes 31-40: their ids, newest first, are those of server page 3.
  const ids = async () => (await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-row-key")))).map(Number);
  const shown = await ids();
  const serverPage3 = (await root.call("GET", "/api/redemption/?p=3")).json.data.map((x) => x.id);
  assert.deepEqual(shown, serverPage3);
  const next = (await root.call("GET", "/api/redemption/?p=4")).json.data[0].id;
  fetched.length = 0;
  await rows.first().locator('[data-testid="redemption-delete"]').click();
  await page.getByRole("alertdialog").getByRole("button", { name: "删除" }).click();
  await expectToast(page, "操作成功完成！");
  // The page fills up again from the next one and stays where it is...
  await page.waitForFunction((id) => document.querySelector(`[data-row-key="${id}"]`) !== null, next);
  assert.deepEqual(await ids(), [...serverPage3.slice(1), next]);
  await page.locator(".pagination-current", { hasText: "第 4 页" }).waitFor();
  // ...without reading again the pages before it, which a delete there does not change.
  await page.waitForTimeout(500);
  assert.ok(fetched.length > 0 && fetched.every((p) => p >= 3), `server pages read after the delete: ${JSON.stringify(fetched)}`);
  await context.close();
});

test("the users and redemption pages open with an empty search box, as their lists show everything", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  for (const [path, nav, box, submit] of [
    ["/user", "user", "user-search", "user-search-submit"],
    ["/redemption", "redemption", "redemption-search", null],
  ]) {
    await page.goto(path);
    await page.locator(`[data-testid="${box}"]`).waitFor();
    await page.fill(`[data-testid="${box}"]`, "no-such-name-at-all");
    if (submit) await page.click(`[data-testid="${submit}"]`);
    else await page.press(`[data-testid="${box}"]`, "Enter");
    // Away and back inside the console (no reload): the list shows everything again, and so must the box.
    await page.click('[data-nav="log"]');
    await page.waitForURL("**/log");
    await page.click(`[data-nav="${nav}"]`);
    await page.waitForURL(`**${path}`);
    await page.locator(`[data-testid="${box}"]`).waitFor();
    assert.equal(await page.inputValue(`[data-testid="${box}"]`), "", `${path}: the box kept a search the list does not show`);
  }
  await context.close();
});

test("disabling a code that was redeemed meanwhile is refused and its row then shows it used", async () => {
  const { context, page, name, key, row } = await openCodeList("rdm");
  await row.locator('[data-testid="redemption-disable"]').waitFor();
  // A user redeems the code while the administrator looks at the list.
  await redeemAs("rdmu", key);
  await row.locator('[data-testid="redemption-disable"]').click();
  await expectToast(page, "兑换码已被使用");
  // The row no longer offers what the code cannot do.
  await row.getByText("已使用").waitFor({ timeout: 3000 });
  assert.equal(await row.locator('[data-testid="redemption-disable"]').count(), 0, "the used code still offers to be disabled");
  assert.equal(await row.locator('[data-testid="redemption-edit"]').isDisabled(), true, "the used code still offers to be edited");
  await context.close();
});

test("saving the edit of a code that was redeemed meanwhile is refused and its row then shows it used", async () => {
  const { context, page, name, key, row } = await openCodeList("rde");
  await row.locator('[data-testid="redemption-edit"]').click();
  await page.waitForFunction((n) => document.querySelector("#redemption-name")?.value === n, name);
  // A user redeems the code while the administrator edits it.
  await redeemAs("rdeu", key);
  await page.fill("#redemption-quota", "200000");
  await page.click('[data-testid="redemption-submit"]');
  await expectToast(page, "兑换码已被使用");
  await row.getByText("已使用").waitFor({ timeout: 3000 });
  assert.equal(await row.locator('[data-testid="redemption-edit"]').isDisabled(), true, "the used code still offers to be edited");
  await context.close();
});

test("codes created while a search is shown are listed with every code, and the search box says so", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/redemption");
  await page.fill('[data-testid="redemption-search"]', "no-such-name-at-all");
  await page.press('[data-testid="redemption-search"]', "Enter");
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="redemption-row-"]').length === 0);
  const name = uniqueName("rsb");
  await page.click('[data-testid="redemption-add"]');
  await page.fill("#redemption-name", name);
  await page.click('[data-testid="redemption-submit"]');
  await expectToast(page, "兑换码创建成功");
  await page.getByRole("dialog").getByRole("button", { name: "取消" }).click();
  await page.locator("tr", { hasText: name }).waitFor();
  assert.equal(await page.inputValue('[data-testid="redemption-search"]'), "", "the box kept a search the list does not show");
  await context.close();
});

test("a user added while a search is shown is listed with every account, and the search box says so", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/user");
  await page.fill('[data-testid="user-search"]', "no-such-name-at-all");
  await page.click('[data-testid="user-search-submit"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid^="user-row-"]').length === 0);
  const name = uniqueName("usb");
  await page.click('[data-testid="user-add"]');
  await page.fill("#add-user-username", name);
  await page.fill("#add-user-password", "password-11");
  await page.click('[data-testid="user-add-submit"]');
  await expectToast(page, "用户账户创建成功");
  await page.locator('[data-testid="user-username"]', { hasText: name }).waitFor();
  assert.equal(await page.inputValue('[data-testid="user-search"]'), "", "the box kept a search the list does not show");
  await context.close();
});

test("disabling a user who was deleted meanwhile is refused and the row then shows the account deleted", async () => {
  const id = await createAccount("udm");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/user");
  const row = page.locator(`[data-testid="user-row-${id}"]`);
  await row.locator('[data-testid="user-disable"]').waitFor();
  // Another administrator deletes the account while this one looks at the list.
  await deleteAccount(id);
  await row.locator('[data-testid="user-disable"]').click();
  await expectToast(page, "该用户已注销");
  // The row no longer offers what the account cannot have done to it.
  await row.getByText("已注销").waitFor({ timeout: 3000 });
  assert.equal(await row.locator('[data-testid="user-edit"]').count(), 0, "the deleted account still offers to be edited");
  await context.close();
});

test("saving the edit of a user who was deleted meanwhile is refused and the row then shows the account deleted", async () => {
  const id = await createAccount("ude");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/user");
  const row = page.locator(`[data-testid="user-row-${id}"]`);
  await row.locator('[data-testid="user-edit"]').click();
  await page.locator("#edit-user-display").waitFor();
  await deleteAccount(id);
  await page.fill("#edit-user-display", "renamed");
  await page.click('[data-testid="user-edit-submit"]');
  await expectToast(page, "该用户已注销");
  await row.getByText("已注销").waitFor({ state: "attached", timeout: 3000 });
  assert.equal(await row.locator('[data-testid="user-edit"]').count(), 0, "the deleted account still offers to be edited");
  await context.close();
});

test("an administrator editing their own account is offered no password field, which the server refuses there", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/user/edit/1");
  const password = page.locator("#edit-user-password");
  await page.locator("#edit-user-display").waitFor();
  assert.equal(await password.isDisabled(), true, "root's own edit offers a password field");
  assert.equal(await password.getAttribute("placeholder"), "请在个人设置中修改自己的密码");
  await page.keyboard.press("Escape");
  // Another account's edit still offers it.
  await page.goto(`/user/edit/${await createAccount("upw")}`);
  await page.locator("#edit-user-display").waitFor();
  assert.equal(await password.isDisabled(), false);
  await context.close();
});

test("the edit address of a deleted account says the account is deleted and shows the list, as its row offers no edit", async () => {
  const id = await createAccount("ued");
  await deleteAccount(id);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto(`/user/edit/${id}`);
  await expectToast(page, "该用户已注销");
  await page.waitForURL((url) => url.pathname === "/user");
  assert.equal(await page.locator('[data-testid="user-edit-drawer"]').count(), 0, "the deleted account's edit drawer is open");
  await context.close();
});

test("an action on a searched user who became an administrator meanwhile lists every account and empties the search box", async () => {
  const idOf = async (username) => (await root.call("GET", `/api/user/search?keyword=${username}&group=`)).json.data.find((u) => u.username === username).id;
  const admin = await registerUser(suite.gw.baseURL, "adr", "admin-pass-1");
  const target = await registerUser(suite.gw.baseURL, "tgr", "admin-pass-2");
  assert.equal((await root.call("POST", "/api/user/manage", { id: await idOf(admin.username), action: "promote" })).json?.success, true);
  const targetId = await idOf(target.username);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, admin.username, "admin-pass-1");
  await page.goto("/user");
  await page.fill('[data-testid="user-search"]', target.username);
  await page.click('[data-testid="user-search-submit"]');
  const row = page.locator(`[data-testid="user-row-${targetId}"]`);
  await row.waitFor();
  assert.equal((await root.call("POST", "/api/user/manage", { id: targetId, action: "promote" })).json?.success, true);
  await row.locator('[data-testid="user-disable"]').click();
  await expectToast(page, "无权获取或更新同权限等级或更高权限等级的用户信息");
  // The account can no longer be read by this administrator: the list is read again, every account in it.
  await page.locator(`[data-testid="user-row-${await idOf(admin.username)}"]`).waitFor();
  assert.equal(await page.inputValue('[data-testid="user-search"]'), "", "the search box still holds a search the list no longer applies");
  await context.close();
});

/** createAccount has root create an ordinary account named from prefix and returns its id. */
async function createAccount(prefix) {
  const made = await root.call("POST", "/api/user/", { username: uniqueName(prefix), password: "password-11" });
  assert.equal(made.json?.success, true, JSON.stringify(made.json));
  return made.json.data.id;
}

/** deleteAccount has root delete the account id. */
async function deleteAccount(id) {
  const gone = await root.call("POST", "/api/user/manage", { id, action: "delete" });
  assert.equal(gone.json?.success, true, JSON.stringify(gone.json));
}

/** openCodeList creates a code named from prefix and opens root's code list; row is the code's row. */
async function openCodeList(prefix) {
  const name = uniqueName(prefix);
  const r = await root.call("POST", "/api/redemption/", { name, quota: 100000, count: 1 });
  assert.equal(r.json?.success, true, JSON.stringify(r.json));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/redemption");
  return { context, page, name, key: r.json.data[0], row: page.locator("tr", { hasText: name }) };
}

/** redeemAs redeems key as a new user named from prefix. */
async function redeemAs(prefix, key) {
  const buyer = await newUser(suite.gw.baseURL, prefix, `${prefix}-pass-11`);
  const redeemed = await buyer.api.call("POST", "/api/user/topup", { key });
  assert.equal(redeemed.json?.success, true, JSON.stringify(redeemed.json));
}

test("a search of the users or of the codes tells in its footer how many rows it found, as the token and channel searches do", async () => {
  const prefix = uniqueName("st").slice(0, 8);
  for (let i = 0; i < 12; i++) {
    const r = await root.call("POST", "/api/user/", { username: `${prefix}${String(i).padStart(2, "0")}`, password: "password-11", display_name: "" });
    assert.equal(r.json?.success, true, JSON.stringify(r.json));
  }
  const code = uniqueName("sc");
  const created = await root.call("POST", "/api/redemption/", { name: code, quota: 1000, count: 13 });
  assert.equal(created.json?.success, true, JSON.stringify(created.json));

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  const footer = page.locator('[data-testid="pagination"]');
  await page.goto("/user");
  await page.locator('[data-testid^="user-row-"]').first().waitFor();
  await page.fill('[data-testid="user-search"]', prefix);
  await page.click('[data-testid="user-search-submit"]');
  await footer.getByText("第 1 - 10 条，共 12 条").waitFor({ timeout: 5000 });
  await footer.locator('[data-testid="page-next"]').click();
  await footer.getByText("第 11 - 12 条，共 12 条").waitFor({ timeout: 5000 });

  await page.goto("/redemption");
  await page.locator('[data-testid^="redemption-row-"]').first().waitFor();
  await page.fill('[data-testid="redemption-search"]', code);
  await page.keyboard.press("Enter");
  await footer.getByText("第 1 - 10 条，共 13 条").waitFor({ timeout: 5000 });
  // Clearing the search lists every code again, whose count the server does not tell.
  await page.fill('[data-testid="redemption-search"]', "");
  await page.keyboard.press("Enter");
  await footer.getByText(/^第 1 - 10 条$/).waitFor({ timeout: 5000 });
  await context.close();
});
