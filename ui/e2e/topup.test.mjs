import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { test } from "node:test";
import { expectToast, gatewaySuite, login, money, newPage, newUser, putOption, quotaPerUnit, rootApi } from "./harness.mjs";

const EPAY_ID = "1001";
const EPAY_KEY = "test-key";

let root;
let perUnit;
let payGw;

/** epaySign is epay's MD5 rule: non-empty params except sign/sign_type, sorted, k=v&…, then the key. */
function epaySign(params, key) {
  const joined = Object.keys(params)
    .filter((k) => params[k] !== "" && params[k] !== undefined && k !== "sign" && k !== "sign_type")
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join("&");
  return createHash("md5").update(joined + key).digest("hex");
}

/**
 * startFakeEpay is a payment provider on 127.0.0.1: POST /submit.php checks
 * the gateway's signed form, "pays" by calling its notify_url with GET and
 * shows the browser a small page.
 */
function startFakeEpay() {
  const submissions = [];
  let waiters = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    if (req.method !== "POST" || url.pathname !== "/submit.php") {
      res.writeHead(404).end("not found");
      return;
    }
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (body += c));
    req.on("end", async () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      const record = { form, signOk: form.sign === epaySign(form, EPAY_KEY), notifyStatus: null, notifyAnswer: null, error: null };
      try {
        const paid = {
          pid: form.pid,
          type: form.type,
          out_trade_no: form.out_trade_no,
          trade_no: "EP" + Date.now(),
          name: form.name,
          money: form.money,
          trade_status: "TRADE_SUCCESS",
        };
        paid.sign_type = "MD5";
        paid.sign = epaySign(paid, EPAY_KEY);
        const notify = new URL(form.notify_url);
        for (const [k, v] of Object.entries(paid)) notify.searchParams.set(k, v);
        const r = await fetch(notify);
        record.notifyStatus = r.status;
        record.notifyAnswer = await r.text();
      } catch (err) {
        record.error = String(err);
      }
      submissions.push(record);
      for (const w of waiters) w(record);
      waiters = [];
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(`<!doctype html><title>paid</title><p id="paid">paid ${form.money}</p><a href="${form.return_url}">back</a>`);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        submissions,
        next: () => new Promise((r) => waiters.push(r)),
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    payGw = await startFakeEpay();
    root = await rootApi(gw.baseURL);
    for (const [key, value] of Object.entries({ ServerAddress: gw.baseURL, PayAddress: payGw.url, EpayId: EPAY_ID, EpayKey: EPAY_KEY, Price: "7.3" })) {
      await putOption(root, key, value);
    }
    perUnit = await quotaPerUnit(root);
  },
  teardown: () => payGw?.close(),
});

