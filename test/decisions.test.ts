import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  defineTool,
  type HookContext,
  type Message,
  Runtime,
  SuspendToolCall,
  type ToolCallState,
} from "../src/index.js";
import type { RunState } from "../src/loop/run-state.js";
import { scriptedModel } from "../src/testing/index.js";
import { deferred } from "./support/harness.js";

/** Suspend, decide, resume. */

interface Ledger {
  calls: string[];
}

function tools(ledger: Ledger) {
  const pay = defineTool({
    name: "pay",
    description: "Pay an amount (needs approval)",
    inputSchema: z.object({ amount: z.number() }),
    approvalMode: "always",
    execute: ({ amount }, ctx) => {
      ledger.calls.push(`${ctx.toolCallId}:pay:${amount}`);
      return `paid ${amount}`;
    },
  });
  const add = defineTool({
    name: "add",
    description: "Add two numbers",
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }, ctx) => {
      ledger.calls.push(`${ctx.toolCallId}:add`);
      return a + b;
    },
  });
  const ask = defineTool({
    name: "ask",
    description: "Ask the user to pick (suspends itself)",
    inputSchema: z.object({ question: z.string() }),
    execute: ({ question }, ctx) => {
      ledger.calls.push(`${ctx.toolCallId}:ask`);
      if (ctx.resumeInput === undefined)
        throw new SuspendToolCall({ reason: question, resumeMode: "replay_tool_call" });
      return `answered ${(ctx.resumeInput as { value?: unknown }).value}`;
    },
  });
  return [pay, add, ask];
}

async function runtimeWith(
  script: Parameters<typeof scriptedModel>[0],
  agent: Record<string, unknown> = {},
  ledger: Ledger = { calls: [] },
) {
  const model = scriptedModel(script, { whenExhausted: "repeat-last" });
  const runtime = await Runtime.fromDict({
    agents: [{ id: "a", name: "A", tools: tools(ledger), llm: model, ...agent }],
  });
  return { runtime, model, ledger };
}

const payTwice = [
  {
    toolCalls: [
      { id: "p1", name: "pay", arguments: { amount: 10 } },
      { id: "s1", name: "add", arguments: { a: 1, b: 2 } },
      { id: "p2", name: "pay", arguments: { amount: 20 } },
    ],
  },
  { text: "finished" },
];

function toolMessages(messages: readonly Message[]) {
  return messages
    .filter((message) => message.role === "tool")
    .map((message) => [message.toolCallId, message.content]);
}

