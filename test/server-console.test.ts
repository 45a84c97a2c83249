import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, Runtime } from "../src/index.js";
import { createKeelHandler, type KeelHandlerOptions } from "../src/server/index.js";
import { scriptedModel } from "../src/testing/index.js";

/**
 * What the web console needs of the server: runs listed per tenant and filtered, a run's effective policy, and
 * the console's own files, served without a token while the API keeps asking for one.
 */

const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

const built = mkdtempSync(join(tmpdir(), "keel-console-"));
mkdirSync(join(built, "assets"));
writeFileSync(
  join(built, "index.html"),
  '<!doctype html><script type="module" src="./assets/app-1.js"></script>',
);
writeFileSync(join(built, "assets", "app-1.js"), `console.log(${JSON.stringify("x".repeat(4000))});`);
afterAll(() => rmSync(built, { recursive: true, force: true }));

async function handlerWith(options: KeelHandlerOptions = {}) {
  const pay = defineTool({
    name: "pay",
    description: "Pay",
    inputSchema: z.object({ amount: z.number() }),
    execute: ({ amount }) => amount,
  });
  const refund = defineTool({
    name: "refund",
    description: "Refund",
    inputSchema: z.object({ amount: z.number() }),
    execute: ({ amount }) => amount,
    approvalMode: "always",
  });
  const runtime = await Runtime.fromDict({
    agents: [
      { id: "echo", name: "Echo" },
      {
        id: "broken",
        name: "Broken",
        llm: scriptedModel([{ error: { type: "response", message: "cut off" } }], {
          whenExhausted: "repeat-last",
        }),
      },
      {
        id: "payer",
        name: "Payer",
        tools: [pay, refund],
        llm: scriptedModel([{ text: "ok" }], { whenExhausted: "repeat-last" }),
      },
    ],
  });
  runtimes.push(runtime);
  const handler = createKeelHandler(runtime, options);
  const call = (path: string, init: RequestInit & { json?: unknown; token?: string } = {}) => {
    const { json, token, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (token !== undefined) headers.set("authorization", `Bearer ${token}`);
    if (json !== undefined) headers.set("content-type", "application/json");
    return handler(
      new Request(`http://localhost${path}`, {
        ...rest,
        headers,
        ...(json === undefined ? {} : { method: "POST", body: JSON.stringify(json) }),
      }),
    );
  };
  return { runtime, call };
}

describe("GET /runs", () => {
  it("lists the caller's runs only, newest first, by agent, status and session", async () => {
    const { call } = await handlerWith({ token: ["alice", "bob"] });
    const start = async (token: string, agentId: string, sessionId: string) => {
      const response = await call("/runs", {
        token,
        json: { agentId, inputText: "hi", sessionId, wait: true },
      });
      return ((await response.json()) as { runId: string }).runId;
    };
    const first = await start("alice", "echo", "s1");
    const second = await start("alice", "payer", "s2");
    const third = await start("alice", "echo", "s2");
    await start("bob", "echo", "s1");
    const list = async (query: string) => {
      const response = await call(`/runs${query}`, { token: "alice" });
      expect(response.status).toBe(200);
      return ((await response.json()) as { runs: { runId: string; sessionId: string; inputText?: string }[] })
        .runs;
    };
    const all = await list("");
    expect(all.map((run) => run.runId)).toEqual([third, second, first]);
    expect(all.map((run) => run.sessionId)).toEqual(["s2", "s2", "s1"]);
    // Each record keeps what the run was asked, for the console to show beside its answer.
    expect(all.map((run) => run.inputText)).toEqual(["hi", "hi", "hi"]);
    expect((await list("?agentId=echo")).map((run) => run.runId)).toEqual([third, first]);
    expect((await list("?sessionId=s2")).map((run) => run.runId)).toEqual([third, second]);
    expect((await list("?status=done&limit=1")).map((run) => run.runId)).toEqual([third]);
    expect(await list("?status=waiting")).toEqual([]);
    const bad = await call("/runs?status=finished", { token: "alice" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: "request.query" } });
    expect((await call("/runs?limit=0", { token: "alice" })).status).toBe(400);
  });
});

