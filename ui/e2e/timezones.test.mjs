// Time zones: a console user in another zone than the server (Los Angeles, with daylight saving;
// the server's clock is UTC) gets the instants they asked for.
import assert from "node:assert/strict";
import { test } from "node:test";
import { expectToast, gatewaySuite, login, newPage, newUser } from "./harness.mjs";

const suite = gatewaySuite();

const LA = { viewport: { width: 1400, height: 900 }, timezoneId: "America/Los_Angeles" };

// 2027-11-07 is the day Los Angeles goes back from PDT to PST: 01:00–01:59 happens twice.
// 2027-11-06 02:15 PDT: one day later is 2027-11-07 01:15 PST, the second 01:15 of that night.
const BEFORE_FALL_BACK = Date.UTC(2027, 10, 6, 9, 15, 0);

test("the one-day expiry button on the eve of the fall-back lands a day later, not 23 hours", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "tzd", "token-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, LA);
  await login(page, username, password);
  await page.waitForURL("**/token");
  await page.clock.setFixedTime(BEFORE_FALL_BACK);
  await page.click('[data-testid="add-token"]');
  const drawer = page.locator('[data-testid="token-drawer"]');
  await drawer.waitFor();
  await page.fill('[data-testid="token-name-input"]', "dst-day");
  await drawer.getByRole("button", { name: "一天" }).click();
  assert.equal(await page.inputValue('[data-testid="token-expiry"]'), "2027-11-07 01:15:00");
  await page.click('[data-testid="token-submit"]');
  await expectToast(page, "1个令牌创建成功");
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data.find((x) => x.name === "dst-day");
  assert.equal(tok.expired_time, BEFORE_FALL_BACK / 1000 + 86400, "one day is 86 400 seconds from now");
  await context.close();
});

test("saving a token whose expiry is in the repeated hour of the fall-back keeps its expiry", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "tze", "token-pass-1");
  // 2027-11-07 01:30 PST (09:30 UTC), the second 01:30 of that night.
  const expiry = Date.UTC(2027, 10, 7, 9, 30, 0) / 1000;
  const created = await api.call("POST", "/api/token/", { name: "dst-edit", remain_quota: 5000, expired_time: expiry });
  assert.equal(created.json?.success, true, JSON.stringify(created.json));
  const tok = (await api.call("GET", "/api/token/?p=0&size=10")).json.data[0];
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, LA);
  await login(page, username, password);
  await page.waitForURL("**/token");
  const row = page.locator(`[data-testid="token-row-${tok.id}"]`);
  await row.locator('[data-testid="edit-token"]').click();
  await page.waitForFunction(() => document.querySelector('[data-testid="token-name-input"]')?.value === "dst-edit");
  assert.equal(await page.inputValue('[data-testid="token-expiry"]'), "2027-11-07 01:30:00");
  await page.fill('[data-testid="token-name-input"]', "dst-renamed");
  await page.click('[data-testid="token-submit"]');
  await expectToast(page, "令牌更新成功！");
  const after = (await api.call("GET", `/api/token/${tok.id}`)).json.data;
  assert.equal(after.name, "dst-renamed");
  assert.equal(after.expired_time, expiry, "a rename moved the expiry an hour earlier");
  await context.close();
});

test("an expiry at the start of 1970 is refused, not saved as a token that never expires", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "tzu", "token-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 }, timezoneId: "UTC" });
  await login(page, username, password);
  await page.waitForURL("**/token");
  await page.click('[data-testid="add-token"]');
  await page.locator('[data-testid="token-drawer"]').waitFor();
  await page.fill('[data-testid="token-name-input"]', "epoch");
  // The first is 0 and the second -1 in UTC: both read as "never" by the server.
  for (const expiry of ["1970-01-01 00:00:00", "1969-12-31 23:59:59"]) {
    await page.fill('[data-testid="token-expiry"]', expiry);
    await page.click('[data-testid="token-submit"]');
    await expectToast(page, "过期时间格式错误！");
  }
  const list = (await api.call("GET", "/api/token/?p=0&size=10")).json.data;
  assert.deepEqual(list, [], "no token was created");
  await context.close();
});
