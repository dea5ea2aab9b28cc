import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel, startFakeUpstream } from "./fake-upstream.mjs";
import { gatewaySuite, login, newPage, rootApi } from "./harness.mjs";

// A busy gateway: the console's socket carries a log.tail and a user.self for every commit of
// charges, hundreds a second. The open page must keep up with them and stay usable.

let upstream;
let key;

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    upstream = await startFakeUpstream({ chunks: ["ok"], delayMs: 0 });
    const root = await rootApi(gw.baseURL);
    await createChannel(root, upstream.url, ["gpt-4o-mini"], "burst-upstream");
    const made = await root.call("POST", "/api/token/", { name: "burst", unlimited_quota: true, expired_time: -1 });
    assert.equal(made.json?.success, true, JSON.stringify(made.json));
    key = "sk-" + made.json.data.key;
  },
  teardown: () => upstream?.close(),
});

// drive sends chat completions with `workers` calls in flight until `ms` have passed and resolves
// with the number of calls answered.
async function drive(baseURL, workers, ms) {
  const until = Date.now() + ms;
  let ok = 0;
  const body = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (Date.now() < until) {
        const r = await fetch(baseURL + "/v1/chat/completions", { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body });
        await r.arrayBuffer();
        if (r.ok) ok++;
      }
    }),
  );
  return ok;
}

// pageTurn clicks the next-page button in the page and resolves with the milliseconds until the
// footer shows page two (-1 past limit), measured with the page's own clock.
function pageTurn(page, limit) {
  return page.evaluate(
    (limit) =>
      new Promise((resolve) => {
        const t0 = performance.now();
        document.querySelector('[data-testid="page-next"]').click();
        const tick = () => {
          const text = document.querySelector('[data-testid="pagination"]')?.textContent ?? "";
          if (/第 11 - /.test(text)) resolve(Math.round(performance.now() - t0));
          else if (performance.now() - t0 > limit) resolve(-1);
          else setTimeout(tick, 5);
        };
        tick();
      }),
    limit,
  );
}

test("the log page stays usable while the gateway pushes hundreds of charges a second", { timeout: 120000 }, async (t) => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, "root", "123456");
  // A page's main thread that falls behind shows in late timers.
  await page.addInitScript(() => {
    window.__lag = 0;
    let last = performance.now();
    setInterval(() => {
      const now = performance.now();
      window.__lag = Math.max(window.__lag, now - last - 50);
      last = now;
    }, 50);
  });
  await page.goto("/log");
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  // Enough entries for a second page: a number of calls, not what a moment allows (a loaded machine answers fewer).
  await burst(suite.gw.baseURL, 11);
  await page.locator('[data-testid="pagination"]').getByText(/共 \d+ 条/).waitFor();

  const load = drive(suite.gw.baseURL, 8, 8000);
  await new Promise((r) => setTimeout(r, 6000));
  const during = await pageTurn(page, 15000);
  const calls = await load;
  const lag = await page.evaluate(() => window.__lag);
  t.diagnostic(`${calls} calls in 8 s; page turn during the load ${during} ms; main thread late by up to ${Math.round(lag)} ms`);
  assert.ok(calls > 1000, `only ${calls} calls in 8 s`);
  assert.ok(during >= 0 && during < 2000, `a page turn during the load took ${during} ms (-1: not within 15 s), main thread late by up to ${Math.round(lag)} ms, ${calls} calls`);
  await context.close();
});

// holdFrames makes the console's sockets keep what they receive while window.__hold is set and
// hand it over, in order, when window.__release() is called: a push that reaches the console late
// (the gateway's publisher or the network behind), as under load.
function holdFrames() {
  const Native = window.WebSocket;
  const held = [];
  window.__hold = false;
  window.__release = () => {
    window.__hold = false;
    for (const [ws, ev] of held.splice(0)) ws.__onmessage?.(ev);
  };
  window.WebSocket = class extends Native {
    set onmessage(fn) {
      this.__onmessage = fn;
      super.onmessage = (ev) => (window.__hold ? held.push([this, ev]) : fn(ev));
    }
    get onmessage() {
      return this.__onmessage;
    }
  };
}

// shownPage reads the footer's total and the row keys (an administrator's rows are keyed by log id).
async function shownPage(page) {
  const footer = await page.locator('[data-testid="pagination"]').textContent();
  const keys = await page.locator('[data-testid="log-row"]').evaluateAll((rows) => rows.map((r) => r.getAttribute("data-row-key")));
  return { total: Number(footer.match(/共 (\d+) 条/)[1]), keys };
}

async function serverPage(api) {
  const r = await api.call("GET", "/api/log/?p=1&page_size=10");
  return { total: r.json.data.total, keys: r.json.data.items.map((l) => `id${l.id}`) };
}

// burst sends n calls at once, so that their charges are committed together.
async function burst(baseURL, n) {
  const body = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
  const rs = await Promise.all(
    Array.from({ length: n }, () => fetch(baseURL + "/v1/chat/completions", { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body }).then((r) => r.text().then(() => r.ok))),
  );
  assert.ok(rs.every(Boolean));
}