describe("a failed run's error", () => {
  it("names the client's session (its context, the result's metadata, the stream), never the stored one", async () => {
    const { call } = await handlerWith({ token: "alice" });
    const response = await call("/runs", {
      token: "alice",
      json: { agentId: "broken", inputText: "hi", sessionId: "mine", wait: true },
    });
    const result = (await response.json()) as {
      runId: string;
      errorDetails: { context: { sessionId: string } };
    };
    expect(result.errorDetails.context.sessionId).toBe("mine");
    const stream = await (await call(`/runs/${result.runId}/events`, { token: "alice" })).text();
    expect(stream).toContain('"sessionId":"mine"');
    expect(stream).not.toContain("~mine");
  });
});

describe("GET /runs/:id/policy", () => {
  it("gives the run's effective policy, each rule with its source; another tenant's run is unknown", async () => {
    const { call, runtime } = await handlerWith({ token: ["alice", "bob"] });
    const response = await call("/runs", {
      token: "alice",
      json: { agentId: "payer", inputText: "hi", wait: true },
    });
    const { runId } = (await response.json()) as { runId: string };
    const policy = await call(`/runs/${runId}/policy`, { token: "alice" });
    expect(policy.status).toBe(200);
    const body = (await policy.json()) as { agentId: string; rules: { source: string }[]; tools: object };
    expect(body).toEqual(await runtime.getEffectivePolicy("payer"));
    expect(body.tools).toHaveProperty("pay");
    // Every call of a tool that declares approvalMode "always" waits for approval: the policy says so.
    expect(body.tools).toMatchObject({
      pay: { effect: "allow", rule: "runtime.safe_default", source: "runtime" },
      refund: { effect: "ask", rule: "tool.approval_mode:refund", source: "tool" },
    });
    expect(new Set(body.rules.map((rule) => rule.source))).toContain("runtime");
    const other = await call(`/runs/${runId}/policy`, { token: "bob" });
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: { code: "run.unknown" } });
  });
});

describe("the console's files", () => {
  it("are not served unless asked for", async () => {
    const { call } = await handlerWith();
    const page = await call("/");
    expect(page.status).toBe(404);
    expect(await page.json()).toMatchObject({ error: { code: "route.unknown" } });
  });

  it("are served without the token, gzipped when accepted, under a strict policy; the API still wants it", async () => {
    const { call } = await handlerWith({ token: "secret", console: { directory: built } });
    const page = await call("/", { headers: { "accept-encoding": "gzip, br" } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-encoding")).toBe("gzip");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(gunzipSync(Buffer.from(await page.arrayBuffer())).toString()).toContain("./assets/app-1.js");
    const script = await call("/assets/app-1.js");
    expect(script.status).toBe(200);
    expect(script.headers.get("content-encoding")).toBeNull();
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(script.headers.get("cache-control")).toContain("immutable");
    expect((await script.text()).length).toBeGreaterThan(4000);
    const missing = await call("/assets/app-0.js");
    expect(missing.status).toBe(404);
    expect((await call("/agents")).status).toBe(401);
    expect((await call("/agents", { token: "secret" })).status).toBe(200);
  });

  it("live at the base path's folder, where its relative paths reach the API", async () => {
    const { call } = await handlerWith({ basePath: "/keel", console: { directory: built } });
    const bare = await call("/keel?x=1");
    expect(bare.status).toBe(308);
    expect(bare.headers.get("location")).toBe("/keel/?x=1");
    expect((await call("/keel/")).status).toBe(200);
    expect((await call("/keel/assets/app-1.js")).status).toBe(200);
    expect((await call("/keel/agents")).status).toBe(200);
  });

  it("say how to build them when they are not built", async () => {
    const { call } = await handlerWith({ console: { directory: join(built, "nowhere") } });
    const page = await call("/");
    expect(page.status).toBe(404);
    const body = (await page.json()) as { error: { code: string; hint: string } };
    expect(body.error.code).toBe("console.not_built");
    expect(body.error.hint).toContain("npm run build");
  });

  it("answer only to the allowed hosts, as the API does", async () => {
    const { call } = await handlerWith({ allowedHosts: ["127.0.0.1:8787"], console: { directory: built } });
    const page = await call("/");
    expect(page.status).toBe(403);
    expect(await page.json()).toMatchObject({ error: { code: "request.host" } });
  });
});
