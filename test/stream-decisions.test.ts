import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DecisionError, defineTool, type Message, type RunResult, Runtime } from "../src/index.js";
import { type ScriptStep, scriptedModel } from "../src/testing/index.js";
import { collect } from "./support/harness.js";

/**
 * Approvals that stream on: a run that ended its stream suspended is decided and its continuation streamed in one
 * call (`stream({ runId, decisions })`), or followed by an `attach` made before the decision — with no pause
 * between the calls.
 */

interface Ledger {
  calls: string[];
}

function payTool(ledger: Ledger) {
  return defineTool({
    name: "pay",
    description: "Pay an amount (needs approval)",
    inputSchema: z.object({ amount: z.number() }),
    approvalMode: "always",
    execute: ({ amount }, ctx) => {
      ledger.calls.push(`${ctx.toolCallId}:pay:${amount}`);
      return `paid ${amount}`;
    },
  });
}

const toolResults = (messages: readonly Message[]) => messages.filter((message) => message.role === "tool");

/**
 * Pay 10, then (once that has a result) pay 20, then answer: two suspensions in a row. The model reads the
 * transcript, so a runtime that did not start the run continues it alike.
 */
const payThenPayAgain: ScriptStep = ({ messages }) => {
  const results = toolResults(messages);
  if (results.length === 0) return { toolCalls: [{ id: "p1", name: "pay", arguments: { amount: 10 } }] };
  if (results.length === 1) return { toolCalls: [{ id: "p2", name: "pay", arguments: { amount: 20 } }] };
  return { text: `Done: ${results.map((message) => message.content).join(", ")}` };
};

/** One payment, then an answer. */
const payOnce: ScriptStep = ({ messages }) =>
  toolResults(messages).length === 0
    ? { toolCalls: [{ id: "p1", name: "pay", arguments: { amount: 10 } }] }
    : { text: "paid" };

async function runtimeWith(step: ScriptStep, config: Record<string, unknown> = {}) {
  const ledger: Ledger = { calls: [] };
  const runtime = await Runtime.fromDict({
    ...config,
    agents: [
      {
        id: "a",
        name: "A",
        tools: [payTool(ledger)],
        llm: scriptedModel([step], { whenExhausted: "repeat-last" }),
      },
    ],
  });
  return { runtime, ledger };
}

/** Start a run by streaming it to its end; returns the stream's chunks. */
async function streamToEnd(runtime: Runtime, runId: string) {
  return collect(runtime.stream({ agentId: "a", inputText: "pay", runId }));
}

const finished = (chunks: readonly { kind: string; result?: RunResult | undefined }[]) => {
  const last = chunks.at(-1);
  expect(last?.kind).toBe("run.finished");
  return last!.result!;
};

