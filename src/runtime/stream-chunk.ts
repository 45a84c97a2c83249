import type { RunResult } from "../contracts/run-types.js";
import type { RuntimeEvent } from "../contracts/runtime-event.js";
import { EVENT_SCHEMAS, type EventPayloads } from "../events/event-schemas.js";

/** The chunk kinds of `stream()`; every other event name in `EVENT_SCHEMAS` also appears as itself. */
export const RunStreamChunkKind = {
  RUN_STARTED: "run.started",
  STEP_STARTED: "step.started",
  LLM_DELTA: "llm.delta",
  LLM_FINISHED: "llm.finished",
  TOOL_STARTED: "tool.started",
  TOOL_DELTA: "tool.delta",
  TOOL_FINISHED: "tool.finished",
  TOOL_SUSPENDED: "tool.suspended",
  TOOL_DECISION: "tool.decision",
  ARTIFACT: "artifact",
  VALIDATION_RETRY: "validation.retry",
  STEP_FINISHED: "step.finished",
  RUN_FINISHED: "run.finished",
} as const;

/**
 * Each stream kind's payload, with `T` the run's output type. Every declared event is its own kind, but a finished
 * tool call is one kind, `tool.finished`: a `tool.completed` payload, or a `tool.failed` one with `ok: false`.
 * A payload may carry keys beyond its declared ones; they read as `unknown`.
 */
export type StreamPayloads<T = unknown> = {
  [K in Exclude<EventName, "tool.completed" | "tool.failed" | "run.finished">]: Open<EventPayloads[K]>;
} & {
  "tool.finished":
    | Open<EventPayloads["tool.completed"] & { ok?: undefined }>
    | Open<EventPayloads["tool.failed"] & { ok: false }>;
  "run.finished": Open<{ result: RunResult<T> }>;
};

type EventName = keyof EventPayloads;
type Open<Payload> = Payload & { [key: string]: unknown };

/** The kind of a chunk of `stream()` or `attach()`: a declared event's name, or `tool.finished`. */
export type RunStreamChunkKind = keyof StreamPayloads;

/** What every chunk carries besides its kind and payload. */
interface ChunkHeader {
  readonly runId: string;
  readonly sessionId: string;
  readonly agentId: string;
  readonly sequence: number;
  readonly timestampMs: number;
}

type KnownChunks<T> = {
  [K in RunStreamChunkKind]: ChunkHeader & {
    readonly kind: K;
    readonly payload: StreamPayloads<T>[K];
  } & (K extends "run.finished"
      ? { /** The run's result, as in the payload. */ readonly result: RunResult<T> }
      : { readonly result?: undefined });
};

/** The chunk of one kind: `StreamChunkOf<"llm.delta">` has `payload.text: string`. */
export type StreamChunkOf<K extends RunStreamChunkKind, T = unknown> = KnownChunks<T>[K];

/**
 * The chunk of an event Keel does not declare: a pattern's own, or one a tool or hook emitted with
 * `ctx.eventBus.emit("my.event", …)`. `asCustomChunk(chunk)` gives it this type.
 */
export interface CustomChunk extends ChunkHeader {
  readonly kind: string;
  readonly payload: Record<string, unknown>;
  readonly result?: undefined;
}

/**
 * One chunk of a run's stream: an event of the run's log, with its sequence; `T` is the run's output type. A
 * union on `kind`, so `chunk.kind === "llm.delta"` narrows `chunk.payload.text` to `string` and a misspelt kind
 * does not compile. Custom events are in the union with `kind: never`, which keeps them out of every comparison
 * with a declared name; read them with `asCustomChunk(chunk)`.
 */
export type RunStreamChunk<T = unknown> =
  | KnownChunks<T>[RunStreamChunkKind]
  | (Omit<CustomChunk, "kind"> & { readonly kind: never });

/** What a stream yields: every chunk, or with `kinds` only those kinds (and `run.finished`). */
export type RunStreamChunks<T, K extends RunStreamChunkKind> = [RunStreamChunkKind] extends [K]
  ? RunStreamChunk<T>
  : StreamChunkOf<K | "run.finished", T>;

/**
 * Whether `chunk` is of `kind`, narrowing it as `chunk.kind === kind` does; for code that holds the kind in a
 * variable. A kind Keel does not declare does not compile; use `asCustomChunk` for those.
 */
export function isChunk<K extends RunStreamChunkKind, T>(
  chunk: RunStreamChunk<T>,
  kind: K,
): chunk is StreamChunkOf<K, T> {
  return chunk.kind === kind;
}

let declaredKinds: ReadonlySet<string> | undefined;

/** `chunk` typed as a custom chunk when its kind is not a declared one; `undefined` for a declared kind. */
export function asCustomChunk<T>(chunk: RunStreamChunk<T>): CustomChunk | undefined {
  declaredKinds ??= new Set(Object.keys(EVENT_SCHEMAS).map(chunkKindOf));
  return declaredKinds.has(chunk.kind) ? undefined : (chunk as unknown as CustomChunk);
}

/**
 * The stream's view of an event: `tool.completed` and `tool.failed` show as `tool.finished`; every
 * other event is its own chunk, the same object.
 */
export function toStreamChunk(event: RuntimeEvent): RunStreamChunk {
  if (event.kind === "tool.completed" || event.kind === "tool.failed") {
    const payload: Record<string, unknown> = { ...event.payload };
    if (event.kind === "tool.failed") payload.ok = false;
    const chunk = {
      kind: RunStreamChunkKind.TOOL_FINISHED,
      runId: event.runId,
      sessionId: event.sessionId,
      agentId: event.agentId,
      sequence: event.sequence,
      timestampMs: event.timestampMs,
      payload,
    };
    return chunk as unknown as RunStreamChunk;
  }
  // The event's payload is the one its kind declares: emitters are checked for it, not here (the hot path).
  return event as unknown as RunStreamChunk;
}

/** Whether a chunk of this kind passes a `kinds` filter (which names stream kinds). */
export function chunkKindOf(eventKind: string): string {
  return eventKind === "tool.completed" || eventKind === "tool.failed"
    ? RunStreamChunkKind.TOOL_FINISHED
    : eventKind;
}
