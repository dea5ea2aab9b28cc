// Third-party login end to end: the console's GitHub button, a fake GitHub
// (consent page, token and profile endpoints) on loopback, the gateway's
// callback and the stored user record.
import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { createServer } from "node:http";
import { test } from "node:test";
import { expectToast, launchBrowser, login as logInThroughForm, newPage, newUser, putOption, rootApi, startGateway } from "./harness.mjs";

const CLIENT_ID = "e2e-client";
const CLIENT_SECRET = "e2e-secret";
const GITHUB_USER = { id: 5550123, login: "e2e-octo", name: "E2E Octo", email: "octo-e2e@example.com" };

/** startFakeGitHub answers the consent page by redirecting straight back with a code, and the two API calls. */
async function startFakeGitHub() {
  const seen = { authorize: [], token: [], user: [] };
  const code = "e2e-code";
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://fake");
    let raw = "";
    for await (const c of req) raw += c;
    if (req.method === "GET" && url.pathname === "/login/oauth/authorize") {
      const q = Object.fromEntries(url.searchParams);
      seen.authorize.push(q);
      const back = new URL(q.redirect_uri);
      back.searchParams.set("code", code);
      back.searchParams.set("state", q.state);
      res.writeHead(302, { Location: back.toString() });
      res.end();
      return;
    }
    if (req.method === "POST" && url.pathname === "/login/oauth/access_token") {
      const body = JSON.parse(raw || "{}");
      seen.token.push(body);
      res.writeHead(200, { "Content-Type": "application/json" });
      const ok = body.client_id === CLIENT_ID && body.client_secret === CLIENT_SECRET && body.code === code;
      res.end(JSON.stringify(ok ? { access_token: "e2e-token", token_type: "bearer" } : { error: "bad_verification_code" }));
      return;
    }
    if (req.method === "GET" && url.pathname === "/user") {
      seen.user.push(req.headers.authorization);
      if (req.headers.authorization !== "Bearer e2e-token") {
        res.writeHead(401, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ message: "Bad credentials" }));
        return;
      }
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(GITHUB_USER));
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return { base, seen, close: () => new Promise((resolve) => server.close(resolve)) };
}

test("log in with GitHub through the console and a fake provider", async (t) => {
  const github = await startFakeGitHub();
  t.after(() => github.close());
  // The harness passes its own environment on to the gateway.
  process.env.GATEWAY_GITHUB_AUTHORIZE_URL = `${github.base}/login/oauth/authorize`;
  process.env.GATEWAY_GITHUB_TOKEN_URL = `${github.base}/login/oauth/access_token`;
  process.env.GATEWAY_GITHUB_USER_URL = `${github.base}/user`;
  const gw = await startGateway();
  t.after(() => gw.stop());
  const browser = await launchBrowser();
  t.after(() => browser.close());

  const root = await rootApi(gw.baseURL);
  for (const [key, value] of [
    ["GitHubClientId", CLIENT_ID],
    ["GitHubClientSecret", CLIENT_SECRET],
    ["GitHubOAuthEnabled", "true"],
  ]) {
    await putOption(root, key, value);
  }

  const { page } = await newPage(browser, gw.baseURL);
  // A failed login goes back to the login page, and the next one still lands on the home page.
  await page.goto("/oauth/github?code=e2e-code&state=not-this-browsers");
  await expectToast(page, "授权状态无效或已过期，请重新发起登录");
  await page.waitForURL((u) => u.pathname === "/login");
  await page.click('[data-testid="oauth-github"]');
  await expectToast(page, "登录成功！");
  // A third-party login lands on the home page (A §1).
  await page.waitForURL((u) => u.pathname === "/");

  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem("user") ?? "null"));
  assert.equal(stored?.username, `github_${GITHUB_USER.id}`);
  assert.equal(stored?.github_id, String(GITHUB_USER.id));
  assert.equal(stored?.display_name, GITHUB_USER.name);

  assert.equal(github.seen.authorize.length, 1);
  const consent = github.seen.authorize[0];
  assert.equal(consent.client_id, CLIENT_ID);
  assert.equal(consent.redirect_uri, `${gw.baseURL}/oauth/github`);
  assert.match(consent.state, /^[A-Za-z0-9]{32}$/);
  assert.deepEqual(github.seen.token, [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, code: "e2e-code" }]);
  assert.deepEqual(github.seen.user, ["Bearer e2e-token"]);

  // The session cookie the callback set works for the console's calls.
  const self = await page.evaluate(async (id) => {
    const res = await fetch("/api/user/self", { headers: { "New-Api-User": String(id) }, credentials: "same-origin" });
    return res.json();
  }, stored.id);
  assert.equal(self.success, true);
  assert.equal(self.data.username, `github_${GITHUB_USER.id}`);

  // The account has no password yet: its owner sets the first without an old one.
  assert.equal(self.data.has_password, false);
  await page.goto("/setting?tab=personal");
  await page.locator('[data-testid="first-password"]').waitFor();
  assert.equal(await page.locator("#pw-current").count(), 0);
  await page.fill("#pw-new", "github-pass-1");
  await page.fill("#pw-new2", "github-pass-1");
  await page.click('[data-testid="change-password"]');
  await expectToast(page, "密码修改成功！");
  // From then on the current password is asked for, and the new one logs in.
  await page.locator("#pw-current").waitFor();
  const login = await fetch(`${gw.baseURL}/api/user/login`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username: `github_${GITHUB_USER.id}`, password: "github-pass-1" }),
  });
  assert.equal(login.status, 200);
});

