// The data dashboard (/detail) and the embedded chat (/chat, /chat2link):
// calls relayed with a user's token show up in the dashboard's totals and
// charts (and in an open dashboard without a reload), the DataExportEnabled
// option hides the entry and stops the counting, and the chat pages fill the
// configured links with the user's first enabled token and the server address.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createChannel, startFakeUpstream } from "./fake-upstream.mjs";
import { gatewaySuite, getOptions, login as formLogin, money, navEntries, newPage, newUser as registerNewUser, putOption, quotaPerUnit, rootApi } from "./harness.mjs";

// Two models with a fixed price per call, each served by its own fake upstream
// whose usage differs (prompt 12 + one completion token per chunk), so every
// figure on the dashboard can be computed here independently of the gateway.
// The spec's unit: 500000 quota = $1 (checked against /api/status below).
const QUOTA_PER_UNIT = 500000;
const MODELS = {
  "dash-a": { price: 0.25, chunks: ["a", "b", "c"] },
  "dash-b": { price: 0.4, chunks: ["v", "w", "x", "y", "z"] },
};
const quotaOf = (model) => Math.round(MODELS[model].price * QUOTA_PER_UNIT);
const tokensOf = (model) => 12 + MODELS[model].chunks.length;
/** dollars shows quota like the console: two decimals on the totals, four on the chart legend below $1. */
const dollars = (quota, digits = 2) => (digits === 2 ? money(quota, QUOTA_PER_UNIT) : "$" + (quota / QUOTA_PER_UNIT).toFixed(digits));

// The series colours of the charts (SERIES_COLORS in ui/src/components/uplot-chart.tsx).
const SERIES_RGB = [
  [0x3e, 0x63, 0xdd],
  [0xe5, 0x48, 0x4d],
];

const SERVER_ADDRESS = "http://gw.example";
const CHATS = [
  { "Chat A": "https://chat-a.example/#/?key={key}&url={address}" },
  { "Chat B": "https://chat-b.example/app?k={key}&s={address}" },
  { "Desktop app": "ama://set-api-key?server={address}&key={key}" },
];

let root;
const upstreams = [];

const suite = gatewaySuite({
  setup: async ({ gw }) => {
    root = await rootApi(gw.baseURL);
    assert.equal(await quotaPerUnit(root), QUOTA_PER_UNIT);
    const prices = JSON.parse((await getOptions(root)).ModelPrice || "{}");
    for (const [model, { price, chunks }] of Object.entries(MODELS)) {
      const up = await startFakeUpstream({ chunks, models: [model], delayMs: 5 });
      upstreams.push(up);
      await createChannel(root, up.url, [model], `fake-${model}`);
      prices[model] = price;
    }
    await setOption("ModelPrice", JSON.stringify(prices));
    await setOption("QuotaForNewUser", "50000000");
    await setOption("ServerAddress", SERVER_ADDRESS);
    await setOption("Chats", JSON.stringify(CHATS));
  },
  teardown: async () => {
    for (const up of upstreams) await up.close();
  },
});

/** setOption stores a server option as root. */
const setOption = (key, value) => putOption(root, key, value);

/** newUser registers a user through the API; with a token name it also creates an enabled token and returns its key (without sk-). */
async function newUser(prefix, tokenName) {
  const { username, password, api } = await registerNewUser(suite.gw.baseURL, prefix, "dash-pass-1");
  let key = null;
  if (tokenName) {
    const r = await api.call("POST", "/api/token/", { name: tokenName, remain_quota: 0, expired_time: -1, unlimited_quota: true });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.ok(r.json.success, JSON.stringify(r.json));
    key = r.json.data.key;
  }
  return { username, password, api, key };
}

