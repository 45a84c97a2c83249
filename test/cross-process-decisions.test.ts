import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Message, RuntimeEvent, ToolDecision } from "../src/index.js";
import type { SessionManager } from "../src/sessions/session-manager.js";
import {
  type ChildRunResult,
  childProcessSuite,
  gaplessEvents,
  readLedger,
  runChild,
  type StoreKind,
  withStore,
} from "./support/child-processes.js";

/**
 * Decisions across processes. Process A runs an agent whose step calls `pay` twice (each needs approval)
 * and `add` (which does not), and exits once the run waits; process B decides one payment and exits, the run
 * waiting again; process C decides the other and the run completes. Everything the run leaves must equal the
 * same script decided in one process with the same store type. A decision for a call the run does not have is
 * refused in another process and changes nothing. The agent: test/support/decision-child.mjs.
 */

const suite = childProcessSuite("keel-cross-decisions-");
const STORES = suite.stores;
const CHILD = "test/support/decision-child.mjs";

type Action = { start: true } | { decide: ToolDecision[] };

interface ChildResult extends ChildRunResult {
  refused?: { code: string; message: string; hint: string };
}

const START: Action = { start: true };
/** B's partial decision: the second payment first, with an idempotency key. */
const DECIDE_P2: Action = { decide: [{ toolCallId: "p2", action: "approve", decisionId: "dec-p2" }] };
/** C's decision on the rest. */
const DECIDE_P1: Action = { decide: [{ toolCallId: "p1", action: "approve", reason: "checked by hand" }] };

const FINAL_OUTPUT = "Done: p1=paid 10, a1=3, p2=paid 20";

/** What the run left in its store, in forms that compare across stores and processes. */
interface Trace {
  record: unknown;
  transcript: Message[];
  session: Message[];
  events: RuntimeEvent[];
}

async function traceOf(store: SessionManager, runId: string, sessionId: string): Promise<Trace> {
  return {
    record: await store.getRun(runId),
    transcript: await store.loadRunMessages(runId),
    session: await store.loadMessages(sessionId),
    events: await gaplessEvents(store, runId),
  };
}

/** The stored state a refused decision must leave exactly as it was. */
async function snapshot(store: SessionManager, runId: string, sessionId: string): Promise<string> {
  return JSON.stringify([
    await store.getRun(runId),
    await store.listCheckpoints(sessionId),
    await store.loadEvents(runId),
    await store.loadRunMessages(runId),
    await store.loadMessages(sessionId),
  ]);
}

const decidedPayloads = (events: readonly RuntimeEvent[]) =>
  events.filter((event) => event.kind === "tool.decision").map((event) => event.payload);