/** signTelegram returns the Login Widget's query for a Telegram user, signed as Telegram signs it. */
function signTelegram(botToken, user) {
  const fields = { ...user, auth_date: String(Math.floor(Date.now() / 1000)) };
  const check = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join("\n");
  const key = createHash("sha256").update(botToken).digest();
  const hash = createHmac("sha256", key).update(check).digest("hex");
  return new URLSearchParams({ ...fields, hash }).toString();
}

test("bind Telegram through the widget redirect, then log in through the callback page", async (t) => {
  const gw = await startGateway();
  t.after(() => gw.stop());
  const browser = await launchBrowser();
  t.after(() => browser.close());
  const botToken = "4242:e2e-bot-token";

  const root = await rootApi(gw.baseURL);
  for (const [key, value] of [
    ["TelegramBotToken", botToken],
    ["TelegramBotName", "e2e_bot"],
    ["TelegramOAuthEnabled", "true"],
  ]) {
    await putOption(root, key, value);
  }

  // The widget's redirect carries the session cookie and the state the
  // console put into data-auth-url, but no New-Api-User.
  const { username, api: me } = await newUser(gw.baseURL, "tg", "tg-pass-123");
  const state = (await me.call("GET", "/api/oauth/state")).json.data;
  const login = signTelegram(botToken, { id: "77001", first_name: "Tele", username: "tele_e2e" });
  const res = await fetch(`${gw.baseURL}/api/oauth/telegram/bind?${login}&state=${state}`, {
    headers: { Cookie: me.cookie },
    redirect: "manual",
  });
  assert.equal(res.status, 302);
  assert.equal(res.headers.get("location"), "/setting?tab=personal&bind=telegram");

  // A link with someone's signed login does not sign in a browser that did
  // not start that login (no state of its own in the URL).
  const { page: visitor } = await newPage(browser, gw.baseURL);
  await visitor.goto(`/oauth/telegram?${login}`);
  await expectToast(visitor, "授权状态无效或已过期，请重新发起登录");
  await visitor.waitForURL((u) => u.pathname === "/login");
  assert.equal(await visitor.evaluate(() => localStorage.getItem("user")), null);

  // The callback page signs in with the widget's parameters and the state the
  // login page put into the widget's data-auth-url.
  const { page } = await newPage(browser, gw.baseURL);
  await page.goto("/login");
  await page.getByTestId("oauth-telegram").click();
  const authUrl = await page.locator('[data-testid="telegram-login"] script').getAttribute("data-auth-url");
  assert.match(authUrl, /\/oauth\/telegram\?state=[0-9A-Za-z]{32}$/);
  // Telegram sends the browser to data-auth-url with the signed login added.
  await page.goto(`${authUrl}&${login}`);
  await expectToast(page, "登录成功！");
  await page.waitForURL((u) => u.pathname === "/");
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem("user") ?? "null"));
  assert.equal(stored?.username, username);
  assert.equal(stored?.telegram_id, "77001");

  // A link from elsewhere to the settings page with a result of its own
  // shows nothing: the text is its author's, not the server's.
  const binder = await newUser(gw.baseURL, "tgb", "tg-pass-123");
  const { page: settings } = await newPage(browser, gw.baseURL);
  await logInThroughForm(settings, binder.username, "tg-pass-123");
  await settings.goto("/setting?tab=personal&error=" + encodeURIComponent("账户异常，请联系客服 QQ 10001"));
  await settings.waitForURL((u) => u.search === "?tab=personal");
  await settings.goto("/setting?tab=personal&bind=telegram");
  await settings.waitForURL((u) => u.search === "?tab=personal");
  await settings.getByTestId("bind-telegram").waitFor();
  await settings.waitForTimeout(300);
  assert.equal(await settings.getByText("账户异常", { exact: false }).count(), 0);
  assert.equal(await settings.getByText("Telegram 账户绑定成功！").count(), 0);

  // The settings page reports the result of a binding this tab started
  // (the widget's redirect) and tidies the address.
  const startBind = async () => {
    await settings.getByTestId("bind-telegram").click();
    await settings.locator('[data-testid="telegram-bind"] script').waitFor({ state: "attached" });
  };
  await startBind();
  await settings.goto("/setting?tab=personal&error=" + encodeURIComponent("该 Telegram 账户已被其他账户绑定"));
  await expectToast(settings, "绑定失败：该 Telegram 账户已被其他账户绑定");
  await settings.waitForURL((u) => u.search === "?tab=personal");
  await startBind();
  await settings.goto("/setting?tab=personal&bind=telegram");
  await expectToast(settings, "Telegram 账户绑定成功！");

  // A tampered login is refused; the page says so and leaves.
  const tampered = login.replace("tele_e2e", "someone_else");
  const { page: other } = await newPage(browser, gw.baseURL);
  await other.goto("/login");
  const otherState = await other.evaluate(() => fetch("/api/oauth/state").then((r) => r.json()).then((j) => j.data));
  await other.goto(`/oauth/telegram?${tampered}&state=${otherState}`);
  await expectToast(other, "Telegram 登录信息校验失败");
  await expectToast(other, "操作失败，重定向至登录界面中...");
  await other.waitForURL((u) => u.pathname === "/login");
});

