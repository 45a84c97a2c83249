import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ERROR_CODES } from "../../errors/error-codes.js";
import { defineTool, Runtime } from "../../index.js";
import { scriptedModel } from "../../testing/index.js";
import type { ResolvedAgent } from "../resolved-agent.js";
import {
  checkResumeDecisions,
  loadForResume,
  loadRunState,
  loadSuspension,
  prepareResume,
  resumeSessionId,
} from "./index.js";

/**
 * The resume module on its own: what it makes of runs a Runtime stored. A run `w` waits on two approvals; a
 * durable run `d` checkpoints two steps and finishes.
 */

const pay = defineTool({
  name: "pay",
  description: "Pay an amount (needs approval)",
  inputSchema: z.object({ amount: z.number() }),
  approvalMode: "always",
  execute: ({ amount }) => `paid ${amount}`,
});
const add = defineTool({
  name: "add",
  description: "Add two numbers",
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

async function storedRuns() {
  const waiting = scriptedModel([
    {
      toolCalls: [
        { id: "p1", name: "pay", arguments: { amount: 10 } },
        { id: "p2", name: "pay", arguments: { amount: 20 } },
      ],
    },
    { text: "paid" },
  ]);
  const durable = scriptedModel([
    { toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }] },
    { toolCalls: [{ id: "c2", name: "add", arguments: { a: 3, b: 4 } }] },
    { text: "done" },
  ]);
  const runtime = await Runtime.fromDict({
    agents: [
      { id: "w", name: "W", tools: [pay], llm: waiting },
      { id: "d", name: "D", tools: [add], llm: durable },
    ],
  });
  const suspended = await runtime.runDetailed({
    agentId: "w",
    inputText: "pay",
    runId: "w1",
    sessionId: "s-w",
  });
  expect(suspended.stopReason).toBe("suspended");
  const finished = await runtime.runDetailed({
    agentId: "d",
    inputText: "add",
    runId: "d1",
    sessionId: "s-d",
    durable: true,
  });
  expect(finished.stopReason).toBe("completed");
  const store = runtime.sessionManager;
  const agentOf = async (checkpointId: string): Promise<ResolvedAgent> => {
    const { state } = await loadRunState(store, checkpointId);
    return { id: state.agentId, fingerprint: state.fingerprint } as ResolvedAgent;
  };
  return { runtime, store, agentOf, durableCheckpoints: await runtime.listRunCheckpoints("d1") };
}

describe("loading a checkpoint", () => {
  it("refuses an id that is not a checkpoint, an unknown run, and another agent's checkpoint", async () => {
    const { store, agentOf } = await storedRuns();
    await expect(loadRunState(store, "nonsense")).rejects.toMatchObject({
      code: ERROR_CODES.CHECKPOINT_UNKNOWN,
    });
    await expect(loadRunState(store, "nobody:step:1")).rejects.toMatchObject({
      code: ERROR_CODES.CHECKPOINT_UNKNOWN,
    });
    const agent = await agentOf("w1:step:1");
    await expect(
      prepareResume(store, { ...agent, id: "other" } as ResolvedAgent, { checkpointId: "w1:step:1" }),
    ).rejects.toMatchObject({ code: ERROR_CODES.CHECKPOINT_MISMATCH });
    await expect(
      prepareResume(store, { ...agent, fingerprint: "changed" } as ResolvedAgent, {
        checkpointId: "w1:step:1",
      }),
    ).rejects.toMatchObject({ code: ERROR_CODES.CHECKPOINT_MISMATCH });
  });

  it("reads back the state, the transcript it covers and whether it is the run's latest", async () => {
    const { store, durableCheckpoints } = await storedRuns();
    expect(durableCheckpoints.length).toBeGreaterThanOrEqual(2);
    const first = await loadRunState(store, durableCheckpoints[0]!);
    expect(first).toMatchObject({ latest: false, runCheckpoints: durableCheckpoints });
    expect(first.transcript).toHaveLength(first.state.transcriptLength);
    const last = await loadRunState(store, durableCheckpoints[durableCheckpoints.length - 1]!);
    expect(last.latest).toBe(true);
  });
});

