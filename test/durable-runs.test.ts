import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  defineTool,
  type HookContext,
  LLMRateLimitError,
  type Message,
  type RunResult,
  Runtime,
  registerPlugin,
  ToolRateLimitError,
} from "../src/index.js";
import type { RunState } from "../src/loop/run-state.js";
import { InMemorySessionManager } from "../src/sessions/in-memory-session-manager.js";
import { type ScriptStep, scriptedModel } from "../src/testing/index.js";
import { ProcessView } from "./support/crashable-store.js";
import { deferred } from "./support/harness.js";

/**
 * Durable runs in one process. Each simulated process has its own runtime over one shared
 * store; `ProcessView.crash()` is a process dying. test/crash-resume.test.ts does the same with real child
 * processes and SIGKILL against the persistent stores.
 */

/** What each tool did, across every simulated process. */
class Ledger {
  started: string[] = [];
  finished: string[] = [];
}

let processCount = 0;

interface Process {
  runtime: Runtime;
  view: ProcessView;
}

type Turn = Exclude<ScriptStep, (...args: never[]) => unknown>;
type Rule = (messages: readonly Message[]) => Turn | null;

/** A stateless script: each answer depends only on the transcript, so any process can continue it. */
function planned(rules: readonly Rule[]): (request: { messages: readonly Message[] }) => Turn {
  return (request) => {
    for (const rule of rules) {
      const turn = rule(request.messages);
      if (turn !== null) return turn;
    }
    return { text: "done" };
  };
}

function plannedModel(rules: readonly Rule[]) {
  return scriptedModel([planned(rules)], { whenExhausted: "repeat-last" });
}

/** Two steps of tools, then an answer: `add(1, 2)`, then `record(x)` and `add(3, 4)` in one step. */
const twoStepRules: Rule[] = [
  (messages) =>
    messages.some((m) => m.role === "tool")
      ? null
      : { toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }] },
  (messages) =>
    messages.filter((m) => m.role === "tool").length === 1
      ? {
          text: "recording",
          toolCalls: [
            { id: "c2", name: "record", arguments: { value: "x" } },
            { id: "c3", name: "add", arguments: { a: 3, b: 4 } },
          ],
        }
      : null,
  (messages) =>
    messages.filter((m) => m.role === "tool").length === 3 ? { text: "All done: 3 and 7" } : null,
];

const twoStepScript = () => plannedModel(twoStepRules);

function tools(
  ledger: Ledger,
  hooks: { duringRecord?: () => Promise<void>; recordIdempotent?: boolean } = {},
) {
  const add = defineTool({
    name: "add",
    description: "Add two numbers",
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }, ctx) => {
      ledger.started.push(`${ctx.toolCallId}:add`);
      ledger.finished.push(`${ctx.toolCallId}:add`);
      return a + b;
    },
  });
  const record = defineTool({
    name: "record",
    description: "Record a value somewhere outside (not idempotent unless told)",
    inputSchema: z.object({ value: z.string() }),
    durableIdempotent: hooks.recordIdempotent ?? false,
    execute: async ({ value }, ctx) => {
      ledger.started.push(`${ctx.toolCallId}:record`);
      await hooks.duringRecord?.();
      ledger.finished.push(`${ctx.toolCallId}:record`);
      return `recorded ${value}`;
    },
  });
  return [add, record];
}

async function startProcess(
  shared: InMemorySessionManager,
  agent: Record<string, unknown>,
  setup: (view: ProcessView) => void = () => {},
): Promise<Process> {
  const view = new ProcessView(shared);
  setup(view);
  const type = `durable_test_store_${++processCount}`;
  registerPlugin("session", type, () => view);
  const runtime = await Runtime.fromDict({
    session: { type },
    agents: [{ id: "a", name: "Agent A", ...agent }],
  });
  return { runtime, view };
}

/** The transcript the run stored, without the ids a provider would not see. */
async function storedTranscript(shared: InMemorySessionManager, runId: string): Promise<Message[]> {
  return shared.loadRunMessages(runId);
}