/** relay makes one call through /v1/chat/completions with a token and reads the whole answer. */
async function relay(key, model, stream = false) {
  const res = await fetch(`${suite.gw.baseURL}/v1/chat/completions`, {
    method: "POST",
    headers: { Authorization: `Bearer sk-${key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model, stream, messages: [{ role: "user", content: "hello" }] }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.ok(text.includes(MODELS[model].chunks.at(-1)), `the answer came from the ${model} upstream: ${text}`);
}

const nowSec = () => Math.floor(Date.now() / 1000);

/** selfData reads the caller's dashboard rows of the last day (the range the page asks for by default). */
async function selfData(api) {
  const r = await api.call("GET", `/api/data/self?start_timestamp=${nowSec() - 86400}&end_timestamp=${nowSec() + 3600}`);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.data;
}

/** consumeLogs reads the caller's consume logs. */
async function consumeLogs(api) {
  const r = await api.call("GET", "/api/log/self/?p=1&page_size=100&type=2");
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.data.items;
}

/** waitFor polls an async check until it returns a truthy value, failing after timeoutMs with the last value seen. */
async function waitFor(what, check, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await check();
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function sum(rows, field) {
  return rows.reduce((n, r) => n + (r[field] || 0), 0);
}

/** expected sums the figures of a list of calls (model names) as computed from the fixed prices and usages. */
function expected(calls) {
  return {
    quota: calls.reduce((n, m) => n + quotaOf(m), 0),
    count: calls.length,
    tokens: calls.reduce((n, m) => n + tokensOf(m), 0),
  };
}

/** waitForDashboardRows waits until the caller's dashboard rows (committed with the charges) hold count calls. */
async function waitForDashboardRows(api, count) {
  return waitFor(`${count} calls in the dashboard rows`, async () => {
    const rows = await selfData(api);
    return sum(rows, "count") === count ? rows : null;
  });
}

/** login signs in through the console and waits until the status object of this page load is stored. */
async function login(page, username, password) {
  await formLogin(page, username, password);
  await page.waitForFunction(() => localStorage.getItem("status") !== null);
}

/**
 * recordShown makes every page of the context record the texts of toasts and
 * of short-lived notices, and the src of chat frames, as they appear
 * (window.__shown, "name: text"), so a
 * test can check them after the fact instead of racing their removal.
 */
async function recordShown(context) {
  await context.addInitScript(() => {
    window.__shown = [];
    const last = new WeakMap();
    const watched = '.toast-text, [data-testid="chat-no-token"], [data-testid="chat2link"], [data-testid="chat-frame"]';
    new MutationObserver(() => {
      for (const n of document.querySelectorAll(watched)) {
        const text = n.tagName === "IFRAME" ? n.getAttribute("src") : n.textContent.trim();
        if (!text || last.get(n) === text) continue;
        last.set(n, text);
        window.__shown.push(`${n.dataset.testid ?? "toast"}: ${text}`);
      }
    }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["src"] });
  });
}

/** waitShown waits until the page has recorded an entry (see recordShown). */
async function waitShown(page, entry) {
  await page.waitForFunction((e) => window.__shown?.includes(e), entry).catch(async (err) => {
    throw new Error(`never shown: ${entry}; shown: ${JSON.stringify(await page.evaluate(() => window.__shown))}: ${err.message}`);
  });
}

/** openAs opens a fresh browser context logged in as the user (or anonymous without one) with the current status cached. */
async function openAs(user) {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 } });
  await recordShown(context);
  if (user) {
    await login(page, user.username, user.password);
  } else {
    await page.goto("/about");
    await page.waitForFunction(() => localStorage.getItem("status") !== null);
  }
  return { context, page };
}

/** totalsText reads the three summary figures of the dashboard. */
async function totalsText(page) {
  return {
    quota: (await page.locator('[data-testid="detail-total-quota"]').textContent()).trim(),
    count: (await page.locator('[data-testid="detail-total-count"]').textContent()).trim(),
    tokens: (await page.locator('[data-testid="detail-total-tokens"]').textContent()).trim(),
  };
}

/** waitForTotals waits until the summary figures show the given sums. */
async function waitForTotals(page, sums, timeout = 10000) {
  const want = { quota: dollars(sums.quota), count: String(sums.count), tokens: String(sums.tokens) };
  await page
    .waitForFunction(
      (w) => {
        const t = (id) => document.querySelector(`[data-testid="detail-total-${id}"]`)?.textContent?.trim();
        return t("quota") === w.quota && t("count") === w.count && t("tokens") === w.tokens;
      },
      want,
      { timeout },
    )
    .catch(async (err) => {
      throw new Error(`dashboard totals never became ${JSON.stringify(want)}; last shown ${JSON.stringify(await totalsText(page))}: ${err.message}`);
    });
}

/** lastBucket sums the rows of the newest hour per model (what the charts show at their right edge). */
function lastBucket(rows) {
  const hour = Math.max(...rows.map((r) => r.created_at - (r.created_at % 3600)));
  const out = {};
  for (const r of rows) {
    if (r.created_at - (r.created_at % 3600) !== hour) continue;
    const m = (out[r.model_name] ??= { quota: 0, count: 0, token_used: 0 });
    m.quota += r.quota;
    m.count += r.count;
    m.token_used += r.token_used;
  }
  return out;
}

/**
 * chartLegend hovers the right edge of a chart (its newest bucket), or the
 * left edge (its oldest) when side is "left", and reads the legend: series
 * label -> shown value.
 */
async function chartLegend(page, metric, side = "right") {
  const chart = page.locator(`[data-testid="detail-chart-${metric}"]`);
  const over = chart.locator(".u-over");
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  assert.ok(box && box.width > 100 && box.height > 100, `the ${metric} chart has a plot area: ${JSON.stringify(box)}`);
  await over.hover({ position: { x: side === "left" ? 2 : box.width - 2, y: box.height / 2 } });
  const rows = chart.locator(".u-legend tr.u-series");
  // The first legend row is the time axis; it shows a date once the cursor is on a bucket.
  await page.waitForFunction((id) => {
    const v = document.querySelector(`[data-testid="detail-chart-${id}"] .u-legend tr.u-series td.u-value`);
    return v && /\d/.test(v.textContent);
  }, metric);
  const legend = {};
  for (const row of await rows.all()) {
    const label = (await row.locator(".u-label").textContent()).trim();
    legend[label] = (await row.locator(".u-value").textContent()).trim();
  }
  return legend;
}

/** seriesPixels counts the pixels of the chart canvas drawn in each of the first series colours. */
async function seriesPixels(page, metric) {
  return page.evaluate(
    ({ id, colours }) => {
      const canvas = document.querySelector(`[data-testid="detail-chart-${id}"] canvas`);
      if (!canvas || canvas.width === 0 || canvas.height === 0) return null;
      const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      const counts = colours.map(() => 0);
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] < 250) continue;
        colours.forEach(([r, g, b], k) => {
          if (Math.abs(data[i] - r) <= 8 && Math.abs(data[i + 1] - g) <= 8 && Math.abs(data[i + 2] - b) <= 8) counts[k]++;
        });
      }
      return counts;
    },
    { id: metric, colours: SERIES_RGB },
  );
}

test("the dashboard shows a user's relayed calls in its totals and charts, and refreshes as new calls are charged", async () => {
  const user = await newUser("dash", "dash-key");
  const calls = ["dash-a", "dash-b", "dash-a"];
  await relay(user.key, "dash-a");
  await relay(user.key, "dash-b", true);
  await relay(user.key, "dash-a", true);

  // The server's own records agree with what the calls cost and used.
  const sums = expected(calls);
  const rows = await waitForDashboardRows(user.api, calls.length);
  assert.deepEqual({ quota: sum(rows, "quota"), count: sum(rows, "count"), tokens: sum(rows, "token_used") }, sums);
  const logs = await consumeLogs(user.api);
  assert.equal(logs.length, calls.length);
  assert.equal(sum(logs, "quota"), sums.quota);
  assert.equal(sum(logs, "prompt_tokens") + sum(logs, "completion_tokens"), sums.tokens);

  const { context, page } = await openAs(user);
  // Axis labels are drawn on the canvas: record what is drawn (the console
  // routes without reloading, so the patch holds on /detail).
  await page.evaluate(() => {
    window.__drawn = [];
    const fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
      window.__drawn.push(String(text));
      return fill.call(this, text, ...rest);
    };
  });
  // Data export is on by default: the sidebar offers the dashboard.
  const entry = page.locator('[data-testid="sidebar"] [data-nav="detail"]');
  await entry.waitFor();
  const initialLoad = page.waitForResponse((r) => r.url().includes("/api/data/self"));
  await entry.click();
  await page.waitForURL("**/detail");
  await page.locator('[data-testid="detail-page"]').getByRole("heading", { name: "数据看板" }).waitFor();
  const firstResponse = await initialLoad;
  assert.equal(firstResponse.status(), 200);
  // A user only sees their own data: there is no username filter.
  assert.equal(await page.locator('[data-testid="detail-username"]').count(), 0);

  await waitForTotals(page, sums);
  assert.deepEqual(await totalsText(page), { quota: "$0.90", count: "3", tokens: "47" });

  // Each of the three charts draws both models; the busiest (dash-a) takes the first colour.
  const bucket = lastBucket(rows);
  const formats = { quota: (v) => dollars(v, 4), count: String, token_used: String };
  for (const metric of ["quota", "count", "token_used"]) {
    const chart = page.locator(`[data-testid="detail-chart-${metric}"]`);
    await chart.locator("canvas").waitFor();
    const labels = (await chart.locator(".u-legend tr.u-series .u-label").allTextContents()).map((s) => s.trim());
    assert.deepEqual(labels.slice(1), ["dash-a", "dash-b"], `${metric} chart series`);
    const pixels = await seriesPixels(page, metric);
    assert.ok(pixels && pixels[0] > 0 && pixels[1] > 0, `${metric} chart drew both series: ${JSON.stringify(pixels)}`);
    const legend = await chartLegend(page, metric);
    for (const model of ["dash-a", "dash-b"]) {
      // (A model without calls in the newest hour shows 0 there.)
      assert.equal(legend[model], formats[metric](bucket[model]?.[metric] ?? 0), `${metric} of ${model} at the newest bucket: ${JSON.stringify(legend)}`);
    }
    // The time axis opens with the queried range (a day of hours), the
    // hours without calls drawn as zero, not with the first hour that has
    // data (one bucket alone used to stretch the axis over years).
    const oldest = await chartLegend(page, metric, "left");
    const timeLabel = Object.keys(legend)[0];
    assert.equal(timeLabel, "时间", `the time series is labelled: ${JSON.stringify(legend)}`);
    assert.notEqual(oldest[timeLabel], legend[timeLabel], `the oldest bucket is not the newest: ${JSON.stringify(oldest)}`);
    for (const model of ["dash-a", "dash-b"]) {
      assert.equal(oldest[model], metric === "quota" ? dollars(0) : "0", `${metric} of ${model} a day ago: ${JSON.stringify(oldest)}`);
    }
  }
  // The time axis is labelled in numbers (HH:mm, M/D) as the legend is, not
  // in uPlot's English ("6pm", "Nov 22").
  const drawn = await page.evaluate(() => window.__drawn);
  assert.ok(drawn.some((s) => /^\d{2}:\d{2}$/.test(s)), `hour labels among ${JSON.stringify(drawn.slice(0, 60))}`);
  assert.ok(!drawn.some((s) => /\d\s?(am|pm)$|^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b/i.test(s)), `English labels among ${JSON.stringify(drawn)}`);
  // In the usual case (the calls fell into one hour) the newest bucket holds everything.
  if (Object.keys(bucket).length === 2 && sum(Object.values(bucket), "count") === 3) {
    assert.deepEqual(bucket["dash-a"], { quota: 2 * quotaOf("dash-a"), count: 2, token_used: 2 * tokensOf("dash-a") });
  }

  // The open dashboard follows new charges without a reload. Twice: the
  // greeting of a freshly opened live socket also refreshes the page once.
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.evaluate(() => {
    window.__sameDocument = true;
  });
  await relay(user.key, "dash-b");
  calls.push("dash-b");
  await waitForTotals(page, expected(calls), 15000);
  assert.deepEqual(await totalsText(page), { quota: "$1.30", count: "4", tokens: "64" });
  await relay(user.key, "dash-a", true);
  calls.push("dash-a");
  await waitForTotals(page, expected(calls), 15000);
  assert.deepEqual(await totalsText(page), { quota: "$1.55", count: "5", tokens: "79" });
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page was not reloaded");
  // dash-b now weighs more (2 × $0.40 against 3 × $0.25) and leads the series.
  await page.waitForFunction(() => {
    const labels = [...document.querySelectorAll('[data-testid="detail-chart-count"] .u-legend tr.u-series .u-label')].map((n) => n.textContent.trim());
    return labels[1] === "dash-b" && labels[2] === "dash-a";
  });

  // A range without calls shows empty totals and no charts.
  const start = page.locator('[data-testid="detail-start"]');
  const end = page.locator('[data-testid="detail-end"]');
  await start.fill("2020-01-01T00:00:00");
  await end.fill("2020-01-02T00:00:00");
  await page.click('[data-testid="detail-query"]');
  await waitForTotals(page, { quota: 0, count: 0, tokens: 0 });
  assert.equal(await page.getByText("所选时间范围内没有数据").count(), 3);
  assert.equal(await page.locator('[data-testid^="detail-chart-"]').count(), 0);
  // A user may not ask for more than 30 days.
  await start.fill("2020-01-01T00:00:00");
  await end.fill("2020-03-01T00:00:00");
  await page.click('[data-testid="detail-query"]');
  await waitShown(page, "toast: 时间跨度不能超过 30 天");
  await context.close();
});

test("the dashboard's default range follows the clock until the user sets one", async () => {
  const user = await newUser("clock", "clock-key");
  const { context, page } = await openAs(user);
  await page.clock.install();
  const endOf = async (action) => {
    const res = page.waitForResponse((r) => r.url().includes("/api/data/self"));
    await action();
    return Number(new URL((await res).url()).searchParams.get("end_timestamp"));
  };
  const first = await endOf(() => page.goto("/detail"));
  // Five hours later, back on the page: the range ends an hour from the new now.
  await page.clock.fastForward("05:00:00");
  await page.locator('[data-testid="sidebar"] [data-nav="token"]').click();
  await page.waitForURL("**/token");
  const second = await endOf(() => page.locator('[data-testid="sidebar"] [data-nav="detail"]').click());
  assert.ok(second - first >= 5 * 3600 - 60 && second - first <= 5 * 3600 + 600, `end moved by ${second - first} s`);
  // A range the user chose stays.
  await page.locator('[data-testid="detail-end"]').fill(new Date((second - 7200) * 1000).toLocaleString("sv-SE").slice(0, 19).replace(" ", "T"));
  const chosen = await endOf(() => page.locator('[data-testid="detail-query"]').click());
  await page.clock.fastForward("02:00:00");
  await page.locator('[data-testid="sidebar"] [data-nav="token"]').click();
  await page.waitForURL("**/token");
  const kept = await endOf(() => page.locator('[data-testid="sidebar"] [data-nav="detail"]').click());
  assert.equal(kept, chosen);
  await context.close();
});

test("a dashboard opened after the default granularity changed takes the new default, until the user picks one", async () => {
  const user = await newUser("gran", null);
  const root = await rootApi(suite.gw.baseURL);
  const { context, page } = await openAs(user);
  const shown = () =>
    page.evaluate(() => ["hour", "day", "week"].find((g) => document.querySelector(`[data-testid="detail-granularity-${g}"]`)?.getAttribute("data-state") === "on"));
  const open = async () => {
    await page.locator('[data-testid="sidebar"] [data-nav="detail"]').click();
    await page.waitForURL("**/detail");
    await page.locator('[data-testid="detail-granularity"]').waitFor();
  };
  // The default changes while the console is open (the change reaches it live, once its socket is
  // open); the dashboard is left and opened again.
  const reopenWithDefault = async (g) => {
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    await putOption(root, "DataExportDefaultTime", g);
    await page.waitForFunction((want) => JSON.parse(localStorage.getItem("status") ?? "{}").data_export_default_time === want, g);
    await page.locator('[data-testid="sidebar"] [data-nav="token"]').click();
    await page.waitForURL("**/token");
    await open();
  };
  try {
    await open();
    assert.equal(await shown(), "hour");
    await reopenWithDefault("day");
    assert.equal(await shown(), "day");
    // A granularity the user picked stays.
    await page.locator('[data-testid="detail-granularity-week"]').click();
    await reopenWithDefault("hour");
    assert.equal(await shown(), "week");
  } finally {
    await putOption(root, "DataExportDefaultTime", "hour");
    await context.close();
  }
});

test("an administrator sees every user's calls and can narrow the dashboard to one user", async () => {
  const first = await newUser("adm1", "k1");
  const second = await newUser("adm2", "k2");
  await relay(first.key, "dash-a");
  await relay(first.key, "dash-b");
  await relay(second.key, "dash-b");
  await waitForDashboardRows(first.api, 2);
  await waitForDashboardRows(second.api, 1);

  // The page's expectations: all users' rows of the default range (users of other tests included).
  const all = await root.call("GET", `/api/data/?start_timestamp=${nowSec() - 86400}&end_timestamp=${nowSec() + 3600}&username=`);
  assert.equal(all.status, 200, JSON.stringify(all.json));
  const allSums = { quota: sum(all.json.data, "quota"), count: sum(all.json.data, "count"), tokens: sum(all.json.data, "token_used") };
  const mine = expected(["dash-a", "dash-b", "dash-b"]);
  assert.ok(allSums.count >= mine.count && allSums.quota >= mine.quota && allSums.tokens >= mine.tokens, JSON.stringify(allSums));

  const { context, page } = await openAs({ username: "root", password: "123456" });
  await page.goto("/detail");
  await page.locator('[data-testid="detail-page"]').waitFor();
  await waitForTotals(page, allSums);

  const username = page.locator('[data-testid="detail-username"]');
  await username.fill(second.username);
  await page.click('[data-testid="detail-query"]');
  await waitForTotals(page, expected(["dash-b"]));
  assert.deepEqual(await totalsText(page), { quota: "$0.40", count: "1", tokens: "17" });
  const labels = (await page.locator('[data-testid="detail-chart-count"] .u-legend tr.u-series .u-label').allTextContents()).map((s) => s.trim());
  assert.deepEqual(labels.slice(1), ["dash-b"]);

  await username.fill(first.username);
  await page.click('[data-testid="detail-query"]');
  await waitForTotals(page, expected(["dash-a", "dash-b"]));

  await username.fill("nobody-here");
  await page.click('[data-testid="detail-query"]');
  await waitForTotals(page, { quota: 0, count: 0, tokens: 0 });
  assert.equal(await page.getByText("所选时间范围内没有数据").count(), 3);
  await context.close();
});

test("with data export off the dashboard leaves the sidebar and counts nothing; switched on it counts again", async () => {
  const user = await newUser("dexp", "dexp-key");
  await setOption("DataExportEnabled", "false");
  try {
    const { context, page } = await openAs(user);
    assert.equal(await page.evaluate(() => JSON.parse(localStorage.getItem("status")).enable_data_export), false);
    await page.locator('[data-testid="sidebar"] [data-nav="log"]').waitFor();
    assert.ok(!(await navEntries(page)).includes("detail"), JSON.stringify(await navEntries(page)));

    // A call made now is charged and logged, but not counted for the dashboard
    // (the rows are written in the same transaction as the log).
    await relay(user.key, "dash-a");
    await waitFor("the consume log", async () => (await consumeLogs(user.api)).length === 1);
    assert.deepEqual(await selfData(user.api), []);
    await page.goto("/detail");
    await page.locator('[data-testid="detail-page"]').waitFor();
    await waitForTotals(page, { quota: 0, count: 0, tokens: 0 });
    assert.equal(await page.getByText("所选时间范围内没有数据").count(), 3);

    await setOption("DataExportEnabled", "true");
    await page.reload();
    const entry = page.locator('[data-testid="sidebar"] [data-nav="detail"]');
    await entry.waitFor();
    await page.goto("/token");
    await entry.click();
    await page.waitForURL("**/detail");
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    await relay(user.key, "dash-b");
    await waitForTotals(page, expected(["dash-b"]), 15000);
    assert.equal((await consumeLogs(user.api)).length, 2);
    await context.close();
  } finally {
    await setOption("DataExportEnabled", "true");
  }
});

/** chatLinkFor fills a chat template the way the spec describes: {key} -> sk-KEY, {address} -> the encoded server address. */
function chatLinkFor(template, key) {
  return template.replaceAll("{address}", encodeURIComponent(SERVER_ADDRESS)).replaceAll("{key}", `sk-${key}`);
}

/**
 * stubChatSites answers the chat applications' hosts (*.example) inside the
 * browser, so nothing leaves the machine, and returns the list of URLs the
 * context asked them for.
 */
async function stubChatSites(context) {
  const visited = [];
  await context.route(/^https?:\/\/[a-z-]+\.example\//, (route) => {
    visited.push(route.request().url());
    return route.fulfill({ status: 200, contentType: "text/html", body: '<!doctype html><title>chat stub</title><p id="stub">chat stub</p>' });
  });
  return visited;
}

/** userWithTwoTokens gives a user two tokens and disables the one the token list shows first; it returns the other's key. */
async function userWithTwoTokens(prefix) {
  const user = await newUser(prefix, "first");
  const second = await user.api.call("POST", "/api/token/", { name: "second", remain_quota: 0, expired_time: -1, unlimited_quota: true });
  assert.equal(second.status, 200, JSON.stringify(second.json));
  const list = (await user.api.call("GET", "/api/token/?p=0&size=100")).json.data;
  assert.equal(list.length, 2);
  const off = await user.api.call("PUT", "/api/token/?status_only=true", { id: list[0].id, status: 2 });
  assert.equal(off.status, 200, JSON.stringify(off.json));
  assert.ok(off.json.success, JSON.stringify(off.json));
  return { ...user, key: list[1].key, disabledKey: list[0].key };
}

test("/chat frames the chosen chat target with the user's first enabled token and the server address", async () => {
  const user = await userWithTwoTokens("chat");
  const { context, page } = await openAs(user);
  await stubChatSites(context);

  // The sidebar's chat entry lists the configured targets.
  const submenu = page.locator('[data-testid="chat-submenu-sidebar"]');
  await submenu.waitFor();
  assert.deepEqual((await submenu.locator("a").allTextContents()).map((s) => s.trim()), ["Chat A", "Chat B", "Desktop app"]);

  await page.goto("/chat");
  const frame = page.locator('[data-testid="chat-frame"]');
  await frame.waitFor();
  const linkA = chatLinkFor(CHATS[0]["Chat A"], user.key);
  assert.equal(linkA, `https://chat-a.example/#/?key=sk-${user.key}&url=http%3A%2F%2Fgw.example`);
  assert.equal(await frame.getAttribute("src"), linkA);
  assert.ok(!(await frame.getAttribute("src")).includes(user.disabledKey), "the disabled token is not used");
  assert.equal(await frame.getAttribute("title"), "Chat A");
  assert.equal(await page.getByRole("link", { name: "在新窗口打开" }).getAttribute("href"), linkA);
  await page.frameLocator('[data-testid="chat-frame"]').locator("#stub").waitFor();
  assert.equal(page.frames().find((f) => f !== page.mainFrame())?.url(), linkA);

  // The tabs switch targets; the second template is filled the same way.
  const tabs = page.locator('[data-testid="chat-submenu-tabs"]');
  await tabs.locator('[data-chat="1"]').click();
  await page.waitForURL("**/chat/1");
  const linkB = chatLinkFor(CHATS[1]["Chat B"], user.key);
  assert.equal(linkB, `https://chat-b.example/app?k=sk-${user.key}&s=http%3A%2F%2Fgw.example`);
  await page.locator(`[data-testid="chat-frame"][src="${linkB}"]`).waitFor();
  assert.equal(await tabs.locator('[data-chat="1"]').getAttribute("aria-current"), "page");

  // A desktop app cannot be framed: the page offers to open it, with the key filled in.
  await tabs.locator('[data-chat="2"]').click();
  await page.waitForURL("**/chat/2");
  await page.locator('[data-testid="chat-app"]').waitFor();
  assert.equal(await page.locator('[data-testid="chat-app-open"]').getAttribute("href"), chatLinkFor(CHATS[2]["Desktop app"], user.key));
  assert.equal(await page.locator('[data-testid="chat-frame"]').count(), 0);
  const problem = page.locator('[data-testid="chat-problem"]');
  assert.equal(await problem.count(), 0);

  // A target index that does not exist is a configuration error.
  await page.goto("/chat/7");
  await problem.waitFor();
  assert.equal((await problem.textContent()).trim(), "聊天链接配置错误，请联系管理员");
  assert.equal(await page.locator('[data-testid="chat-frame"]').count(), 0);
  await context.close();
});

test("without a server address saved, chat links carry the address the console was opened at", async () => {
  const user = await userWithTwoTokens("origin");
  await setOption("ServerAddress", "");
  try {
    // The server then reports its local default, which is not where this gateway listens.
    assert.equal((await root.call("GET", "/api/status")).json.data.server_address, "http://localhost:3000");
    const { context, page } = await openAs(user);
    await stubChatSites(context);
    await page.goto("/chat");
    const frame = page.locator('[data-testid="chat-frame"]');
    await frame.waitFor();
    const origin = new URL(suite.gw.baseURL).origin;
    assert.equal(await frame.getAttribute("src"), `https://chat-a.example/#/?key=sk-${user.key}&url=${encodeURIComponent(origin)}`);
    await context.close();
  } finally {
    await setOption("ServerAddress", SERVER_ADDRESS);
  }
});

test("/chat without a usable configuration, login or token shows what the spec says", async () => {
  // Anonymous visitors see the chat page with a login prompt, not a frame.
  {
    const { context, page } = await openAs(null);
    await page.goto("/chat");
    const prompt = page.locator('[data-testid="chat-login"]');
    await prompt.waitFor();
    assert.match(await prompt.textContent(), /未登录或登录已过期，请重新登录！/);
    assert.equal(await page.locator('[data-testid="chat-frame"]').count(), 0);
    await prompt.getByRole("link", { name: "登录" }).click();
    await page.waitForURL("**/login");
    await context.close();
  }

  // A user without an enabled token is told so and sent to the token list.
  {
    const user = await newUser("chatno", "only");
    const list = (await user.api.call("GET", "/api/token/?p=0&size=100")).json.data;
    const off = await user.api.call("PUT", "/api/token/?status_only=true", { id: list[0].id, status: 2 });
    assert.ok(off.json.success, JSON.stringify(off.json));
    const { context, page } = await openAs(user);
    await page.goto("/chat/0");
    await page.waitForURL("**/token", { timeout: 10000 });
    await page.locator('[data-testid="token-banner"]').waitFor();
    // On the way the chat page said why (the notice and the toast), without a frame.
    await waitShown(page, "chat-no-token: 当前没有可用的启用令牌，请确认是否有令牌处于启用状态！");
    await waitShown(page, "toast: 当前没有可用的启用令牌，请确认是否有令牌处于启用状态！");
    assert.deepEqual(await page.evaluate(() => window.__shown.filter((e) => e.startsWith("chat-frame"))), []);
    await context.close();
  }

  // With no chat targets configured the entry leaves the sidebar and the page asks for the configuration.
  await setOption("Chats", "[]");
  try {
    const user = await newUser("chatnone", "k");
    const { context, page } = await openAs(user);
    assert.deepEqual(await page.evaluate(() => JSON.parse(localStorage.getItem("status")).chats), []);
    await page.locator('[data-testid="sidebar"] [data-nav="token"]').waitFor();
    assert.ok(!(await navEntries(page)).includes("chat"), JSON.stringify(await navEntries(page)));
    await page.goto("/chat");
    const problem = page.locator('[data-testid="chat-problem"]');
    await problem.waitFor();
    assert.equal((await problem.textContent()).trim(), "请联系管理员配置聊天链接");
    assert.equal(await page.locator('[data-testid="chat-frame"]').count(), 0);
    await waitShown(page, "toast: 请联系管理员配置聊天链接");
    await context.close();
  } finally {
    await setOption("Chats", JSON.stringify(CHATS));
  }
});

test("/chat2link replaces itself with the chat link carrying the user's first enabled token", async () => {
  const user = await userWithTwoTokens("c2l");
  const cases = [
    // A bare link gets the settings fragment ChatGPT-Next-Web reads.
    ["https://next.example/", `https://next.example/#/?settings=${encodeURIComponent(JSON.stringify({ key: `sk-${user.key}`, url: SERVER_ADDRESS }))}`],
    // A template is filled like the chat targets.
    ["https://tpl.example/start?k={key}&a={address}", `https://tpl.example/start?k=sk-${user.key}&a=http%3A%2F%2Fgw.example`],
  ];
  try {
    for (const [chatLink, target] of cases) {
      await setOption("ChatLink", chatLink);
      const { context, page } = await openAs(user);
      await stubChatSites(context);
      assert.equal(await page.evaluate(() => JSON.parse(localStorage.getItem("status")).chat_link), chatLink);
      const entries = await page.evaluate(() => history.length);
      await page.goto("/chat2link");
      await page.waitForURL((u) => u.hostname !== "127.0.0.1", { timeout: 10000 });
      await page.locator("#stub").waitFor();
      assert.equal(page.url(), target);
      // The chat link replaced /chat2link in the history instead of adding an entry after it.
      assert.equal(await page.evaluate(() => history.length), entries + 1);
      await context.close();
    }
  } finally {
    await setOption("ChatLink", "");
  }
});

test("/chat2link and /chat follow the chat links the server has now, never those a browser kept from an earlier visit", async () => {
  const user = await userWithTwoTokens("c2ls");
  try {
    // The chat targets of /chat.
    {
      await setOption("Chats", JSON.stringify([{ Old: "https://old-chat.example/app?k={key}" }]));
      const { context, page } = await openAs(user);
      const visited = await stubChatSites(context);
      await page.close();
      await setOption("Chats", JSON.stringify([{ New: "https://new-chat.example/app?k={key}" }]));
      const later = await context.newPage();
      await later.route("**/api/status", async (route) => {
        await new Promise((r) => setTimeout(r, 1500));
        await route.continue();
      });
      await later.goto("/chat/0");
      const frame = later.locator('[data-testid="chat-frame"]');
      await frame.waitFor();
      assert.match(await frame.getAttribute("src"), /^https:\/\/new-chat\.example\//);
      await later.waitForTimeout(500);
      assert.deepEqual(visited.filter((u) => u.startsWith("https://old-chat.example/")), [], "the user's key went to a chat target the administrator had replaced");
      await context.close();
    }
    // The chat link of /chat2link.
    await setOption("ChatLink", "https://old-chat.example/");
    const { context, page } = await openAs(user);
    const visited = await stubChatSites(context);
    assert.equal(await page.evaluate(() => JSON.parse(localStorage.getItem("status")).chat_link), "https://old-chat.example/");
    await page.close();
    // Changed while no console of this browser is open: the status it keeps is the old one.
    await setOption("ChatLink", "https://new-chat.example/");
    const later = await context.newPage();
    // The status answers slowly; the token list does not.
    await later.route("**/api/status", async (route) => {
      await new Promise((r) => setTimeout(r, 1500));
      await route.continue();
    });
    await later.goto("/chat2link");
    await later.waitForURL((u) => u.hostname !== "127.0.0.1", { timeout: 10000 });
    await later.locator("#stub").waitFor();
    assert.match(later.url(), /^https:\/\/new-chat\.example\//);
    assert.deepEqual(
      visited.filter((u) => u.startsWith("https://old-chat.example/")),
      [],
      "the user's key went to the chat link the administrator had replaced",
    );
    await context.close();
  } finally {
    await setOption("ChatLink", "");
    await setOption("Chats", JSON.stringify(CHATS));
  }
});

test("/chat2link without a chat link, with a non-web link, without a token or without login stays in the console", async () => {
  const user = await newUser("c2lp", "k");

  // No chat link configured.
  await setOption("ChatLink", "");
  {
    const { context, page } = await openAs(user);
    await page.goto("/chat2link");
    const problem = page.locator('[data-testid="chat2link-problem"]');
    await problem.waitFor();
    assert.equal((await problem.textContent()).trim(), "请联系管理员配置聊天链接");
    await waitShown(page, "toast: 请联系管理员配置聊天链接");
    assert.match(page.url(), /\/chat2link$/);
    await context.close();
  }

  try {
    // A link that is not an absolute web address is refused and never followed:
    // a protocol-relative one (it would leave for http://elsewhere.example) and
    // a script (the trailing comment would keep it valid with the fragment).
    for (const bad of ["//elsewhere.example/chat", "javascript:alert(document.domain)//"]) {
      await setOption("ChatLink", bad);
      const { context, page } = await openAs(user);
      const visited = await stubChatSites(context);
      const dialogs = [];
      page.on("dialog", (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      await page.goto("/chat2link");
      const problem = page.locator('[data-testid="chat2link-problem"]');
      await problem.waitFor();
      assert.equal((await problem.textContent()).trim(), "聊天链接配置错误，请联系管理员", bad);
      await waitShown(page, "toast: 聊天链接配置错误，请联系管理员");
      // The console document stays: it still navigates within itself afterwards.
      await page.evaluate(() => {
        window.__stayed = true;
      });
      await page.locator('[data-testid="sidebar"] [data-nav="token"]').click();
      await page.locator('[data-testid="token-banner"]').waitFor();
      assert.equal(await page.evaluate(() => window.__stayed), true, bad);
      assert.deepEqual(visited, [], bad);
      assert.deepEqual(dialogs, [], bad);
      await context.close();
    }

    // With a good link but no enabled token the user is sent to the token list.
    await setOption("ChatLink", "https://next.example/");
    const list = (await user.api.call("GET", "/api/token/?p=0&size=100")).json.data;
    const off = await user.api.call("PUT", "/api/token/?status_only=true", { id: list[0].id, status: 2 });
    assert.ok(off.json.success, JSON.stringify(off.json));
    const second = await openAs(user);
    await second.page.goto("/chat2link");
    await second.page.waitForURL("**/token", { timeout: 10000 });
    await second.page.locator('[data-testid="token-banner"]').waitFor();
    await waitShown(second.page, "chat2link: 当前没有可用的启用令牌，请确认是否有令牌处于启用状态！");
    await waitShown(second.page, "toast: 当前没有可用的启用令牌，请确认是否有令牌处于启用状态！");
    await second.context.close();

    // Anonymous visitors are sent to the login page, with its notice (B §2, §6).
    const anon = await openAs(null);
    await anon.page.goto("/chat2link");
    await anon.page.waitForURL((u) => u.pathname === "/login");
    await anon.page.locator('[data-testid="expired-notice"]').waitFor();
    await anon.context.close();
  } finally {
    await setOption("ChatLink", "");
  }
});

test("a live refresh answered after the user queried another range does not bring the old range back", async () => {
  const user = await newUser("stale", "stale-key");
  await relay(user.key, "dash-a");
  await waitForDashboardRows(user.api, 1);
  const { context, page } = await openAs(user);
  await page.goto("/detail");
  await waitForTotals(page, expected(["dash-a"]));
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  // Let the refresh that greets a freshly opened socket pass.
  await page.waitForTimeout(5500);
  // The refresh that follows the next charge (of the default range) is slow to answer.
  let refreshSent;
  const refreshStarted = new Promise((resolve) => (refreshSent = resolve));
  let refreshDone;
  const refreshAnswered = new Promise((resolve) => (refreshDone = resolve));
  await page.route(
    (url) => url.pathname === "/api/data/self" && Number(url.searchParams.get("start_timestamp")) > nowSec() - 40 * 86400,
    async (route) => {
      const res = await route.fetch();
      refreshSent();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await route.fulfill({ response: res });
      refreshDone();
    },
    { times: 1 },
  );
  await relay(user.key, "dash-b");
  await refreshStarted;
  // Meanwhile the user asks for a range without calls.
  await page.locator('[data-testid="detail-start"]').fill("2020-01-01T00:00:00");
  await page.locator('[data-testid="detail-end"]').fill("2020-01-02T00:00:00");
  await page.click('[data-testid="detail-query"]');
  await waitForTotals(page, { quota: 0, count: 0, tokens: 0 });
  await refreshAnswered;
  await page.waitForTimeout(300);
  assert.deepEqual(await totalsText(page), { quota: dollars(0), count: "0", tokens: "0" }, "the totals are those of the range asked for");
  assert.equal(await page.getByText("所选时间范围内没有数据").count(), 3);
  await context.close();
});

test("in a time zone half an hour off UTC, the hourly legend names the hour each bucket starts at", async () => {
  const user = await newUser("tz", "tz-key");
  await relay(user.key, "dash-a");
  const rows = await waitForDashboardRows(user.api, 1);
  const { context: india, page: p } = await newPage(suite.browser, suite.gw.baseURL, { viewport: { width: 1400, height: 900 }, timezoneId: "Asia/Kolkata" });
  await login(p, user.username, user.password);
  await p.goto("/detail");
  await waitForTotals(p, expected(["dash-a"]));
  const hour = rows[0].created_at - (rows[0].created_at % 3600);
  // The bucket's start in India (UTC+5:30): a whole UTC hour is half past an Indian hour.
  const local = new Date((hour + 5.5 * 3600) * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  const want = `${local.getUTCMonth() + 1}/${local.getUTCDate()} ${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}`;
  assert.ok(want.endsWith(":30"), want);
  const legend = await chartLegend(p, "count");
  assert.equal(legend["时间"], want, `the newest bucket's time: ${JSON.stringify(legend)}`);
  await india.close();
});

test("an administrator's dashboard of every user refreshes as another user's calls are charged", async () => {
  const other = await newUser("admlive", "k");
  const { context, page } = await openAs({ username: "root", password: "123456" });
  await page.goto("/detail");
  await page.locator('[data-testid="detail-page"]').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const all = await root.call("GET", `/api/data/?start_timestamp=${nowSec() - 86400}&end_timestamp=${nowSec() + 3600}&username=`);
  const before = { quota: sum(all.json.data, "quota"), count: sum(all.json.data, "count"), tokens: sum(all.json.data, "token_used") };
  await waitForTotals(page, before);
  // Another user's call: no balance of root's moves, only the log tail tells.
  await relay(other.key, "dash-b");
  const call = expected(["dash-b"]);
  await waitForTotals(page, { quota: before.quota + call.quota, count: before.count + 1, tokens: before.tokens + call.tokens });
  await context.close();
});

test("with consume logs off an administrator's dashboard of every user still refreshes as another user's calls are charged", async () => {
  const other = await newUser("nolog", "k");
  await setOption("LogConsumeEnabled", "false");
  try {
    const { context, page } = await openAs({ username: "root", password: "123456" });
    await page.goto("/detail");
    await page.locator('[data-testid="detail-page"]').waitFor();
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    const all = await root.call("GET", `/api/data/?start_timestamp=${nowSec() - 86400}&end_timestamp=${nowSec() + 3600}&username=`);
    const before = { quota: sum(all.json.data, "quota"), count: sum(all.json.data, "count"), tokens: sum(all.json.data, "token_used") };
    await waitForTotals(page, before);
    // No log is written, so no log tail tells of the call; the dashboard still counts it.
    await relay(other.key, "dash-b");
    const call = expected(["dash-b"]);
    await waitForTotals(page, { quota: before.quota + call.quota, count: before.count + 1, tokens: before.tokens + call.tokens });
    assert.equal((await consumeLogs(other.api)).length, 0);
    await context.close();
  } finally {
    await setOption("LogConsumeEnabled", "true");
  }
});

test("an open dashboard keeps refreshing while calls keep coming, not only once they stop", async () => {
  const other = await newUser("steady", "k");
  const { context, page } = await openAs({ username: "root", password: "123456" });
  await page.goto("/detail");
  await page.locator('[data-testid="detail-page"]').waitFor();
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  const all = await root.call("GET", `/api/data/?start_timestamp=${nowSec() - 86400}&end_timestamp=${nowSec() + 3600}&username=`);
  const before = sum(all.json.data, "count");
  await page.waitForFunction((n) => document.querySelector('[data-testid="detail-total-count"]')?.textContent?.trim() === String(n), before);
  // A busy gateway: a call every 600 ms, without a pause of 5 s, for as long as the check runs.
  let running = true;
  let made = 0;
  const traffic = (async () => {
    const end = Date.now() + 20000;
    while (running && Date.now() < end) {
      await relay(other.key, "dash-a");
      made++;
      await new Promise((r) => setTimeout(r, 600));
    }
  })();
  try {
    // The open page shows the calls while they go on (docs/live.md: it reads its range again as calls are charged).
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid="detail-total-count"]')?.textContent?.trim()) > n, before, { timeout: 12000 });
    assert.ok(running && made > 0);
  } finally {
    running = false;
    await traffic;
  }
  await context.close();
});

test("an open dashboard's quota axis follows a change of the display option without a reload", async () => {
  const user = await newUser("dsw", "dsw-token");
  await relay(user.key, "dash-a");
  await waitForDashboardRows(user.api, 1);
  const { context, page } = await openAs(user);
  try {
    await page.evaluate(() => {
      window.__drawn = [];
      const fill = CanvasRenderingContext2D.prototype.fillText;
      CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
        window.__drawn.push(String(text));
        return fill.call(this, text, ...rest);
      };
    });
    await page.locator('[data-testid="sidebar"] [data-nav="detail"]').click();
    await page.waitForURL("**/detail");
    await page.locator('[data-testid="detail-total-quota"]', { hasText: dollars(quotaOf("dash-a")) }).waitFor();
    await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
    // The quota axis is labelled in dollars.
    await page.waitForFunction(() => window.__drawn.some((s) => s.startsWith("$")));
    await page.evaluate(() => (window.__drawn = []));
    await setOption("DisplayInCurrencyEnabled", "false");
    // The totals switch to quota units at once; the quota axis is drawn again in them (125.0k, 100.0k…).
    await page.locator('[data-testid="detail-total-quota"]', { hasText: "125.0k" }).waitFor({ timeout: 10000 });
    await page.waitForFunction(() => window.__drawn.some((s) => /^\d+(\.\d)?k$/.test(s)), null, { timeout: 5000 }).catch(async () => {
      throw new Error(`the quota axis was not drawn again in quota units; drawn since: ${JSON.stringify(await page.evaluate(() => window.__drawn))}`);
    });
  } finally {
    await setOption("DisplayInCurrencyEnabled", "true");
    await context.close();
  }
});

test("the dashboard's totals abbreviate by the figure they show: 999 999 is 1.0M, not 1000.0k", async () => {
  const user = await newUser("abbr", null);
  const { context, page } = await openAs(user);
  // The server's rows for the range, as a busy account would have them: the totals are their sums.
  const hour = nowSec() - (nowSec() % 3600) - 3600;
  const rows = [
    { user_id: 0, username: user.username, model_name: "m-a", created_at: hour, token_used: 999_000, count: 999_949, quota: 0 },
    { user_id: 0, username: user.username, model_name: "m-b", created_at: hour, token_used: 999, count: 0, quota: 0 },
  ];
  await page.route(
    (url) => url.pathname === "/api/data/self",
    (route) => route.fulfill({ contentType: "application/json", body: JSON.stringify({ success: true, message: "", data: rows }) }),
  );
  await page.goto("/detail");
  await page.waitForFunction(() => /\d/.test(document.querySelector('[data-testid="detail-total-tokens"]')?.textContent ?? ""));
  const shown = await totalsText(page);
  assert.equal(shown.tokens, "1.0M", "999 999 tokens");
  assert.equal(shown.count, "999.9k", "999 949 calls");
  await context.close();
});

test("the dashboard's count axes step by whole numbers: two calls read 0, 1, 2 (not 0, 1, 1, 2, 2)", async () => {
  const user = await newUser("axis", null);
  const { context, page } = await openAs(user);
  const hour = nowSec() - (nowSec() % 3600) - 3600;
  const rows = [{ user_id: 0, username: user.username, model_name: "m-a", created_at: hour, token_used: 3, count: 2, quota: 4 }];
  await page.route(
    (url) => url.pathname === "/api/data/self",
    (route) => route.fulfill({ contentType: "application/json", body: JSON.stringify({ success: true, message: "", data: rows }) }),
  );
  // Each chart's canvas texts, by chart.
  await page.evaluate(() => {
    window.__byChart = {};
    const fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
      const chart = this.canvas.closest("[data-testid]")?.dataset.testid ?? "";
      (window.__byChart[chart] ??= []).push(String(text));
      return fill.call(this, text, ...rest);
    };
  });
  await page.locator('[data-testid="sidebar"] [data-nav="detail"]').click();
  await page.waitForURL("**/detail");
  for (const metric of ["count", "token_used"]) await page.locator(`[data-testid="detail-chart-${metric}"] canvas`).waitFor();
  await page.waitForFunction(() => ["detail-chart-count", "detail-chart-token_used"].every((c) => window.__byChart[c]?.length));
  const drawn = await page.evaluate(() => window.__byChart);
  for (const metric of ["count", "token_used"]) {
    // The value axis's labels (the time axis's have a colon or a slash).
    const values = drawn[`detail-chart-${metric}`].filter((s) => /^[\d.]+[kMB]?$/.test(s));
    const last = values.slice(values.lastIndexOf("0"));
    assert.ok(last.length >= 2, `${metric} axis labels: ${JSON.stringify(values)}`);
    assert.equal(new Set(last).size, last.length, `${metric} axis labels repeat: ${JSON.stringify(last)}`);
  }
  await context.close();
});

test("a bucket that spent a few millionths of a dollar reads so in the legend, as in the log list, not $0.0000", async () => {
  const user = await newUser("tiny", null);
  const { context, page } = await openAs(user);
  // Every hour of the default range spent 4 quota units: $0.000008 at 500 000 a dollar.
  const top = nowSec() - (nowSec() % 3600) + 7200;
  const rows = Array.from({ length: 52 }, (_, i) => ({ user_id: 0, username: user.username, model_name: "m-a", created_at: top - i * 3600, token_used: 3, count: 1, quota: 4 }));
  await page.route(
    (url) => url.pathname === "/api/data/self",
    (route) => route.fulfill({ contentType: "application/json", body: JSON.stringify({ success: true, message: "", data: rows }) }),
  );
  await page.locator('[data-testid="sidebar"] [data-nav="detail"]').click();
  await page.waitForURL("**/detail");
  await page.locator('[data-testid="detail-chart-quota"] canvas').waitFor();
  for (const side of ["right", "left"]) {
    const legend = await chartLegend(page, "quota", side);
    assert.equal(legend["m-a"], dollars(4, 6), `${side}: ${JSON.stringify(legend)}`);
  }
  // The range's total, a few hundred millionths, reads so too, as the log page's badge does.
  assert.match(await page.locator('[data-testid="detail-total-quota"]').textContent(), /^\$0\.000\d\d\d$/);
  await context.close();
});