describe("continue or branch", () => {
  it("continues the run from its latest checkpoint, after the events the store holds", async () => {
    const { store, agentOf } = await storedRuns();
    const prepared = await prepareResume(store, await agentOf("w1:step:1"), { checkpointId: "w1:step:1" });
    const events = await store.loadEvents("w1");
    expect(prepared).toMatchObject({
      checkpointId: "w1:step:1",
      sameRun: true,
      fromRunId: "w1",
      sessionId: "s-w",
      startAfter: events[events.length - 1]!.sequence,
      inputText: "pay",
    });
    const { loaded, stored } = await loadForResume(store, prepared, {
      agent: await agentOf("w1:step:1"),
      runId: "w1",
    });
    expect(loaded.state.runId).toBe("w1");
    expect(stored).toMatchObject({ latestCheckpointId: "w1:step:1", sequence: prepared.startAfter });
  });

  it("branches only when asked, as a new run that owns nothing in the store yet", async () => {
    const { store, agentOf } = await storedRuns();
    const agent = await agentOf("w1:step:1");
    for (const request of [{ branch: true }, { runId: "w2" }]) {
      const prepared = await prepareResume(store, agent, { ...request, checkpointId: "w1:step:1" });
      expect(prepared).toMatchObject({ sameRun: false, fromRunId: "w1", startAfter: 0 });
      const { loaded, stored } = await loadForResume(store, prepared, { agent, runId: "w2" });
      expect(loaded.state.runId).toBe("w2");
      expect(stored).toEqual({ checkpoints: 0, messages: 0, sequence: 0, latestCheckpointId: null });
    }
  });

  it("refuses to continue a finished run or one that went past the checkpoint, and says how to branch", async () => {
    const { store, agentOf, durableCheckpoints } = await storedRuns();
    for (const checkpointId of durableCheckpoints) {
      const agent = await agentOf(checkpointId);
      await expect(prepareResume(store, agent, { checkpointId })).rejects.toMatchObject({
        code: ERROR_CODES.RUN_NOT_RESUMABLE,
        hint: expect.stringContaining("branch: true"),
      });
      await expect(prepareResume(store, agent, { checkpointId, branch: true })).resolves.toMatchObject({
        sameRun: false,
      });
    }
  });

  it("keeps a continued run in its session; a branch may name another", async () => {
    const { store, agentOf } = await storedRuns();
    const agent = await agentOf("w1:step:1");
    const same = await prepareResume(store, agent, { checkpointId: "w1:step:1" });
    expect(resumeSessionId(same, undefined)).toBe("s-w");
    expect(resumeSessionId(same, "s-w")).toBe("s-w");
    expect(() => resumeSessionId(same, "elsewhere")).toThrow(/belongs to session 's-w'/);
    const branch = await prepareResume(store, agent, { checkpointId: "w1:step:1", branch: true });
    expect(resumeSessionId(branch, "elsewhere")).toBe("elsewhere");
    expect(resumeSessionId(branch, undefined)).toBe("s-w");
  });
});

describe("decisions", () => {
  it("finds a waiting run's suspension and checks decisions against its suspended calls", async () => {
    const { store } = await storedRuns();
    const loaded = await loadSuspension(store, "w1");
    expect(loaded.state.phase).toBe("suspended");
    expect(checkResumeDecisions(loaded, [{ toolCallId: "p1", action: "approve" }])).toEqual([
      { toolCallId: "p1", action: "approve" },
    ]);
    expect(() => checkResumeDecisions(loaded, [{ toolCallId: "nope", action: "approve" }])).toThrow(
      expect.objectContaining({ code: ERROR_CODES.DECISION }),
    );
  });

  it("refuses decisions for an unknown run, a finished run, or a checkpoint that is not a suspension", async () => {
    const { store, durableCheckpoints } = await storedRuns();
    await expect(loadSuspension(store, "nobody")).rejects.toMatchObject({ code: ERROR_CODES.RUN_UNKNOWN });
    await expect(loadSuspension(store, "d1")).rejects.toMatchObject({
      code: ERROR_CODES.DECISION,
      hint: expect.stringContaining("finished"),
    });
    const notSuspended = await loadRunState(store, durableCheckpoints[0]!);
    expect(() => checkResumeDecisions(notSuspended, [{ toolCallId: "c1", action: "approve" }])).toThrow(
      /is not waiting for a decision/,
    );
  });
});