/** Run the two-step script uninterrupted; the reference every resumed run must equal. */
async function referenceRun(): Promise<{ result: RunResult; transcript: Message[] }> {
  const shared = new InMemorySessionManager();
  const ledger = new Ledger();
  const { runtime } = await startProcess(shared, { tools: tools(ledger), llm: twoStepScript() });
  const result = await runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "ref" });
  return { result, transcript: await storedTranscript(shared, "ref") };
}

describe("durable checkpoints", () => {
  it("checkpoints after each model call, each tool call and each step, with ids <runId>:step:<n>", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    const { runtime } = await startProcess(shared, {
      tools: tools(ledger, { recordIdempotent: true }),
      llm: twoStepScript(),
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "r1" });
    expect(result.stopReason).toBe("completed");
    const events = await shared.loadEvents("r1");
    const saved = events
      .filter((event) => event.kind === "run.checkpoint_saved")
      .map((event) => event.payload);
    expect(saved.map((payload) => [payload.checkpointId, payload.phase, payload.step])).toEqual([
      ["r1:step:1", "tools", 1], // step 1: the model asked for add
      ["r1:step:2", "step_end", 1], // add's result, owed after the stage's last call, lands with StepEnd
      ["r1:step:3", "tools", 2], // step 2: the model asked for record and add
      ["r1:step:4", "tools", 2], // record finished
      ["r1:step:5", "step_end", 2], // add finished, and the step ended
      ["r1:step:6", "step_end", 3], // the final answer
    ]);
    expect(await shared.listCheckpoints(result.metadata.sessionId as string)).toEqual(
      saved.map((payload) => payload.checkpointId),
    );
    const last = await shared.loadCheckpoint(result.metadata.sessionId as string, "r1:step:6");
    const state = last!.state as unknown as RunState;
    expect(state).toMatchObject({
      schemaVersion: 1,
      runId: "r1",
      agentId: "a",
      phase: "step_end",
      step: 3,
      final: { output: "All done: 3 and 7" },
      durable: true,
    });
    expect(state.usage.toolCalls).toBe(3);
    expect(last!.transcriptLength).toBe(7); // user, assistant, tool, assistant, tool, tool, assistant
    expect(state.transcriptLength).toBe(7);
    // The transcript is stored once, step by step, and the checkpoint only says how much of it counts.
    expect(await shared.loadRunMessages("r1")).toHaveLength(7);
    // Events were stored as the run went, gapless and without duplicates.
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
  });

  it("records the calls of a step in flight with their statuses and results", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    const { runtime } = await startProcess(shared, {
      tools: tools(ledger, { recordIdempotent: true }),
      llm: twoStepScript(),
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "r2" });
    const sessionId = result.metadata.sessionId as string;
    const midStep = (await shared.loadCheckpoint(sessionId, "r2:step:4"))!.state as unknown as RunState;
    expect(midStep.toolCalls).toEqual([
      { id: "c2", toolId: "record", params: { value: "x" }, status: "succeeded", result: "recorded x" },
      { id: "c3", toolId: "add", params: { a: 3, b: 4 }, status: "new" },
    ]);
    expect(midStep.transcriptLength).toBe(4); // the model's answer is in; the results are in toolCalls
  });

  it("writes no per-step checkpoints in a run that is not durable", async () => {
    const shared = new InMemorySessionManager();
    const { runtime } = await startProcess(shared, { tools: tools(new Ledger()), llm: twoStepScript() });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go", runId: "r3" });
    expect(result.stopReason).toBe("completed");
    expect(await shared.listCheckpoints(result.metadata.sessionId as string)).toEqual([]);
    expect((await shared.loadEvents("r3")).some((event) => event.kind === "run.checkpoint_saved")).toBe(
      false,
    );
  });

  it("reports a failing checkpoint write and goes on (run.checkpoint_failed)", async () => {
    const shared = new InMemorySessionManager();
    const { runtime, view } = await startProcess(shared, {
      tools: tools(new Ledger(), { recordIdempotent: true }),
      llm: twoStepScript(),
    });
    let writes = 0;
    const original = view.createCheckpoint;
    view.createCheckpoint = async (sessionId, checkpoint) => {
      if (++writes === 2) throw new Error("disk full");
      return original(sessionId, checkpoint);
    };
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "r4" });
    expect(result.stopReason).toBe("completed");
    const failed = (await shared.loadEvents("r4")).filter((event) => event.kind === "run.checkpoint_failed");
    expect(failed.map((event) => event.payload)).toEqual([
      { checkpointId: "r4:step:2", error: "disk full", errorCode: "error.unknown" },
    ]);
    expect(await shared.listCheckpoints(result.metadata.sessionId as string)).not.toContain("r4:step:2");
  });
});

