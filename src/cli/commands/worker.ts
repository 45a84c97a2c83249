import { Runtime } from "../../runtime/runtime.js";
import type { OutputStream } from "./validate.js";

export interface WorkerCommandOptions {
  configPath: string;
  concurrency: number;
  /** On SIGTERM, how long runs in flight may go on before they are handed back to the queue. */
  graceMs: number;
  stdout: OutputStream;
  stderr: OutputStream;
  /** Aborting it stops the worker as SIGTERM does (main.ts wires Ctrl-C to it). */
  signal?: AbortSignal;
  /** Ends the process with runs still in it (default `process.exit`): see below. */
  exit?: (code: number) => void;
}

/**
 * `keel worker <config>`: take runs off the config's queue and execute them durably on its store, until SIGTERM
 * or SIGINT. Then it takes no more, lets the runs in flight go on for the grace period, and hands the rest back
 * to the queue. A run handed back must not be ended here (closing the runtime would cancel it): the process
 * exits with it in flight, which releases its session, and the next worker resumes it from its latest checkpoint.
 */
export async function workerCommand(options: WorkerCommandOptions): Promise<number> {
  const runtime = await Runtime.fromConfig(options.configPath);
  let handedBack = 0;
  try {
    if (!runtime.queue.distributed) {
      options.stderr.write(
        `The config's queue is "${runtime.queue.type}": runs execute where they are started, not in workers. ` +
          'Set "queue": {"type": "bullmq"} in the config\n',
      );
      return 1;
    }
    const consumer = runtime.work({ concurrency: options.concurrency });
    options.stdout.write(
      `Keel worker ${process.pid} is taking runs (queue ${runtime.queue.type}, concurrency ${options.concurrency})\n`,
    );
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGTERM", stop);
      if (options.signal?.aborted) resolve();
      options.signal?.addEventListener("abort", stop, { once: true });
    });
    ({ handedBack } = await consumer.stop({ graceMs: options.graceMs }));
    options.stdout.write(
      `Keel worker ${process.pid} stopped; ${handedBack} run(s) handed back to the queue\n`,
    );
    return 0;
  } finally {
    if (handedBack > 0) (options.exit ?? process.exit)(0);
    else await runtime.close();
  }
}
