import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";
import { createChannel, startFakeUpstream } from "./fake-upstream.mjs";
import { freePort, gatewaySuite, login, money, newPage, quotaPerUnit, rootApi } from "./harness.mjs";

// A busy gateway seen from the pages other than the log list: every committed batch of charges
// pushes the owner's balance (user.self) and the usage of the tokens it charged (token.usage),
// hundreds of times a second. A page that draws each of them keeps the browser's main thread busy
// and its clicks waiting; once the pushes stop, what it shows must still be what the server says.

let upstream;
let root;
let perUnit;

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    // Every call costs a few cents, so that the figures shown move with nearly every charge.
    upstream = await startFakeUpstream({ chunks: ["ok"], delayMs: 0, usage: { prompt_tokens: 20000, completion_tokens: 1000, total_tokens: 21000 } });
    root = await rootApi(gw.baseURL);
    await createChannel(root, upstream.url, ["gpt-4o-mini"], "pages-upstream");
    perUnit = await quotaPerUnit(root);
  },
  teardown: () => upstream?.close(),
});

// meterMainThread records how late the page's timers run (a main thread that is busy shows in
// late timers) from the page's start.
function meterMainThread() {
  window.__lag = 0;
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    window.__lag = Math.max(window.__lag, now - last - 50);
    last = now;
  }, 50);
}

// busyMeter reads the renderer's main-thread task time through the DevTools protocol: busy() is
// the share of the wall time since start() that the main thread spent running tasks.
async function busyMeter(context, page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send("Performance.enable");
  const taskTime = async () => (await cdp.send("Performance.getMetrics")).metrics.find((m) => m.name === "TaskDuration").value;
  let t0 = 0;
  let w0 = 0;
  return {
    start: async () => {
      t0 = await taskTime();
      w0 = Date.now();
    },
    busy: async () => (await taskTime() - t0) / ((Date.now() - w0) / 1000),
  };
}

// drive sends chat completions, one worker on each key, until `ms` have passed, and resolves with
// the number of calls answered.
async function drive(baseURL, keys, ms) {
  const until = Date.now() + ms;
  let ok = 0;
  const body = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
  await Promise.all(
    keys.map(async (key) => {
      while (Date.now() < until) {
        const r = await fetch(baseURL + "/v1/chat/completions", { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body });
        await r.arrayBuffer();
        if (r.ok) ok++;
      }
    }),
  );
  return ok;
}

const STATUS_TEXT = { 1: "已启用", 2: "已禁用", 3: "已过期", 4: "已耗尽" };