describe("stream({ runId, decisions })", () => {
  it("decides and streams the continuation to its run.finished, each event once, right after the suspension", async () => {
    const { runtime, ledger } = await runtimeWith(payOnce);
    const first = await streamToEnd(runtime, "d1");
    expect(finished(first).stopReason).toBe("suspended");
    const decided = await collect(
      runtime.stream({ runId: "d1", decisions: [{ toolCallId: "p1", action: "approve" }] }),
    );
    expect(finished(decided)).toMatchObject({ stopReason: "completed", finalOutput: "paid" });
    // The continuation's events, numbered on from the suspension, with the decision among the first.
    expect(decided[0]!.sequence).toBe(first.at(-1)!.sequence + 1);
    const decision = decided.findIndex((chunk) => chunk.kind === "tool.decision");
    expect(decision).toBeGreaterThanOrEqual(0);
    expect(decided.slice(0, decision).every((chunk) => !chunk.kind.startsWith("tool."))).toBe(true);
    expect(decided[decision]!.payload).toMatchObject({ toolCallId: "p1", action: "approve" });
    expect(decided.filter((chunk) => chunk.kind === "run.finished")).toHaveLength(1);
    const stored = await runtime.sessionManager.loadEvents("d1");
    expect([...first, ...decided].map((chunk) => chunk.sequence)).toEqual(
      stored.map((event) => event.sequence),
    );
    expect(ledger.calls).toEqual(["p1:pay:10"]);
    await runtime.close();
  });

  it("ends suspended when the continuation suspends again, and a second call continues it", async () => {
    const { runtime, ledger } = await runtimeWith(payThenPayAgain);
    expect(finished(await streamToEnd(runtime, "d2")).stopReason).toBe("suspended");
    const second = await collect(
      runtime.stream({ runId: "d2", decisions: [{ toolCallId: "p1", action: "approve" }] }),
    );
    const waitingAgain = finished(second);
    expect(waitingAgain.stopReason).toBe("suspended");
    expect(waitingAgain.pendingToolCalls.map((call) => call.toolCallId)).toEqual(["p2"]);
    expect(second.filter((chunk) => chunk.kind === "tool.suspended")).toHaveLength(1);
    const third = await collect(
      runtime.stream({ runId: "d2", decisions: [{ toolCallId: "p2", action: "approve" }] }),
    );
    expect(finished(third)).toMatchObject({ stopReason: "completed", finalOutput: "Done: paid 10, paid 20" });
    expect(third[0]!.sequence).toBe(second.at(-1)!.sequence + 1);
    expect(ledger.calls).toEqual(["p1:pay:10", "p2:pay:20"]);
    await runtime.close();
  });

  it("rejects a refused decision at the first next(), before any chunk, and changes nothing", async () => {
    const { runtime, ledger } = await runtimeWith(payOnce);
    await streamToEnd(runtime, "d3");
    const before = JSON.stringify([
      await runtime.getRun("d3"),
      await runtime.sessionManager.loadEvents("d3"),
    ]);
    const refusals = [
      { runId: "d3", decisions: [{ toolCallId: "nope", action: "approve" as const }] },
      { runId: "d3", decisions: [] },
      { runId: "missing", decisions: [{ toolCallId: "p1", action: "approve" as const }] },
    ];
    for (const request of refusals) {
      const chunks: unknown[] = [];
      const reading = (async () => {
        for await (const chunk of runtime.stream(request)) chunks.push(chunk);
      })();
      await expect(reading).rejects.toBeInstanceOf(DecisionError);
      expect(chunks).toEqual([]);
    }
    expect(JSON.stringify([await runtime.getRun("d3"), await runtime.sessionManager.loadEvents("d3")])).toBe(
      before,
    );
    // A run that is no longer waiting refuses too.
    await collect(runtime.stream({ runId: "d3", decisions: [{ toolCallId: "p1", action: "approve" }] }));
    await expect(
      collect(runtime.stream({ runId: "d3", decisions: [{ toolCallId: "p1", action: "approve" }] })),
    ).rejects.toMatchObject({ code: "run.decision" });
    expect(ledger.calls).toEqual(["p1:pay:10"]);
    await runtime.close();
  });

  it("yields the run's last run.finished, still suspended, when every decision was already applied", async () => {
    const { runtime } = await runtimeWith(payThenPayAgain);
    await streamToEnd(runtime, "d4");
    const approve = { toolCallId: "p1", action: "approve" as const, decisionId: "once" };
    const first = await collect(runtime.stream({ runId: "d4", decisions: [approve] }));
    const again = await collect(runtime.stream({ runId: "d4", decisions: [approve] }));
    expect(again).toHaveLength(1);
    expect(again[0]!.sequence).toBe(first.at(-1)!.sequence);
    expect(finished(again).stopReason).toBe("suspended");
    await runtime.close();
  });

  it("keeps only the asked kinds, and cancels the continuation when its signal aborts", async () => {
    const gate = new AbortController();
    const ledger: Ledger = { calls: [] };
    const slowPay = defineTool({
      name: "pay",
      description: "Pay slowly (needs approval)",
      inputSchema: z.object({ amount: z.number() }),
      approvalMode: "always",
      execute: async ({ amount }, ctx) => {
        ledger.calls.push(`${ctx.toolCallId}:started`);
        gate.abort();
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
        return `paid ${amount}`;
      },
    });
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          tools: [slowPay],
          llm: scriptedModel([payOnce], { whenExhausted: "repeat-last" }),
        },
      ],
    });
    await streamToEnd(runtime, "d5");
    const chunks = await collect(
      runtime.stream(
        { runId: "d5", decisions: [{ toolCallId: "p1", action: "approve" }], signal: gate.signal },
        { kinds: ["tool.decision", "tool.started", "run.finished"] },
      ),
    );
    expect(chunks.map((chunk) => chunk.kind)).toEqual(["tool.decision", "tool.started", "run.finished"]);
    expect(finished(chunks).stopReason).toBe("cancelled");
    expect(ledger.calls).toEqual(["p1:started"]);
    await runtime.close();
  });
});

