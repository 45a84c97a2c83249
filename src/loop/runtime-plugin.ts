import { executeRunLoop } from "./run-loop.js";
import type { RunLoopInput, RunLoopOutcome } from "./run-loop-input.js";

/** The runtime seam: what executes a prepared run. The facade (`Runtime`) does everything around it. */
export interface RuntimePlugin {
  initialize(): Promise<void>;
  validate(): Promise<void>;
  healthCheck(): Promise<boolean>;
  run(input: RunLoopInput): Promise<RunLoopOutcome>;
  /** New runs wait until `resume()`; runs already going continue. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

/** The `default` runtime: Keel's run loop, with pause and resume for new runs. */
export class DefaultRuntime implements RuntimePlugin {
  private paused: { promise: Promise<void>; release: () => void } | null = null;
  private closed = false;

  async initialize(): Promise<void> {}

  async validate(): Promise<void> {}

  async healthCheck(): Promise<boolean> {
    return !this.closed;
  }

  run(input: RunLoopInput): Promise<RunLoopOutcome> {
    if (this.paused !== null) return this.paused.promise.then(() => executeRunLoop(input));
    return executeRunLoop(input);
  }

  async pause(): Promise<void> {
    if (this.paused !== null) return;
    let release!: () => void;
    const promise = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.paused = { promise, release };
  }

  async resume(): Promise<void> {
    const paused = this.paused;
    this.paused = null;
    paused?.release();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.resume();
  }
}
