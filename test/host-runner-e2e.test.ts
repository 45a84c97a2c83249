import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { KEEL_MAIN, useBuiltCli } from "./support/cli-process.js";
import { describeHostRunnerScenarios } from "./support/host-runner-scenarios.js";
import { binding, collect, createTestHost, HOST_RUNNER_CONFIG, message } from "./support/host-scenario.js";

/**
 * Keel as a host and Keel as a runner in two processes: the built `keel runner` serves the agent over its
 * stdio, or over WebSocket, and the host drives the same runs as in one process.
 */

useBuiltCli();

const dir = mkdtempSync(join(tmpdir(), "keel-host-e2e-"));
const configPath = join(dir, "runner.json");
writeFileSync(configPath, JSON.stringify(HOST_RUNNER_CONFIG));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill();
});

describeHostRunnerScenarios("another process over stdio", (host) =>
  host.attachProcess(process.execPath, [KEEL_MAIN, "runner", configPath]),
);

describeHostRunnerScenarios("another process over WebSocket", async (host) => {
  const child = spawn(
    process.execPath,
    [KEEL_MAIN, "runner", configPath, "--ws", "ws://127.0.0.1:0/control/ws"],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  children.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      text += chunk;
      const match = /listening on (ws:\/\/\S+)/.exec(text);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`keel runner exited ${code}: ${text}`)));
  });
  const runtime = await host.attachWebSocket(url);
  const close = runtime.close;
  runtime.close = async () => {
    await close();
    child.kill();
  };
  return runtime;
});

describe("a runner process that dies", () => {
  it("fails its run in flight at once, and the host stays up", async () => {
    const { host } = createTestHost();
    const runtime = await host.attachProcess(process.execPath, [KEEL_MAIN, "runner", configPath]);
    const running = collect(host.run(message("hang on"), binding()));
    await expect.poll(() => host.activeRuns().length).toBe(1);
    process.kill(runtime.pid!, "SIGKILL");
    const results = await running;
    expect(results.at(-1)).toMatchObject({
      type: "run.failed",
      data: { code: "runner.channel_lost", retryable: true },
    });
    expect(host.activeRuns()).toEqual([]);
    const after = await collect(host.run(message("hello"), binding()));
    expect(after.at(-1)).toMatchObject({ type: "run.failed", data: { code: "runner.not_found" } });
    await host.close();
  });
});
