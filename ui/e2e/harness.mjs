// Shared helpers for the browser tests: start the real gateway binary on a free
// loopback port with a throw-away data directory, and drive Debian's chromium.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));

/** GATEWAY_BIN is the binary under test; by default the one built at the repository root. */
export const GATEWAY_BIN = resolve(here, "..", process.env.GATEWAY_BIN ?? "../gateway");

/** CHROMIUM is the browser executable (Debian's chromium package). */
export const CHROMIUM = process.env.CHROMIUM_BIN || "/usr/bin/chromium";

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

let nextPort = 0;

/** freePort gives a port for a server of the tests: one of E2E_PORTS's range, else one the system says is free. */
export function freePort() {
  // E2E_PORTS ("from-to") keeps the test servers within a range of ports.
  const range = /^(\d+)-(\d+)$/.exec(process.env.E2E_PORTS ?? "");
  if (range) {
    const [from, to] = [Number(range[1]), Number(range[2])];
    nextPort = nextPort >= from && nextPort < to ? nextPort + 1 : from + Math.floor(Math.random() * (to - from));
    return Promise.resolve(nextPort);
  }
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolvePort(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * startGateway runs the gateway on 127.0.0.1 with a fresh data directory and
 * resolves once GET /api/status answers. Call stop() to kill it and remove the data, halt(signal)
 * to end it keeping the data, restart({ signal, downMs }) to end it and start it again on the same
 * port and data file.
 */
export async function startGateway({ env = {} } = {}) {
  if (!existsSync(GATEWAY_BIN)) {
    throw new Error(`gateway binary not found at ${GATEWAY_BIN}; build it (go build -o gateway .) or set GATEWAY_BIN`);
  }
  const dir = await mkdtemp(join(tmpdir(), "gateway-e2e-"));
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  const logs = [];
  // GATEWAY_BIN is the harness's own: the gateway would warn that it names no setting.
  const { GATEWAY_BIN: _, ...inherited } = process.env;
  let child = null;
  let exited = null;
  const spawnGateway = () => {
    const proc = spawn(GATEWAY_BIN, ["--addr", `127.0.0.1:${port}`, "--data", join(dir, "gateway.db"), "--allow-private-upstreams"], {
      env: { ...inherited, GATEWAY_CRITICAL_RATE_LIMIT: "10000", GATEWAY_API_RATE_LIMIT: "100000", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const keep = (chunk) => {
      logs.push(chunk.toString());
      if (logs.length > 200) logs.shift();
    };
    proc.stdout.on("data", keep);
    proc.stderr.on("data", keep);
    exited = null;
    proc.on("exit", (code, signal) => {
      if (child === proc) exited = { code, signal };
    });
    child = proc;
  };

  // halt ends the process with signal (SIGKILL at once, else after 5 s) and keeps its data.
  const halt = async (signal = "SIGTERM") => {
    if (exited === null) {
      child.kill(signal);
      for (let i = 0; i < 50 && exited === null; i++) await sleep(100);
      if (exited === null) child.kill("SIGKILL");
      for (let i = 0; i < 50 && exited === null; i++) await sleep(100);
    }
  };

  const stop = async () => {
    await halt();
    await rm(dir, { recursive: true, force: true });
  };

  const waitReady = async () => {
    const deadline = Date.now() + 30000;
    for (;;) {
      if (exited !== null) {
        await rm(dir, { recursive: true, force: true });
        throw new Error(`gateway exited early (${JSON.stringify(exited)}):\n${logs.join("")}`);
      }
      try {
        const res = await fetch(`${baseURL}/api/status`);
        if (res.ok) break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`gateway did not answer /api/status within 30 s:\n${logs.join("")}`);
      }
      await sleep(100);
    }
  };

  /**
   * restart ends the gateway with signal, waits downMs while nothing listens on its port, and
   * starts it again on the same port and data file (resolving once it answers).
   */
  const restart = async ({ signal = "SIGTERM", downMs = 0 } = {}) => {
    await halt(signal);
    await sleep(downMs);
    spawnGateway();
    await waitReady();
  };

  spawnGateway();
  await waitReady();
  return { baseURL, stop, restart, halt, logs };
}

/** launchBrowser starts headless chromium with the flags this machine needs. */
export function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * gatewaySuite registers the hooks a test file shares: before its first test
 * it starts a gateway and a browser, then runs setup(suite); after its last
 * test it closes the browser, runs teardown(suite) and stops the gateway.
 * The returned suite's gw and browser are filled in by the before hook.
 */
export function gatewaySuite({ setup, teardown, env } = {}) {
  const suite = { gw: null, browser: null };
  before(async () => {
    suite.gw = await startGateway({ env });
    suite.browser = await launchBrowser();
    await setup?.(suite);
  });
  after(async () => {
    try {
      await suite.browser?.close();
      await teardown?.(suite);
    } finally {
      await suite.gw?.stop();
    }
  });
  return suite;
}

/** newPage opens a page in a fresh context (own cookies and storage) at baseURL. */
export async function newPage(browser, baseURL, options = {}) {
  const context = await browser.newContext({ baseURL, locale: "zh-CN", ...options });
  const page = await context.newPage();
  page.setDefaultTimeout(10000);
  return { context, page };
}

/** uniqueName returns a short username (the server allows at most 12 characters). */
export function uniqueName(prefix = "u") {
  return (prefix + Math.random().toString(36).slice(2, 10)).slice(0, 12);
}

/** ApiSession calls the gateway from Node with a session cookie, as the console does. */
export class ApiSession {
  constructor(baseURL) {
    this.baseURL = baseURL;
    this.cookie = "";
    this.userId = null;
  }

  async call(method, path, body, headers = {}) {
    const h = { Accept: "application/json", ...headers };
    if (this.cookie) h.Cookie = this.cookie;
    if (this.userId !== null) h["New-Api-User"] = String(this.userId);
    if (body !== undefined) h["Content-Type"] = "application/json";
    const res = await fetch(this.baseURL + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
    const setCookie = res.headers.getSetCookie?.() ?? [];
    for (const c of setCookie) {
      const pair = c.split(";")[0];
      if (pair.endsWith("=")) continue;
      this.cookie = pair;
    }
    const text = await res.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return { status: res.status, json };
  }

  async register(username, password) {
    const r = await this.call("POST", "/api/user/register?turnstile=", { username, password, password2: password, email: "", verification_code: "", aff_code: "" });
    if (r.status !== 200 || !r.json?.success) throw new Error(`register ${username} failed: ${r.status} ${JSON.stringify(r.json)}`);
  }

  async login(username, password) {
    const r = await this.call("POST", "/api/user/login?turnstile=", { username, password });
    if (r.status !== 200 || !r.json?.success) throw new Error(`login ${username} failed: ${r.status} ${JSON.stringify(r.json)}`);
    this.userId = r.json.data.id;
    return r.json;
  }
}

/** expectToast waits for a toast containing text and returns its locator. */
/**
 * followPushes counts the frames of topic (holding every string of also) that the page's live
 * sockets receive, and returns a function that resolves once the page has taken one: a push that
 * has only reached the browser could still be handled after an answer the test holds.
 */
export async function followPushes(page, topic, also = []) {
  await page.addInitScript(({ topic, also }) => {
    const Native = window.WebSocket;
    window.__pushes = 0;
    window.WebSocket = class extends Native {
      constructor(...args) {
        super(...args);
        this.addEventListener("message", (ev) => {
          if (typeof ev.data === "string" && ev.data.includes(`"${topic}"`) && also.every((x) => ev.data.includes(x))) window.__pushes++;
        });
      }
    };
  }, { topic, also });
  // Frames that follow one another closely are handled together a moment (100 ms) after they came.
  return async () => {
    await page.waitForFunction(() => window.__pushes > 0);
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
  };
}

/** openLogPageTwo opens the log list, reads its total from page one's footer and turns to page two. */
export async function openLogPageTwo(page) {
  await page.goto("/log");
  const footer = page.locator('[data-testid="pagination"]');
  const first = footer.getByText(/第 1 - 10 条，共 \d+ 条/);
  await first.waitFor();
  const total = Number((await first.textContent()).match(/共 (\d+) 条/)[1]);
  await page.locator('html[data-live="open"]').waitFor({ state: "attached" });
  await page.locator('[data-testid="page-next"]').click();
  await footer.getByText(`第 11 - ${total} 条，共 ${total} 条`).waitFor();
  return { footer, total };
}

export async function expectToast(page, text) {
  const loc = page.locator(".toast", { hasText: text }).first();
  await loc.waitFor({ state: "visible" });
  return loc;
}

/**
 * toPersonalSettings waits for the page a login lands on (the token list
 * for most users, the personal settings for an account that must change
 * its password) and then opens the personal settings tab.
 */
export async function toPersonalSettings(page) {
  await page.waitForURL(/\/(token|setting\?tab=personal)$/);
  if (!/\/setting\?tab=personal$/.test(page.url())) {
    await page.goto("/setting?tab=personal");
  }
}

/** ROOT is the super administrator a fresh data directory starts with. */
const ROOT = { username: "root", password: "123456" };

/** rootApi returns an ApiSession logged in as root. */
export async function rootApi(baseURL) {
  const api = new ApiSession(baseURL);
  await api.login(ROOT.username, ROOT.password);
  return api;
}

/** registerUser registers a fresh user named uniqueName(prefix) and returns { username, password }. */
export async function registerUser(baseURL, prefix, password) {
  const username = uniqueName(prefix);
  await new ApiSession(baseURL).register(username, password);
  return { username, password };
}

/** newUser registers a fresh user like registerUser and also returns api, an ApiSession logged in as that user. */
export async function newUser(baseURL, prefix, password) {
  const { username } = await registerUser(baseURL, prefix, password);
  const api = new ApiSession(baseURL);
  await api.login(username, password);
  return { username, password, api };
}

/** putOption stores one server option through api (as root) and asserts that the server took it. */
export async function putOption(api, key, value) {
  const r = await api.call("PUT", "/api/option/", { key, value });
  assert.equal(r.status, 200, `PUT option ${key}: ${JSON.stringify(r.json)}`);
  assert.equal(r.json?.success, true, `PUT option ${key}: ${JSON.stringify(r.json)}`);
}

/** getOptions reads every option the server lists to root, as an object of key to value. */
export async function getOptions(api) {
  const r = await api.call("GET", "/api/option/");
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return Object.fromEntries(r.json.data.map(({ key, value }) => [key, value]));
}

/** quotaPerUnit reads from /api/status how much quota one dollar is (500000 when the server does not say). */
export async function quotaPerUnit(api) {
  return (await api.call("GET", "/api/status")).json.data.quota_per_unit || 500000;
}

/** money shows quota as the console does: dollars with two decimals, e.g. "$1.50", "-$0.50". */
export function money(quota, perUnit) {
  const text = Math.abs(quota / perUnit).toFixed(2);
  return (quota < 0 && /[1-9]/.test(text) ? "-$" : "$") + text;
}

/**
 * submitLogin opens /login, fills in the form and submits it; it does not
 * wait for the outcome, so a test can check a refused login too.
 */
export async function submitLogin(page, username, password) {
  await page.goto("/login");
  await page.fill("#login-username", username);
  await page.fill("#login-password", password);
  await page.click('[data-testid="login-submit"]');
}

/** login logs in through the form and waits until the console has left /login. */
export async function login(page, username, password) {
  await submitLogin(page, username, password);
  await page.waitForURL((u) => !u.pathname.startsWith("/login"));
}

/** loginToPersonalSettings logs in through the form and opens the personal settings tab (see toPersonalSettings). */
export async function loginToPersonalSettings(page, username, password) {
  await submitLogin(page, username, password);
  await toPersonalSettings(page);
}

/** navEntries lists the data-nav names of the sidebar entries the page shows. */
export function navEntries(page) {
  return page.locator("[data-nav]").evaluateAll((els) => els.map((e) => e.getAttribute("data-nav")));
}

/** statusAsStoredUser fetches path from inside the page as the console's stored user and returns the HTTP status. */
export function statusAsStoredUser(page, path) {
  return page.evaluate(async (p) => {
    const u = JSON.parse(localStorage.getItem("user"));
    return (await fetch(p, { headers: { "New-Api-User": String(u.id) }, credentials: "same-origin" })).status;
  }, path);
}
