import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiSession, expectToast, gatewaySuite, login, newPage } from "./harness.mjs";

const suite = gatewaySuite();

/** LONE_SURROGATE finds half of a surrogate pair: a character cut in two. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** loneSurrogates lists the text nodes of the page that hold half a character. */
function loneSurrogates(page) {
  return page.evaluate((src) => {
    const re = new RegExp(src);
    const out = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) if (re.test(n.data)) out.push(JSON.stringify(n.data));
    return out;
  }, LONE_SURROGATE.source);
}

test("an avatar of a username that starts with an emoji shows the whole emoji", async () => {
  const username = "😀小明" + Math.random().toString(36).slice(2, 6);
  const password = "emoji-pass-1";
  await new ApiSession(suite.gw.baseURL).register(username, password);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, username, password);
  await page.locator('[data-testid="user-menu"]').waitFor();
  assert.equal((await page.locator('[data-testid="user-menu"] .rt-AvatarFallback').textContent()).trim(), "😀");
  await page.goto("/setting?tab=personal");
  await page.locator('[data-testid="edit-profile"]').waitFor();
  assert.deepEqual(await loneSurrogates(page), []);
  await context.close();
});

test("the profile dialog takes a display name of 20 characters as the server does, emoji included", async () => {
  const username = "emo" + Math.random().toString(36).slice(2, 8);
  const password = "emoji-pass-2";
  await new ApiSession(suite.gw.baseURL).register(username, password);
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  await login(page, username, password);
  await page.goto("/setting?tab=personal");
  await page.click('[data-testid="edit-profile"]');
  const name = "🐼".repeat(15); // 15 characters: the server takes up to 20
  await page.locator("#profile-display-name").click();
  await page.locator("#profile-display-name").press("ControlOrMeta+a");
  await page.keyboard.insertText(name);
  assert.equal(await page.locator("#profile-display-name").inputValue(), name);
  await page.click('[data-testid="save-profile"]');
  await page.locator('h1[data-testid="profile-display-name"], [data-testid="profile-display-name"]', { hasText: name }).first().waitFor();
  await context.close();
});

test("registration counts a password's characters as the server does, emoji included", async () => {
  const { context, page } = await newPage(suite.browser, suite.gw.baseURL);
  const password = "🔑".repeat(10) + "a"; // 11 characters (44 bytes): within 8-20 and 72 bytes
  await page.goto("/register");
  await page.fill("#reg-username", "pw" + Math.random().toString(36).slice(2, 8));
  await page.fill("#reg-password", password);
  await page.fill("#reg-password2", password);
  await page.click('[data-testid="register-submit"]');
  await expectToast(page, "注册成功！");
  await context.close();
});
