// The whole session-store contract every store must meet, composed of its parts' suites.
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe } from "vitest";
import type { SessionManager } from "../sessions/session-manager.js";
import { describeCheckpointStoreCases } from "./checkpoint-store-conformance.js";
import { describeRunStoreCases } from "./run-store-conformance.js";
import { describeSessionStoreCases } from "./session-store-conformance.js";
import type { SessionStoreSuite } from "./session-store-suite.js";

/** Options of {@link describeSessionManagerConformance}. */
export interface SessionManagerConformanceOptions {
  /** Called after each test, after `close()`, to remove what the backend stored (files, tables). */
  cleanup?: (manager: SessionManager) => Promise<void> | void;
}

/**
 * Register the vitest suite every `SessionManager` must pass. `factory` makes a fresh manager per test;
 * session and run ids are unique per test, so a backend that shares storage between managers still passes.
 *
 * @example
 * describeSessionManagerConformance("sqlite", () => new SqliteSessionManager({ dbPath: ":memory:" }));
 */
export function describeSessionManagerConformance(
  name: string,
  factory: () => Promise<SessionManager> | SessionManager,
  options: SessionManagerConformanceOptions = {},
): void {
  describe(`SessionManager conformance: ${name}`, () => {
    let current: SessionManager | undefined;
    const suite: SessionStoreSuite = {
      get manager(): SessionManager {
        if (current === undefined) throw new Error("the store is made in beforeEach");
        return current;
      },
      id: (label) => `${label}-${randomUUID()}`,
    };

    beforeEach(async () => {
      current = await factory();
    });

    afterEach(async () => {
      const manager = suite.manager;
      await manager.close();
      await options.cleanup?.(manager);
    });

    describeSessionStoreCases(suite);
    describeCheckpointStoreCases(suite);
    describeRunStoreCases(suite);
  });
}
