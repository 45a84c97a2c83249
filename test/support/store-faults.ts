import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { join } from "node:path";
import { expect } from "vitest";
import { z } from "zod";
import { KeelError } from "../../src/errors/keel-error.js";
import { defineTool, type Message, type RunResult, Runtime } from "../../src/index.js";
import type { SessionManager } from "../../src/sessions/session-manager.js";
import { scriptedModel } from "../../src/testing/index.js";

/**
 * What the store fault tests share: a TCP proxy a test can cut, a workload of durable runs whose tools count
 * their executions, and the checks every fault ends with.
 */

/**
 * A TCP proxy in front of a server. `cut()` destroys every open connection and resets new ones until `restore()`:
 * to its clients the server went away, as when it restarts or the network drops.
 */
export class CuttableProxy {
  private readonly sockets = new Set<Socket>();
  private down = false;

  private constructor(private readonly server: Server) {}

  static async start(target: { host: string; port: number }): Promise<CuttableProxy> {
    const server = createServer();
    const proxy = new CuttableProxy(server);
    server.on("connection", (client) => proxy.accept(client, target));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  cut(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.down = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    if (this.down) {
      client.resetAndDestroy();
      return;
    }
    const upstream = tcpConnect(target.port, target.host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

/** Each tool call's executions, by `runId/toolCallId`. */
export type Executions = Map<string, number>;

/** The scripted model's plan: `steps` tool steps, each one call of `work`, then an answer. */
function plannedTurns(steps: number) {
  return (request: { messages: readonly Message[] }) => {
    const done = request.messages.filter((message) => message.role === "tool").length;
    if (done >= steps) return { text: `finished after ${done} steps` };
    return { toolCalls: [{ id: `call${done + 1}`, name: "work", arguments: { step: done + 1 } }] };
  };
}

/** A runtime over `store` whose agent `worker` runs `steps` tool steps of `toolDelayMs` each. */
export async function faultRuntime(options: {
  store: SessionManager;
  executions: Executions;
  steps: number;
  toolDelayMs: number;
  storeOutageMs?: number;
  /** Padding in each tool result, so that the write after it needs fresh space on the disk. */
  resultBytes?: number;
  /** Called by the tool of each step once its work is done: where a test brings the fault on. */
  afterStep?: (step: number) => void | Promise<void>;
}): Promise<Runtime> {
  const { executions, toolDelayMs } = options;
  const work = defineTool({
    name: "work",
    description: "Do one step of work",
    inputSchema: z.object({ step: z.number() }),
    execute: async ({ step }, ctx) => {
      await new Promise((resolve) => setTimeout(resolve, toolDelayMs));
      const key = `${ctx.runId}/${ctx.toolCallId}`;
      executions.set(key, (executions.get(key) ?? 0) + 1);
      await options.afterStep?.(step);
      return { step, padding: "x".repeat(options.resultBytes ?? 0) };
    },
  });
  return Runtime.fromDict({
    session: options.store,
    agents: [
      {
        id: "worker",
        name: "Worker",
        tools: [work],
        llm: scriptedModel([plannedTurns(options.steps)], { whenExhausted: "repeat-last" }),
        runtime: { max_steps: options.steps + 2 },
        ...(options.storeOutageMs === undefined
          ? {}
          : { durable: { store_outage_ms: options.storeOutageMs } }),
      },
    ],
  });
}

/** Start `count` durable runs at once, each in its own session; resolves with each run's finish time. */
export function startRuns(
  runtime: Runtime,
  options: { count: number; prefix: string },
): { done: Promise<{ result: RunResult; finishedAt: number }[]>; finished: () => number } {
  let finished = 0;
  const runs = Array.from({ length: options.count }, (_, index) =>
    runtime
      .runDetailed({
        agentId: "worker",
        inputText: "work",
        durable: true,
        runId: `${options.prefix}-${index}`,
        sessionId: `${options.prefix}-s${index}`,
      })
      .then((result) => {
        finished++;
        return { result, finishedAt: performance.now() };
      }),
  );
  return { done: Promise.all(runs), finished: () => finished };
}

/** How long `count` runs take with nothing going wrong: the yardstick for a recovery time. */
export async function undisturbedMs(
  runtime: Runtime,
  options: { count: number; prefix: string },
): Promise<number> {
  const startedAt = performance.now();
  const finished = await startRuns(runtime, options).done;
  expect(finished.every((run) => run.result.stopReason === "completed")).toBe(true);
  return performance.now() - startedAt;
}

/**
 * The checks after a fault: every run completed, every tool call ran exactly once, and each run's stored event
 * log is numbered 1…n without a gap, starts with `run.started` and ends with `run.finished`.
 */
export async function expectAllCompleted(options: {
  results: readonly RunResult[];
  executions: Executions;
  store: SessionManager;
  steps: number;
}): Promise<void> {
  const { results, executions, store, steps } = options;
  const failures = results.filter((result) => result.stopReason !== "completed");
  expect(failures.map((result) => `${result.runId}: ${result.stopReason} ${result.error ?? ""}`)).toEqual([]);
  const twice = [...executions].filter(([, count]) => count !== 1);
  expect(twice).toEqual([]);
  expect(executions.size).toBe(results.length * steps);
  for (const result of results) {
    const events = await store.loadEvents(result.runId);
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
    expect(events[0]?.kind).toBe("run.started");
    expect(events.at(-1)?.kind).toBe("run.finished");
    expect((await store.getRun(result.runId))?.stopReason).toBe("completed");
  }
}

/** Resolves once `check()` is true, polling every few milliseconds. */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const STEPS = 3;
/** Big enough that the write after a tool result always needs fresh space on the disk. */
const RESULT_BYTES = 20_000;

/** A fault a test brings on mid-run and takes away again, and the store error code it shows as. */
/** A fault brought on mid-run in `store`'s run `runId`. */
export interface FaultScenario {
  store: SessionManager;
  fault: Fault;
  runId: string;
  /** Checks what the store holds once the run has failed, before the fault goes. */
  whileFailed?: () => void;
}

export interface Fault {
  code: string;
  apply(): void;
  clear(): void;
}

/** `store`, noting the code of every typed error its calls fail with. */
function observed(store: SessionManager): { store: SessionManager; codes: Set<string> } {
  const codes = new Set<string>();
  const proxy = new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise)
          result.catch((error: unknown) => {
            if (KeelError.isInstance(error)) codes.add(error.code);
          });
        return result;
      };
    },
  });
  return { store: proxy, codes };
}

