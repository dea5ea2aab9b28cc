import { batch, signal } from "@preact/signals-react";

/** Message is one frame from the server: a topic and its payload. */
export interface Message<T = unknown> {
  topic: string;
  data: T;
}

/** Handler receives the payload of one topic. */
export type Handler = (data: unknown) => void;

/** CLOSE_UNAUTHORIZED is the close code the server uses when the session is no longer valid. */
export const CLOSE_UNAUTHORIZED = 4401;
/**
 * CLOSE_REPLACED is the close code of an account's oldest socket when a newer one takes its place
 * (too many tabs). Such a tab reconnects only when it is looked at again, or two tabs would take
 * turns closing each other for ever.
 */
export const CLOSE_REPLACED = 4409;

const handlers = new Map<string, Set<Handler>>();
const reconnectHandlers = new Set<() => void>();
const openHandlers = new Set<() => void>();
let onSessionEnded: () => Promise<boolean> = async () => false;
let onReconnect: () => void = () => {};

/** onTopic registers a handler for one topic and returns a function that removes it. */
export function onTopic(topic: string, handler: Handler): () => void {
  let set = handlers.get(topic);
  if (!set) {
    set = new Set();
    handlers.set(topic, set);
  }
  set.add(handler);
  return () => set.delete(handler);
}

/** onReconnected registers what a page reloads after a reconnect (what was pushed meanwhile was missed); it returns a function that removes it. */
export function onReconnected(handler: () => void): () => void {
  reconnectHandlers.add(handler);
  return () => reconnectHandlers.delete(handler);
}

/** onOpened registers what runs each time a socket opens, before its first message; it returns a function that removes it. */
export function onOpened(handler: () => void): () => void {
  openHandlers.add(handler);
  return () => openHandlers.delete(handler);
}

/** SocketHooks connect the socket to the session. */
export interface SocketHooks {
  /** sessionEnded runs on a 4401 close and resolves true when the console is still logged in (a newer session). */
  sessionEnded: () => Promise<boolean>;
  /** reconnected runs after every reconnect, to catch up on missed updates. */
  reconnected: () => void;
}

/** setSocketHooks installs what happens on a 4401 close and after a reconnect. */
export function setSocketHooks(h: SocketHooks): void {
  onSessionEnded = h.sessionEnded;
  onReconnect = h.reconnected;
}

/** dispatch routes one raw frame to the handlers of its topic. */
export function dispatch(raw: string): void {
  let msg: Message;
  try {
    msg = JSON.parse(raw) as Message;
  } catch {
    return;
  }
  if (!msg || typeof msg.topic !== "string") return;
  for (const h of handlers.get(msg.topic) ?? []) {
    try {
      h(msg.data);
    } catch (err) {
      console.error("ws handler for", msg.topic, "failed:", err);
    }
  }
}

/**
 * FLUSH_MS is how long frames arriving after one another gather before their handlers run
 * together: a busy gateway pushes hundreds of frames a second, and a page that re-rendered for each
 * fell behind them for good (the socket's backlog is the browser's, unbounded). A frame after a
 * quiet spell is handled at once.
 */
const FLUSH_MS = 100;
/** MAX_PENDING bounds the frames held between two flushes (a hidden tab's timers may be slowed to once a minute). */
const MAX_PENDING = 512;

let pending: string[] = [];
let flushTimer: ReturnType<typeof setTimeout> | null = null;
/** dropped counts the times the frames held were forgotten, so that a flush under way stops too. */
let dropped = 0;

/** flushPending runs the handlers of the frames held, in order, as one update of the page. */
function flushPending(): void {
  if (pending.length === 0) return;
  const frames = pending;
  pending = [];
  const at = dropped;
  batch(() => {
    // A handler may end the session (a ban): the frames after it are no one's any more.
    for (const raw of frames) {
      if (dropped !== at) break;
      dispatch(raw);
    }
  });
}

/** endWindow flushes what gathered meanwhile and keeps gathering while frames keep coming. */
function endWindow(): void {
  flushTimer = null;
  if (pending.length === 0) return;
  flushPending();
  flushTimer = setTimeout(endWindow, FLUSH_MS);
}

/** receive takes one frame: handled at once after a quiet spell, else with the others of its window. */
function receive(raw: string): void {
  pending.push(raw);
  if (flushTimer === null) {
    flushPending();
    flushTimer = setTimeout(endWindow, FLUSH_MS);
  } else if (pending.length >= MAX_PENDING) {
    flushPending();
  }
}

/** dropPending forgets the frames held (the socket was closed on purpose: a logout). */
function dropPending(): void {
  dropped++;
  pending = [];
  if (flushTimer) {
    clearTimeout(flushTimer);
    flushTimer = null;
  }
}

