import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel, startFakeUpstream } from "./fake-upstream.mjs";
import { gatewaySuite, login, newPage, rootApi } from "./harness.mjs";

// The console shares the per-IP /api budget (S §12: 180 requests per 180 s, one a second) with
// everything its user does: what an open page reads by itself while pushes keep coming must stay
// well within it, or a busy gateway locks the console out (429 on every call) after a minute.
// The window is shortened here, at the same rate, so that the test need not wait minutes.

let upstream;
let key;

const suite = gatewaySuite({
  env: { GATEWAY_API_RATE_LIMIT: "60", GATEWAY_API_RATE_WINDOW: "60s" },
  setup: async ({ gw }) => {
    upstream = await startFakeUpstream({ chunks: ["ok"], delayMs: 0 });
    const root = await rootApi(gw.baseURL);
    await createChannel(root, upstream.url, ["gpt-4o-mini"], "rate-upstream");
    const made = await root.call("POST", "/api/token/", { name: "steady", unlimited_quota: true, expired_time: -1 });
    assert.equal(made.json?.success, true, JSON.stringify(made.json));
    key = "sk-" + made.json.data.key;
  },
  teardown: () => upstream?.close(),
});

// steady sends a chat completion about every `gap` ms until `ms` have passed.
async function steady(baseURL, gap, ms) {
  const until = Date.now() + ms;
  const body = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
  let ok = 0;
  while (Date.now() < until) {
    const r = await fetch(baseURL + "/v1/chat/completions", { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body });
    await r.arrayBuffer();
    if (r.ok) ok++;
    await new Promise((res) => setTimeout(res, gap));
  }
  return ok;
}

/** openLogPage opens the log page as root, live and settled. */
async function openLogPage() {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await login(page, "root", "123456");
  await page.goto("/log");
  await page.locator('[data-testid="log-filter-username"]').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.waitForLoadState("networkidle");
  return { context, page };
}

/** countApi counts the page's /api requests from now on, and the answers refused with 429. */
function countApi(page) {
  const seen = { reads: 0, refused: [] };
  page.on("request", (req) => {
    if (new URL(req.url()).pathname.startsWith("/api/")) seen.reads++;
  });
  page.on("response", (res) => {
    if (res.status() === 429) seen.refused.push(res.url());
  });
  return seen;
}

test("an open log page under a steady flow of calls stays within the per-IP API budget", async () => {
  const { context, page } = await openLogPage();
  const before = Number((await page.locator('[data-testid="stat-rpm"]').textContent()).replace(/\D+/g, ""));
  const seen = countApi(page);
  const made = await steady(suite.gw.baseURL, 150, 20000);
  assert.ok(made > 50, `${made} calls`);
  // The badges still follow the calls.
  const after = Number((await page.locator('[data-testid="stat-rpm"]').textContent()).replace(/\D+/g, ""));
  assert.ok(after > before, `RPM ${before} -> ${after}`);
  assert.deepEqual(seen.refused, [], `the console was refused (429) after ${seen.reads} reads of its own in 20 s`);
  assert.ok(seen.reads <= 20, `${seen.reads} reads of its own in 20 s of calls: more than the budget's one a second`);
  await context.close();
});

test("an open log page under calls that pause between them stays within the per-IP API budget", async () => {
  const { context, page } = await openLogPage();
  const seen = countApi(page);
  // A call, then a pause longer than the 300 ms the page waits for the pushes to pause.
  const made = await steady(suite.gw.baseURL, 450, 20000);
  assert.ok(made > 20, `${made} calls`);
  assert.deepEqual(seen.refused, [], `the console was refused (429) after ${seen.reads} reads of its own in 20 s`);
  assert.ok(seen.reads <= 20, `${seen.reads} reads of its own in 20 s of calls: more than the budget's one a second`);
  await context.close();
});
