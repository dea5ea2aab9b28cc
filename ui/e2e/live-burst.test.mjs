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
  // Enough entries for a second page.
  assert.ok((await drive(suite.gw.baseURL, 2, 300)) > 10);
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
