import assert from "node:assert/strict";
import { test } from "node:test";
import { gatewaySuite, login, loginToPersonalSettings, navEntries, newPage, registerUser, statusAsStoredUser } from "./harness.mjs";

const suite = gatewaySuite();

const ADMIN_ENTRIES = ["channel", "redemption", "user"];

test("a normal user sees no admin entries and the server refuses admin APIs with 403", async () => {
  const { username, password } = await registerUser(suite.gw.baseURL, "nrm", "normal-pass-1");

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await loginToPersonalSettings(page, username, password);
  await page.locator('[data-testid="sidebar"]').waitFor();
  const entries = await navEntries(page);
  assert.ok(entries.includes("setting"), `settings entry expected, got ${entries}`);
  for (const admin of ADMIN_ENTRIES) assert.ok(!entries.includes(admin), `admin entry ${admin} shown to a normal user`);
  const tabs = await page.locator('[data-testid^="tab-"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-testid")));
  assert.deepEqual(tabs, ["tab-personal"]);

  assert.equal(await statusAsStoredUser(page, "/api/option/"), 403);

  // /user/edit is everyone's own account: the personal settings, not a refusal.
  await page.goto("/user/edit");
  await page.waitForURL((u) => u.pathname === "/setting" && u.search === "?tab=personal");
  await page.locator('[data-testid="profile-username"]').waitFor();
  await context.close();
});

test("an anonymous visitor sees only public sidebar entries and is sent from a protected page to /login with the notice", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await page.goto("/setting?tab=personal");
  // An unauthenticated visit to a guarded route shows the notice (B §2 routes, §6): not logged in or login expired.
  await page.waitForURL((u) => u.pathname === "/login");
  await page.locator('[data-testid="login-submit"]').waitFor();
  const notice = page.locator('[data-testid="expired-notice"]');
  await notice.waitFor();
  assert.match(await notice.textContent(), /未登录或登录已过期，请重新登录！/);
  const entries = await navEntries(page);
  for (const e of entries) assert.ok(["pricing", "chat"].includes(e), `entry ${e} shown to an anonymous visitor`);
  await context.close();
});

test("a stored user whose session is gone is forgotten and sent to the login page", async () => {
  const { username, password } = await registerUser(suite.gw.baseURL, "exp", "expire-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await loginToPersonalSettings(page, username, password);
  await context.clearCookies();
  await page.reload();
  await page.waitForURL("**/login?expired=true");
  await page.locator('[data-testid="expired-notice"]').waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem("user")), null);

  // On a public page the stale record is dropped without leaving the page.
  await loginToPersonalSettings(page, username, password);
  await context.clearCookies();
  await page.goto("/about");
  await page.locator('[data-testid="user-menu"]').waitFor({ state: "detached" });
  await page.locator("button", { hasText: "登录" }).first().waitFor();
  assert.match(page.url(), /\/about$/);
  assert.equal(await page.evaluate(() => localStorage.getItem("user")), null);
  await context.close();
});

/**
 * refusalAfterRelogin logs in as first, opens the log page with its summary read held, logs out
 * and logs in as second from the login page the logout led to (without loading the page again),
 * then lets the held read be answered by answer(route): the answer arrives for a login that has
 * ended. The console must keep second logged in on the token list.
 */
async function refusalAfterRelogin(first, second, answer) {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, first.username, first.password);
  await page.waitForURL("**/token");
  let release;
  const released = new Promise((r) => (release = r));
  let held = false;
  await page.route(/\/api\/log\/self\/stat/, async (route) => {
    if (held) return route.continue();
    held = true;
    await released;
    await answer(route).catch(() => {});
  });
  await page.click('[data-nav="log"]');
  await page.waitForURL("**/log");
  for (let i = 0; i < 50 && !held; i++) await page.waitForTimeout(100);
  assert.ok(held, "the summary read was not sent");
  await page.click('[data-testid="user-menu"]');
  await page.click('[data-testid="logout"]');
  await page.waitForURL("**/login");
  await page.fill("#login-username", second.username);
  await page.fill("#login-password", second.password);
  await page.click('[data-testid="login-submit"]');
  await page.waitForURL("**/token");
  release();
  await page.waitForTimeout(1500);
  assert.match(page.url(), /\/token$/);
  assert.equal(await page.evaluate(() => JSON.parse(localStorage.getItem("user"))?.username ?? null), second.username);
  await page.locator('[data-testid="user-menu"]', { hasText: second.username }).waitFor();
  await context.close();
}