describe("automatic resume of durable runs", () => {
  it("resumes mid-loop after a rate limit without running finished tool calls again", async () => {
    const reference = await referenceRun();
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    let limited = false;
    const answer = planned(twoStepRules);
    const model = scriptedModel(
      [
        (request) => {
          // The model call after the first tool result fails once with a rate limit.
          if (!limited && request.messages.filter((m) => m.role === "tool").length === 1) {
            limited = true;
            return { error: { type: "rate_limit", message: "slow down", retryAfterMs: 1 } };
          }
          return answer(request);
        },
      ],
      { whenExhausted: "repeat-last" },
    );
    const { runtime } = await startProcess(shared, {
      tools: tools(ledger, { recordIdempotent: true }),
      llm: model,
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "ref" });
    expect(result.stopReason).toBe("completed");
    expect(result.finalOutput).toBe(reference.result.finalOutput);
    expect(await storedTranscript(shared, "ref")).toEqual(reference.transcript);
    expect(ledger.finished).toEqual(["c1:add", "c2:record", "c3:add"]);
    const events = await shared.loadEvents("ref");
    const durable = events.filter((event) => event.kind.startsWith("run.resume"));
    expect(durable.map((event) => [event.kind, event.payload])).toEqual([
      [
        "run.resume_attempted",
        {
          checkpointId: "ref:step:2",
          attempt: 1,
          errorCode: "llm.rate_limit",
          errorType: "LLMRateLimitError",
          delayMs: 1,
        },
      ],
      ["run.resume_succeeded", { checkpointId: "ref:step:2", attempt: 1 }],
    ]);
    expect(result.usage.toolCalls).toBe(3);
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
  });

  it("resumes a tool's rate limit from the checkpoint after the calls that finished", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    let failures = 0;
    const [add] = tools(ledger);
    const flaky = defineTool({
      name: "record",
      description: "Rate limited once",
      inputSchema: z.object({ value: z.string() }),
      execute: ({ value }, ctx) => {
        ledger.started.push(`${ctx.toolCallId}:record`);
        if (failures++ === 0) throw new ToolRateLimitError("busy", { retryAfterMs: 1 });
        ledger.finished.push(`${ctx.toolCallId}:record`);
        return `recorded ${value}`;
      },
    });
    const { runtime } = await startProcess(shared, { tools: [add, flaky], llm: twoStepScript() });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "t1" });
    expect(result.stopReason).toBe("completed");
    expect(ledger.started).toEqual(["c1:add", "c2:record", "c2:record", "c3:add"]);
    expect(ledger.finished).toEqual(["c1:add", "c2:record", "c3:add"]);
    const reference = await referenceRun();
    expect(await storedTranscript(shared, "t1")).toEqual(reference.transcript);
  });

  it("gives the model a rate-limited tool's error when the run is not durable", async () => {
    const shared = new InMemorySessionManager();
    const [add] = tools(new Ledger());
    const limited = defineTool({
      name: "record",
      description: "Always rate limited",
      inputSchema: z.object({ value: z.string() }),
      execute: () => {
        throw new ToolRateLimitError("busy");
      },
    });
    const { runtime } = await startProcess(shared, { tools: [add, limited], llm: twoStepScript() });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go", runId: "t2" });
    expect(result.stopReason).toBe("completed");
    const transcript = await shared.loadMessages(result.metadata.sessionId as string);
    expect(transcript.find((m) => m.role === "tool" && m.toolCallId === "c2")).toMatchObject({
      isError: true,
    });
  });

  it("gives up after maxResumeAttempts with run.resume_exhausted, and the run fails with the error", async () => {
    const shared = new InMemorySessionManager();
    const model = scriptedModel(
      [
        { toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }] },
        { error: { type: "connection", message: "reset" } },
      ],
      { whenExhausted: "repeat-last" },
    );
    const { runtime } = await startProcess(shared, { tools: tools(new Ledger()), llm: model });
    const result = await runtime.runDetailed({
      agentId: "a",
      inputText: "go",
      durable: true,
      runId: "x1",
      budget: { maxResumeAttempts: 2 },
    });
    expect(result.stopReason).toBe("failed");
    expect(result.errorDetails?.code).toBe("llm.connection");
    const kinds = (await shared.loadEvents("x1"))
      .map((event) => event.kind)
      .filter((kind) => kind.startsWith("run.resume"));
    expect(kinds).toEqual([
      "run.resume_attempted",
      "run.resume_succeeded",
      "run.resume_attempted",
      "run.resume_succeeded",
      "run.resume_exhausted",
    ]);
    const exhausted = (await shared.loadEvents("x1")).find((event) => event.kind === "run.resume_exhausted");
    expect(exhausted?.payload).toEqual({
      attempt: 2,
      errorCode: "llm.connection",
      errorType: "LLMConnectionError",
      limit: 2,
    });
  });

  it("does not resume permanent errors, nor runs that are not durable", async () => {
    const shared = new InMemorySessionManager();
    const model = scriptedModel([
      { toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }] },
      { error: { type: "response", message: "bad request" } },
    ]);
    const { runtime } = await startProcess(shared, { tools: tools(new Ledger()), llm: model });
    const permanent = await runtime.runDetailed({
      agentId: "a",
      inputText: "go",
      durable: true,
      runId: "p1",
    });
    expect(permanent.stopReason).toBe("failed");
    expect((await shared.loadEvents("p1")).some((event) => event.kind === "run.resume_attempted")).toBe(
      false,
    );

    const limited = scriptedModel([{ error: { type: "rate_limit", message: "slow" } }]);
    const second = await startProcess(shared, { tools: tools(new Ledger()), llm: limited });
    const plain = await second.runtime.runDetailed({ agentId: "a", inputText: "go", runId: "p2" });
    expect(plain.stopReason).toBe("failed");
    expect(plain.exception).toBeInstanceOf(LLMRateLimitError);
  });

  it("cancels the wait before a resume when the run is cancelled", async () => {
    const shared = new InMemorySessionManager();
    const model = scriptedModel([
      { toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }] },
      { error: { type: "rate_limit", message: "slow", retryAfterMs: 60_000 } },
    ]);
    const { runtime } = await startProcess(shared, { tools: tools(new Ledger()), llm: model });
    const done = runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "w1" });
    await waitFor(() =>
      runtime.liveRun("w1")?.log.events.some((event) => event.kind === "run.resume_attempted"),
    );
    await runtime.cancel("w1");
    const result = await done;
    expect(result.stopReason).toBe("cancelled");
  });
});

