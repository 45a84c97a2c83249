import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../src/contracts/run-types.js";
import type { Message } from "../src/index.js";
import type { RunState } from "../src/loop/run-state.js";
import type { SessionManager } from "../src/sessions/session-manager.js";
import {
  type ChildRunResult,
  childProcessSuite,
  gaplessEvents,
  readLedger,
  runChild,
  spawnChild,
  waitFor,
} from "./support/child-processes.js";

/**
 * Durable runs across real process deaths. A child process runs a durable agent against a
 * persistent store and is SIGKILLed at a named point; a fresh child resumes the run from the store alone with
 * `runtime.resumeRun(runId)`. The agent (test/support/crash-child.mjs): step 1 calls `add` (c1); step 2 calls
 * `record` (c2) and `add` (c3); step 3 answers. test/durable-runs.test.ts simulates the same in one process.
 */

const suite = childProcessSuite("keel-crash-resume-");
const STORES = suite.stores;
const CHILD = "test/support/crash-child.mjs";

type CrashPoint =
  | "after-model"
  | "mid-tool"
  | "mid-checkpoint"
  | "after-result"
  | "after-session-append"
  | "before-final-record";

interface ChildSpec {
  store: { type: string; config: Record<string, unknown> };
  mode: "start" | "resume";
  runId: string;
  sessionId: string;
  ledger: string;
  recordIdempotent: boolean;
  crashAt: CrashPoint | null;
}