test("a refusal of a call the previous account made does not log out the account logged in since", async () => {
  const x = await registerUser(suite.gw.baseURL, "slwx", "slow-pass-1");
  const y = await registerUser(suite.gw.baseURL, "slwy", "slow-pass-2");
  // The log page's summary is slow to answer (a large log table); answered after the first account
  // logged out, the server refuses it (401): its session is gone.
  await refusalAfterRelogin(x, y, (route) => route.continue());
});

test("/login?expired=true shows the expired-session notice", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await page.goto("/login?expired=true");
  const notice = page.locator('[data-testid="expired-notice"]');
  await notice.waitFor();
  assert.match(await notice.textContent(), /未登录或登录已过期，请重新登录！/);
  await page.goto("/login");
  await page.locator('[data-testid="login-submit"]').waitFor();
  assert.equal(await page.locator('[data-testid="expired-notice"]').count(), 0);
  await context.close();
});

test("a login returns to the page that sent the visitor to it, when the account may open it", async () => {
  const { username, password } = await registerUser(suite.gw.baseURL, "ask", "asked-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const fillAndSubmit = async () => {
    await page.fill("#login-username", username);
    await page.fill("#login-password", password);
    await page.click('[data-testid="login-submit"]');
  };

  // A protected page opened without a session: back to it, query included, after the login.
  await page.goto("/setting?tab=personal");
  await page.waitForURL("**/login?expired=true");
  await fillAndSubmit();
  await page.waitForURL((u) => u.pathname === "/setting" && u.search === "?tab=personal");
  await page.locator('[data-testid="profile-username"]').waitFor();

  // The session ends on a page: the next login returns there.
  await page.goto("/log");
  await page.locator('[data-testid="user-menu"]').waitFor();
  await context.clearCookies();
  await page.reload();
  await page.waitForURL("**/login?expired=true");
  await fillAndSubmit();
  await page.waitForURL((u) => u.pathname === "/log");

  // A page above the account's role is not where a login lands: the usual landing page is.
  await page.locator('[data-testid="user-menu"]').click();
  await page.locator('[data-testid="logout"]').click();
  await page.waitForURL((u) => u.pathname === "/login");
  await page.goto("/channel");
  await page.waitForURL("**/login?expired=true");
  await fillAndSubmit();
  await page.waitForURL((u) => u.pathname === "/token");

  // A visitor who went elsewhere after being sent to the login page lands on the usual page.
  await context.clearCookies();
  await page.evaluate(() => localStorage.removeItem("user"));
  await page.goto("/topup");
  await page.waitForURL("**/login?expired=true");
  await page.goto("/pricing");
  await page.locator('[data-nav="pricing"]').waitFor();
  await page.goto("/login");
  await fillAndSubmit();
  await page.waitForURL((u) => u.pathname === "/token");
  await context.close();
});

test("a refusal of a call made before the account logged out and in again does not log it out", async () => {
  const x = await registerUser(suite.gw.baseURL, "slwz", "slow-pass-3");
  // The summary was refused (its session ended) but the answer is slow to arrive: it comes after
  // the same account logged in again.
  const body = JSON.stringify({ success: false, message: "未登录或登录已过期，请重新登录！", data: null });
  await refusalAfterRelogin(x, x, (route) => route.fulfill({ status: 401, contentType: "application/json", body }));
});