describe("suspension", () => {
  it("suspends every call that needs approval while the others run, and checkpoints the step", async () => {
    const { runtime, ledger } = await runtimeWith(payTwice);
    const result = await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "s" });
    expect(result.stopReason).toBe("suspended");
    expect(result.pendingToolCalls.map((call) => [call.toolCallId, call.toolId, call.params])).toEqual([
      ["p1", "pay", { amount: 10 }],
      ["p2", "pay", { amount: 20 }],
    ]);
    expect(ledger.calls).toEqual(["s1:add"]);
    expect(await runtime.getRun("s")).toMatchObject({ status: "waiting", stopReason: "suspended" });
    const checkpoints = await runtime.listRunCheckpoints("s");
    expect(checkpoints).toEqual(["s:step:1"]);
    const state = (await runtime.sessionManager.loadCheckpoint(
      result.metadata.sessionId as string,
      "s:step:1",
    ))!.state as unknown as RunState;
    expect(state.phase).toBe("suspended");
    expect(state.toolCalls.map((call) => [call.id, call.status])).toEqual([
      ["p1", "suspended"],
      ["s1", "succeeded"],
      ["p2", "suspended"],
    ]);
  });

  it("stops at the first suspension raised during execution in sequential mode", async () => {
    const { runtime, ledger } = await runtimeWith([
      {
        toolCalls: [
          { id: "q1", name: "ask", arguments: { question: "which?" } },
          { id: "a1", name: "add", arguments: { a: 1, b: 2 } },
        ],
      },
      { text: "ok" },
    ]);
    const result = await runtime.runDetailed({ agentId: "a", inputText: "ask", runId: "seq" });
    expect(result.pendingToolCalls.map((call) => call.toolCallId)).toEqual(["q1"]);
    expect(ledger.calls).toEqual(["q1:ask"]);
    const decided = await runtime.decide({
      runId: "seq",
      decisions: [{ toolCallId: "q1", action: "approve", value: "blue" }],
    });
    expect(decided.stopReason).toBe("completed");
    const messages = await runtime.sessionManager.loadMessages(decided.metadata.sessionId as string);
    expect(toolMessages(messages)).toEqual([
      ["q1", "answered blue"],
      ["a1", "[Tool execution was interrupted]"],
    ]);
  });

  it("runs the other calls of the batch together in parallel mode and suspends only its own call", async () => {
    const { runtime, ledger } = await runtimeWith(
      [
        {
          toolCalls: [
            { id: "q1", name: "ask", arguments: { question: "which?" } },
            { id: "a1", name: "add", arguments: { a: 1, b: 2 } },
          ],
        },
        { text: "ok" },
      ],
      { tool_executor: { type: "concurrent_batch" } },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "ask", runId: "par" });
    expect(result.pendingToolCalls.map((call) => call.toolCallId)).toEqual(["q1"]);
    expect(ledger.calls.sort()).toEqual(["a1:add", "q1:ask"]);
  });
});