test("a user pays online through the provider, the balance follows and root sees the paid order", async () => {
  const { username, password, api: userApi } = await newUser(suite.gw.baseURL, "epay", "epay-pass-1");
  const start = (await userApi.call("GET", "/api/user/self")).json.data.quota;

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, username, password);
  await page.goto("/topup");
  const balance = page.locator('[data-testid="wallet-balance"]');
  await balance.waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  assert.equal((await balance.textContent()).trim(), money(start, perUnit));
  // A normal user does not see the order list.
  assert.equal(await page.locator('[data-testid="topup-orders"]').count(), 0);

  await page.fill('[data-testid="topup-amount"]', "2");
  await page.locator('[data-testid="topup-money"]', { hasText: "14.60" }).waitFor();
  await page.locator('[data-testid="pay-zfb"]').click();
  const confirm = page.locator('[data-testid="pay-confirm"]');
  await confirm.waitFor();
  assert.match(await confirm.textContent(), /14\.60/);
  assert.match(await confirm.textContent(), /支付宝/);

  const submitted = payGw.next();
  const popup = context.waitForEvent("page", { timeout: 10000 }).catch(() => null);
  await page.getByRole("alertdialog").getByRole("button", { name: "确定" }).click();
  const rec = await submitted;

  // The provider got a correctly signed form for this order.
  assert.equal(rec.signOk, true, JSON.stringify(rec.form));
  assert.equal(rec.form.pid, EPAY_ID);
  assert.equal(rec.form.type, "alipay");
  assert.equal(rec.form.money, "14.60");
  assert.equal(rec.form.sign_type, "MD5");
  assert.equal(rec.form.notify_url, suite.gw.baseURL + "/api/user/epay/notify");
  assert.match(rec.form.out_trade_no, /^USR\d+NO/);
  assert.equal(rec.error, null);
  assert.equal(rec.notifyStatus, 200);
  assert.equal(rec.notifyAnswer, "success");

  // The paying window opened beside the console, which stays open and follows live.
  const paid = await popup;
  if (paid) {
    await paid.locator("#paid").waitFor();
    assert.match(await paid.locator("#paid").textContent(), /14\.60/);
  }
  if (!new URL(page.url()).pathname.startsWith("/topup")) await page.goto("/topup");
  await page.waitForFunction((want) => document.querySelector('[data-testid="wallet-balance"]')?.textContent?.trim() === want, money(start + 2 * perUnit, perUnit), {
    timeout: 10000,
  });
  const self = (await userApi.call("GET", "/api/user/self")).json.data.quota;
  assert.equal(self, start + 2 * perUnit);

  // Exactly one top-up log records the payment.
  const logs = await userApi.call("GET", "/api/log/self/?p=1&page_size=50&type=1");
  assert.equal(logs.status, 200, JSON.stringify(logs.json));
  const items = logs.json.data.items.filter((l) => l.type === 1);
  assert.equal(items.length, 1, JSON.stringify(logs.json.data.items));
  assert.match(items[0].content, new RegExp(rec.form.out_trade_no));

  // A replayed notification is answered success but credits nothing more.
  const replay = new URL(rec.form.notify_url);
  const again = { pid: EPAY_ID, type: "alipay", out_trade_no: rec.form.out_trade_no, trade_no: "EPX", name: rec.form.name, money: "14.60", trade_status: "TRADE_SUCCESS", sign_type: "MD5" };
  again.sign = epaySign(again, EPAY_KEY);
  for (const [k, v] of Object.entries(again)) replay.searchParams.set(k, v);
  assert.equal(await (await fetch(replay)).text(), "success");
  assert.equal((await userApi.call("GET", "/api/user/self")).json.data.quota, start + 2 * perUnit);
  await context.close();

  // Root sees the paid order in the wallet's order list.
  const orders = await root.call("GET", "/api/topup/?p=0");
  const order = orders.json.data.find((o) => o.trade_no === rec.form.out_trade_no);
  assert.ok(order, JSON.stringify(orders.json));
  assert.equal(order.status, "success");

  const admin = await newPage(suite.browser, suite.gw.baseURL);
  await login(admin.page, "root", "123456");
  await admin.page.goto("/topup");
  const card = admin.page.locator('[data-testid="topup-orders"]');
  await card.getByText("充值订单").waitFor();
  const row = admin.page.locator(`[data-testid="topup-order-${order.id}"]`);
  await row.waitFor();
  assert.equal((await row.locator('[data-testid="topup-order-status"]').textContent()).trim(), "已完成");
  assert.equal((await row.locator('[data-testid="topup-order-user"]').textContent()).trim(), String(userApi.userId));
  assert.equal((await row.locator('[data-testid="topup-order-amount"]').textContent()).trim(), money(2 * perUnit, perUnit));
  assert.equal((await row.locator('[data-testid="topup-order-money"]').textContent()).trim(), "14.60 元");
  assert.match(await row.textContent(), /支付宝/);
  assert.doesNotMatch(await row.textContent(), /alipay/);
  assert.equal(await card.locator('[data-testid="topup-orders-prev"]').isDisabled(), true);
  assert.equal(await card.locator('[data-testid="topup-orders-next"]').isDisabled(), true);
  await admin.context.close();
});

