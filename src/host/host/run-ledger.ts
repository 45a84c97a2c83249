/**
 * The host's record of its runs — the run ledger of the newer protocol text: one record per run (who ran it on
 * what, its status and why, when it started and ended, its usage) and the results it produced, in order. The
 * host writes it as runs go; a runner reads its own runs' records through the proxy (`run_get`, `run_list`,
 * `run_events_page`). Kept behind an interface so a deployment can keep it where it keeps the rest.
 */
import { nowSeconds } from "../wire/now-seconds.js";

export const RUN_STATUSES = ["created", "running", "completed", "failed", "cancelled", "timeout"] as const;
export type RunLedgerStatus = (typeof RUN_STATUSES)[number];
/** The statuses a run ends in. */
export const TERMINAL_RUN_STATUSES: ReadonlySet<string> = new Set([
  "completed",
  "failed",
  "cancelled",
  "timeout",
]);

/** One run, in the shape of the protocol's `AgentRun`. Times are Unix epoch seconds. */
export interface RunLedgerRecord {
  /** The ledger's own order: larger is newer; a list's cursor. */
  id: number;
  run_id: string;
  event_id: string | null;
  binding_id: string | null;
  runner_id: string | null;
  conversation_id: string | null;
  thread_id: string | null;
  workspace_id: string | null;
  bot_id: string | null;
  status: RunLedgerStatus;
  status_reason: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  updated_at: number;
  deadline_at: number | null;
  cancel_requested_at: number | null;
  usage: Record<string, unknown> | null;
  metadata: Record<string, unknown>;
}

/** One result of a run, in the shape of the protocol's `AgentRunEvent`; `sequence` counts from 1 per run. */
export interface RunLedgerEvent {
  run_id: string;
  sequence: number;
  type: string;
  data: Record<string, unknown>;
  usage: Record<string, unknown> | null;
  created_at: number;
  /** `stream` for a result the run's stream carried, `append` for one the runner appended through the proxy. */
  source: "stream" | "append";
  metadata: Record<string, unknown>;
}

export interface RunLedgerQuery {
  runnerId: string;
  bindingId: string;
  /** Runs of these conversations only. */
  conversationIds: ReadonlySet<string>;
  statuses?: readonly string[] | null;
  /** Runs older than this record id. */
  beforeId?: number | null;
  limit: number;
}

/** A page of one run's results: after or before a sequence, oldest first (`forward`) or newest first. */
export interface RunLedgerEventsQuery {
  afterSequence?: number | null;
  beforeSequence?: number | null;
  limit: number;
  direction: "forward" | "backward";
}

export interface RunLedger {
  create(record: Omit<RunLedgerRecord, "id">): Promise<RunLedgerRecord>;
  /** Changes a run's record; undefined when the ledger has no such run. */
  update(
    runId: string,
    patch: Partial<Omit<RunLedgerRecord, "id" | "run_id">>,
  ): Promise<RunLedgerRecord | undefined>;
  get(runId: string): Promise<RunLedgerRecord | undefined>;
  /** Newest first. */
  list(query: RunLedgerQuery): Promise<{ items: RunLedgerRecord[]; hasMore: boolean; total: number }>;
  appendEvent(event: Omit<RunLedgerEvent, "sequence">): Promise<RunLedgerEvent>;
  events(
    runId: string,
    options: RunLedgerEventsQuery,
  ): Promise<{ items: RunLedgerEvent[]; hasMore: boolean; total: number }>;
}

/**
 * The ledger in memory, bounded: the newest `maxRuns` runs (10,000) with at most `maxEventsPerRun` results each
 * (1,000; later ones are not kept, and the record says how many were left out). A process's own record, lost
 * when it stops.
 */
export class InMemoryRunLedger implements RunLedger {
  private readonly runs = new Map<
    string,
    { record: RunLedgerRecord; events: RunLedgerEvent[]; dropped: number }
  >();
  private nextId = 1;
  private readonly maxRuns: number;
  private readonly maxEventsPerRun: number;

  constructor(options: { maxRuns?: number; maxEventsPerRun?: number } = {}) {
    this.maxRuns = options.maxRuns ?? 10_000;
    this.maxEventsPerRun = options.maxEventsPerRun ?? 1_000;
  }

  async create(record: Omit<RunLedgerRecord, "id">): Promise<RunLedgerRecord> {
    const stored = { ...record, id: this.nextId++ };
    this.runs.set(record.run_id, { record: stored, events: [], dropped: 0 });
    // Maps keep insertion order: the first entries are the oldest runs.
    for (const runId of this.runs.keys()) {
      if (this.runs.size <= this.maxRuns) break;
      this.runs.delete(runId);
    }
    return { ...stored };
  }

  async update(
    runId: string,
    patch: Partial<Omit<RunLedgerRecord, "id" | "run_id">>,
  ): Promise<RunLedgerRecord | undefined> {
    const entry = this.runs.get(runId);
    if (!entry) return undefined;
    Object.assign(entry.record, patch, { updated_at: patch.updated_at ?? nowSeconds() });
    return { ...entry.record };
  }

  async get(runId: string): Promise<RunLedgerRecord | undefined> {
    const record = this.runs.get(runId)?.record;
    return record ? { ...record } : undefined;
  }

  async list(query: RunLedgerQuery) {
    const statuses = query.statuses && query.statuses.length > 0 ? new Set(query.statuses) : null;
    const matching = [...this.runs.values()]
      .map((entry) => entry.record)
      .filter(
        (record) =>
          record.runner_id === query.runnerId &&
          record.binding_id === query.bindingId &&
          record.conversation_id !== null &&
          query.conversationIds.has(record.conversation_id) &&
          (statuses === null || statuses.has(record.status)),
      )
      .reverse();
    const page = matching.filter((record) => query.beforeId == null || record.id < query.beforeId);
    return {
      items: page.slice(0, query.limit).map((record) => ({ ...record })),
      hasMore: page.length > query.limit,
      total: matching.length,
    };
  }

  async appendEvent(event: Omit<RunLedgerEvent, "sequence">): Promise<RunLedgerEvent> {
    const entry = this.runs.get(event.run_id);
    const sequence = (entry?.events.length ?? 0) + (entry?.dropped ?? 0) + 1;
    const stored = { ...event, sequence };
    if (entry && entry.events.length < this.maxEventsPerRun) entry.events.push(stored);
    else if (entry) {
      entry.dropped++;
      entry.record.metadata = { ...entry.record.metadata, events_not_kept: entry.dropped };
    }
    return stored;
  }

  async events(runId: string, options: RunLedgerEventsQuery) {
    const all = this.runs.get(runId)?.events ?? [];
    let page = all.filter(
      (event) =>
        (options.afterSequence == null || event.sequence > options.afterSequence) &&
        (options.beforeSequence == null || event.sequence < options.beforeSequence),
    );
    if (options.direction === "backward") page = page.reverse();
    return { items: page.slice(0, options.limit), hasMore: page.length > options.limit, total: all.length };
  }
}