/**
 * liveDown turns true once the live socket of a logged-in console has been down DOWN_NOTICE_MS
 * (the gateway restarting or out of reach): the console says so, since what the pages show no
 * longer follows the server, and says nothing of a drop the first reconnect mends at once.
 */
export const liveDown = signal(false);
const DOWN_NOTICE_MS = 3000;
let downTimer: ReturnType<typeof setTimeout> | null = null;

/** setDown starts (or, with false, stops) the wait after which liveDown is shown. */
function setDown(down: boolean): void {
  if (downTimer) {
    clearTimeout(downTimer);
    downTimer = null;
  }
  if (!down) {
    liveDown.value = false;
    return;
  }
  if (liveDown.value) return;
  downTimer = setTimeout(() => {
    downTimer = null;
    if (wanted && !replaced && !socketOpen()) liveDown.value = true;
  }, DOWN_NOTICE_MS);
}

const MIN_BACKOFF_MS = 1000;
const SESSION_CHECK_DELAY_MS = 1500;
const MAX_BACKOFF_MS = 30000;
/** STABLE_MS is how long a socket must have stayed open for the backoff to start again from its shortest wait. */
const STABLE_MS = 10000;

let socket: WebSocket | null = null;
let wanted = false;
let attempts = 0;
let everOpened = false;
let replaced = false;
let retryTimer: ReturnType<typeof setTimeout> | null = null;

function socketUrl(): string {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  return `${proto}//${location.host}/api/ws`;
}

function markLive(state: "open" | "closed"): void {
  document.documentElement.dataset.live = state;
}

function scheduleReconnect(): void {
  if (!wanted || retryTimer) return;
  const base = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** attempts);
  const delay = base / 2 + Math.random() * (base / 2);
  attempts++;
  retryTimer = setTimeout(() => {
    retryTimer = null;
    open();
  }, delay);
}

function open(): void {
  if (!wanted || socket) return;
  let ws: WebSocket;
  try {
    ws = new WebSocket(socketUrl());
  } catch {
    scheduleReconnect();
    return;
  }
  socket = ws;
  let openedAt = 0;
  ws.onopen = () => {
    openedAt = Date.now();
    markLive("open");
    setDown(false);
    for (const h of openHandlers) h();
    if (everOpened) {
      onReconnect();
      for (const h of reconnectHandlers) {
        try {
          h();
        } catch (err) {
          console.error("reconnect handler failed:", err);
        }
      }
    }
    everOpened = true;
  };
  ws.onmessage = (ev) => {
    if (typeof ev.data === "string") receive(ev.data);
  };
  ws.onclose = (ev) => {
    // What this socket brought is handled before the page reacts to its end.
    flushPending();
    if (socket === ws) socket = null;
    markLive("closed");
    // A socket that keeps closing soon after opening backs off further each time.
    if (openedAt && Date.now() - openedAt >= STABLE_MS) attempts = 0;
    if (ev.code === CLOSE_REPLACED) {
      replaced = true;
      setDown(false);
      return;
    }
    setDown(true);
    // A refused upgrade (the session ended while no socket was open) looks to the page like a
    // network failure: a socket that never opened checks the session as a 4401 does, and only a
    // session still valid (or a server out of reach) tries again.
    if (ev.code === CLOSE_UNAUTHORIZED || !openedAt) {
      // The close can overtake the answer that rotated this console's session
      // (a password change), so the session is checked only after a pause.
      setTimeout(() => {
        void onSessionEnded().then((stillValid) => {
          if (stillValid) scheduleReconnect();
          else {
            wanted = false;
            setDown(false);
          }
        });
      }, SESSION_CHECK_DELAY_MS);
      return;
    }
    scheduleReconnect();
  };
  ws.onerror = () => {
    /* onclose follows and schedules the retry */
  };
}

// A tab whose socket was taken by a newer one takes it back when it is looked at again (shown or
// focused), closing the account's oldest socket in turn.
function takeBack(): void {
  if (!replaced || document.visibilityState !== "visible") return;
  replaced = false;
  attempts = 0;
  if (!retryTimer) open();
}
document.addEventListener("visibilitychange", takeBack);
window.addEventListener("focus", takeBack);

/** connectSocket opens the single live-update socket (a no-op when it is already open). */
export function connectSocket(): void {
  wanted = true;
  open();
}

/** disconnectSocket closes the socket and stops reconnecting. */
export function disconnectSocket(): void {
  wanted = false;
  everOpened = false;
  replaced = false;
  attempts = 0;
  setDown(false);
  dropPending();
  if (retryTimer) {
    clearTimeout(retryTimer);
    retryTimer = null;
  }
  if (socket) {
    const ws = socket;
    socket = null;
    ws.onclose = null;
    ws.close(1000, "logout");
    markLive("closed");
  }
}

/** socketOpen reports whether the socket is currently connected. */
export function socketOpen(): boolean {
  return socket?.readyState === WebSocket.OPEN;
}
