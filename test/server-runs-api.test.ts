import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type Message, Runtime } from "../src/index.js";
import { createKeelHandler, type KeelHandlerOptions } from "../src/server/index.js";
import { type ScriptStep, scriptedModel } from "../src/testing/index.js";
import { idsOf, readSse } from "./support/sse-client.js";

/**
 * The runs API through the web-standard handler, in process: start, read, stream and re-attach, decide, cancel,
 * resume; a client that leaves only detaches; a client that reads nothing is cut off and loses nothing.
 */

const toolResults = (messages: readonly Message[]) => messages.filter((message) => message.role === "tool");

/** `steps` calls of `tick`, then an answer. */
const ticks =
  (steps: number): ScriptStep =>
  ({ messages }) =>
    toolResults(messages).length < steps
      ? { toolCalls: [{ name: "tick", arguments: { n: toolResults(messages).length } }] }
      : { text: "ticked" };

/** One payment that needs an approval, then an answer. */
const payOnce: ScriptStep = ({ messages }) =>
  toolResults(messages).length === 0
    ? { toolCalls: [{ id: "p1", name: "pay", arguments: { amount: 10 } }] }
    : { text: "paid" };

const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

async function serverWith(options: KeelHandlerOptions = {}, tickMs = 5) {
  const tick = defineTool({
    name: "tick",
    description: "Wait a moment",
    inputSchema: z.object({ n: z.number() }),
    execute: async ({ n }) => {
      await new Promise((resolve) => setTimeout(resolve, tickMs));
      return n;
    },
  });
  const pay = defineTool({
    name: "pay",
    description: "Pay (needs approval)",
    inputSchema: z.object({ amount: z.number() }),
    approvalMode: "always",
    execute: ({ amount }) => `paid ${amount}`,
  });
  const runtime = await Runtime.fromDict({
    agents: [
      {
        id: "ticker",
        name: "Ticker",
        tools: [tick],
        llm: scriptedModel([ticks(6)], { whenExhausted: "repeat-last" }),
      },
      {
        id: "payer",
        name: "Payer",
        tools: [pay],
        llm: scriptedModel([payOnce], { whenExhausted: "repeat-last" }),
      },
    ],
  });
  runtimes.push(runtime);
  const handler = createKeelHandler(runtime, options);
  const call = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const { json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (json !== undefined) headers.set("content-type", "application/json");
    return handler(
      new Request(`http://localhost${path}`, {
        ...rest,
        headers,
        ...(json === undefined ? {} : { method: rest.method ?? "POST", body: JSON.stringify(json) }),
      }),
    );
  };
  return { runtime, call };
}

async function startRun(call: Awaited<ReturnType<typeof serverWith>>["call"], agentId = "ticker") {
  const response = await call("/runs", { json: { agentId, inputText: "go" } });
  expect(response.status).toBe(202);
  return ((await response.json()) as { runId: string }).runId;
}

const finishedRun = (read: { events: { event: string | undefined }[] }) =>
  read.events.at(-1)?.event === "run.finished";