describe("decisions", () => {
  it("approves: the call replays with its original arguments, as an event in the run's log", async () => {
    const { runtime, ledger } = await runtimeWith(payTwice);
    await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "d" });
    const result = await runtime.decide({
      runId: "d",
      decisions: [
        { toolCallId: "p1", action: "approve" },
        { toolCallId: "p2", action: "approve", decisionId: "dec-2" },
      ],
    });
    expect(result).toMatchObject({ runId: "d", stopReason: "completed", finalOutput: "finished" });
    // Decisions carry no input: the record still names what the run was asked.
    expect(await runtime.getRun("d")).toMatchObject({ status: "done", inputText: "pay" });
    expect(ledger.calls).toEqual(["s1:add", "p1:pay:10", "p2:pay:20"]);
    const events = await runtime.sessionManager.loadEvents("d");
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
    const decided = events.filter((event) => event.kind === "tool.decision").map((event) => event.payload);
    expect(decided).toEqual([
      { toolCallId: "p1", toolId: "pay", action: "approve" },
      { toolCallId: "p2", toolId: "pay", action: "approve", decisionId: "dec-2" },
    ]);
    const started = events.filter((event) => event.kind === "run.started").map((event) => event.payload);
    expect(started).toEqual([{ resumed: false }, { resumed: true }]);
    const messages = await runtime.sessionManager.loadMessages(result.metadata.sessionId as string);
    // The run transcript is brought up to date when the run ends, not only at its suspension.
    expect(await runtime.sessionManager.loadRunMessages("d")).toEqual(messages);
    // One result per call, in the order the model issued them.
    expect(toolMessages(messages)).toEqual([
      ["p1", "paid 10"],
      ["s1", "3"],
      ["p2", "paid 20"],
    ]);
  });

  it("decides one call at a time: a partial decision replays it and the run waits again", async () => {
    const { runtime, ledger } = await runtimeWith(payTwice);
    await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "part" });
    const first = await runtime.decide({
      runId: "part",
      decisions: [{ toolCallId: "p2", action: "approve" }],
    });
    expect(first.stopReason).toBe("suspended");
    expect(first.pendingToolCalls.map((call) => call.toolCallId)).toEqual(["p1"]);
    expect(ledger.calls).toEqual(["s1:add", "p2:pay:20"]);
    const second = await runtime.decide({
      runId: "part",
      decisions: [{ toolCallId: "p1", action: "approve" }],
    });
    expect(second.stopReason).toBe("completed");
    expect(ledger.calls).toEqual(["s1:add", "p2:pay:20", "p1:pay:10"]);
  });

  it("denies: the call is cancelled and the model sees why", async () => {
    const { runtime, ledger, model } = await runtimeWith(payTwice);
    await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "deny" });
    const result = await runtime.decide({
      runId: "deny",
      decisions: [
        { toolCallId: "p1", action: "deny", reason: "too much" },
        { toolCallId: "p2", action: "approve" },
      ],
    });
    expect(result.stopReason).toBe("completed");
    expect(ledger.calls).toEqual(["s1:add", "p2:pay:20"]);
    const sent = model.requests
      .at(-1)!
      .messages.find((message) => message.role === "tool" && message.toolCallId === "p1");
    expect(sent).toMatchObject({
      isError: true,
      content: expect.stringContaining("The call was denied: too much"),
    });
    expect(sent!.content).toContain("tool.denied");
  });

  it("result: the value is the call's result and the tool does not run", async () => {
    const { runtime, ledger, model } = await runtimeWith(payTwice);
    await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "res" });
    await runtime.decide({
      runId: "res",
      decisions: [
        { toolCallId: "p1", action: "result", value: { paid: "by hand" } },
        { toolCallId: "p2", action: "deny" },
      ],
    });
    expect(ledger.calls).toEqual(["s1:add"]);
    const sent = model.requests
      .at(-1)!
      .messages.find((message) => message.role === "tool" && message.toolCallId === "p1");
    expect(sent?.content).toBe('{"paid":"by hand"}');
  });

  it("use_decision_as_tool_result: an approval's value becomes the result", async () => {
    const ledger: Ledger = { calls: [] };
    const hook = {
      toolGate: (_ctx: HookContext, call: ToolCallState) =>
        call.toolId === "add" && call.resumeInput === undefined
          ? {
              action: "suspend" as const,
              reason: "frontend tool",
              resumeMode: "use_decision_as_tool_result" as const,
            }
          : undefined,
    };
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [{ id: "f1", name: "add", arguments: { a: 1, b: 1 } }] }, { text: "ok" }],
      { hooks: [hook] },
      ledger,
    );
    const suspended = await runtime.runDetailed({ agentId: "a", inputText: "x", runId: "u" });
    expect(suspended.pendingToolCalls[0]).toMatchObject({
      toolCallId: "f1",
      resumeMode: "use_decision_as_tool_result",
    });
    await runtime.decide({
      runId: "u",
      decisions: [{ toolCallId: "f1", action: "approve", value: "from the UI" }],
    });
    expect(ledger.calls).toEqual([]);
    expect(model.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: "tool", content: "from the UI" });
  });

  it("pass_decision_to_tool: the tool runs with the decision's value as its arguments, validated again", async () => {
    const ledger: Ledger = { calls: [] };
    const hook = {
      toolGate: (_ctx: HookContext, call: ToolCallState) =>
        call.resumeInput === undefined
          ? { action: "suspend" as const, resumeMode: "pass_decision_to_tool" as const }
          : undefined,
    };
    const { runtime, model } = await runtimeWith(
      [
        {
          toolCalls: [
            { id: "g1", name: "add", arguments: { a: 1, b: 1 } },
            { id: "g2", name: "add", arguments: { a: 1, b: 1 } },
          ],
        },
        { text: "ok" },
      ],
      { hooks: [hook] },
      ledger,
    );
    await runtime.runDetailed({ agentId: "a", inputText: "x", runId: "pd" });
    await runtime.decide({
      runId: "pd",
      decisions: [
        { toolCallId: "g1", action: "approve", value: { a: 20, b: 22 } },
        { toolCallId: "g2", action: "approve", value: { a: "not a number" } },
      ],
    });
    expect(ledger.calls).toEqual(["g1:add"]);
    const results = toolMessages(model.requests.at(-1)!.messages);
    expect(results[0]).toEqual(["g1", "42"]);
    expect(results[1]![1]).toContain("tool.validation");
  });

  it("always: an approval sticks for later calls of that tool in the run, and in the session when asked", async () => {
    let payments = 0;
    // Pays twice per run: once after the user's message, once after the first payment.
    const payTwicePerRun = (request: { messages: readonly Message[] }) => {
      const lastUser = request.messages.findLastIndex((message) => message.role === "user");
      const paid = request.messages.slice(lastUser).filter((message) => message.role === "tool").length;
      return paid < 2
        ? { toolCalls: [{ id: `q${++payments}`, name: "pay", arguments: { amount: payments } }] }
        : { text: "done" };
    };
    const { runtime, ledger } = await runtimeWith([payTwicePerRun]);
    const run = (runId: string, sessionId: string) =>
      runtime.runDetailed({ agentId: "a", inputText: "pay", runId, sessionId });

    expect((await run("r1", "sess")).pendingToolCalls.map((call) => call.toolCallId)).toEqual(["q1"]);
    const first = await runtime.decide({
      runId: "r1",
      decisions: [{ toolCallId: "q1", action: "approve", always: true }],
    });
    expect(first.stopReason).toBe("completed");
    expect(ledger.calls).toEqual(["q1:pay:1", "q2:pay:2"]);

    // Run-level stickiness ends with the run.
    expect((await run("r2", "sess")).stopReason).toBe("suspended");
    await runtime.decide({
      runId: "r2",
      decisions: [{ toolCallId: "q3", action: "approve", always: "session" }],
    });
    expect(ledger.calls).toEqual(["q1:pay:1", "q2:pay:2", "q3:pay:3", "q4:pay:4"]);

    // Session-level stickiness reaches the session's next runs, and no other session.
    expect((await run("r3", "sess")).stopReason).toBe("completed");
    expect(ledger.calls.slice(4)).toEqual(["q5:pay:5", "q6:pay:6"]);
    expect((await run("r4", "elsewhere")).stopReason).toBe("suspended");
  });

  it("always deny: later calls of the tool are cancelled without asking", async () => {
    const { runtime, ledger } = await runtimeWith(payTwice);
    await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "ad" });
    const result = await runtime.decide({
      runId: "ad",
      decisions: [{ toolCallId: "p1", action: "deny", always: true, reason: "no payments" }],
    });
    // p2 was waiting too: the sticky denial answers it.
    expect(result.stopReason).toBe("completed");
    expect(ledger.calls).toEqual(["s1:add"]);
    const decided = (await runtime.sessionManager.loadEvents("ad")).filter(
      (event) => event.kind === "tool.decision",
    );
    expect(decided.map((event) => [event.payload.toolCallId, event.payload.sticky ?? false])).toEqual([
      ["p1", false],
      ["p2", true],
    ]);
  });

  it("refuses decisions for an unknown run, an unknown call, a decided call or a finished run, changing nothing", async () => {
    const { runtime, ledger } = await runtimeWith(payTwice);
    await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "ref", sessionId: "ref-s" });
    const store = runtime.sessionManager;
    const before = JSON.stringify([
      await store.getRun("ref"),
      await store.listCheckpoints("ref-s"),
      await store.loadEvents("ref"),
    ]);
    await expect(
      runtime.decide({ runId: "nope", decisions: [{ toolCallId: "p1", action: "approve" }] }),
    ).rejects.toMatchObject({
      name: "DecisionError",
      code: "run.unknown",
      hint: expect.any(String),
    });
    await expect(
      runtime.decide({ runId: "ref", decisions: [{ toolCallId: "zz", action: "approve" }] }),
    ).rejects.toMatchObject({ code: "run.decision", hint: expect.stringContaining("p1 (pay), p2 (pay)") });
    // One bad decision refuses the whole batch.
    await expect(
      runtime.decide({
        runId: "ref",
        decisions: [
          { toolCallId: "p1", action: "approve" },
          { toolCallId: "s1", action: "approve" },
        ],
      }),
    ).rejects.toMatchObject({ code: "run.decision", message: expect.stringContaining("already decided") });
    await expect(
      runtime.decide({ runId: "ref", decisions: [{ toolCallId: "p1", action: "result" }] }),
    ).rejects.toMatchObject({ code: "run.decision", message: expect.stringContaining("needs a value") });
    expect(
      JSON.stringify([
        await store.getRun("ref"),
        await store.listCheckpoints("ref-s"),
        await store.loadEvents("ref"),
      ]),
    ).toBe(before);
    expect(ledger.calls).toEqual(["s1:add"]);

    await runtime.decide({
      runId: "ref",
      decisions: [{ toolCallId: "p1", action: "approve", decisionId: "once" }],
    });
    // A repeated decision id is a no-op; a new decision for the same call is refused.
    const repeat = await runtime.decide({
      runId: "ref",
      decisions: [{ toolCallId: "p1", action: "approve", decisionId: "once" }],
    });
    expect(repeat.pendingToolCalls.map((call) => call.toolCallId)).toEqual(["p2"]);
    await expect(
      runtime.decide({ runId: "ref", decisions: [{ toolCallId: "p1", action: "deny" }] }),
    ).rejects.toMatchObject({
      message: expect.stringContaining("already decided"),
    });
    expect(ledger.calls).toEqual(["s1:add", "p1:pay:10"]);
    await runtime.decide({ runId: "ref", decisions: [{ toolCallId: "p2", action: "approve" }] });
    await expect(
      runtime.decide({ runId: "ref", decisions: [{ toolCallId: "p2", action: "approve" }] }),
    ).rejects.toMatchObject({
      code: "run.decision",
      hint: expect.stringContaining("finished"),
    });
  });

  it("cancels a waiting run", async () => {
    const { runtime, ledger } = await runtimeWith(payTwice);
    await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "cw" });
    const result = await runtime.cancelRun("cw", { reason: "changed my mind" });
    expect(result).toMatchObject({
      stopReason: "cancelled",
      termination: { type: "cancelled", value: "changed my mind" },
    });
    expect(ledger.calls).toEqual(["s1:add"]);
    expect(await runtime.getRun("cw")).toMatchObject({ status: "done", stopReason: "cancelled" });
    await expect(
      runtime.decide({ runId: "cw", decisions: [{ toolCallId: "p1", action: "approve" }] }),
    ).rejects.toMatchObject({
      code: "run.decision",
    });
    expect(await runtime.cancelRun("cw")).toBeNull();
  });

  it("holds a decision that arrives while a tool still runs until the step suspends", async () => {
    const ledger: Ledger = { calls: [] };
    const gate = deferred();
    const slow = defineTool({
      name: "slow",
      description: "slow",
      inputSchema: z.object({}),
      execute: async () => {
        await gate.promise;
        ledger.calls.push("slow");
        return "slow done";
      },
    });
    const model = scriptedModel(
      [
        {
          toolCalls: [
            { id: "p1", name: "pay", arguments: { amount: 5 } },
            { id: "w1", name: "slow", arguments: {} },
          ],
        },
        { text: "ok" },
      ],
      { whenExhausted: "repeat-last" },
    );
    const runtime = await Runtime.fromDict({
      agents: [{ id: "a", name: "A", tools: [...tools(ledger), slow], llm: model }],
    });
    const first = runtime.runDetailed({ agentId: "a", inputText: "x", runId: "mid" });
    while (!runtime.liveRun("mid")?.log.events.some((event) => event.kind === "tool.started")) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const decided = runtime.decide({ runId: "mid", decisions: [{ toolCallId: "p1", action: "approve" }] });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(ledger.calls).toEqual([]);
    gate.resolve();
    expect((await first).stopReason).toBe("suspended");
    expect((await decided).stopReason).toBe("completed");
    expect(ledger.calls).toEqual(["slow", "p1:pay:5"]);
  });
});

