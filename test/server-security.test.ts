import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime } from "../src/index.js";
import { createKeelHandler } from "../src/server/index.js";
import { scriptedModel } from "../src/testing/index.js";
import { readSse } from "./support/sse-client.js";

/**
 * What the server refuses: no or a wrong token, another tenant's run, a foreign Host or Origin, an oversized
 * body, and every malformed input — each a 4xx with `{error: {code, message, hint}}`, never a 500.
 */

let runtime: Runtime;
let handler: (request: Request) => Promise<Response>;
let runOfA: string;

beforeAll(async () => {
  runtime = await Runtime.fromDict({
    agents: [
      { id: "echo", name: "Echo", llm: scriptedModel([{ text: "hi" }], { whenExhausted: "repeat-last" }) },
    ],
  });
  handler = createKeelHandler(runtime, {
    token: ["token-a", "token-b"],
    allowedHosts: ["localhost:8787"],
    maxBodyBytes: 1024,
    basePath: "/api",
  });
  const started = await call("/api/runs", {
    token: "token-a",
    body: { agentId: "echo", inputText: "x", wait: true },
  });
  runOfA = ((await started.json()) as { runId: string }).runId;
});
afterAll(() => runtime.close());

interface Call {
  token?: string | null;
  method?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

function call(path: string, options: Call = {}): Promise<Response> {
  const headers: Record<string, string> = { host: "localhost:8787", ...options.headers };
  if (options.token !== null) headers.authorization = `Bearer ${options.token ?? "token-a"}`;
  const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  return handler(
    new Request(`http://localhost:8787${path}`, {
      method: options.method ?? (body === undefined ? "GET" : "POST"),
      headers,
      ...(body === undefined ? {} : { body }),
    }),
  );
}

const CASES: [name: string, path: () => string, options: Call, status: number, code: string][] = [
  ["no token", () => "/api/agents", { token: null }, 401, "auth.required"],
  ["a wrong token", () => "/api/agents", { token: "nope" }, 401, "auth.required"],
  ["a foreign Host", () => "/api/agents", { headers: { host: "evil.example:8787" } }, 403, "request.host"],
  [
    "a foreign Origin",
    () => "/api/agents",
    { headers: { origin: "http://evil.example" } },
    403,
    "request.host",
  ],
  ["bad JSON", () => "/api/runs", { rawBody: "{nope" }, 400, "request.json"],
  ["a JSON array", () => "/api/runs", { rawBody: "[]" }, 400, "request.json"],
  ["no agentId", () => "/api/runs", { body: { inputText: "x" } }, 400, "request.field"],
  [
    "a number as inputText",
    () => "/api/runs",
    { body: { agentId: "echo", inputText: 1 } },
    400,
    "request.field",
  ],
  [
    "wait as a string",
    () => "/api/runs",
    { body: { agentId: "echo", inputText: "x", wait: "yes" } },
    400,
    "request.field",
  ],
  [
    "a bad session id",
    () => "/api/runs",
    { body: { agentId: "echo", inputText: "x", sessionId: "../x" } },
    400,
    "request.id",
  ],
  [
    "an unknown agent",
    () => "/api/runs",
    { body: { agentId: "ghost", inputText: "x" } },
    404,
    "agent.unknown",
  ],
  [
    "a body over the limit",
    () => "/api/runs",
    { rawBody: JSON.stringify({ inputText: "x".repeat(2000) }) },
    413,
    "request.too_large",
  ],
  ["an unknown run", () => "/api/runs/nope", {}, 404, "run.unknown"],
  ["a 10 KB run id", () => `/api/runs/${"r".repeat(10_000)}`, {}, 400, "request.id"],
  ["another tenant's run", () => `/api/runs/${runOfA}`, { token: "token-b" }, 404, "run.unknown"],
  ["another tenant's events", () => `/api/runs/${runOfA}/events`, { token: "token-b" }, 404, "run.unknown"],
  [
    "another tenant's checkpoints",
    () => `/api/runs/${runOfA}/checkpoints`,
    { token: "token-b" },
    404,
    "run.unknown",
  ],
  [
    "another tenant's cancel",
    () => `/api/runs/${runOfA}/cancel`,
    { token: "token-b", method: "POST" },
    404,
    "run.unknown",
  ],
  [
    "another tenant's decisions",
    () => `/api/runs/${runOfA}/decisions`,
    { token: "token-b", body: { decisions: [{ toolCallId: "x", action: "approve" }] } },
    404,
    "run.unknown",
  ],
  [
    "Last-Event-ID: abc",
    () => `/api/runs/${runOfA}/events`,
    { headers: { "last-event-id": "abc" } },
    400,
    "request.last_event_id",
  ],
  [
    "Last-Event-ID: -1",
    () => `/api/runs/${runOfA}/events`,
    { headers: { "last-event-id": "-1" } },
    400,
    "request.last_event_id",
  ],
  [
    "Last-Event-ID: 1e309",
    () => `/api/runs/${runOfA}/events`,
    { headers: { "last-event-id": "1e309" } },
    400,
    "request.last_event_id",
  ],
  [
    "a 10 KB Last-Event-ID",
    () => `/api/runs/${runOfA}/events`,
    { headers: { "last-event-id": "9".repeat(10_000) } },
    400,
    "request.last_event_id",
  ],
  ["?after=1.5", () => `/api/runs/${runOfA}/events?after=1.5`, {}, 400, "request.last_event_id"],
  ["no decisions", () => `/api/runs/${runOfA}/decisions`, { body: {} }, 400, "request.decisions"],
  [
    "a malformed decision",
    () => `/api/runs/${runOfA}/decisions`,
    { body: { decisions: [{ action: 1 }] } },
    400,
    "request.decisions",
  ],
  [
    "a decision for a run that waits for none",
    () => `/api/runs/${runOfA}/decisions`,
    { body: { decisions: [{ toolCallId: "x", action: "approve" }] } },
    409,
    "run.decision",
  ],
  [
    "a checkpoint of another run",
    () => `/api/runs/${runOfA}/resume`,
    { body: { checkpointId: "other:step:1" } },
    404,
    "checkpoint.unknown",
  ],
  ["an unknown route", () => "/api/nothing", {}, 404, "route.unknown"],
  ["outside the base path", () => "/runs", {}, 404, "route.unknown"],
];

describe("the server refuses bad requests with a JSON error", () => {
  it.each(CASES)("%s", async (...[, path, options, status, code]) => {
    const response = await call(path(), options);
    expect(response.status).toBe(status);
    const body = (await response.json()) as { error: { code: string; message: string; hint: string } };
    expect(body.error.code).toBe(code);
    expect(body.error.message.length).toBeGreaterThan(0);
    expect(typeof body.error.hint).toBe("string");
    // Nothing of the other tenant's run leaks into a refusal.
    expect(JSON.stringify(body)).not.toContain("sessionId");
  });

  it("lets the tenant that started a run read it, and sends no CORS headers", async () => {
    const response = await call(`/api/runs/${runOfA}`, { headers: { origin: "http://localhost:8787" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    const events = await readSse(await call(`/api/runs/${runOfA}/events`));
    expect(events.events.at(-1)?.event).toBe("run.finished");
  });
});
