import { Runtime } from "../../runtime/runtime.js";
import { serveKeel } from "../../server/serve-keel.js";
import type { OutputStream } from "./validate.js";
import { watchConfig } from "./watch-config.js";

export interface ServeCommandOptions {
  configPath: string;
  port: number;
  host: string;
  token: string | undefined;
  resumeInterrupted: boolean;
  /** Serve the web console at the root. */
  console: boolean;
  /** Reload the agents whenever the config file changes (`keel dev`). */
  watch?: boolean;
  stdout: OutputStream;
  stderr: OutputStream;
  /** Aborting it stops the server (main.ts wires Ctrl-C to it; the command adds SIGTERM itself). */
  signal?: AbortSignal;
}

/**
 * `keel serve <config>`: serve the config's agents over HTTP until SIGINT or SIGTERM, then stop listening, end
 * open streams and close the runtime. Prints the URL it listens on. `keel dev` is the same with `watch`.
 */
export async function serveCommand(options: ServeCommandOptions): Promise<number> {
  const runtime = await Runtime.fromConfig(options.configPath);
  try {
    if (options.token === undefined)
      options.stderr.write(
        "Warning: no token (--token or KEEL_SERVER_TOKEN): anyone on this machine can run the agents; serving on loopback only\n",
      );
    const server = await serveKeel(runtime, {
      port: options.port,
      host: options.host,
      resumeInterrupted: options.resumeInterrupted,
      console: options.console,
      onNotice: (message) => options.stderr.write(`${message}\n`),
      ...(options.token === undefined ? {} : { token: options.token }),
    });
    options.stdout.write(`Keel is serving ${runtime.listAgents().length} agent(s) at ${server.url}\n`);
    if (options.console) options.stdout.write(`Console: ${server.url}/\n`);
    const watcher =
      options.watch === true ? await watchConfig(runtime, options.configPath, options) : undefined;
    if (watcher !== undefined)
      options.stdout.write(
        `Watching ${options.configPath} and the files it references: a change reloads the agents\n`,
      );
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGTERM", stop);
      if (options.signal?.aborted) resolve();
      options.signal?.addEventListener("abort", stop, { once: true });
    });
    await watcher?.close();
    await server.close();
    return 0;
  } finally {
    await runtime.close();
  }
}
