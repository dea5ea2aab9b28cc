import assert from "node:assert/strict";
import { test } from "node:test";
import { gatewaySuite, newPage } from "./harness.mjs";

const suite = gatewaySuite();

const appearance = (page) => page.evaluate(() => document.querySelector(".radix-themes")?.classList.contains("dark") ? "dark" : "light");

test("the dark-mode switch persists across reloads", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { colorScheme: "light" });
  await page.goto("/");
  await page.locator('[data-testid="theme-toggle"]').waitFor();
  assert.equal(await appearance(page), "light");
  await page.click('[data-testid="theme-toggle"]');
  assert.equal(await appearance(page), "dark");
  assert.equal(await page.evaluate(() => localStorage.getItem("theme")), "dark");
  await page.reload();
  await page.locator('[data-testid="theme-toggle"]').waitFor();
  assert.equal(await appearance(page), "dark");
  await page.click('[data-testid="theme-toggle"]');
  await page.reload();
  await page.locator('[data-testid="theme-toggle"]').waitFor();
  assert.equal(await appearance(page), "light");
  await context.close();
});

test("the language switch persists across reloads", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await page.goto("/login");
  await page.locator("h1", { hasText: "用户登录" }).waitFor();
  await page.click('[data-testid="language-switch"]');
  await page.click('[data-testid="language-en"]');
  await page.locator("h1", { hasText: "Log in" }).waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem("i18nextLng")), "en");
  assert.equal(await page.evaluate(() => document.documentElement.lang), "en");
  await page.reload();
  await page.locator("h1", { hasText: "Log in" }).waitFor();
  await page.click('[data-testid="language-switch"]');
  await page.click('[data-testid="language-zh"]');
  await page.locator("h1", { hasText: "用户登录" }).waitFor();
  await page.reload();
  await page.locator("h1", { hasText: "用户登录" }).waitFor();
  await context.close();
});

test("a first visit speaks the browser's language when the console has it, else Chinese", async () => {
  for (const [locale, heading] of [["en-US", "Log in"], ["zh-TW", "用户登录"], ["fr-FR", "用户登录"]]) {
    const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { locale });
    await page.goto("/login");
    await page.locator("h1", { hasText: heading }).waitFor();
    await context.close();
  }
  // A choice made in the console wins over the browser's.
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL, { locale: "en-US" });
  await context.addInitScript(() => localStorage.setItem("i18nextLng", "zh"));
  await page.goto("/login");
  await page.locator("h1", { hasText: "用户登录" }).waitFor();
  await context.close();
});