/** Start the run in a child, wait for it to reach `point`, and SIGKILL it there. */
async function killAt(spec: ChildSpec, point: CrashPoint): Promise<void> {
  const child = spawnChild(CHILD, suite.build(), { ...spec, crashAt: point });
  const marker = `@@reached ${point}\n`;
  try {
    await waitFor(
      () => child.stdout.includes(marker) || child.process.exitCode !== null,
      () => `the child to reach '${point}'; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
    );
    if (!child.stdout.includes(marker)) {
      throw new Error(
        `The child exited (${child.process.exitCode}) before '${point}'\n${child.stdout}\n${child.stderr}`,
      );
    }
  } finally {
    child.process.kill("SIGKILL");
    await child.exit;
  }
  expect(child.process.signalCode).toBe("SIGKILL");
}

/** Run a child to its end (a whole run, or a resume) and return what it printed. */
async function runToEnd(spec: ChildSpec): Promise<ChildRunResult> {
  const [result] = await runChild(CHILD, suite.build(), spec);
  return result as ChildRunResult;
}

/** The run's latest checkpoint as the store holds it. */
async function latestCheckpoint(store: SessionManager, sessionId: string, runId: string): Promise<RunState> {
  const ids = (await store.listCheckpoints(sessionId)).filter((id) => id.startsWith(`${runId}:step:`));
  const checkpoint = await store.loadCheckpoint(sessionId, ids.at(-1)!);
  return checkpoint!.state as unknown as RunState;
}

async function expectGaplessEvents(store: SessionManager, runId: string) {
  const events = await gaplessEvents(store, runId);
  expect(events.filter((event) => event.kind === "run.started").map((event) => event.payload)).toEqual([
    { resumed: false },
    { resumed: true },
  ]);
  return events;
}

const ALL_ONCE = ["c1:start", "c1:done", "c2:start", "c2:done", "c3:start", "c3:done"];

interface CrashCase {
  name: string;
  point: CrashPoint;
  /** What the killed child left in the store: checked before the resume, so the case is the one named. */
  atKill(found: {
    ledger: string[];
    checkpoint: RunState;
    /** The run's own transcript. */
    messages: Message[];
    /** The session's transcript. */
    session: Message[];
    record: RunRecord | null;
    /** The kinds of the run's stored events. */
    events: string[];
  }): void;
  /** Every tool phase across both processes. */
  ledger: string[];
}

const CASES: CrashCase[] = [
  {
    name: "after a model call: its checkpoint is stored, no tool has run",
    point: "after-model",
    atKill: ({ ledger, checkpoint }) => {
      expect(ledger).toEqual(["c1:start", "c1:done"]);
      expect(checkpoint).toMatchObject({ phase: "tools", step: 2, transcriptLength: 4 });
      expect(checkpoint.toolCalls.map((call) => [call.id, call.status])).toEqual([
        ["c2", "new"],
        ["c3", "new"],
      ]);
    },
    ledger: ALL_ONCE,
  },
  {
    name: "inside an idempotent tool: the call runs again, nothing finished does",
    point: "mid-tool",
    atKill: ({ ledger, checkpoint }) => {
      expect(ledger).toEqual(["c1:start", "c1:done", "c2:start"]);
      expect(checkpoint).toMatchObject({ phase: "tools", step: 2 });
    },
    ledger: ["c1:start", "c1:done", "c2:start", "c2:start", "c2:done", "c3:start", "c3:done"],
  },
  {
    name: "mid-checkpoint-write: the step's events and messages are stored, its checkpoint is not",
    point: "mid-checkpoint",
    atKill: ({ ledger, checkpoint, messages }) => {
      expect(ledger).toEqual(["c1:start", "c1:done"]);
      // The latest checkpoint is step 1's end; the model's step-2 answer lies past it in the run transcript.
      expect(checkpoint).toMatchObject({ phase: "step_end", step: 1, transcriptLength: 3 });
      expect(messages).toHaveLength(4);
      expect(messages[3]).toMatchObject({ role: "assistant", content: "recording" });
    },
    ledger: ALL_ONCE,
  },
  {
    name: "after a tool result, before its checkpoint: only that call runs again",
    point: "after-result",
    atKill: ({ ledger, checkpoint }) => {
      expect(ledger).toEqual(ALL_ONCE);
      expect(checkpoint.toolCalls.map((call) => [call.id, call.status])).toEqual([
        ["c2", "succeeded"],
        ["c3", "new"],
      ]);
    },
    ledger: [...ALL_ONCE, "c3:start", "c3:done"],
  },
  {
    name: "after the session got the run's messages, before the run's record says it is done",
    point: "after-session-append",
    atKill: ({ ledger, checkpoint, session, record }) => {
      expect(ledger).toEqual(ALL_ONCE);
      expect(checkpoint).toMatchObject({
        phase: "step_end",
        step: 3,
        final: { output: "All done: 3 and 7" },
      });
      expect(session).toHaveLength(7);
      expect(record).toMatchObject({ status: "running" });
    },
    ledger: ALL_ONCE,
  },
  {
    name: "after the run's last events are stored, before its final record",
    point: "before-final-record",
    atKill: ({ ledger, session, record, events }) => {
      expect(ledger).toEqual(ALL_ONCE);
      expect(events.at(-1)).toBe("run.finished");
      expect(session).toHaveLength(7);
      expect(record).toMatchObject({ status: "running" });
    },
    ledger: ALL_ONCE,
  },
];

describe.each(STORES)("a durable run killed with SIGKILL, resumed in a new process ($type)", (kind) => {
  const storeDir = join(suite.root, kind.type);
  const reference = { transcript: [] as Message[], result: null as ChildRunResult | null };

  const spec = (name: string, overrides: Partial<ChildSpec> = {}): ChildSpec => {
    mkdirSync(storeDir, { recursive: true });
    return {
      store: { type: kind.type, config: kind.config("crash") },
      mode: "start",
      runId: `run-${name}`,
      sessionId: `session-${name}`,
      ledger: join(storeDir, `${name}.ledger`),
      recordIdempotent: true,
      crashAt: null,
      ...overrides,
    };
  };

  beforeAll(async () => {
    // The same agent, uninterrupted, in a store of its own.
    const run = spec("reference", { store: { type: kind.type, config: kind.config("reference") } });
    reference.result = await runToEnd(run);
    expect(reference.result).toMatchObject({ stopReason: "completed", finalOutput: "All done: 3 and 7" });
    expect(readLedger(run.ledger)).toEqual(ALL_ONCE);
    const store = await kind.open("reference");
    try {
      reference.transcript = await store.loadRunMessages(run.runId);
    } finally {
      await store.close?.();
    }
    expect(reference.transcript).toHaveLength(7);
  }, 60_000);

  it.each(CASES)(
    "$name",
    async (crash) => {
      const run = spec(crash.point);
      await killAt(run, crash.point);
      const store = await kind.open("crash");
      try {
        crash.atKill({
          ledger: readLedger(run.ledger),
          checkpoint: await latestCheckpoint(store, run.sessionId, run.runId),
          messages: await store.loadRunMessages(run.runId),
          session: await store.loadMessages(run.sessionId),
          record: await store.getRun(run.runId),
          events: (await store.loadEvents(run.runId)).map((event) => event.kind),
        });

        const resumed = await runToEnd({ ...run, mode: "resume" });
        expect(resumed).toMatchObject({
          stopReason: "completed",
          finalOutput: "All done: 3 and 7",
          toolCalls: reference.result!.toolCalls,
          sessionId: run.sessionId,
        });
        expect(await store.loadRunMessages(run.runId)).toEqual(reference.transcript);
        // The session gets the run's messages once, when it finishes.
        expect(await store.loadMessages(run.sessionId)).toEqual(reference.transcript);
        expect(readLedger(run.ledger)).toEqual(crash.ledger);
        expect(await store.getRun(run.runId)).toMatchObject({
          status: "done",
          stopReason: "completed",
          pendingToolCalls: [],
        });
        await expectGaplessEvents(store, run.runId);
      } finally {
        await store.close?.();
      }
    },
    60_000,
  );

  it("inside a tool that is not idempotent: the call is suspended for a decision, not run again", async () => {
    const run = spec("mid-tool-not-idempotent", { recordIdempotent: false });
    await killAt(run, "mid-tool");
    const store = await kind.open("crash");
    try {
      expect(readLedger(run.ledger)).toEqual(["c1:start", "c1:done", "c2:start"]);
      // The call was checkpointed as started before it ran.
      const atKill = await latestCheckpoint(store, run.sessionId, run.runId);
      expect(atKill.toolCalls.map((call) => [call.id, call.status])).toEqual([
        ["c2", "running"],
        ["c3", "new"],
      ]);

      const resumed = await runToEnd({ ...run, mode: "resume" });
      expect(resumed.stopReason).toBe("suspended");
      expect(resumed.pendingToolCalls).toEqual([
        expect.objectContaining({ toolCallId: "c2", toolId: "record", params: { value: "x" } }),
      ]);
      // record did not start a second time; add, which had not run, did.
      expect(readLedger(run.ledger)).toEqual(["c1:start", "c1:done", "c2:start", "c3:start", "c3:done"]);
      expect(await store.getRun(run.runId)).toMatchObject({
        status: "waiting",
        stopReason: "suspended",
        pendingToolCalls: [expect.objectContaining({ toolCallId: "c2", toolId: "record" })],
      });
      const events = await store.loadEvents(run.runId);
      expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
      expect(events.find((event) => event.kind === "tool.outcome_unknown")?.payload).toMatchObject({
        toolCallId: "c2",
        toolId: "record",
      });
      expect(events.filter((event) => event.kind === "run.durable_idempotency_warning")).toHaveLength(1);
      // The suspension is a checkpoint of its own, which a decision resumes from.
      const suspended = await latestCheckpoint(store, run.sessionId, run.runId);
      expect(suspended.phase).toBe("suspended");
      expect(suspended.toolCalls.map((call) => [call.id, call.status])).toEqual([
        ["c2", "suspended"],
        ["c3", "succeeded"],
      ]);
      // Up to the model's step-2 answer the transcript is the uninterrupted run's.
      expect((await store.loadRunMessages(run.runId)).slice(0, 4)).toEqual(reference.transcript.slice(0, 4));
    } finally {
      await store.close?.();
    }
  }, 60_000);
});