describe("resume in another process", () => {
  it("continues a run killed right after a model call; the tool runs once", async () => {
    const reference = await referenceRun();
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    const agent = () => ({ tools: tools(ledger, { recordIdempotent: true }), llm: twoStepScript() });
    const first = await startProcess(shared, agent(), (view) => {
      view.crashAfterCheckpoint = 3; // step 2's model answer is stored, none of its calls ran
    });
    void first.runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "ref" });
    await waitFor(() => first.view.isCrashed);
    expect(ledger.finished).toEqual(["c1:add"]);

    const second = await startProcess(shared, agent());
    const result = await second.runtime.resumeRun("ref");
    expect(result.stopReason).toBe("completed");
    expect(result.finalOutput).toBe("All done: 3 and 7");
    expect(ledger.finished).toEqual(["c1:add", "c2:record", "c3:add"]);
    expect(await storedTranscript(shared, "ref")).toEqual(reference.transcript);
    expect(result.usage.toolCalls).toBe(3);
    const record = await shared.getRun("ref");
    expect(record).toMatchObject({ status: "done", stopReason: "completed" });
    const events = await shared.loadEvents("ref");
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
    expect(events.filter((event) => event.kind === "run.started").map((event) => event.payload)).toEqual([
      { resumed: false },
      { resumed: true },
    ]);
    // The session gets the run's messages once, when it finishes.
    expect(await shared.loadMessages(record!.sessionId)).toEqual(reference.transcript);
  });

  it("does not run a finished call of a step again when killed between two calls", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    const agent = () => ({ tools: tools(ledger, { recordIdempotent: true }), llm: twoStepScript() });
    const first = await startProcess(shared, agent(), (view) => {
      view.crashAfterCheckpoint = 4; // record finished and is checkpointed; add has not run
    });
    void first.runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "k2" });
    await waitFor(() => first.view.isCrashed);
    const second = await startProcess(shared, agent());
    const result = await second.runtime.resumeRun("k2");
    expect(result.stopReason).toBe("completed");
    expect(ledger.started).toEqual(["c1:add", "c2:record", "c3:add"]);
  });

  it("runs an idempotent tool again when the process died while it ran", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    let views: ProcessView[] = [];
    const agent = () => ({
      tools: tools(ledger, {
        recordIdempotent: true,
        duringRecord: async () => {
          if (views.length === 1) await views[0]!.die();
        },
      }),
      llm: twoStepScript(),
    });
    const first = await startProcess(shared, agent());
    views = [first.view];
    void first.runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "k3" });
    await waitFor(() => first.view.isCrashed);
    const second = await startProcess(shared, agent());
    views.push(second.view);
    const result = await second.runtime.resumeRun("k3");
    expect(result.stopReason).toBe("completed");
    expect(ledger.started).toEqual(["c1:add", "c2:record", "c2:record", "c3:add"]);
    expect(ledger.finished).toEqual(["c1:add", "c2:record", "c3:add"]);
  });

  it("reports, not repeats, a non-idempotent call whose outcome is unknown", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    let views: ProcessView[] = [];
    const agent = () => ({
      tools: tools(ledger, {
        duringRecord: async () => {
          if (views.length === 1) await views[0]!.die();
        },
      }),
      llm: twoStepScript(),
    });
    const first = await startProcess(shared, agent());
    views = [first.view];
    void first.runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "k4" });
    await waitFor(() => first.view.isCrashed);
    const second = await startProcess(shared, agent());
    views.push(second.view);
    const result = await second.runtime.resumeRun("k4");
    expect(result.stopReason).toBe("suspended");
    expect(result.pendingToolCalls).toEqual([
      expect.objectContaining({ toolCallId: "c2", toolId: "record", params: { value: "x" } }),
    ]);
    expect(ledger.started).toEqual(["c1:add", "c2:record", "c3:add"]); // record was not run again
    const events = await shared.loadEvents("k4");
    expect(events.filter((event) => event.kind === "run.durable_idempotency_warning")).toHaveLength(1);
    expect(events.find((event) => event.kind === "tool.outcome_unknown")?.payload).toMatchObject({
      toolCallId: "c2",
      toolId: "record",
    });
    expect(await shared.getRun("k4")).toMatchObject({ status: "waiting", stopReason: "suspended" });
    // The suspension is itself a checkpoint a decision can resume from.
    const last = (await second.runtime.listRunCheckpoints("k4")).at(-1)!;
    const state = (await shared.loadCheckpoint((await shared.getRun("k4"))!.sessionId, last))!
      .state as unknown as RunState;
    expect(state.phase).toBe("suspended");
    expect(state.toolCalls.map((call) => [call.id, call.status])).toEqual([
      ["c2", "suspended"],
      ["c3", "succeeded"],
    ]);
  });

  it("resumes a run killed after its final answer without calling the model again", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    const model = twoStepScript();
    const first = await startProcess(
      shared,
      { tools: tools(ledger, { recordIdempotent: true }), llm: model },
      (view) => {
        view.crashAfterCheckpoint = 6;
      },
    );
    void first.runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "k5" });
    await waitFor(() => first.view.isCrashed);
    const model2 = twoStepScript();
    const second = await startProcess(shared, {
      tools: tools(ledger, { recordIdempotent: true }),
      llm: model2,
    });
    const result = await second.runtime.resumeRun("k5");
    expect(result).toMatchObject({ stopReason: "completed", finalOutput: "All done: 3 and 7" });
    expect(model2.callCount).toBe(0);
  });

  it("gives the session a run's messages and artifacts once when killed while storing them", async () => {
    const reference = await referenceRun();
    const shared = new InMemorySessionManager();
    const agent = () => ({
      tools: tools(new Ledger(), { recordIdempotent: true }),
      llm: twoStepScript(),
      // One artifact per step, in the run's state and so in its checkpoints.
      hooks: [
        {
          stepEnd: (ctx: HookContext) => {
            ctx.run.artifacts.push({
              name: `step-${ctx.step}`,
              kind: "note",
              payload: ctx.step,
              metadata: {},
            });
          },
        },
      ],
    });
    let saved = 0;
    const first = await startProcess(shared, agent(), (view) => {
      const saveArtifact = view.saveArtifact;
      // Killed once the session has the messages and the first two of the three artifacts.
      view.saveArtifact = async (id, artifact) => {
        await saveArtifact(id, artifact);
        if (++saved === 2) await view.die();
      };
    });
    void first.runtime.runDetailed({
      agentId: "a",
      inputText: "go",
      durable: true,
      runId: "k6",
      sessionId: "s6",
    });
    await waitFor(() => first.view.isCrashed);
    expect(await shared.loadMessages("s6")).toEqual(reference.transcript);
    expect(await shared.getRun("k6")).toMatchObject({ status: "running" });

    const second = await startProcess(shared, agent());
    const result = await second.runtime.resumeRun("k6");
    expect(result).toMatchObject({ stopReason: "completed", finalOutput: "All done: 3 and 7" });
    expect(await shared.loadMessages("s6")).toEqual(reference.transcript);
    expect((await shared.listArtifacts("s6")).map((artifact) => artifact.name)).toEqual([
      "step-1",
      "step-2",
      "step-3",
    ]);
    expect(await shared.getRun("k6")).toMatchObject({ status: "done", stopReason: "completed" });
  });

  it("resumes the plan-execute pattern at the plan step it was on", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    const planModel = () =>
      plannedModel([
        (messages) => (messages.length === 1 ? { text: "1. add\n2. answer" } : null),
        (messages) =>
          String(messages.at(-1)?.content).startsWith("Carry out step 1") === true
            ? { toolCalls: [{ id: "p1", name: "add", arguments: { a: 2, b: 2 } }] }
            : null,
        (messages) => (messages.at(-1)?.role === "tool" ? { text: "four" } : null),
        (messages) =>
          String(messages.at(-1)?.content).startsWith("Carry out step 2") === true
            ? { text: "The sum is 4" }
            : null,
      ]);
    const agent = () => ({ tools: tools(ledger), llm: planModel(), pattern: { type: "plan_execute" } });
    const first = await startProcess(shared, agent(), (view) => {
      view.crashAfterCheckpoint = 2; // the plan step, then step 1's model answer: add has not run
    });
    void first.runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "pe" });
    await waitFor(() => first.view.isCrashed);
    const second = await startProcess(shared, agent());
    const result = await second.runtime.resumeRun("pe");
    expect(result).toMatchObject({ stopReason: "completed", finalOutput: "The sum is 4" });
    expect(ledger.started).toEqual(["p1:add"]);
    const transcript = await shared.loadRunMessages("pe");
    expect(transcript.filter((m) => m.role === "user").map((m) => String(m.content).slice(0, 16))).toEqual([
      "go",
      "Carry out step 1",
      "Carry out step 2",
    ]);
  });

  it("refuses a checkpoint of another agent shape, another schema version, or an unknown id", async () => {
    const shared = new InMemorySessionManager();
    const first = await startProcess(
      shared,
      { tools: tools(new Ledger(), { recordIdempotent: true }), llm: twoStepScript() },
      (view) => {
        view.crashAfterCheckpoint = 2;
      },
    );
    void first.runtime.runDetailed({
      agentId: "a",
      inputText: "go",
      durable: true,
      runId: "m1",
      sessionId: "sm",
    });
    await waitFor(() => first.view.isCrashed);

    const otherTools = await startProcess(shared, { tools: [tools(new Ledger())[0]], llm: twoStepScript() });
    await expect(otherTools.runtime.resumeRun("m1")).rejects.toMatchObject({
      code: "checkpoint.agent_mismatch",
      hint: expect.stringContaining("tools"),
    });

    const same = await startProcess(shared, {
      tools: tools(new Ledger(), { recordIdempotent: true }),
      llm: twoStepScript(),
    });
    await expect(same.runtime.resume("m1:step:9")).rejects.toMatchObject({
      code: "checkpoint.unknown",
      hint: expect.stringContaining("m1:step:1, m1:step:2"),
    });
    await expect(same.runtime.resume("nonsense")).rejects.toMatchObject({ code: "checkpoint.unknown" });

    const stored = (await shared.loadCheckpoint("sm", "m1:step:2"))!;
    const before = JSON.stringify(stored);
    await shared.createCheckpoint("sm", {
      checkpointId: "m1:step:3",
      state: { ...stored.state, schemaVersion: 99 },
      transcriptLength: stored.transcriptLength,
      artifactCount: 0,
    });
    await expect(same.runtime.resume("m1:step:3")).rejects.toMatchObject({
      code: "checkpoint.schema_version",
      hint: expect.any(String),
    });
    // Refusals change nothing in the store.
    expect(JSON.stringify(await shared.loadCheckpoint("sm", "m1:step:2"))).toBe(before);
    expect(await shared.getRun("m1")).toMatchObject({ status: "running" });
  });

  it("does not continue a finished run, but branches a new run from an earlier checkpoint", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    const agent = () => ({ tools: tools(ledger, { recordIdempotent: true }), llm: twoStepScript() });
    const { runtime } = await startProcess(shared, agent());
    await runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "f1" });
    await expect(runtime.resumeRun("f1")).rejects.toMatchObject({
      code: "run.not_resumable",
      hint: expect.stringContaining("f1:step:5"),
    });
    ledger.started = [];
    const branch = await runtime.resume("f1:step:2", { runId: "f1-branch" });
    expect(branch).toMatchObject({
      runId: "f1-branch",
      stopReason: "completed",
      finalOutput: "All done: 3 and 7",
    });
    expect(ledger.started).toEqual(["c2:record", "c3:add"]);
    expect(await shared.getRun("f1-branch")).toMatchObject({ parentRunId: "f1", status: "done" });
    expect(await shared.loadRunMessages("f1-branch")).toEqual(await shared.loadRunMessages("f1"));
    expect(await shared.getRun("f1")).toMatchObject({ status: "done", stopReason: "completed" });
  });

  it("replays a resumed run's whole event log through attach after it ends", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    const agent = () => ({ tools: tools(ledger, { recordIdempotent: true }), llm: twoStepScript() });
    const first = await startProcess(shared, agent(), (view) => {
      view.crashAfterCheckpoint = 3;
    });
    void first.runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "at" });
    await waitFor(() => first.view.isCrashed);
    const second = await startProcess(shared, agent());
    await second.runtime.resumeRun("at");
    const third = await startProcess(shared, agent());
    const chunks = [];
    for await (const chunk of third.runtime.attach("at", { afterSequence: 0 })) chunks.push(chunk);
    expect(chunks.at(-1)?.kind).toBe("run.finished");
    const sequences = chunks.map((chunk) => chunk.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
  });

  it("waits for a tool that never ends without resuming anything (a live run is not taken over)", async () => {
    const shared = new InMemorySessionManager();
    const gate = deferred();
    const slow = defineTool({
      name: "add",
      description: "slow",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => {
        await gate.promise;
        return a + b;
      },
    });
    const { runtime } = await startProcess(shared, { tools: [slow], llm: twoStepScript() });
    const done = runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "live" });
    await waitFor(() => runtime.liveRun("live")?.log.events.some((event) => event.kind === "tool.started"));
    await expect(runtime.resumeRun("live")).rejects.toMatchObject({ code: "run.busy" });
    await runtime.cancel("live");
    gate.resolve();
    expect((await done).stopReason).toBe("cancelled");
  });
});

