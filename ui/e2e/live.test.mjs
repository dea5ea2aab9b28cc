import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel, startFakeUpstream } from "./fake-upstream.mjs";
import { ApiSession, gatewaySuite, login, loginToPersonalSettings, newPage, newUser, openLogPageTwo, putOption, quotaPerUnit, registerUser, rootApi, uniqueName } from "./harness.mjs";

let upstream;

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    upstream = await startFakeUpstream({ chunks: ["live"], delayMs: 0 });
    const root = await rootApi(gw.baseURL);
    await putOption(root, "QuotaForNewUser", "50000000");
    await createChannel(root, upstream.url, ["gpt-4o-mini"], "live-upstream");
  },
  teardown: () => upstream?.close(),
});

// addQuota raises root's quota by an administrator's edit of the account.
async function addQuota(api, amount) {
  const me = (await api.call("GET", "/api/user/self")).json.data;
  const edit = await api.call("PUT", "/api/user/", { ...me, quota: me.quota + amount, password: "" });
  assert.equal(edit.json?.success, true, JSON.stringify(edit.json));
}

test("the balance on the personal settings page follows quota changes live", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await loginToPersonalSettings(page, "root", "123456");
  const balance = page.locator('[data-testid="balance"]');
  await balance.waitFor();
  const before = (await balance.textContent()).trim();

  const api = await rootApi(suite.gw.baseURL);
  const perUnit = await quotaPerUnit(api);
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await addQuota(api, perUnit * 5);
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

test("a balance pushed late, read before the one shown, does not replace it", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  // Keep the console's sockets reachable, to hand one a message as if the server had sent it.
  await page.addInitScript(() => {
    const Native = window.WebSocket;
    window.__sockets = [];
    window.WebSocket = class extends Native {
      constructor(...args) {
        super(...args);
        window.__sockets.push(this);
      }
    };
  });
  await loginToPersonalSettings(page, "root", "123456");
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const storedQuota = () => page.evaluate(() => JSON.parse(localStorage.getItem("user")).quota);
  const api = await rootApi(suite.gw.baseURL);
  const perUnit = await quotaPerUnit(api);
  const before = await storedQuota();
  await addQuota(api, perUnit * 3);
  await page.waitForFunction((old) => JSON.parse(localStorage.getItem("user")).quota !== old, before, { timeout: 10000 });
  const shown = await storedQuota();
  const id = (await api.call("GET", "/api/user/self")).json.data.id;
  // Frames that follow one another closely are handled together a moment later: the stored
  // record is read once that moment has passed.
  const deliver = (data) =>
    page.evaluate(async (d) => {
      window.__sockets.at(-1).dispatchEvent(new MessageEvent("message", { data: JSON.stringify({ topic: "user.self", data: d }) }));
      await new Promise((r) => setTimeout(r, 300));
      return JSON.parse(localStorage.getItem("user")).quota;
    }, data);
  // A read older than the one shown (a charge read before the credit, pushed after it).
  assert.equal(await deliver({ id, quota: 1, used_quota: 0, request_count: 0, balance_seq: 1 }), shown);
  // A later read is shown.
  assert.equal(await deliver({ id, quota: shown + 7, used_quota: 0, request_count: 0, balance_seq: Number.MAX_SAFE_INTEGER }), shown + 7);
  await context.close();
});

test("a read of the account answered after a newer balance push keeps the pushed balance", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await loginToPersonalSettings(page, "root", "123456");
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const storedQuota = () => page.evaluate(() => JSON.parse(localStorage.getItem("user")).quota);
  const release = await reloadHoldingAccountReads(page);
  const api = await rootApi(suite.gw.baseURL);
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const before = await storedQuota();
  await addQuota(api, (await quotaPerUnit(api)) * 2);
  await page.waitForFunction((old) => JSON.parse(localStorage.getItem("user")).quota !== old, before, { timeout: 10000 });
  const pushed = await storedQuota();
  release();
  await page.waitForResponse((r) => new URL(r.url()).pathname === "/api/user/self");
  await page.waitForTimeout(300);
  assert.equal(await storedQuota(), pushed, "the older read did not replace the pushed balance");
  assert.equal(pushed, (await api.call("GET", "/api/user/self")).json.data.quota);
  await context.close();
});

