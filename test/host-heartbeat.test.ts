import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ActionChannel, type ChannelProblem, createInMemoryTransportPair } from "../src/host/index.js";
import { ChannelClosedError } from "../src/host/transport/channel-errors.js";
import { HeartbeatLostError, startHeartbeat } from "../src/host/transport/channel-heartbeat.js";
import { KEEL_MAIN, useBuiltCli } from "./support/cli-process.js";
import { binding, collect, createTestHost, HOST_RUNNER_CONFIG, message } from "./support/host-scenario.js";

/**
 * The heartbeat: the side that pings declares the channel lost after N pongs missed in a row, and a lost channel
 * fails its calls in flight at once. Intervals are small and every test waits for the event, never for a time.
 */

useBuiltCli();

const never = () => new Promise<never>(() => {});
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function pair(options: { missLimit?: number } = {}) {
  const [left, right] = createInMemoryTransportPair();
  const problems: ChannelProblem[] = [];
  let lostWith: Error | undefined;
  const pinger = new ActionChannel({
    transport: left,
    onProblem: (problem) => void problems.push(problem),
    onClose: (error) => {
      lostWith = error;
    },
  });
  const peer = new ActionChannel({ transport: right });
  cleanups.push(() => pinger.close());
  let pings = 0;
  let answering = true;
  peer.handle("__ping", async () => {
    pings++;
    if (!answering) await never();
    return {};
  });
  return {
    pinger,
    peer,
    problems,
    pings: () => pings,
    stopAnswering: () => {
      answering = false;
    },
    lostWith: () => lostWith,
    start: () => pinger.startHeartbeat({ intervalMs: 10, missLimit: options.missLimit ?? 2 }),
  };
}

describe("the heartbeat over the in-memory pair", () => {
  it("keeps a channel whose peer answers, ping after ping", async () => {
    const test = pair({ missLimit: 50 });
    test.start();
    await expect.poll(() => test.pings()).toBeGreaterThanOrEqual(5);
    expect(test.pinger.closed).toBe(false);
    expect(test.problems).toEqual([]);
  });

  it("declares the channel lost after the pongs stop, failing a call in flight at once", async () => {
    const test = pair({ missLimit: 3 });
    test.peer.handle("slow", () => never());
    const inFlight = test.pinger.call("slow", {}, { timeoutMs: 600_000 });
    test.start();
    await expect.poll(() => test.pings()).toBeGreaterThanOrEqual(1);
    test.stopAnswering();
    const error = await inFlight.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ChannelClosedError);
    expect((error as ChannelClosedError).cause).toBeInstanceOf(HeartbeatLostError);
    expect(test.lostWith()).toBeInstanceOf(HeartbeatLostError);
    expect((test.lostWith() as HeartbeatLostError).missed).toBe(3);
    expect(test.pinger.closed).toBe(true);
    // The peer sees the channel close too.
    await test.peer.whenClosed();
  });

  it("counts an error answer as alive, and drops a late pong quietly", async () => {
    const test = pair({ missLimit: 1_000 });
    let late = 0;
    test.peer.handle("__ping", async () => {
      late++;
      if (late === 1) throw new Error("busy");
      // Answered after its ping timed out: the pinger must not report it as an answer to no call.
      if (late === 2) await new Promise((resolve) => setTimeout(resolve, 50));
      return {};
    });
    test.start();
    await expect.poll(() => late).toBeGreaterThanOrEqual(8);
    expect(test.pinger.closed).toBe(false);
    expect(test.problems).toEqual([]);
  });

  it("refuses a heartbeat that could never beat", () => {
    const channel = { ping: async () => true, lose: async () => {}, closed: false };
    expect(() => startHeartbeat(channel, { intervalMs: 0 })).toThrow(/intervalMs/);
    expect(() => startHeartbeat(channel, { intervalMs: 10, missLimit: 0 })).toThrow(/missLimit/);
  });
});

describe("the heartbeat with a runner process that stops answering", () => {
  it("fails the run in flight with runner.channel_lost once the stopped process misses its pongs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "keel-heartbeat-"));
    const configPath = join(dir, "runner.json");
    writeFileSync(configPath, JSON.stringify(HOST_RUNNER_CONFIG));
    const { host, warnings } = createTestHost({ heartbeat: { intervalMs: 200, missLimit: 3 } });
    const runtime = await host.attachProcess(process.execPath, [KEEL_MAIN, "runner", configPath]);
    const pid = runtime.pid!;
    cleanups.push(async () => {
      // The stopped child first gets going again, so the kill is not left pending.
      try {
        process.kill(pid, "SIGCONT");
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
      await host.close();
    });
    const running = collect(host.run(message("hang on"), binding()));
    await expect.poll(() => host.activeRuns().length).toBe(1);
    process.kill(pid, "SIGSTOP");
    const results = await running;
    expect(results.at(-1)).toMatchObject({
      type: "run.failed",
      data: { code: "runner.channel_lost", retryable: true },
    });
    expect(String((results.at(-1)!.data as { error?: unknown }).error)).toMatch(/answered none of 3 pings/);
    expect(host.activeRuns()).toEqual([]);
    expect(host.listRunners()).toEqual([]);
    expect(warnings.filter((warning) => warning.includes("unknown_response"))).toEqual([]);
  });
});