describe("continuing a run is exclusive (in_memory store shared by two runtimes)", () => {
  /** A runtime over the shared store itself, its session lock included (unlike a ProcessView's). */
  async function sharing(shared: InMemorySessionManager, agent: Record<string, unknown>): Promise<Runtime> {
    const type = `durable_shared_store_${++processCount}`;
    registerPlugin("session", type, () => shared);
    return Runtime.fromDict({ session: { type }, agents: [{ id: "a", name: "Agent A", ...agent }] });
  }

  /** A run whose process died once the model's step-2 answer was checkpointed (c2 and c3 not started). */
  async function crashedRun(shared: InMemorySessionManager, ledger: Ledger, runId: string): Promise<void> {
    const first = await startProcess(shared, { tools: tools(ledger), llm: twoStepScript() }, (view) => {
      view.crashAfterCheckpoint = 3;
    });
    void first.runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId });
    await waitFor(() => first.view.isCrashed);
  }

  it("lets one of two resumes at once go on and refuses the other with run.busy", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    await crashedRun(shared, ledger, "x1");
    const gate = deferred();
    const agent = () => ({
      tools: tools(ledger, { duringRecord: () => gate.promise }),
      llm: twoStepScript(),
    });
    const [one, two] = [await sharing(shared, agent()), await sharing(shared, agent())];
    const outcomes = [one.resumeRun("x1"), two.resumeRun("x1")].map((promise) =>
      promise.then(
        (result) => ({ result, error: undefined }),
        (error: unknown) => ({ result: undefined, error }),
      ),
    );
    const loser = await Promise.race(outcomes);
    expect(loser.error).toMatchObject({
      code: "run.busy",
      retryable: true,
      hint: expect.stringContaining("branch: true"),
    });
    gate.resolve();
    const settled = await Promise.all(outcomes);
    expect(settled.filter((outcome) => outcome.result?.stopReason === "completed")).toHaveLength(1);
    expect(ledger.started.filter((call) => call === "c2:record")).toHaveLength(1);
    expect((await shared.listRuns()).map((run) => run.runId)).toEqual(["x1"]);
  });

  it("refuses a checkpoint the run went past unless the resume branches", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    await crashedRun(shared, ledger, "x2");
    const runtime = await sharing(shared, { tools: tools(ledger), llm: twoStepScript() });
    const crashedAt = (await runtime.listRunCheckpoints("x2")).at(-1)!;
    expect((await runtime.resumeRun("x2")).stopReason).toBe("completed");
    // What a second recovery worker that read the checkpoint list before the first went on would do.
    await expect(runtime.resume(crashedAt)).rejects.toMatchObject({
      code: "run.not_resumable",
      hint: expect.stringContaining("branch: true"),
    });
    await expect(
      runtime.runDetailed({ agentId: "a", inputText: "", resumeFromCheckpoint: crashedAt }),
    ).rejects.toMatchObject({ code: "run.not_resumable" });
    expect(ledger.started.filter((call) => call === "c2:record")).toHaveLength(1);
    const branch = await runtime.resume(crashedAt, { branch: true });
    expect(branch.stopReason).toBe("completed");
    expect(branch.runId).not.toBe("x2");
    expect(await shared.getRun(branch.runId)).toMatchObject({ parentRunId: "x2", status: "done" });
    expect(ledger.started.filter((call) => call === "c2:record")).toHaveLength(2);
  });

  it("ends a refused resume's stream with the refusal, with no unhandled rejection", async () => {
    const shared = new InMemorySessionManager();
    const ledger = new Ledger();
    await crashedRun(shared, ledger, "x3");
    const gate = deferred();
    const agent = () => ({
      tools: tools(ledger, { duringRecord: () => gate.promise }),
      llm: twoStepScript(),
    });
    const [one, two] = [await sharing(shared, agent()), await sharing(shared, agent())];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const live = one.resumeRun("x3");
      await waitFor(() => ledger.started.includes("c2:record"));
      const latest = (await two.listRunCheckpoints("x3")).at(-1)!;
      const chunks: string[] = [];
      const streamed = (async () => {
        for await (const chunk of two.stream({ agentId: "a", inputText: "", resumeFromCheckpoint: latest }))
          chunks.push(chunk.kind);
      })();
      await expect(streamed).rejects.toMatchObject({ code: "run.busy" });
      expect(chunks).not.toContain("run.finished");
      gate.resolve();
      expect((await live).stopReason).toBe("completed");
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});

async function waitFor(condition: () => boolean | undefined, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error("timed out waiting for the condition");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