describe.each(STORES)("decisions from other processes ($type)", (kind: StoreKind) => {
  const dir = join(suite.root, "ledgers", kind.type);
  const reference = {
    result: null as ChildResult | null,
    trace: null as Trace | null,
    ledger: [] as string[],
  };

  /** Run one process with `actions` for the run `name` in the store `which`; its results, one per action. */
  const child = async (process: { name: string; role: string; which?: string }, actions: Action[]) => {
    const { name, role, which = "cross" } = process;
    // The flow's run is durable, so that its stored transcript is the whole run's; a run that is not durable
    // stores its transcript only with the checkpoints it writes when it suspends.
    mkdirSync(dir, { recursive: true });
    const spec = {
      store: { type: kind.type, config: kind.config(which) },
      runId: `run-${name}`,
      sessionId: `session-${name}`,
      ledger: join(dir, `${which}-${name}.ledger`),
      durable: name === "flow",
      role,
      actions,
    };
    return { spec, results: (await runChild(CHILD, suite.build(), spec)) as ChildResult[] };
  };

  beforeAll(async () => {
    // The same script, run and decided in one process, in a store of its own.
    const { spec, results } = await child({ name: "flow", role: "one", which: "reference" }, [
      START,
      DECIDE_P2,
      DECIDE_P1,
    ]);
    expect(results.map((result) => result.stopReason)).toEqual(["suspended", "suspended", "completed"]);
    reference.result = results[2]!;
    expect(reference.result.finalOutput).toBe(FINAL_OUTPUT);
    reference.ledger = readLedger(spec.ledger);
    reference.trace = await withStore(kind, "reference", (store) =>
      traceOf(store, spec.runId, spec.sessionId),
    );
  }, 60_000);

  it("A suspends and exits, B decides one call, C the other: the run ends as it does in one process", async () => {
    const a = await child({ name: "flow", role: "A" }, [START]);
    const { runId, sessionId, ledger } = a.spec;
    expect(a.results[0]).toMatchObject({ stopReason: "suspended", sessionId });
    expect(a.results[0]!.pendingToolCalls.map((call) => [call.toolCallId, call.toolId, call.params])).toEqual(
      [
        ["p1", "pay", { amount: 10 }],
        ["p2", "pay", { amount: 20 }],
      ],
    );
    expect(readLedger(ledger)).toEqual(["a1:add@A"]);
    await withStore(kind, "cross", async (store) => {
      expect(await store.getRun(runId)).toMatchObject({
        status: "waiting",
        stopReason: "suspended",
        pendingToolCalls: [
          expect.objectContaining({ toolCallId: "p1" }),
          expect.objectContaining({ toolCallId: "p2" }),
        ],
      });
    });

    const b = await child({ name: "flow", role: "B" }, [DECIDE_P2]);
    expect(b.results[0]).toMatchObject({ stopReason: "suspended", finalOutput: null });
    expect(b.results[0]!.pendingToolCalls.map((call) => call.toolCallId)).toEqual(["p1"]);
    expect(readLedger(ledger)).toEqual(["a1:add@A", "p2:pay@B"]);
    await withStore(kind, "cross", async (store) => {
      expect(await store.getRun(runId)).toMatchObject({
        status: "waiting",
        pendingToolCalls: [expect.objectContaining({ toolCallId: "p1" })],
      });
    });

    const c = await child({ name: "flow", role: "C" }, [DECIDE_P1]);
    expect(c.results[0]).toEqual({ ...reference.result, sessionId });
    // Each tool ran once, in the process that decided it; in the order of the one-process run.
    const ledgerLines = readLedger(ledger);
    expect(ledgerLines).toEqual(["a1:add@A", "p2:pay@B", "p1:pay@C"]);
    expect(ledgerLines.map((line) => line.replace(/@.*$/, ""))).toEqual(
      reference.ledger.map((line) => line.replace(/@.*$/, "")),
    );

    await withStore(kind, "cross", async (store) => {
      const trace = await traceOf(store, runId, sessionId);
      const expected = reference.trace!;
      expect(trace.record).toMatchObject({ status: "done", stopReason: "completed", pendingToolCalls: [] });
      expect(trace.transcript).toEqual(expected.transcript);
      expect(trace.session).toEqual(expected.session);
      expect(trace.transcript.filter((message) => message.role === "tool").map((m) => m.toolCallId)).toEqual([
        "p1",
        "a1",
        "p2",
      ]);
      expect(trace.events.map((event) => event.kind)).toEqual(expected.events.map((event) => event.kind));
      expect(
        trace.events.filter((event) => event.kind === "run.started").map((event) => event.payload),
      ).toEqual([{ resumed: false }, { resumed: true }, { resumed: true }]);
      expect(decidedPayloads(trace.events)).toEqual([
        { toolCallId: "p2", toolId: "pay", action: "approve", decisionId: "dec-p2" },
        { toolCallId: "p1", toolId: "pay", action: "approve", reason: "checked by hand" },
      ]);
      expect(decidedPayloads(trace.events)).toEqual(decidedPayloads(expected.events));
      const completed = trace.events.filter((event) => event.kind === "tool.completed");
      expect(completed.map((event) => event.payload.toolCallId)).toEqual(["a1", "p2", "p1"]);
    });
  }, 60_000);

  it("refuses a decision for an unknown call, or a batch holding one, in another process and changes nothing", async () => {
    const a = await child({ name: "refused", role: "A" }, [START]);
    const { runId, sessionId, ledger } = a.spec;
    expect(a.results[0]!.stopReason).toBe("suspended");
    const before = await withStore(kind, "cross", (store) => snapshot(store, runId, sessionId));

    const b = await child({ name: "refused", role: "B" }, [
      { decide: [{ toolCallId: "zz", action: "approve" }] },
      // One bad decision refuses the whole batch: p2 is not approved either.
      {
        decide: [
          { toolCallId: "p2", action: "approve" },
          { toolCallId: "zz", action: "deny" },
        ],
      },
    ]);
    for (const result of b.results) {
      expect(result.refused).toEqual({
        code: "run.decision",
        message: `Run '${runId}' has no suspended call 'zz'`,
        hint: "Calls waiting for a decision: p1 (pay), p2 (pay)",
      });
    }
    expect(await withStore(kind, "cross", (store) => snapshot(store, runId, sessionId))).toBe(before);
    expect(readLedger(ledger)).toEqual(["a1:add@A"]);

    // The run still takes its decisions.
    const c = await child({ name: "refused", role: "C" }, [DECIDE_P2, DECIDE_P1]);
    expect(c.results.map((result) => result.stopReason)).toEqual(["suspended", "completed"]);
    expect(c.results[1]!.finalOutput).toBe(FINAL_OUTPUT);
  }, 60_000);
});