describe("attach, then decide", () => {
  it("follows the continuation when attach comes right after the stream ended suspended and decide right after it", async () => {
    const { runtime } = await runtimeWith(payOnce);
    const first = await streamToEnd(runtime, "a1");
    const last = first.at(-1)!.sequence;
    // No pause anywhere: the run that suspended may still be leaving this process.
    const attached = collect(runtime.attach("a1", { afterSequence: last }));
    const result = await runtime.decide({
      runId: "a1",
      decisions: [{ toolCallId: "p1", action: "approve" }],
    });
    const chunks = await attached;
    expect(result.stopReason).toBe("completed");
    expect(finished(chunks).stopReason).toBe("completed");
    expect(chunks[0]!.sequence).toBe(last + 1);
    expect(chunks.some((chunk) => chunk.kind === "tool.decision")).toBe(true);
    await runtime.close();
  });

  it("follows the continuation a decision made before the first next() started, even once it has finished", async () => {
    const { runtime } = await runtimeWith(payOnce);
    const first = await streamToEnd(runtime, "a2");
    const last = first.at(-1)!.sequence;
    const attached = runtime.attach("a2", { afterSequence: last });
    await runtime.decide({ runId: "a2", decisions: [{ toolCallId: "p1", action: "approve" }] });
    const chunks = await collect(attached);
    expect(finished(chunks).stopReason).toBe("completed");
    const stored = await runtime.sessionManager.loadEvents("a2");
    expect(chunks.map((chunk) => chunk.sequence)).toEqual(
      stored.filter((event) => event.sequence > last).map((event) => event.sequence),
    );
    await runtime.close();
  });

  it("ends at the continuation's run.finished when it suspends again, though a decision before reading made it", async () => {
    const { runtime } = await runtimeWith(payThenPayAgain);
    const last = (await streamToEnd(runtime, "a3")).at(-1)!.sequence;
    // Attached while the run waits (not live here any more), read only after the continuation suspended again.
    await new Promise((resolve) => setImmediate(resolve));
    expect(runtime.liveRun("a3")).toBeUndefined();
    const attached = runtime.attach("a3", { afterSequence: last });
    await runtime.decide({ runId: "a3", decisions: [{ toolCallId: "p1", action: "approve" }] });
    const chunks = await collect(attached);
    const result = finished(chunks);
    expect(result.stopReason).toBe("suspended");
    expect(result.pendingToolCalls.map((call) => call.toolCallId)).toEqual(["p2"]);
    expect(chunks.filter((chunk) => chunk.kind === "run.finished")).toHaveLength(1);
    await runtime.close();
  });
});

describe.each([
  { type: "sqlite", config: (dir: string) => ({ db_path: join(dir, "keel.db") }) },
  { type: "jsonl_file", config: (dir: string) => ({ root_dir: dir }) },
])("decide and stream from a second runtime on the same $type store", ({ type, config }) => {
  const dir = mkdtempSync(join(tmpdir(), `keel-stream-decisions-${type}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("streams the continuation of a run another runtime suspended and stored, twice over", async () => {
    const session = { type, config: config(dir) };
    const one = await runtimeWith(payThenPayAgain, { session });
    const first = await streamToEnd(one.runtime, "x1");
    expect(finished(first).stopReason).toBe("suspended");
    await one.runtime.close();

    const two = await runtimeWith(payThenPayAgain, { session });
    const second = await collect(
      two.runtime.stream({ runId: "x1", decisions: [{ toolCallId: "p1", action: "approve" }] }),
    );
    expect(finished(second).stopReason).toBe("suspended");
    expect(second[0]!.sequence).toBe(first.at(-1)!.sequence + 1);
    await two.runtime.close();

    const three = await runtimeWith(payThenPayAgain, { session });
    const third = await collect(
      three.runtime.stream({ runId: "x1", decisions: [{ toolCallId: "p2", action: "approve" }] }),
    );
    expect(finished(third)).toMatchObject({ stopReason: "completed", finalOutput: "Done: paid 10, paid 20" });
    const stored = await three.runtime.sessionManager.loadEvents("x1");
    expect([...first, ...second, ...third].map((chunk) => chunk.sequence)).toEqual(
      stored.map((event) => event.sequence),
    );
    expect([...one.ledger.calls, ...two.ledger.calls, ...three.ledger.calls]).toEqual([
      "p1:pay:10",
      "p2:pay:20",
    ]);
    await three.runtime.close();
  });
});