/** Each stored event log is numbered 1…n and ends with `run.finished`; the run's record says completed. */
async function expectStoredComplete(store: SessionManager, runId: string): Promise<void> {
  const events = await store.loadEvents(runId);
  expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
  expect(events.at(-1)?.kind).toBe("run.finished");
  expect((await store.getRun(runId))?.stopReason).toBe("completed");
}

/** The fault comes after step 2's tool and goes 600 ms later; the run waits and completes, each call run once. */
export async function waitsOut(scenario: FaultScenario): Promise<void> {
  const { fault, runId } = scenario;
  const { store, codes } = observed(scenario.store);
  const executions: Executions = new Map();
  const runtime = await faultRuntime({
    store,
    executions,
    steps: STEPS,
    toolDelayMs: 5,
    resultBytes: RESULT_BYTES,
    storeOutageMs: 30_000,
    afterStep: (step) => {
      if (step !== 2) return;
      fault.apply();
      setTimeout(() => fault.clear(), 600);
    },
  });
  try {
    const result = await runtime.runDetailed({ agentId: "worker", inputText: "work", durable: true, runId });
    expect(codes).toContain(fault.code);
    expect(result.stopReason).toBe("completed");
    expect([...executions.values()]).toEqual([1, 1, 1]);
    await expectStoredComplete(scenario.store, runId);
    console.log(
      `${runId}: the store failed with ${fault.code} for 600 ms; 1/1 run completed, no call ran twice`,
    );
  } finally {
    await runtime.close();
  }
}

/**
 * The fault stays past the run's patience: the run fails with `store.unavailable`, its hint says to resume; once
 * the fault is gone it is resumed and completes. Only the call whose result the store could not take runs again.
 */
export async function givesUpThenResumes(scenario: FaultScenario): Promise<void> {
  const { fault, runId, whileFailed } = scenario;
  const { store, codes } = observed(scenario.store);
  const executions: Executions = new Map();
  const runtime = await faultRuntime({
    store,
    executions,
    steps: STEPS,
    toolDelayMs: 5,
    resultBytes: RESULT_BYTES,
    storeOutageMs: 300,
    afterStep: (step) => {
      if (step === 2 && !codes.has("store.unavailable")) fault.apply();
    },
  });
  try {
    const failed = await runtime.runDetailed({ agentId: "worker", inputText: "work", durable: true, runId });
    expect(failed.stopReason).toBe("failed");
    expect(failed.errorDetails?.code).toBe("store.unavailable");
    expect(failed.errorDetails?.hint).toMatch(/resume/);
    expect(((failed.exception as KeelError).cause as KeelError).code).toBe(fault.code);
    codes.add("store.unavailable");
    whileFailed?.();
    fault.clear();
    const resumed = await runtime.resumeRun(runId);
    expect(resumed.stopReason).toBe("completed");
    expect(executions.get(`${runId}/call1`)).toBe(1);
    expect(executions.get(`${runId}/call2`)).toBeLessThanOrEqual(2);
    expect(executions.get(`${runId}/call3`)).toBe(1);
    await expectStoredComplete(scenario.store, runId);
    console.log(
      `${runId}: the store failed with ${fault.code} past store_outage_ms; resumed, 1/1 run completed`,
    );
  } finally {
    await runtime.close();
  }
}

/** Every file of a `jsonl_file` store under `rootDir` holds whole records only: no torn or glued line. */
export function expectWholeRecords(rootDir: string): void {
  for (const folder of ["runs", "sessions"]) {
    for (const name of readdirSync(join(rootDir, folder))) {
      const text = readFileSync(join(rootDir, folder, name), "utf8");
      expect(text.endsWith("\n")).toBe(true);
      for (const line of text.slice(0, -1).split("\n")) expect(() => JSON.parse(line)).not.toThrow();
    }
  }
}
