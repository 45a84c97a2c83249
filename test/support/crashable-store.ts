import { InMemorySessionManager } from "../../src/sessions/in-memory-session-manager.js";
import type { SessionManager, SessionScope } from "../../src/sessions/session-manager.js";

/**
 * One process's view of a store that several simulated processes share. `crash()` stands for the process dying:
 * from then on nothing it does reaches the store, and the session it held is free for another process. The
 * child-process tests (test/crash-resume.test.ts) do the same with SIGKILL; this is the in-process form.
 */
export class ProcessView implements SessionManager {
  private crashed = false;
  /** Checkpoint writes that reached the store. */
  checkpointWrites = 0;
  /** Crash as soon as the `n`th checkpoint is stored. */
  crashAfterCheckpoint: number | null = null;

  constructor(readonly shared: InMemorySessionManager) {}

  crash(): void {
    this.crashed = true;
  }

  /** Crash here and never return: the process died at this point. */
  die(): Promise<never> {
    this.crash();
    return new Promise(() => {});
  }

  get isCrashed(): boolean {
    return this.crashed;
  }

  // A process that died holds nothing: each view has its own scope lock, so the next process is not blocked
  // by a scope the dead one never left.
  private readonly own = new InMemorySessionManager();

  session<T>(sessionId: string, fn: (scope: SessionScope) => Promise<T>): Promise<T> {
    return this.own.session(sessionId, async (scope) => {
      const state = await this.shared.getState(sessionId);
      Object.assign(scope.state, state);
      const result = await fn(scope);
      if (!this.crashed) await this.shared.setState(sessionId, scope.state);
      return result;
    });
  }

  private write<T>(action: () => Promise<T>): Promise<T | undefined> {
    return this.crashed ? Promise.resolve(undefined) : action();
  }

  getState = (id: string) => this.shared.getState(id);
  setState = async (id: string, state: Record<string, unknown>) => {
    await this.write(() => this.shared.setState(id, state));
  };
  deleteSession = async (id: string) => {
    await this.write(() => this.shared.deleteSession(id));
  };
  listSessions = () => this.shared.listSessions();
  appendMessage: SessionManager["appendMessage"] = async (id, message) => {
    await this.write(() => this.shared.appendMessage(id, message));
  };
  appendMessages: SessionManager["appendMessages"] = async (id, messages) => {
    await this.write(() => this.shared.appendMessages(id, messages));
  };
  loadMessages = (id: string) => this.shared.loadMessages(id);
  saveArtifact: SessionManager["saveArtifact"] = async (id, artifact) => {
    await this.write(() => this.shared.saveArtifact(id, artifact));
  };
  listArtifacts = (id: string) => this.shared.listArtifacts(id);
  createCheckpoint: SessionManager["createCheckpoint"] = async (id, checkpoint) => {
    if (this.crashed) return new Promise(() => {});
    // Stored as JSON, like every persistent store: nothing the run does later can reach it.
    const stored = await this.shared.createCheckpoint(id, JSON.parse(JSON.stringify(checkpoint)));
    this.checkpointWrites++;
    if (this.crashAfterCheckpoint !== this.checkpointWrites) return stored;
    // Killed right after the write: the run never hears back.
    this.crash();
    return new Promise(() => {});
  };
  loadCheckpoint = (id: string, checkpointId: string) => this.shared.loadCheckpoint(id, checkpointId);
  listCheckpoints = (id: string) => this.shared.listCheckpoints(id);
  saveRun: SessionManager["saveRun"] = async (record) => {
    await this.write(() => this.shared.saveRun(record));
  };
  getRun = (runId: string) => this.shared.getRun(runId);
  listRuns: SessionManager["listRuns"] = (filter) => this.shared.listRuns(filter);
  appendEvents: SessionManager["appendEvents"] = async (runId, events) => {
    await this.write(() => this.shared.appendEvents(runId, events));
  };
  loadEvents: SessionManager["loadEvents"] = (runId, options) => this.shared.loadEvents(runId, options);
  saveRunMessages: SessionManager["saveRunMessages"] = async (runId, from, messages) => {
    await this.write(() => this.shared.saveRunMessages(runId, from, JSON.parse(JSON.stringify(messages))));
  };
  loadRunMessages: SessionManager["loadRunMessages"] = (runId, options) =>
    this.shared.loadRunMessages(runId, options);
  async close(): Promise<void> {}
}
