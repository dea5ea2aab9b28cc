import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiSession, expectToast, gatewaySuite, loginToPersonalSettings, newPage, newUser, putOption, rootApi, submitLogin, toPersonalSettings, uniqueName } from "./harness.mjs";

const suite = gatewaySuite();

test("register, log in, edit the display name, change the password, log out, log in again", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const username = uniqueName("acc");
  const password = "first-pass-1";
  const newPassword = "second-pass-2";

  await page.goto("/register");
  await page.fill("#reg-username", username);
  await page.fill("#reg-password", "short");
  await page.fill("#reg-password2", "short");
  await page.click('[data-testid="register-submit"]');
  await expectToast(page, "密码长度不得小于 8 位！");

  // A longer password than the server takes is refused, not silently cut to 20 characters.
  await page.fill("#reg-password", "a-password-of-24-chars!!");
  await page.fill("#reg-password2", "a-password-of-24-chars!!");
  await page.click('[data-testid="register-submit"]');
  await expectToast(page, "密码长度不得超过 20 位！");

  await page.fill("#reg-password", password);
  await page.fill("#reg-password2", password + "x");
  await page.click('[data-testid="register-submit"]');
  await expectToast(page, "两次输入的密码不一致");

  await page.fill("#reg-password2", password);
  await page.click('[data-testid="register-submit"]');
  await expectToast(page, "注册成功！");
  await page.waitForURL("**/login");

  await page.click('[data-testid="login-submit"]');
  await expectToast(page, "请输入用户名和密码！");

  await submitLogin(page, username, password);
  await expectToast(page, "登录成功！");
  await toPersonalSettings(page);
  await page.locator('[data-testid="profile-username"]', { hasText: username }).waitFor();
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem("user") ?? "null"));
  assert.equal(stored?.username, username);

  await page.click('[data-testid="edit-profile"]');
  await page.fill("#profile-display-name", "Tester");
  await page.click('[data-testid="save-profile"]');
  await expectToast(page, "用户信息更新成功！");
  await page.locator('[data-testid="profile-display-name"]', { hasText: "Tester" }).waitFor();

  await page.fill("#pw-current", password);
  await page.fill("#pw-new", newPassword);
  await page.fill("#pw-new2", newPassword + "x");
  await page.click('[data-testid="change-password"]');
  await expectToast(page, "两次输入的密码不一致！");
  await page.fill("#pw-new2", newPassword);
  await page.click('[data-testid="change-password"]');
  await expectToast(page, "密码修改成功！");
  // The session survives a password change: the page still works after a reload.
  await page.reload();
  await page.locator('[data-testid="profile-display-name"]', { hasText: "Tester" }).waitFor();
  assert.match(page.url(), /\/setting/);

  await page.click('[data-testid="user-menu"]');
  await page.click('[data-testid="logout"]');
  await page.waitForURL("**/login");
  assert.equal(await page.evaluate(() => localStorage.getItem("user")), null);

  await submitLogin(page, username, password);
  await page.locator(".toast-error", { hasNotText: "请输入用户名和密码！" }).first().waitFor();
  assert.match(page.url(), /\/login/);

  await submitLogin(page, username, newPassword);
  await expectToast(page, "登录成功！");
  await toPersonalSettings(page);
  await page.locator('[data-testid="profile-display-name"]', { hasText: "Tester" }).waitFor();
  await context.close();
});

test("root with the default password is warned and sent to the personal settings", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await submitLogin(page, "root", "123456");
  const warning = await page.locator(".toast-warning").first();
  await warning.waitFor();
  assert.ok((await warning.textContent()).trim().length > 0, "the warning toast carries the server's message");
  // Logged in all the same: the success toast too (A §8).
  await expectToast(page, "登录成功！");
  await toPersonalSettings(page);
  await context.close();
});

test("root's personal tab says the super administrator account cannot be deleted instead of offering to", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await loginToPersonalSettings(page, "root", "123456");
  const button = page.locator('[data-testid="delete-account"]');
  await button.waitFor();
  assert.equal(await button.isDisabled(), true, "root is offered a deletion the server always refuses");
  assert.equal(await page.locator('[data-testid="delete-account-note"]').textContent(), "不能删除超级管理员账户。");
  await context.close();
});

