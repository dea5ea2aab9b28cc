import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiSession, gatewaySuite, loginToPersonalSettings, newPage, quotaPerUnit, registerUser, rootApi, uniqueName } from "./harness.mjs";

const suite = gatewaySuite();

// addQuota raises root's quota through whichever quota-changing API the server offers,
// and returns false when it offers none yet.
async function addQuota(api, amount) {
  const self = await api.call("GET", "/api/user/self");
  const me = self.json.data;
  const edit = await api.call("PUT", "/api/user/", { ...me, quota: me.quota + amount, password: "" });
  if (edit.status === 200 && edit.json?.success) return true;
  const code = await api.call("POST", "/api/redemption/", { name: "e2e", quota: amount, count: 1 });
  if (code.status === 200 && code.json?.success && Array.isArray(code.json.data)) {
    const topup = await api.call("POST", "/api/user/topup", { key: code.json.data[0] });
    if (topup.status === 200 && topup.json?.success) return true;
  }
  return false;
}

test("the balance on the personal settings page follows quota changes live", async (t) => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await loginToPersonalSettings(page, "root", "123456");
  const balance = page.locator('[data-testid="balance"]');
  await balance.waitFor();
  const before = (await balance.textContent()).trim();

  const api = await rootApi(suite.gw.baseURL);
  const perUnit = await quotaPerUnit(api);
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  if (!(await addQuota(api, perUnit * 5))) {
    t.skip("needs a quota-changing API (PUT /api/user/ or redemption top-up)");
    await context.close();
    return;
  }
  await page.waitForFunction(
    (old) => document.querySelector('[data-testid="balance"]')?.textContent?.trim() !== old,
    before,
    { timeout: 10000 },
  );
  const after = (await balance.textContent()).trim();
  assert.notEqual(after, before);
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem("user")).quota);
  assert.ok(stored > 0);
  await context.close();
});

test("a session ended elsewhere logs the console out without a reload", async () => {
  const username = uniqueName("liv");
  const password = "live-pass-1";
  const api = new ApiSession(suite.gw.baseURL);
  await api.register(username, password);

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await loginToPersonalSettings(page, username, password);
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });

  // Changing the password from another session ends every other session of the account.
  await api.login(username, password);
  const r = await api.call("PUT", "/api/user/self", { password: "live-pass-2", original_password: password });
  assert.equal(r.status, 200, JSON.stringify(r.json));

  await page.waitForURL("**/login?expired=true", { timeout: 15000 });
  await page.locator('[data-testid="expired-notice"]').waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem("user")), null);
  await context.close();
});

test("the console that changed the password stays logged in and live", async () => {
  const { username, password } = await registerUser(suite.gw.baseURL, "own", "own-pass-11");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await loginToPersonalSettings(page, username, password);
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.fill("#pw-current", password);
  await page.fill("#pw-new", "own-pass-22");
  await page.fill("#pw-new2", "own-pass-22");
  await page.click('[data-testid="change-password"]');
  await page.locator(".toast-success", { hasText: "密码修改成功！" }).waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached", timeout: 15000 });
  await page.waitForTimeout(1500);
  assert.match(page.url(), /\/setting\?tab=personal/);
  assert.notEqual(await page.evaluate(() => localStorage.getItem("user")), null);
  await context.close();
});
