// What the parts of the session-store conformance suite share: the store under test and small builders.
import type { RunRecord } from "../contracts/run-types.js";
import type { SessionManager } from "../sessions/session-manager.js";

/** The store of the running test (a fresh one per test) and a per-test unique id maker. */
export interface SessionStoreSuite {
  readonly manager: SessionManager;
  id(label: string): string;
}

export interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

export function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** Let pending promise callbacks and timers run, so a waiter that could wrongly proceed would. */
export function settle(): Promise<void> {
  return new Promise((done) => setTimeout(done, 5));
}

export function checkpoint(checkpointId: string, state: Record<string, unknown> = {}, transcriptLength = 0) {
  return { checkpointId, state, transcriptLength, artifactCount: 0 };
}

export function runRecord(overrides: Partial<RunRecord> & { runId: string; sessionId: string }): RunRecord {
  const now = new Date().toISOString();
  return {
    agentId: "agent",
    status: "running",
    pendingToolCalls: [],
    createdAt: now,
    updatedAt: now,
    lastSequence: 0,
    ...overrides,
  };
}