describe("the runs API", () => {
  it("lists agents and runs one to its result with wait", async () => {
    const { call } = await serverWith();
    expect(await (await call("/agents")).json()).toEqual({
      agents: [
        { id: "ticker", name: "Ticker" },
        { id: "payer", name: "Payer" },
      ],
    });
    const response = await call("/runs", { json: { agentId: "ticker", inputText: "go", wait: true } });
    expect(response.status).toBe(200);
    const result = (await response.json()) as { runId: string; stopReason: string; finalOutput: string };
    expect(result).toMatchObject({ stopReason: "completed", finalOutput: "ticked" });
    const record = await (await call(`/runs/${result.runId}`)).json();
    expect(record).toMatchObject({ runId: result.runId, status: "done", agentId: "ticker" });
    expect((record as { sessionId: string }).sessionId).not.toContain("~");
  });

  it("streams a run as SSE with id = sequence and re-attaches from Last-Event-ID or ?after=", async () => {
    const { call } = await serverWith();
    const runId = await startRun(call);
    const whole = await readSse(await call(`/runs/${runId}/events`));
    expect(whole.ended).toBe(true);
    const ids = idsOf(whole);
    expect(ids).toEqual(ids.map((_, index) => index + 1));
    expect(whole.events.at(-1)?.event).toBe("run.finished");
    const first = JSON.parse(whole.events[0]!.data) as { kind: string; sequence: number; sessionId: string };
    expect(first).toMatchObject({ kind: whole.events[0]!.event, sequence: 1 });
    expect(first.sessionId).not.toContain("~");

    const fromHeader = await readSse(
      await call(`/runs/${runId}/events`, { headers: { "last-event-id": "4" } }),
    );
    expect(idsOf(fromHeader)).toEqual(ids.slice(4));
    const fromQuery = await readSse(await call(`/runs/${runId}/events?after=${ids.length - 1}`));
    expect(idsOf(fromQuery)).toEqual([ids.length]);
  });

  it("a client that leaves only detaches: the run goes on, and a re-attach gets the rest once", async () => {
    const { call, runtime } = await serverWith({}, 20);
    const runId = await startRun(call);
    const part = await readSse(await call(`/runs/${runId}/events`), (read) => read.events.length >= 3);
    expect(part.ended).toBe(false);
    const rest = await readSse(
      await call(`/runs/${runId}/events`, { headers: { "last-event-id": String(idsOf(part).at(-1)) } }),
    );
    expect(finishedRun(rest)).toBe(true);
    const all = [...idsOf(part), ...idsOf(rest)];
    expect(all).toEqual(all.map((_, index) => index + 1));
    expect(await runtime.getRun(runId)).toMatchObject({ status: "done", stopReason: "completed" });
  });

  it("cuts off a client that reads nothing, and it re-attaches from its last id losing nothing", async () => {
    const { call, runtime } = await serverWith({ maxQueuedFrames: 2, stallTimeoutMs: 20 });
    const runId = await startRun(call);
    const stalled = await call(`/runs/${runId}/events`);
    // The run finishes without waiting for the client.
    for await (const chunk of runtime.attach(runId)) if (chunk.kind === "run.finished") break;
    // Long enough for the stall timeout to cut the stream; the frames it had queued are still delivered.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const cut = await readSse(stalled);
    expect(cut.ended).toBe(true);
    expect(finishedRun(cut)).toBe(false);
    expect(cut.events.length).toBeGreaterThan(0);
    expect(cut.events.length).toBeLessThanOrEqual(3);
    const rest = await readSse(
      await call(`/runs/${runId}/events`, { headers: { "last-event-id": String(idsOf(cut).at(-1)) } }),
    );
    expect(finishedRun(rest)).toBe(true);
    const all = [...idsOf(cut), ...idsOf(rest)];
    expect(all).toEqual(all.map((_, index) => index + 1));
  });

  it("heartbeats an idle stream and follows a waiting run into its continuation after a decision", async () => {
    const { call } = await serverWith({ heartbeatSeconds: 0.01 });
    const response = await call("/runs", { json: { agentId: "payer", inputText: "pay", wait: true } });
    const waiting = (await response.json()) as { runId: string; stopReason: string };
    expect(waiting.stopReason).toBe("suspended");
    const stream = call(`/runs/${waiting.runId}/events`);
    // The stream replays the suspended part to its run.finished, then waits for the continuation's.
    const reading = readSse(
      await stream,
      (read) => read.events.filter((event) => event.event === "run.finished").length === 2,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const decided = await call(`/runs/${waiting.runId}/decisions`, {
      json: { decisions: [{ toolCallId: "p1", action: "approve" }] },
    });
    expect(decided.status).toBe(200);
    expect(await decided.json()).toMatchObject({ stopReason: "completed", finalOutput: "paid" });
    const read = await reading;
    expect(read.comments).toContain("ping");
    const ids = idsOf(read);
    expect(ids).toEqual(ids.map((_, index) => index + 1));
  });

  it("decides with ?stream=1, lists checkpoints, resumes a branch and cancels", async () => {
    const { call } = await serverWith();
    const waiting = (await (
      await call("/runs", { json: { agentId: "payer", inputText: "pay", wait: true, durable: true } })
    ).json()) as { runId: string };
    const streamed = await readSse(
      await call(`/runs/${waiting.runId}/decisions?stream=1`, {
        json: { decisions: [{ toolCallId: "p1", action: "approve" }] },
      }),
    );
    expect(streamed.events.some((event) => event.event === "tool.decision")).toBe(true);
    expect(JSON.parse(streamed.events.at(-1)!.data).result.stopReason).toBe("completed");
    const { checkpoints } = (await (await call(`/runs/${waiting.runId}/checkpoints`)).json()) as {
      checkpoints: string[];
    };
    expect(checkpoints.length).toBeGreaterThan(0);
    const branched = await call(`/runs/${waiting.runId}/resume`, {
      json: { checkpointId: checkpoints[0], branch: true },
    });
    expect(branched.status).toBe(202);
    const { runId: branchId } = (await branched.json()) as { runId: string };
    expect(branchId).not.toBe(waiting.runId);
    expect((await call(`/runs/${branchId}`)).status).toBe(200);

    const { runId } = (await (
      await call("/runs", { json: { agentId: "payer", inputText: "pay", wait: true } })
    ).json()) as { runId: string };
    const cancelled = await call(`/runs/${runId}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(202);
    expect(await cancelled.json()).toEqual({ runId, cancelled: true });
  });
});