test("the token page of 100 tokens stays usable while their charges are pushed, and ends with the server's figures", { timeout: 180000 }, async (t) => {
  // 100 limited tokens; one has a few calls' worth of quota and runs out during the load.
  for (let i = 0; i < 100; i++) {
    const r = await root.call("POST", "/api/token/", { name: `live-${i}`, remain_quota: i === 0 ? 60000 : 500000000, expired_time: -1 });
    assert.equal(r.json?.success, true, JSON.stringify(r.json));
  }
  const listed = (await root.call("GET", "/api/token/?p=0&size=100")).json.data;
  assert.equal(listed.length, 100);
  const poor = listed.find((x) => x.name === "live-0");
  const keys = [poor, ...listed.filter((x) => x !== poor).slice(0, 7)].map((x) => "sk-" + x.key);
  const viewed = listed.find((x) => x.name === "live-50");

  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, "root", "123456");
  await page.evaluate(() => localStorage.setItem("page-size", "100"));
  await page.addInitScript(meterMainThread);
  await page.goto("/token");
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.locator(`[data-testid="token-row-${viewed.id}"]`).waitFor();
  assert.equal(await page.locator('[data-testid^="token-row-"]').count(), 100);
  const meter = await busyMeter(context, page);

  const load = drive(suite.gw.baseURL, keys, 12000);
  await new Promise((r) => setTimeout(r, 2000));
  await page.evaluate(() => (window.__lag = 0));
  await meter.start();
  await new Promise((r) => setTimeout(r, 4000));
  // A click during the load: reveal a token's key; the page's own clock times it.
  const click = await page.evaluate(
    (id) =>
      new Promise((resolve) => {
        const row = document.querySelector(`[data-testid="token-row-${id}"]`);
        const t0 = performance.now();
        row.querySelector('[data-testid="view-key"]').click();
        const tick = () => {
          if (!row.isConnected) resolve(-2);
          else if (!row.querySelector('[data-testid="token-key"]').textContent.includes("*")) resolve(Math.round(performance.now() - t0));
          else if (performance.now() - t0 > 15000) resolve(-1);
          else setTimeout(tick, 5);
        };
        tick();
      }),
    viewed.id,
  );
  await new Promise((r) => setTimeout(r, 4000));
  const busy = await meter.busy();
  const lag = await page.evaluate(() => window.__lag);
  const calls = await load;
  t.diagnostic(`${calls} calls in 12 s; main thread ${Math.round(busy * 100)} % busy during the load, late by up to ${Math.round(lag)} ms; a click shown after ${click} ms`);
  assert.ok(calls > 1000, `only ${calls} calls in 12 s`);
  assert.ok(click >= 0 && click < 1000, `a click during the load took ${click} ms (-1: not within 15 s), main thread ${Math.round(busy * 100)} % busy, late by up to ${Math.round(lag)} ms`);
  assert.ok(busy < 0.6, `the main thread was ${Math.round(busy * 100)} % busy during the load (late by up to ${Math.round(lag)} ms)`);
  assert.ok(lag < 1000, `the main thread was late by up to ${Math.round(lag)} ms during the load`);

  // Once the pushes stop, every row shows what the server lists.
  await new Promise((r) => setTimeout(r, 2500));
  const server = (await root.call("GET", "/api/token/?p=0&size=100")).json.data;
  assert.equal(server.find((x) => x.id === poor.id).status, 4, "the poor token ran out during the load");
  const want = server.map((x) => [x.id, money(x.used_quota, perUnit), money(x.remain_quota, perUnit), STATUS_TEXT[x.status]]);
  const shown = await page.locator('[data-testid^="token-row-"]').evaluateAll((rows) =>
    rows.map((r) => [
      Number(r.getAttribute("data-testid").replace("token-row-", "")),
      r.querySelector('[data-col="used"]').textContent,
      r.querySelector('[data-col="remain"]').textContent,
      r.querySelector('[data-testid="token-status"]').textContent,
    ]),
  );
  assert.deepEqual(shown, want);
  await context.close();
});