describe("attach around a decision", () => {
  it("follows a waiting run into its resumption: attach, then decide, and see every event once", async () => {
    const { runtime } = await runtimeWith(payTwice);
    await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "at1" });
    const seen: { sequence: number; kind: string }[] = [];
    const following = (async () => {
      for await (const chunk of runtime.attach("at1", { afterSequence: 0 })) seen.push(chunk);
    })();
    while (seen.at(-1)?.kind !== "run.finished") await new Promise((resolve) => setTimeout(resolve, 1));
    await runtime.decide({
      runId: "at1",
      decisions: [
        { toolCallId: "p1", action: "approve" },
        { toolCallId: "p2", action: "deny" },
      ],
    });
    await following;
    const stored = await runtime.sessionManager.loadEvents("at1");
    expect(seen.map((chunk) => chunk.sequence)).toEqual(stored.map((event) => event.sequence));
    expect(seen.filter((chunk) => chunk.kind === "run.finished")).toHaveLength(2);
    expect(seen.some((chunk) => chunk.kind === "tool.decision")).toBe(true);
  });

  it("ends when the resumption starts and finishes while attach reads the store (no wait for what happened)", async () => {
    const { runtime } = await runtimeWith([
      { toolCalls: [{ id: "p1", name: "pay", arguments: { amount: 1 } }] },
      { text: "ok" },
    ]);
    await runtime.runDetailed({ agentId: "a", inputText: "x", runId: "race" });
    const store = runtime.sessionManager;
    const last = (await store.loadEvents("race")).at(-1)!.sequence;
    // attach reads the record (waiting), then the events; the whole resumption runs in between.
    const loadEvents = store.loadEvents.bind(store);
    let decided: Promise<unknown> | undefined;
    store.loadEvents = async (runId, options) => {
      if (decided === undefined) {
        decided = runtime.decide({ runId: "race", decisions: [{ toolCallId: "p1", action: "approve" }] });
        await decided;
      }
      return loadEvents(runId, options);
    };
    const seen: string[] = [];
    // A hang here fails the test by its timeout.
    for await (const chunk of runtime.attach("race", { afterSequence: last })) seen.push(chunk.kind);
    expect(seen.at(-1)).toBe("run.finished");
    expect(seen[0]).toBe("run.started");
  });

  it("replays the stored part of a run resumed in this process, then follows it live", async () => {
    const ledger: Ledger = { calls: [] };
    const gate = deferred();
    const slowPay = defineTool({
      name: "pay",
      description: "Pay slowly (needs approval)",
      inputSchema: z.object({ amount: z.number() }),
      approvalMode: "always",
      execute: async ({ amount }) => {
        await gate.promise;
        return `paid ${amount}`;
      },
    });
    const model = scriptedModel([
      { toolCalls: [{ id: "p1", name: "pay", arguments: { amount: 1 } }] },
      { text: "ok" },
    ]);
    const runtime = await Runtime.fromDict({
      agents: [{ id: "a", name: "A", tools: [slowPay, ...tools(ledger).slice(1)], llm: model }],
    });
    await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "at2" });
    const decided = runtime.decide({ runId: "at2", decisions: [{ toolCallId: "p1", action: "approve" }] });
    while (!runtime.liveRun("at2")?.log.events.some((event) => event.kind === "tool.started")) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const seen: number[] = [];
    const following = (async () => {
      for await (const chunk of runtime.attach("at2", { afterSequence: 2 })) seen.push(chunk.sequence);
    })();
    gate.resolve();
    await decided;
    await following;
    const stored = (await runtime.sessionManager.loadEvents("at2")).map((event) => event.sequence);
    expect(seen).toEqual(stored.filter((sequence) => sequence > 2));
  });
});
