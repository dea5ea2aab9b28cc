import assert from "node:assert/strict";
import { test } from "node:test";
import { ApiSession, gatewaySuite, login, newPage } from "./harness.mjs";

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
