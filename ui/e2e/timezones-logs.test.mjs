// Time zones on the log page: a console user in another zone than the server (Los Angeles, with
// daylight saving; the server's clock is UTC) filters by the instants they picked.
import assert from "node:assert/strict";
import { test } from "node:test";
import { gatewaySuite, login, newPage, newUser } from "./harness.mjs";

const suite = gatewaySuite();

const LA = { viewport: { width: 1400, height: 900 }, timezoneId: "America/Los_Angeles" };

// 2027-03-14 is the day Los Angeles goes forward: 02:00–02:59 does not happen, yet the browser's
// date-time picker offers it. A start picked there still bounds the list from that night on (from
// 03:00 PDT, the clocks' next time, at the latest 02:30 PST = 03:30 PDT), instead of being dropped.
test("a log filter start in the hour the spring-forward skips still bounds the list", async () => {
  const { username, password } = await newUser(suite.gw.baseURL, "tzl", "token-pass-1");
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, LA);
  await login(page, username, password);
  await page.goto("/log");
  await page.locator('[data-testid="log-filters"]').waitFor();
  const asked = [];
  page.on("request", (r) => {
    if (r.url().includes("/api/log/self/")) asked.push(new URL(r.url()));
  });
  await page.fill("#log-start", "2027-03-14T02:30:00");
  await page.fill("#log-end", "2027-03-15T00:00:00");
  await page.click('[data-testid="log-query"]');
  for (let i = 0; i < 50 && asked.length < 2; i++) await page.waitForTimeout(100);
  assert.ok(asked.length >= 2, "the list and the summary were read");
  for (const u of asked) {
    const start = Number(u.searchParams.get("start_timestamp"));
    assert.ok(start >= Date.UTC(2027, 2, 14, 10, 0, 0) / 1000 && start <= Date.UTC(2027, 2, 14, 10, 30, 0) / 1000, `${u.pathname} start_timestamp=${u.searchParams.get("start_timestamp")}`);
    assert.equal(Number(u.searchParams.get("end_timestamp")), Date.UTC(2027, 2, 15, 7, 0, 0) / 1000, u.pathname);
  }
  await context.close();
});