test("the order list shows the quota an order credits, also one asked for in quota units", async () => {
  const { api: userApi } = await newUser(suite.gw.baseURL, "qord", "qord-pass-1");
  // Quota display: the amount is in quota units; 750 000 is US$1.50 at 500 000 per dollar.
  await putOption(root, "DisplayInCurrencyEnabled", "false");
  const admin = await newPage(suite.browser, suite.gw.baseURL);
  try {
    const pay = await userApi.call("POST", "/api/user/pay", { amount: 750000, payment_method: "zfb" });
    assert.equal(pay.json?.message, "success", JSON.stringify(pay.json));
    const order = (await root.call("GET", "/api/topup/?p=0")).json.data.find((o) => o.trade_no === pay.json.data.out_trade_no);
    assert.equal(order.quota, 750000);

    await login(admin.page, "root", "123456");
    await admin.page.goto("/topup");
    const amount = admin.page.locator(`[data-testid="topup-order-${order.id}"] [data-testid="topup-order-amount"]`);
    await amount.waitFor();
    // As every page shows 750 000 quota in this mode, not the "1" of its truncated dollars.
    assert.equal((await amount.textContent()).trim(), "750.0k");
    await putOption(root, "DisplayInCurrencyEnabled", "true");
    await amount.filter({ hasText: "$1.50" }).waitFor({ timeout: 10000 });
  } finally {
    await putOption(root, "DisplayInCurrencyEnabled", "true");
    await admin.context.close();
  }
});

test("in quota display at a decimal QuotaPerUnit the wallet offers the least whole amount the server takes", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "dmin", "dmin-pass-1");
  // MinTopUp 1 × 1000.5 quota: the server takes 1000 (its least, truncated), and no amount is 1000.5.
  await putOption(root, "DisplayInCurrencyEnabled", "false");
  await putOption(root, "QuotaPerUnit", "1000.5");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  try {
    await login(page, username, password);
    await page.goto("/topup");
    const amount = page.locator('[data-testid="topup-amount"]');
    // Once the status is read, the field holds the least amount in quota units.
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="topup-amount"]')?.value) >= 1000);
    assert.equal(await amount.inputValue(), "1000");
    // The amount offered is quoted (1000 / 1000.5 dollars × 7.3 = 7.30) and can be paid.
    await page.locator('[data-testid="topup-money"]', { hasText: "7.30" }).waitFor();
    await page.locator('[data-testid="pay-zfb"]').click();
    const confirm = page.locator('[data-testid="pay-confirm"]');
    await confirm.waitFor();
    assert.match(await confirm.textContent(), /1000/);
    await page.getByRole("alertdialog").getByRole("button", { name: "取消" }).click();
  } finally {
    await putOption(root, "QuotaPerUnit", String(perUnit));
    await putOption(root, "DisplayInCurrencyEnabled", "true");
    await context.close();
  }
});

test("an online top-up amount that is not whole is refused with a message, not paid cut to a whole one", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "frac", "frac-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  try {
    await login(page, username, password);
    await page.goto("/topup");
    await page.fill('[data-testid="topup-amount"]', "2.5");
    await page.locator('[data-testid="pay-zfb"]').click();
    await expectToast(page, "充值数量必须是整数");
    assert.equal(await page.locator('[data-testid="pay-confirm"]').count(), 0, "no order of 2 is offered for 2.5");
  } finally {
    await context.close();
  }
});

test("the order list names each payment method in the console's language, not by the provider's code", async () => {
  const { api: userApi } = await newUser(suite.gw.baseURL, "mord", "mord-pass-1");
  const ids = {};
  for (const method of ["zfb", "wx"]) {
    const pay = await userApi.call("POST", "/api/user/pay", { amount: 1, payment_method: method });
    assert.equal(pay.json?.message, "success", JSON.stringify(pay.json));
    const order = (await root.call("GET", "/api/topup/?p=0")).json.data.find((o) => o.trade_no === pay.json.data.out_trade_no);
    assert.equal(order.payment_method, method === "zfb" ? "alipay" : "wxpay");
    ids[method] = order.id;
  }
  const want = { en: { zfb: "Alipay", wx: "WeChat Pay" }, zh: { zfb: "支付宝", wx: "微信" } };
  for (const lang of ["en", "zh"]) {
    const admin = await newPage(suite.browser, suite.gw.baseURL);
    await admin.context.addInitScript((l) => localStorage.setItem("i18nextLng", l), lang);
    await login(admin.page, "root", "123456");
    await admin.page.goto("/topup");
    for (const method of ["zfb", "wx"]) {
      const row = admin.page.locator(`[data-testid="topup-order-${ids[method]}"]`);
      await row.waitFor();
      const text = await row.textContent();
      assert.ok(text.includes(want[lang][method]), text);
      assert.doesNotMatch(text, /alipay|wxpay/);
    }
    await admin.context.close();
  }
});