test("access token, invite link and account deletion on the personal tab", async () => {
  const username = uniqueName("tok");
  const password = "token-pass-1";
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { permissions: ["clipboard-read", "clipboard-write"] });
  await registerToPersonalSettings(page, username, password);

  await page.click('[data-testid="generate-token"]');
  await expectToast(page, "令牌已重置并已复制到剪贴板");
  const token = (await page.locator('[data-testid="access-token"]').textContent()).trim();
  assert.ok(token.length >= 16, `token shown: ${token}`);
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token);

  await page.click('[data-testid="copy-invite"]');
  await expectToast(page, "邀请链接已复制到剪切板");
  const link = (await page.locator('[data-testid="invite-link"]').textContent()).trim();
  assert.match(link, new RegExp(`^${suite.gw.baseURL.replace(/[.]/g, "\\.")}/register\\?aff=\\w+$`));

  await page.click('[data-testid="delete-account"]');
  await page.fill('[data-testid="delete-confirm-input"]', username + "x");
  await page.getByRole("alertdialog").getByRole("button", { name: "确认删除" }).click();
  await expectToast(page, "请输入你的账户名以确认删除！");
  await page.fill('[data-testid="delete-confirm-input"]', username);
  await page.getByRole("alertdialog").getByRole("button", { name: "确认删除" }).click();
  await expectToast(page, "账户已删除！");
  await page.waitForURL((url) => url.pathname === "/");
  assert.equal(await page.evaluate(() => localStorage.getItem("user")), null);

  await submitLogin(page, username, password);
  await page.locator(".toast-error").first().waitFor();
  assert.match(page.url(), /\/login/);
  await context.close();
});

test("a refused clipboard opens the manual-copy dialog", async () => {
  const username = uniqueName("clp");
  const password = "clip-pass-11";
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await page.addInitScript(() => {
    Object.defineProperty(navigator, "clipboard", { value: { writeText: () => Promise.reject(new Error("denied")) } });
  });
  await registerToPersonalSettings(page, username, password);
  await page.click('[data-testid="copy-invite"]');
  const text = page.locator('[data-testid="manual-copy-text"]');
  await text.waitFor();
  assert.match(await text.inputValue(), /\/register\?aff=/);
  await context.close();
});

test("a token key waiting in the manual-copy dialog is gone once the session ends", async () => {
  const x = await newUser(suite.gw.baseURL, "clk", "clip-pass-12");
  const made = await x.api.call("POST", "/api/token/", { name: "clip-key", remain_quota: 0, unlimited_quota: true, expired_time: -1 });
  assert.equal(made.json?.success, true, JSON.stringify(made.json));
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await page.addInitScript(() => {
    Object.defineProperty(navigator, "clipboard", { value: { writeText: () => Promise.reject(new Error("denied")) } });
  });
  await submitLogin(page, x.username, x.password);
  await page.waitForURL("**/token");
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.click('[data-testid="copy-key"]');
  const text = page.locator('[data-testid="manual-copy-text"]');
  await text.waitFor();
  assert.match(await text.inputValue(), /^sk-/);
  // The session ends elsewhere (a password change from another session) while the key is on screen.
  const r = await x.api.call("PUT", "/api/user/self", { password: "clip-pass-13", original_password: x.password });
  assert.equal(r.json?.success, true, JSON.stringify(r.json));
  await page.waitForURL("**/login?expired=true", { timeout: 15000 });
  await page.locator('[data-testid="expired-notice"]').waitFor();
  // The next person at the browser does not find the key on the login page.
  await text.waitFor({ state: "detached", timeout: 5000 });
  await context.close();
});

test("with registration off, neither the login form nor the top bar offers to register", async () => {
  const root = await rootApi(suite.gw.baseURL);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await page.goto("/login");
  await page.locator('[data-testid="login-submit"]').waitFor();
  assert.equal(await page.locator('a[href="/register"]').count(), 1);
  await root.call("PUT", "/api/option/", { key: "RegisterEnabled", value: "false" });
  try {
    await page.reload();
    await page.locator('[data-testid="login-submit"]').waitFor();
    // Both go once the status saying so has arrived.
    await page.waitForFunction(
      () => !document.querySelector('a[href="/register"]') && ![...document.querySelectorAll(".auth-links button")].some((b) => b.textContent === "注册"),
      undefined,
      { timeout: 10000 },
    );
  } finally {
    await root.call("PUT", "/api/option/", { key: "RegisterEnabled", value: "true" });
  }
  await context.close();
});

