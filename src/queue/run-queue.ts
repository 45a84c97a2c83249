import type { RuntimeEvent } from "../contracts/runtime-event.js";
import type { ToolDecision } from "../contracts/tool-decision.js";

/** A run handed to the queue: a new run to start, or decisions that set a waiting run going again. */
export interface QueuedRun {
  kind: "start" | "decide";
  runId: string;
  agentId: string;
  sessionId: string;
  inputText: string;
  /** Checkpoint as it goes (always, for a queue whose runs other processes execute). */
  durable?: boolean | undefined;
  decisions?: ToolDecision[];
}

/** What a worker learns of the delivery it is handling. */
export interface QueuedRunDelivery {
  /** How many times a worker has taken this run, this time included (a takeover after a crash counts). */
  readonly attempt: number;
  /** After this many takes the run is parked as failed instead of tried again. */
  readonly maxAttempts: number;
  /** Why the previous take ended, when the queue knows (an error, or a worker that stopped renewing its lease). */
  readonly previousError?: string;
}

/** Takes one queued run and resolves once it has finished, suspended, or been parked. */
export type QueuedRunHandler = (run: QueuedRun, delivery: QueuedRunDelivery) => Promise<void>;

/** A process taking runs off the queue. */
export interface RunQueueConsumer {
  /**
   * Take no more runs; wait up to `graceMs` for the runs in flight, then hand the unfinished ones back to the
   * queue (another worker resumes them from their latest checkpoint). Resolves with how many were handed back.
   */
  stop(options?: { graceMs?: number }): Promise<{ handedBack: number }>;
}

/**
 * Live events of runs across processes: a worker publishes each event of the runs it executes, and a server
 * node reads them for its stream clients. The store's event log stays the record; this is the live tail.
 */
export interface RunEventFanout {
  publish(event: RuntimeEvent): void;
  /** A run's events on the live tail after position `after` ("0": from its first), oldest first. */
  read(runId: string, after: string): Promise<{ position: string; event: RuntimeEvent }[]>;
  /** Call `onChange` whenever the run's live tail may have grown; returns the function that stops it. */
  watch(runId: string, onChange: () => void): () => void;
}

/**
 * Where runs wait for a process to execute them. `in_process` executes them here at once (what a runtime
 * without a queue does); `bullmq` keeps them in Redis for `keel worker` processes, with a lease per run.
 */
export interface RunQueue {
  readonly type: string;
  /** True when other processes execute what is enqueued (a server then does not run agents itself). */
  readonly distributed: boolean;
  /** Present when the queue carries run events between processes. */
  readonly fanout?: RunEventFanout;
  enqueue(run: QueuedRun): Promise<void>;
  /**
   * Start taking runs in this process, at most `concurrency` at a time; `onCancel` hears cancellations asked for
   * through `cancel` in any process.
   */
  consume(
    handler: QueuedRunHandler,
    options: { concurrency: number; onCancel?: (runId: string, reason: string | undefined) => void },
  ): RunQueueConsumer;
  /**
   * Ask whichever process executes the run to cancel it, and a run not yet taken to start cancelled. Present when
   * other processes execute the queue's runs.
   */
  cancel?(runId: string, reason?: string): Promise<void>;
  /** The reason a run was cancelled through `cancel` before a worker took it; undefined when it was not. */
  cancelledBefore?(runId: string): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Whether a value is a run queue (the config may give one as an object). */
export function isRunQueue(value: unknown): value is RunQueue {
  const queue = value as Partial<RunQueue> | null;
  return (
    typeof queue === "object" &&
    queue !== null &&
    typeof queue.enqueue === "function" &&
    typeof queue.consume === "function" &&
    typeof queue.close === "function"
  );
}