test("a read of the account answered after an invite transfer's push keeps the pushed invite earnings", async () => {
  const root = await rootApi(suite.gw.baseURL);
  await putOption(root, "QuotaForInviter", "1000000");
  try {
    const inviter = await newUser(suite.gw.baseURL, "lvaf", "lvaf-pass-11");
    const code = (await inviter.api.call("GET", "/api/user/aff")).json.data;
    const reg = await new ApiSession(suite.gw.baseURL).call("POST", "/api/user/register?turnstile=", { username: uniqueName("lvafd"), password: "lvafd-pass-11", password2: "lvafd-pass-11", aff_code: code });
    assert.equal(reg.json?.success, true, JSON.stringify(reg.json));
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
    await loginToPersonalSettings(page, inviter.username, inviter.password);
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    const stored = () => page.evaluate(() => JSON.parse(localStorage.getItem("user")));
    const release = await reloadHoldingAccountReads(page);
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    const before = (await stored()).quota;
    // The transfer is made in another window of the same account.
    const moved = await inviter.api.call("POST", "/api/user/aff_transfer", { quota: 500000 });
    assert.equal(moved.json?.success, true, JSON.stringify(moved.json));
    await page.waitForFunction((old) => JSON.parse(localStorage.getItem("user")).quota !== old, before, { timeout: 10000 });
    release();
    await page.waitForResponse((r) => new URL(r.url()).pathname === "/api/user/self");
    await page.waitForTimeout(300);
    const now = (await inviter.api.call("GET", "/api/user/self")).json.data;
    const shown = await stored();
    assert.equal(shown.quota, now.quota);
    assert.equal(shown.aff_quota, now.aff_quota, "the older read brought back the invite earnings already moved to the balance");
    await page.locator('[data-testid="aff-quota"]').waitFor();
    await context.close();
  } finally {
    await putOption(root, "QuotaForInviter", "0");
  }
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

test("a tab whose session ended because another account logged in in the same browser keeps that account's record", async () => {
  const x = await registerUser(suite.gw.baseURL, "tabx", "tabx-pass-1");
  const y = await registerUser(suite.gw.baseURL, "taby", "taby-pass-1");
  const { context, page: first } = await newPage(suite.browser, suite.gw.baseURL);
  // The first tab's live socket is held by the test, so the tab learns that its session ended from
  // its next call rather than at a moment of the server's choosing.
  await first.routeWebSocket(/\/api\/ws$/, () => {});
  await login(first, x.username, x.password);
  await first.waitForURL("**/token");
  // A second tab of the same browser logs in as another account: the first tab's session is over.
  const second = await context.newPage();
  await login(second, y.username, y.password);
  await second.waitForURL("**/token");
  await second.locator('html[data-live="open"]').waitFor({ state: "attached" });
  // The first tab's next call is refused: it goes to the login page, forgetting its own account only.
  await first.click('[data-nav="log"]');
  await first.waitForURL("**/login?expired=true", { timeout: 15000 });
  const stored = await second.evaluate(() => JSON.parse(localStorage.getItem("user"))?.username ?? null);
  assert.equal(stored, y.username);
  await second.reload();
  await second.locator('[data-testid="user-menu"]', { hasText: y.username }).waitFor();
  assert.match(second.url(), /\/token$/);
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

// followSockets lets the test close the page's live socket as the server or the network would.
async function followSockets(page) {
  const sockets = [];
  await page.routeWebSocket(/\/api\/ws$/, (ws) => {
    ws.connectToServer();
    sockets.push(ws);
  });
  return sockets;
}

const liveState = (page) => page.evaluate(() => document.documentElement.dataset.live);

test("after the live socket drops, the open log page catches up on what it missed", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "cat", "catch-pass-1");
  const created = await api.call("POST", "/api/token/", { name: "catch-up", unlimited_quota: true, expired_time: -1 });
  assert.equal(created.json?.success, true, JSON.stringify(created.json));
  const list = await api.call("GET", "/api/token/?p=0&size=10");
  const key = list.json.data.find((x) => x.name === "catch-up").key;

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const sockets = await followSockets(page);
  await login(page, username, password);
  await page.goto("/log");
  await page.locator('[data-testid="logs-page"]').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const rows = page.locator('[data-testid="log-row"]');
  const before = await rows.count();

  // The socket drops (a proxy restart, a network change); a call is charged while it is down.
  await sockets.at(-1).close({ code: 1011, reason: "e2e" });
  await page.locator('html[data-live="closed"]').waitFor({ state: "attached" });
  const r = await fetch(`${suite.gw.baseURL}/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer sk-${key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "while away" }] }),
  });
  assert.equal(r.status, 200, await r.text());
  // Nothing pushed it; the reconnect's reload shows it.
  await page.locator('html[data-live="open"]').waitFor({ state: "attached", timeout: 15000 });
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="log-row"]').length > n, before, { timeout: 15000 });
  await context.close();
});

test("after the live socket drops, the open home page catches up on a notice and a site name changed meanwhile", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "ntc", "notice-pass-1");
  const root = await rootApi(suite.gw.baseURL);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const sockets = await followSockets(page);
  await login(page, username, password);
  await page.goto("/");
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const name = (await root.call("GET", "/api/status")).json.data.system_name;
  try {
    await sockets.at(-1).close({ code: 1011, reason: "e2e" });
    await page.locator('html[data-live="closed"]').waitFor({ state: "attached" });
    await putOption(root, "Notice", "Notice saved while the socket was down");
    await putOption(root, "SystemName", "Renamed while away");
    // Nothing pushed them; the reconnect reads them again.
    await page.locator('html[data-live="open"]').waitFor({ state: "attached", timeout: 15000 });
    await page.locator('[data-testid="notice"]', { hasText: "Notice saved while the socket was down" }).waitFor({ timeout: 15000 });
    await page.locator(".brand", { hasText: "Renamed while away" }).waitFor({ timeout: 15000 });
  } finally {
    await putOption(root, "Notice", "");
    await putOption(root, "SystemName", name);
    await context.close();
  }
});

test("a tab whose socket a newer tab took stays quiet until it is looked at again", async () => {
  const { username, password } = await registerUser(suite.gw.baseURL, "rep", "replace-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const sockets = await followSockets(page);
  await login(page, username, password);
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  assert.equal(sockets.length, 1);

  // The server closes an account's oldest socket with 4409 when a newer one takes its place.
  await sockets[0].close({ code: 4409, reason: "too many connections for this account" });
  await page.locator('html[data-live="closed"]').waitFor({ state: "attached" });
  await page.waitForTimeout(3000); // longer than any reconnect delay after a first close
  assert.equal(sockets.length, 1, "the replaced tab reconnected by itself");
  assert.equal(await liveState(page), "closed");

  // Looked at again, it takes a socket back.
  await page.evaluate(() => window.dispatchEvent(new Event("focus")));
  await page.locator('html[data-live="open"]').waitFor({ state: "attached", timeout: 15000 });
  assert.equal(sockets.length, 2);
  await context.close();
});

test("a tab whose socket cannot reconnect because its session ended elsewhere logs out", async () => {
  const { username, password } = await registerUser(suite.gw.baseURL, "gone", "gone-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, username, password);
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  // Sockets of the same session opened elsewhere (a page that is not the console) take this tab's
  // place: the account's oldest socket is closed with 4409.
  const other = await context.newPage();
  await other.goto("/api/status");
  await other.evaluate(async () => {
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/ws`;
    await Promise.all(Array.from({ length: 16 }, () => new Promise((resolve) => {
      const ws = new WebSocket(url);
      ws.onopen = resolve;
      ws.onerror = resolve;
    })));
  });
  await page.locator('html[data-live="closed"]').waitFor({ state: "attached" });
  // The session ends while no socket of this tab is open.
  const session = (await context.cookies()).find((c) => c.name === "session").value;
  const id = await page.evaluate(() => JSON.parse(localStorage.getItem("user")).id);
  const out = await fetch(`${suite.gw.baseURL}/api/user/logout`, { headers: { Cookie: `session=${session}`, "New-Api-User": String(id) } });
  assert.equal(out.status, 200);
  // Looked at again, its upgrade is refused (the page sees only a failed connection): the console
  // learns the session ended.
  await page.evaluate(() => window.dispatchEvent(new Event("focus")));
  await page.waitForURL(/\/login/, { timeout: 15000 });
  await context.close();
});

test("an open home page and About page show the administrator's new text without a reload", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "home", "home-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, username, password);
  const root = await rootApi(suite.gw.baseURL);
  try {
    await page.goto("/");
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    await putOption(root, "HomePageContent", "Home text saved while the page was open");
    await page.getByText("Home text saved while the page was open").waitFor({ timeout: 10000 });

    await page.goto("/about");
    await page.locator('[data-testid="about-empty"]').waitFor();
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    await putOption(root, "About", "About text saved while the page was open");
    await page.getByText("About text saved while the page was open").waitFor({ timeout: 10000 });
  } finally {
    await putOption(root, "HomePageContent", "");
    await putOption(root, "About", "");
    await context.close();
  }
});