test("a password change shows the revoked access token as gone", async () => {
  const username = uniqueName("atp");
  const password = "token-pass-1";
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { permissions: ["clipboard-read", "clipboard-write"] });
  await registerToPersonalSettings(page, username, password);

  await page.click('[data-testid="generate-token"]');
  await expectToast(page, "令牌已重置并已复制到剪贴板");
  const token = (await page.locator('[data-testid="access-token"]').textContent()).trim();
  await page.locator('[data-testid="access-token-state"]', { hasText: "已生成" }).waitFor();

  // A new password revokes the access token (docs/decisions.md): the card must not keep offering it.
  await page.fill("#pw-current", password);
  await page.fill("#pw-new", "token-pass-2");
  await page.fill("#pw-new2", "token-pass-2");
  await page.click('[data-testid="change-password"]');
  await expectToast(page, "密码修改成功！");
  const res = await fetch(`${suite.gw.baseURL}/api/user/self`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal((await res.json()).success, false, "the old access token was revoked");
  await page.locator('[data-testid="access-token-state"]', { hasText: "未生成" }).waitFor({ timeout: 5000 });
  assert.equal(await page.locator('[data-testid="access-token"]').count(), 0, "the revoked token is no longer shown");
  await context.close();
});

test("a second tab of the same login follows the access token made and revoked in the first", async () => {
  const username = uniqueName("a2t");
  const password = "token-pass-1";
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { permissions: ["clipboard-read", "clipboard-write"] });
  await registerToPersonalSettings(page, username, password);
  const other = await context.newPage();
  other.setDefaultTimeout(10000);
  await other.goto("/setting?tab=personal");
  await other.locator('[data-testid="access-token-state"]', { hasText: "未生成" }).waitFor();

  await page.click('[data-testid="generate-token"]');
  await expectToast(page, "令牌已重置并已复制到剪贴板");
  // The other tab learns of the token without a reload.
  await other.locator('[data-testid="access-token-state"]', { hasText: "已生成" }).waitFor({ timeout: 5000 });

  // A new password revokes it: the other tab no longer says there is one.
  await page.fill("#pw-current", password);
  await page.fill("#pw-new", "token-pass-2");
  await page.fill("#pw-new2", "token-pass-2");
  await page.click('[data-testid="change-password"]');
  await expectToast(page, "密码修改成功！");
  await other.locator('[data-testid="access-token-state"]', { hasText: "未生成" }).waitFor({ timeout: 5000 });
  await context.close();
});

test("a token shown in one tab is hidden once another tab makes a new one", async () => {
  const username = uniqueName("a3t");
  const password = "token-pass-1";
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { permissions: ["clipboard-read", "clipboard-write"] });
  await registerToPersonalSettings(page, username, password);
  await page.click('[data-testid="generate-token"]');
  await expectToast(page, "令牌已重置并已复制到剪贴板");
  const first = (await page.locator('[data-testid="access-token"]').textContent()).trim();

  const other = await context.newPage();
  other.setDefaultTimeout(10000);
  await other.goto("/setting?tab=personal");
  await other.click('[data-testid="generate-token"]');
  await expectToast(other, "令牌已重置并已复制到剪贴板");
  const second = (await other.locator('[data-testid="access-token"]').textContent()).trim();
  assert.notEqual(first, second);
  const res = await fetch(`${suite.gw.baseURL}/api/user/self`, { headers: { Authorization: `Bearer ${first}` } });
  assert.equal((await res.json()).success, false, "the first token was replaced");

  // The first tab no longer offers the replaced token as the one to copy; the second keeps its own.
  await page.locator('[data-testid="access-token"]').waitFor({ state: "detached", timeout: 5000 });
  await page.locator('[data-testid="access-token-state"]', { hasText: "已生成" }).waitFor();
  await other.waitForTimeout(1000);
  assert.equal((await other.locator('[data-testid="access-token"]').textContent()).trim(), second);
  await context.close();
});