test("after a burst the log page shows the server's first page and total, however late the pushes came", { timeout: 120000 }, async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await page.addInitScript(holdFrames);
  await login(page, "root", "123456");
  await page.goto("/log");
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const api = await rootApi(suite.gw.baseURL);
  const settled = async (what) => {
    // The pushes are handled; give the page a moment past them.
    await new Promise((r) => setTimeout(r, 1500));
    const server = await serverPage(api);
    assert.deepEqual(await shownPage(page), server, what);
  };

  // The pushes of a burst reach the console after a read of page one that already counted it.
  await page.evaluate(() => (window.__hold = true));
  await burst(suite.gw.baseURL, 30);
  const total = (await serverPage(api)).total;
  await page.locator('[data-testid="log-query"]').click();
  await page.locator('[data-testid="pagination"]').getByText(`共 ${total} 条`).waitFor();
  await page.evaluate(() => window.__release());
  await settled("pushes after the read that counted them");

  // The pushes of a burst reach the console while a read of page one that counted them is on its way.
  await page.evaluate(() => (window.__hold = true));
  await burst(suite.gw.baseURL, 30);
  let answered;
  const read = new Promise((r) => (answered = r));
  let fulfilled;
  const done = new Promise((r) => (fulfilled = r));
  // This read's answer leaves the server at once but reaches the page half a second later.
  await page.route(
    /\/api\/log\/\?p=1&/,
    async (route) => {
      const response = await route.fetch();
      answered();
      await new Promise((r) => setTimeout(r, 500));
      await route.fulfill({ response });
      fulfilled();
    },
    { times: 1 },
  );
  await page.locator('[data-testid="log-query"]').click();
  await read;
  await page.evaluate(() => window.__release());
  await done;
  await settled("pushes during the read that counted them");

  // On a later page: the pushes of a burst reach it after the read of that page that counted them.
  // The page shows none of them, so only the read that follows them can tell.
  await page.evaluate(() => (window.__hold = true));
  await burst(suite.gw.baseURL, 30);
  const after = (await serverPage(api)).total;
  await page.locator('[data-testid="page-next"]').click();
  const footer = page.locator('[data-testid="pagination"]');
  await footer.getByText(`共 ${after} 条`).waitFor();
  await footer.getByText(/第 11 - /).waitFor();
  // The first read again is refused (the rate limit): the page tries again.
  let refused = 0;
  await page.route(
    /\/api\/log\/\?p=2&/,
    (route) => {
      refused++;
      return route.fulfill({ status: 429, contentType: "application/json", body: JSON.stringify({ success: false, message: "请求次数过多，请稍后再试" }) });
    },
    { times: 1 },
  );
  await page.evaluate(() => window.__release());
  // The page is read again once the pushes pause, and no sooner than 5 s after its last read.
  const deadline = Date.now() + 16000;
  let shown = (await shownPage(page)).total;
  while (shown !== after && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    shown = (await shownPage(page)).total;
  }
  assert.equal(refused, 1, "a read again was refused once");
  assert.equal(shown, after, "a later page's total after pushes that came late");
  await context.close();
});

test("a page turn on its way when the socket is closed for falling behind still lands", { timeout: 60000 }, async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const sockets = [];
  await page.routeWebSocket(/\/api\/ws$/, (ws) => {
    ws.connectToServer();
    sockets.push(ws);
  });
  await login(page, "root", "123456");
  await burst(suite.gw.baseURL, 15);
  await page.goto("/log");
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const footer = page.locator('[data-testid="pagination"]');
  await footer.getByText(/第 1 - 10 条/).waitFor();
  // The server is slow to answer the page turn (it is busy), and meanwhile drops the socket of a
  // console that fell behind; the console reconnects and reloads what it shows.
  await page.route(
    /\/api\/log\/\?p=2&/,
    async (route) => {
      const response = await route.fetch();
      await new Promise((r) => setTimeout(r, 3000));
      await route.fulfill({ response });
    },
    { times: 1 },
  );
  await page.locator('[data-testid="page-next"]').click();
  await sockets.at(-1).close({ code: 1008, reason: "connection too slow to keep up with messages" });
  await page.locator('html[data-live="open"]').waitFor({ state: "attached", timeout: 10000 });
  await footer.getByText(/第 11 - /).waitFor({ timeout: 10000 });
  // And it stays there.
  await new Promise((r) => setTimeout(r, 1000));
  assert.match(await footer.textContent(), /第 11 - /);
  await context.close();
});

// liveMaps counts the Map objects the page holds after a garbage collection.
async function liveMaps(cdp) {
  await cdp.send("HeapProfiler.collectGarbage");
  const proto = await cdp.send("Runtime.evaluate", { expression: "Map.prototype" });
  const { objects } = await cdp.send("Runtime.queryObjects", { prototypeObjectId: proto.result.objectId });
  const n = await cdp.send("Runtime.callFunctionOn", { objectId: objects.objectId, functionDeclaration: "function () { return this.length; }", returnByValue: true });
  return n.result.value;
}

test("the log page does not keep the rows it drew before: its memory stays flat while entries keep coming", { timeout: 60000 }, async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, "root", "123456");
  await page.goto("/log");
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.locator('[data-testid="log-row"]').first().waitFor();
  const cdp = await context.newCDPSession(page);
  // drawn waits for a burst's entries to be drawn on top of page one.
  const drawn = async () => {
    const top = await page.locator('[data-testid="log-row"]').first().getAttribute("data-row-key");
    await burst(suite.gw.baseURL, 3);
    await page.waitForFunction((k) => document.querySelector('[data-testid="log-row"]')?.getAttribute("data-row-key") !== k, top);
  };
  for (let i = 0; i < 3; i++) await drawn();
  const before = await liveMaps(cdp);
  for (let i = 0; i < 15; i++) await drawn();
  const after = await liveMaps(cdp);
  // Each draw made a map of its rows; the table kept every one of them (and their rows) for good.
  assert.ok(after - before < 8, `the page holds ${after - before} more maps after 15 draws (${before} → ${after})`);
  await context.close();
});
