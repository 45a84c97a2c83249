import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RuntimeEvent } from "../src/contracts/runtime-event.js";
import { RunEventsLostError, type RunStreamChunk, type Runtime, registerPlugin } from "../src/index.js";
import { InMemorySessionManager } from "../src/sessions/in-memory-session-manager.js";
import { collect, deferred, runtimeWith } from "./support/harness.js";

/**
 * `event_queue_size` bounds what a live run keeps in memory: older events go to the store's event log, where a
 * consumer that falls behind reads them, gapless and in order.
 */

const LIMIT = 20;
const DELTAS = Array.from({ length: 300 }, (_, index) => `d${index} `);

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

async function deltaRuntime(session?: { type: string }): Promise<Runtime> {
  const made = await runtimeWith(
    [{ deltas: DELTAS }],
    { runtime: { event_queue_size: LIMIT } },
    session === undefined ? {} : { session },
  );
  runtime = made.runtime;
  return made.runtime;
}

function expectGapless(chunks: readonly RunStreamChunk[]): void {
  expect(chunks.map((chunk) => chunk.sequence)).toEqual(chunks.map((_chunk, index) => index + 1));
  expect(chunks.filter((chunk) => chunk.kind === "llm.delta").map((chunk) => chunk.payload.text)).toEqual(
    DELTAS,
  );
  expect(chunks.at(-1)!.kind).toBe("run.finished");
}

/** Resolves with the run's id when it finishes, whoever reads its stream. */
function finishedRun(runtime: Runtime): Promise<string> {
  const done = deferred<string>();
  runtime.eventBus.subscribe("run.finished", (event) => done.resolve(event.runId));
  return done.promise;
}

describe("event_queue_size", () => {
  it("keeps at most event_queue_size events of a live run in memory; the store has them all", async () => {
    const rt = await deltaRuntime();
    let held = 0;
    let seen = 0;
    rt.eventBus.subscribe("*", (event: RuntimeEvent) => {
      const live = rt.liveRun(event.runId);
      if (live === undefined) return;
      seen++;
      held = Math.max(held, live.log.events.length);
    });
    const result = await rt.runDetailed({ agentId: "a", inputText: "go", runId: "bounded" });
    expect(result.finalOutput).toBe(DELTAS.join(""));
    expect(seen).toBeGreaterThan(DELTAS.length);
    expect(held).toBeLessThanOrEqual(LIMIT);
    const stored = await rt.sessionManager.loadEvents("bounded");
    expect(stored.map((event) => event.sequence)).toEqual(stored.map((_event, index) => index + 1));
    expect(stored.at(-1)!.kind).toBe("run.finished");
  });

  it("gives a consumer that fell far behind every event in order, from the store then from memory", async () => {
    const rt = await deltaRuntime();
    const finished = finishedRun(rt);
    const stream = rt.stream({ agentId: "a", inputText: "go" });
    const first = await stream.next();
    expect(first.value?.kind).toBe("run.started");
    // The run goes on without this consumer; by its end memory holds only the last events.
    const runId = await finished;
    const rest = await collect(stream);
    expectGapless([first.value!, ...rest]);
    expect(rest[0]!.runId).toBe(runId);
  });

  it("lets attach() read a live run from any sequence though memory dropped it", async () => {
    const rt = await deltaRuntime();
    const started = deferred();
    const gate = deferred();
    rt.eventBus.subscribe("step.finished", () => started.resolve());
    const stream = rt.stream({ agentId: "a", inputText: "go", runId: "attached" });
    const reading = (async () => {
      const chunks: RunStreamChunk[] = [];
      for await (const chunk of stream) {
        chunks.push(chunk);
        if (chunks.length === 1) await gate.promise;
      }
      return chunks;
    })();
    await started.promise;
    const attached = await collect(rt.attach("attached"));
    gate.resolve();
    expectGapless(attached);
    expectGapless(await reading);
  });

  it("ends a consumer whose gap the store cannot give with RunEventsLostError, never a silent skip", async () => {
    class Forgetful extends InMemorySessionManager {
      override async appendEvents(): Promise<void> {}
      override async loadEvents(): Promise<RuntimeEvent[]> {
        return [];
      }
    }
    registerPlugin("session", "forgetful_events", () => new Forgetful());
    const rt = await deltaRuntime({ type: "forgetful_events" });
    const finished = finishedRun(rt);
    const stream = rt.stream({ agentId: "a", inputText: "go" });
    expect((await stream.next()).value?.kind).toBe("run.started");
    await finished;
    const error = await collect(stream).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(RunEventsLostError);
    expect(error).toMatchObject({ code: "run.events_lost" });
  });

  it("writes every event to the run folder's events.jsonl, those memory let go of included", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "keel-queue-"));
    const made = await runtimeWith([{ deltas: DELTAS }], {
      runtime: { event_queue_size: LIMIT, run_folders: { root_dir: root } },
    });
    runtime = made.runtime;
    const result = await made.runtime.runDetailed({ agentId: "a", inputText: "go" });
    const lines = (await readFile(path.join(root, "runs", result.runId, "events.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { sequence: number });
    expect(lines.map((line) => line.sequence)).toEqual(lines.map((_line, index) => index + 1));
    expect(lines.length).toBe((await made.runtime.sessionManager.loadEvents(result.runId)).length);
  });

  it("keeps a reader that keeps up gapless", async () => {
    const rt = await deltaRuntime();
    expectGapless(await collect(rt.stream({ agentId: "a", inputText: "go" })));
  });
});