test("after the live socket drops, a later log page counts in its total what it missed", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "catp", "catch-pass-1");
  const created = await api.call("POST", "/api/token/", { name: "catch-page", unlimited_quota: true, expired_time: -1 });
  assert.equal(created.json?.success, true, JSON.stringify(created.json));
  const key = (await api.call("GET", "/api/token/?p=0&size=10")).json.data.find((x) => x.name === "catch-page").key;
  const call = async () => {
    const r = await fetch(`${suite.gw.baseURL}/v1/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer sk-${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "page two" }] }),
    });
    assert.equal(r.status, 200, await r.text());
  };
  for (let i = 0; i < 11; i++) await call();

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const sockets = await followSockets(page);
  await login(page, username, password);
  const { footer, total } = await openLogPageTwo(page);

  await sockets.at(-1).close({ code: 1011, reason: "e2e" });
  await page.locator('html[data-live="closed"]').waitFor({ state: "attached" });
  await call();
  // Nothing pushed it; the reconnect reads the open page again.
  await page.locator('html[data-live="open"]').waitFor({ state: "attached", timeout: 15000 });
  await footer.getByText(new RegExp(`共 ${total + 1} 条`)).waitFor({ timeout: 15000 });
  await context.close();
});

test("a test-all run that ends while the live socket is down does not stay 'testing' after it reconnects", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  const sockets = await followSockets(page);
  await login(page, "root", "123456");
  await page.goto("/channel");
  await page.locator('[data-testid="test-all"]').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  // The socket is down while the run starts and ends: none of its frames arrive.
  await sockets.at(-1).close({ code: 1011, reason: "e2e" });
  await page.locator('html[data-live="closed"]').waitFor({ state: "attached" });
  await page.click('[data-testid="test-all"]');
  await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
  await page.locator('[data-testid="test-all-status"]').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached", timeout: 15000 });
  await page.locator('[data-testid="test-all-status"]').waitFor({ state: "detached", timeout: 10000 });
  assert.equal(await page.locator('[data-testid="test-all"]').isDisabled(), false);
  await context.close();
});

test("a log page left open for more than an hour keeps showing new calls live", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "hour", "hour-pass-1");
  const created = await api.call("POST", "/api/token/", { name: "hour-key", unlimited_quota: true, expired_time: -1 });
  assert.equal(created.json?.success, true, JSON.stringify(created.json));
  const key = (await api.call("GET", "/api/token/?p=0&size=10")).json.data.find((x) => x.name === "hour-key").key;

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  // The log page was opened 70 minutes ago (its default range ends an hour after that) ...
  await page.clock.install({ time: Date.now() - 70 * 60 * 1000 });
  await login(page, username, password);
  await page.goto("/log");
  await page.locator('[data-testid="logs-page"]').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const rows = page.locator('[data-testid="log-row"]');
  const before = await rows.count();
  // ... and stayed open until now, nobody touching its filters.
  await page.clock.setSystemTime(Date.now());
  const r = await fetch(`${suite.gw.baseURL}/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer sk-${key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "an hour later" }] }),
  });
  assert.equal(r.status, 200, await r.text());
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="log-row"]').length > n, before, { timeout: 5000 });
  // The type filter reads the list again with the range in force: the call stays.
  await page.locator('[data-testid="log-type"]').click();
  await page.getByRole("option", { name: "消费" }).click();
  await page.waitForFunction(() => {
    const t = document.querySelector('[data-testid="log-table"]');
    return t && !t.hasAttribute("aria-busy") && t.querySelectorAll('[data-testid="log-row"]').length === 1;
  }, null, { timeout: 5000 });
  await context.close();
});