/** registerToPersonalSettings registers through the form, logs in and opens the personal settings tab. */
async function registerToPersonalSettings(page, username, password) {
  await page.goto("/register");
  await page.fill("#reg-username", username);
  await page.fill("#reg-password", password);
  await page.fill("#reg-password2", password);
  await page.click('[data-testid="register-submit"]');
  await page.waitForURL("**/login");
  await loginToPersonalSettings(page, username, password);
}

test("an invite transfer that is not a whole quota is refused, not cut to one", async () => {
  const root = await rootApi(suite.gw.baseURL);
  await putOption(root, "QuotaForInviter", "1000000");
  try {
    const inviter = await newUser(suite.gw.baseURL, "aff", "aff-pass-11");
    const code = (await inviter.api.call("GET", "/api/user/aff")).json.data;
    const invitee = uniqueName("affd");
    const r = await new ApiSession(suite.gw.baseURL).call("POST", "/api/user/register?turnstile=", { username: invitee, password: "affd-pass-11", password2: "affd-pass-11", aff_code: code });
    assert.equal(r.json?.success, true, JSON.stringify(r.json));
    assert.equal((await inviter.api.call("GET", "/api/user/self")).json.data.aff_quota, 1000000);

    const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
    await loginToPersonalSettings(page, inviter.username, inviter.password);
    await page.getByRole("button", { name: "划转到余额" }).click();
    await page.fill("#transfer-amount", "600000.5");
    await page.getByRole("dialog").getByRole("button", { name: "确定" }).click();
    await expectToast(page, "额度必须是整数");
    // Read as 600000 it would move less than was asked, without a word.
    assert.equal((await inviter.api.call("GET", "/api/user/self")).json.data.aff_quota, 1000000, "a transfer of 600000.5 moved quota");
    await page.fill("#transfer-amount", "600000");
    await page.getByRole("dialog").getByRole("button", { name: "确定" }).click();
    await expectToast(page, "划转成功");
    assert.equal((await inviter.api.call("GET", "/api/user/self")).json.data.aff_quota, 400000);
    await context.close();
  } finally {
    await putOption(root, "QuotaForInviter", "0");
  }
});

test("the invite transfer dialog offers a minimum it accepts at a decimal QuotaPerUnit", async () => {
  const root = await rootApi(suite.gw.baseURL);
  await putOption(root, "QuotaForInviter", "5000");
  await putOption(root, "QuotaPerUnit", "1000.5");
  try {
    const inviter = await newUser(suite.gw.baseURL, "affq", "aff-pass-11");
    const code = (await inviter.api.call("GET", "/api/user/aff")).json.data;
    const r = await new ApiSession(suite.gw.baseURL).call("POST", "/api/user/register?turnstile=", { username: uniqueName("affe"), password: "affd-pass-11", password2: "affd-pass-11", aff_code: code });
    assert.equal(r.json?.success, true, JSON.stringify(r.json));
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
    await loginToPersonalSettings(page, inviter.username, inviter.password);
    await page.getByRole("button", { name: "划转到余额" }).click();
    // The amount the dialog fills in is the least the server takes: 1001 quota (1000.5 rounded up).
    await page.getByRole("dialog").getByRole("button", { name: "确定" }).click();
    await expectToast(page, "划转成功");
    assert.equal((await inviter.api.call("GET", "/api/user/self")).json.data.aff_quota, 5000 - 1001);
    await context.close();
  } finally {
    await putOption(root, "QuotaPerUnit", "500000");
    await putOption(root, "QuotaForInviter", "0");
  }
});

test("a reset link whose address is not one shows the invalid-link notice, not the link's text as the address", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const bait = "Your account is locked, call +1 555 0100 to unlock it";
  await page.goto(`/user/reset?email=${encodeURIComponent(bait)}&token=abc`);
  await page.getByText("无效的重置链接，请重新发起密码重置请求").waitFor();
  assert.equal(await page.getByText(bait).count(), 0, "the link's text is not shown");
  // A real one still offers the confirmation.
  await page.goto(`/user/reset?email=${encodeURIComponent("someone@example.com")}&token=abc`);
  await page.getByText("someone@example.com").waitFor();
  await context.close();
});