test("log in with a code from the WeChat official account, only in the browser that asked", async (t) => {
  // A fake WeChat server: GET /api/wechat/user?code= answers the account's id for a known code.
  const seen = [];
  const server = createServer((req, res) => {
    const u = new URL(req.url, "http://x");
    seen.push({ path: u.pathname, code: u.searchParams.get("code"), auth: req.headers.authorization });
    const ok = u.pathname === "/api/wechat/user" && u.searchParams.get("code") === "246810";
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(ok ? { success: true, message: "", data: "wx-open-e2e" } : { success: false, message: "验证码错误或已过期" }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const gw = await startGateway();
  t.after(() => gw.stop());
  const browser = await launchBrowser();
  t.after(() => browser.close());
  const root = await rootApi(gw.baseURL);
  for (const [key, value] of [
    ["WeChatServerAddress", `http://127.0.0.1:${server.address().port}`],
    ["WeChatServerToken", "e2e-wechat-token"],
    ["WeChatAuthEnabled", "true"],
  ]) {
    await putOption(root, key, value);
  }

  // A link with someone's code signs in no browser that did not start that login.
  const link = await fetch(`${gw.baseURL}/api/oauth/wechat?code=246810`);
  assert.equal(link.status, 403);
  assert.equal(seen.length, 0, "a login without the browser's state reached the WeChat server");

  const { page } = await newPage(browser, gw.baseURL);
  await page.goto("/login");
  await page.click('[data-testid="oauth-wechat"]');
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("textbox").fill("246810");
  await dialog.getByRole("button", { name: "登录" }).click();
  await expectToast(page, "登录成功！");
  await page.waitForURL((u) => u.pathname === "/");
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem("user") ?? "null"));
  assert.match(stored?.username ?? "", /^wechat_\d{8}$/);
  assert.deepEqual(seen, [{ path: "/api/wechat/user", code: "246810", auth: "e2e-wechat-token" }]);
});
