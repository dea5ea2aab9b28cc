// A tiny OpenAI-compatible upstream for the browser tests: it records every
// request and answers chat completions as JSON or as a server-sent event stream.
import { createServer } from "node:http";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * startFakeUpstream listens on 127.0.0.1 and answers POST /v1/chat/completions
 * with the given chunks (streamed one by one, delayMs apart, when the request
 * asks for a stream, otherwise joined into one message) and GET /v1/models
 * with the given model names, and POST /v1/images/generations with n image
 * URLs; any other method or path gets a 404, so a test
 * also fails when the gateway calls the wrong endpoint. Models in failModels
 * get a 400 error instead of an answer.
 *
 * usage is the usage object every answer reports (default: 12 prompt tokens
 * and one completion token a chunk); pass large numbers to make one call cost
 * a visible amount. It may also be a function of the parsed request body
 * returning that object, e.g. to report audio token details for one model.
 *
 * Every request is recorded in requests, in order, as
 * { method, url, path, headers, body }: url as sent, path without the query,
 * headers as Node gives them (lower-case names, e.g. headers.authorization),
 * body parsed as JSON or null. Call close() when done; it also drops the
 * gateway's kept-alive connections.
 *
 * beforeChunk, when given, is called with a chunk's index before that chunk is streamed; a
 * promise it returns holds the stream there until it settles (a stream still coming, for as long
 * as a test needs, however slow the machine).
 */
export async function startFakeUpstream({ chunks = ["Hello", " world"], models = ["gpt-4o-mini"], delayMs = 40, failModels = [], usage = null, beforeChunk = null } = {}) {
  const requests = [];
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const c of req) raw += c;
    let body = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = null;
    }
    const path = (req.url ?? "").split("?")[0];
    requests.push({ method: req.method, url: req.url, path, headers: req.headers, body });
    if (req.method === "GET" && path === "/v1/models") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: models.map((id) => ({ id, object: "model", created: 1700000000, owned_by: "fake" })) }));
      return;
    }
    if (req.method === "POST" && path === "/v1/images/generations") {
      const n = Math.max(Number(body?.n) || 1, 1);
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ created: Math.floor(Date.now() / 1000), data: Array.from({ length: n }, (_, i) => ({ url: `https://images.example/${i + 1}.png` })) }));
      return;
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      res.writeHead(404, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}`, type: "invalid_request_error" } }));
      return;
    }
    const model = body?.model ?? "gpt-4o-mini";
    if (failModels.includes(model)) {
      res.writeHead(400, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: { message: `fake upstream refuses ${model}`, type: "invalid_request_error", code: "model_refused" } }));
      return;
    }
    const created = Math.floor(Date.now() / 1000);
    const answerUsage = (typeof usage === "function" ? usage(body) : usage) ?? { prompt_tokens: 12, completion_tokens: chunks.length, total_tokens: 12 + chunks.length };
    if (!body?.stream) {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(
        JSON.stringify({
          id: "chatcmpl-fake",
          object: "chat.completion",
          created,
          model,
          choices: [{ index: 0, message: { role: "assistant", content: chunks.join("") }, finish_reason: "stop" }],
          usage: answerUsage,
        }),
      );
      return;
    }
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
    const send = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
    const chunk = (delta, finish = null) => ({ id: "chatcmpl-fake", object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] });
    send(chunk({ role: "assistant", content: "" }));
    for (const [i, c] of chunks.entries()) {
      await beforeChunk?.(i);
      await sleep(delayMs);
      send(chunk({ content: c }));
    }
    send(chunk({}, "stop"));
    send({ id: "chatcmpl-fake", object: "chat.completion.chunk", created, model, choices: [], usage: answerUsage });
    res.write("data: [DONE]\n\n");
    res.end();
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    // E2E_UPSTREAM_PORT pins the port (a machine that keeps tests within a range of ports).
    server.listen(Number(process.env.E2E_UPSTREAM_PORT ?? 0), "127.0.0.1", resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** createChannel adds an enabled OpenAI-type channel pointing at the fake upstream, as root. */
export async function createChannel(api, upstreamURL, models, name = "fake-upstream") {
  const r = await api.call("POST", "/api/channel/", {
    type: 1,
    name,
    key: "sk-fake-upstream-key",
    base_url: upstreamURL,
    models: models.join(","),
    group: "default",
    status: 1,
    priority: 0,
    weight: 0,
  });
  if (r.status !== 200 || !r.json?.success) throw new Error(`create channel failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.data;
}