/**
 * reloadHoldingAccountReads reloads the page with its reads of the account reaching the server at once
 * but their answers held, and returns the function that lets them through.
 */
async function reloadHoldingAccountReads(page) {
  let release;
  const released = new Promise((resolve) => (release = resolve));
  let held = 0;
  await page.route((url) => url.pathname === "/api/user/self", async (route) => {
    const res = await route.fetch();
    held++;
    await released;
    await route.fulfill({ response: res });
  });
  await page.reload();
  const deadline = Date.now() + 10000;
  while (held === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(held > 0, "the page load read the account");
  return release;
}

test("a console whose gateway restarts says the connection is down, then reconnects and reads again what changed meanwhile", async () => {
  const { username, password, api } = await newUser(suite.gw.baseURL, "rst", "restart-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, username, password);
  await page.goto("/token");
  await page.locator('[data-testid="tokens-page"]').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const banner = page.locator('[data-testid="live-down"]');
  assert.equal(await banner.count(), 0, "no notice while the socket is open");

  // The process dies; while nothing listens on its port the console says it is out of date.
  await suite.gw.halt("SIGKILL");
  await page.locator('html[data-live="closed"]').waitFor({ state: "attached" });
  await banner.waitFor({ timeout: 8000 });
  assert.match(await banner.textContent(), /连接已断开/);

  // Back on the same port and data file: a token made while the console was out of date shows, the
  // session held, and the notice goes. The console may reconnect before the token is made; its
  // reads of the list wait for the token, so only a read after the reconnect can show it.
  let tokenMade;
  const gate = new Promise((resolve) => (tokenMade = resolve));
  await page.route((url) => url.pathname === "/api/token/", async (route) => {
    await gate;
    await route.continue();
  });
  await suite.gw.restart();
  const made = await api.call("POST", "/api/token/", { name: "after-restart", unlimited_quota: true, expired_time: -1 });
  assert.equal(made.json?.success, true, JSON.stringify(made.json));
  tokenMade();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached", timeout: 20000 });
  await banner.waitFor({ state: "detached" });
  await page.locator('[data-testid="token-name"]', { hasText: "after-restart" }).waitFor({ timeout: 10000 });
  assert.match(page.url(), /\/token$/);
  await context.close();
});
