import type { Readable, Writable } from "node:stream";
import { loadConfig } from "../../config/load-config.js";
import { listenKeelRunner, serveKeelRunner } from "../../host/runner/serve-keel-runner.js";
import { createStdioTransport } from "../../host/transport/stdio-transport.js";
import type { WireProfile } from "../../host/wire/wire-profile.js";
import { Runtime } from "../../runtime/runtime.js";
import type { OutputStream } from "./validate.js";

export interface RunnerCommandOptions {
  configPath: string;
  /** Listen for hosts over WebSocket at this URL; over this process's stdio when absent. */
  ws?: string;
  profile?: WireProfile;
  pluginAuthor?: string;
  pluginName?: string;
  stderr: OutputStream;
  /** Stdio: where the host's messages arrive and ours go; this process's own by default. */
  stdin?: Readable;
  stdout?: Writable;
  /** Aborting it stops serving (Ctrl-C); SIGTERM does too. */
  signal?: AbortSignal;
}

/**
 * `keel runner <config> [--ws URL]`: serve the config's agents as runners of the host ↔ runner protocol — over
 * this process's stdin/stdout (the host spawned it) until the host closes them, or to every host connecting at
 * the WebSocket URL until Ctrl-C or SIGTERM. Stdout carries only protocol messages; notices go to stderr.
 */
export async function runnerCommand(options: RunnerCommandOptions): Promise<number> {
  const loaded = await loadConfig(options.configPath);
  const runtime = new Runtime(loaded.config, { configPath: loaded.path, baseDir: loaded.baseDir });
  await runtime.ready();
  const runnerOptions = {
    runtime,
    agents: loaded.config.agents,
    ...(options.profile ? { profile: options.profile } : {}),
    ...(options.pluginAuthor ? { pluginAuthor: options.pluginAuthor } : {}),
    ...(options.pluginName ? { pluginName: options.pluginName } : {}),
    channel: {
      onProblem: (problem: { kind: string; message: string }) =>
        options.stderr.write(`runner: ${problem.kind}: ${problem.message}\n`),
    },
  };
  const stopped = new Promise<void>((resolve) => {
    process.once("SIGTERM", () => resolve());
    if (options.signal?.aborted) resolve();
    options.signal?.addEventListener("abort", () => resolve(), { once: true });
  });
  try {
    if (options.ws !== undefined) {
      const server = await listenKeelRunner({ ...runnerOptions, url: options.ws });
      options.stderr.write(`keel runner listening on ${server.url}\n`);
      await stopped;
      await server.close();
      return 0;
    }
    const transport = createStdioTransport({
      input: options.stdin ?? process.stdin,
      output: options.stdout ?? process.stdout,
    });
    const { channel } = serveKeelRunner({ ...runnerOptions, transport });
    await Promise.race([channel.whenClosed(), stopped]);
    await channel.close();
    return 0;
  } finally {
    await runtime.close();
  }
}