// startSlowUpstream answers every chat completion after `ms`, so that a test-all run of many
// channels pushes its frames steadily for a while.
async function startSlowUpstream(ms) {
  const server = createServer(async (req, res) => {
    for await (const _ of req);
    await new Promise((r) => setTimeout(r, ms));
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(
      JSON.stringify({
        id: "chatcmpl-slow",
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: "gpt-4o-mini",
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  });
  const port = process.env.E2E_PORT_FROM ? await freePort() : 0;
  await new Promise((r) => server.listen(port, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

// shownChannels reads, for each row of the channel list, its id, status and response time (ms).
function shownChannels(page) {
  return page.locator('[data-testid^="channel-row-"]').evaluateAll((rows) =>
    rows.map((r) => [
      Number(r.getAttribute("data-testid").replace("channel-row-", "")),
      r.querySelector('[data-testid="channel-status"]').getAttribute("data-status"),
      r.querySelector('[data-testid="response-time"]').getAttribute("data-ms"),
    ]),
  );
}

async function serverChannels() {
  const listed = (await root.call("GET", "/api/channel/?p=0&page_size=100")).json.data;
  return listed.map((c) => [c.id, String(c.status), String(c.response_time)]);
}

test("after a test-all run the channel list shows the response times the server recorded", { timeout: 120000 }, async () => {
  const slow = await startSlowUpstream(15);
  try {
    for (let i = 0; i < 20; i++) {
      const r = await root.call("POST", "/api/channel/", { type: 1, name: `timed-${i}`, key: "sk-timed", base_url: slow.url, models: "gpt-4o-mini", group: "default" });
      assert.equal(r.json?.success, true, JSON.stringify(r.json));
    }
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
    await login(page, "root", "123456");
    await page.evaluate(() => localStorage.setItem("page-size", "100"));
    await page.goto("/channel");
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    await page.locator('[data-testid^="channel-row-"]').nth(20).waitFor();
    assert.ok((await root.call("GET", "/api/channel/test")).json?.success);
    await page.locator(".toast", { hasText: "所有渠道测试完成" }).first().waitFor({ timeout: 60000 });
    await new Promise((r) => setTimeout(r, 1500));
    // The server keeps whole milliseconds, cut (a test of 15.7 ms is 15 ms).
    assert.deepEqual(await shownChannels(page), await serverChannels());
    await context.close();
  } finally {
    await slow.close();
  }
});

test("the channel page of 100 channels stays usable during a test-all run of hundreds, and ends with the server's figures", { timeout: 180000 }, async (t) => {
  const slow = await startSlowUpstream(15);
  try {
    for (let i = 0; i < 400; i++) {
      const r = await root.call("POST", "/api/channel/", { type: 1, name: `many-${i}`, key: "sk-many", base_url: slow.url, models: "gpt-4o-mini", group: "default" });
      assert.equal(r.json?.success, true, JSON.stringify(r.json));
    }
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
    await login(page, "root", "123456");
    await page.evaluate(() => localStorage.setItem("page-size", "100"));
    await page.addInitScript(meterMainThread);
    await page.goto("/channel");
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    await page.locator('[data-testid^="channel-row-"]').nth(99).waitFor();
    const meter = await busyMeter(context, page);

    const run = root.call("GET", "/api/channel/test");
    await page.locator('[data-testid="channel-progress"]').waitFor();
    await page.evaluate(() => (window.__lag = 0));
    await meter.start();
    await new Promise((r) => setTimeout(r, 3000));
    // A click during the run: open the language menu; the page's own clock times it.
    const click = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const t0 = performance.now();
          const menu = document.querySelector('[data-testid="language-switch"]');
          menu.dispatchEvent(new PointerEvent("pointerdown", { bubbles: true, button: 0, pointerType: "mouse" }));
          menu.click();
          const tick = () => {
            if (document.querySelector('[data-testid="language-en"]')) resolve(Math.round(performance.now() - t0));
            else if (performance.now() - t0 > 15000) resolve(-1);
            else setTimeout(tick, 5);
          };
          tick();
        }),
    );
    await page.keyboard.press("Escape");
    await new Promise((r) => setTimeout(r, 3000));
    const busy = await meter.busy();
    const lag = await page.evaluate(() => window.__lag);
    const status = (await page.locator('[data-testid="test-all-status"]').textContent()) ?? "";
    t.diagnostic(`during a test-all run (${status}): main thread ${Math.round(busy * 100)} % busy, late by up to ${Math.round(lag)} ms; a click shown after ${click} ms`);
    assert.ok((await run).json?.success, "the test-all run started");
    assert.ok(click >= 0 && click < 1000, `a click during the run took ${click} ms (-1: not within 15 s), main thread ${Math.round(busy * 100)} % busy, late by up to ${Math.round(lag)} ms`);
    assert.ok(busy < 0.6, `the main thread was ${Math.round(busy * 100)} % busy during the run (late by up to ${Math.round(lag)} ms)`);
    assert.ok(lag < 1000, `the main thread was late by up to ${Math.round(lag)} ms during the run`);

    // Once the run is over, every row shows what the server lists.
    await page.locator(".toast", { hasText: "所有渠道测试完成" }).first().waitFor({ timeout: 60000 });
    await new Promise((r) => setTimeout(r, 2500));
    assert.deepEqual(await shownChannels(page), await serverChannels());
    await context.close();
  } finally {
    await slow.close();
  }
});
