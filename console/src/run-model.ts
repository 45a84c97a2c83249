import type { Chunk, RunResult, SuspendedCall } from "./wire-types.js";

export type SpanKind = "step" | "model" | "tool" | "suspension" | "decision" | "error" | "checkpoint";
export type SpanState = "active" | "ok" | "error" | "waiting" | "denied";

/** One row of the timeline: a bar from `start` to `end` (null while it goes on), or a mark when `instant`. */
export interface Span {
  key: string;
  kind: SpanKind;
  label: string;
  /** A short fact shown beside the bar: tokens, a duration, a rule. */
  note?: string;
  start: number;
  end: number | null;
  instant?: boolean;
  state: SpanState;
  depth: number;
  /** What the row shows when opened: arguments, results, hints. */
  detail: Record<string, unknown>;
  sequence: number;
}

export interface CheckpointMark {
  checkpointId: string;
  step: number;
  phase?: string;
  transcriptLength?: number;
  timestampMs: number;
  sequence: number;
}

export type RunPhase = "connecting" | "running" | "waiting" | "finished";

/** A run as the page knows it: every event once, in order, and what they add up to. */
export interface RunModel {
  runId: string;
  agentId?: string;
  sessionId?: string;
  events: Chunk[];
  lastSequence: number;
  /** Events that came again (after a re-attach) and were dropped. */
  duplicates: number;
  spans: Span[];
  /** The answer text, one entry per step that wrote any. */
  answer: string[];
  pending: SuspendedCall[];
  result: RunResult | null;
  phase: RunPhase;
  startMs: number | null;
  endMs: number | null;
  checkpoints: CheckpointMark[];
  costUsd: number | null;
  tokens: number;
  open: Map<string, Span>;
}

export function createRunModel(runId: string): RunModel {
  return {
    runId,
    events: [],
    lastSequence: 0,
    duplicates: 0,
    spans: [],
    answer: [],
    pending: [],
    result: null,
    phase: "connecting",
    startMs: null,
    endMs: null,
    checkpoints: [],
    costUsd: null,
    tokens: 0,
    open: new Map(),
  };
}

const str = (value: unknown) => (typeof value === "string" ? value : "");
const num = (value: unknown) => (typeof value === "number" ? value : undefined);

/** Fold one chunk into the model; false when it was already held (a re-attach sent it again). */
export function applyChunk(model: RunModel, chunk: Chunk): boolean {
  if (chunk.sequence <= model.lastSequence) {
    model.duplicates += 1;
    return false;
  }
  model.lastSequence = chunk.sequence;
  model.events.push(chunk);
  model.agentId ??= chunk.agentId;
  model.sessionId ??= chunk.sessionId;
  const at = chunk.timestampMs;
  const payload = chunk.payload ?? {};
  // `key` names what a later event closes (a step, a call); the row's own key adds the sequence, as a resumed
  // run starts a step of the same number again.
  const span = (fields: Omit<Span, "sequence" | "end" | "state" | "depth" | "detail"> & Partial<Span>) => {
    const made: Span = {
      end: null,
      state: "active",
      depth: 1,
      detail: {},
      sequence: chunk.sequence,
      ...fields,
    };
    if (made.instant) made.end = made.start;
    else model.open.set(made.key, made);
    made.key = `${made.key}@${chunk.sequence}`;
    model.spans.push(made);
    return made;
  };
  const close = (key: string, state: SpanState, extra: Partial<Span> = {}) => {
    const open = model.open.get(key);
    if (open === undefined) return undefined;
    model.open.delete(key);
    Object.assign(open, { end: at, state, ...extra, detail: { ...open.detail, ...extra.detail } });
    return open;
  };
  switch (chunk.kind) {
    case "run.started":
      model.startMs ??= at;
      model.endMs = null;
      model.phase = "running";
      break;
    case "step.started": {
      const step = num(payload.step) ?? 0;
      const resumed =
        payload.resumed === true || model.spans.some((other) => other.key.startsWith(`step:${step}@`));
      span({
        key: `step:${step}`,
        kind: "step",
        label: `Step ${step}${resumed ? " (resumed)" : ""}`,
        start: at,
        depth: 0,
      });
      break;
    }
    case "step.finished":
      close(`step:${num(payload.step) ?? 0}`, "ok", { note: str(payload.action) || undefined });
      break;
    case "llm.called":
      model.answer.push("");
      span({ key: "model", kind: "model", label: str(payload.model) || "model", start: at });
      break;
    case "llm.delta":
      if (model.answer.length === 0) model.answer.push("");
      model.answer[model.answer.length - 1] += str(payload.text);
      break;
    case "llm.finished": {
      const usage = (payload.usage ?? {}) as Record<string, number>;
      const tokens = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
      const duration = num(payload.durationMs);
      close("model", "ok", {
        // A model that reports no usage (a scripted one) gets no token note rather than "0 in · 0 out".
        ...(tokens > 0 ? { note: `${usage.inputTokens ?? 0} in · ${usage.outputTokens ?? 0} out` } : {}),
        detail: {
          tokens: usage,
          stopReason: payload.stopReason,
          ...(duration === undefined ? {} : { duration }),
        },
      });
      model.tokens += tokens;
      break;
    }
    case "llm.failed":
      // The run's own failure (run.failed) is the error row; the call's bar turns red with the error inside.
      close("model", "error", { detail: { error: payload.errorDetails ?? payload.error } });
      break;
    case "usage.updated": {
      const usage = payload.usage as { costUsd?: number | null } | undefined;
      const before = model.costUsd;
      model.costUsd = usage?.costUsd ?? null;
      const last = [...model.spans].reverse().find((candidate) => candidate.kind === "model");
      if (last !== undefined && model.costUsd !== null)
        last.detail = { ...last.detail, costUsd: model.costUsd - (before ?? 0) };
      break;
    }
    case "tool.started":
      span({
        key: `tool:${str(payload.toolCallId)}`,
        kind: "tool",
        label: str(payload.toolId),
        start: at,
        detail: { arguments: payload.params },
      });
      break;
    case "tool.finished": {
      const failed = payload.ok === false;
      const key = `tool:${str(payload.toolCallId)}`;
      // A refused call never started: it is a bar of no length, with the rule that refused it.
      if (!model.open.has(key)) span({ key, kind: "tool", label: str(payload.toolId), start: at });
      close(key, failed ? (payload.rule ? "denied" : "error") : "ok", {
        note: failed ? str(payload.rule) || str(payload.code) || "failed" : undefined,
        detail: failed
          ? { error: payload.error, code: payload.code, rule: payload.rule }
          : { result: payload.result },
      });
      break;
    }
    case "tool.suspended":
      span({
        key: `suspension:${str(payload.toolCallId)}`,
        kind: "suspension",
        label: str(payload.toolId),
        start: at,
        state: "waiting",
        note: str(payload.reason) || undefined,
        detail: { arguments: payload.params, reason: payload.reason },
      });
      break;
    case "tool.decision": {
      const action = str(payload.action);
      close(`suspension:${str(payload.toolCallId)}`, action === "deny" ? "denied" : "ok");
      const always = payload.always === "session" ? " · always (session)" : payload.always ? " · always" : "";
      span({
        key: `decision:${chunk.sequence}`,
        kind: "decision",
        label: `${action} ${str(payload.toolId)}`,
        note: `${payload.sticky ? "sticky" : "decided"}${always}`,
        start: at,
        instant: true,
        state: action === "deny" ? "denied" : "ok",
        detail: { ...payload },
      });
      model.pending = model.pending.filter((call) => call.toolCallId !== payload.toolCallId);
      break;
    }
    case "run.failed": {
      const details = (payload.errorDetails ?? {}) as Record<string, unknown>;
      span({
        key: `error:${chunk.sequence}`,
        kind: "error",
        label: str(details.message) || str(payload.error),
        note: str(details.code) || undefined,
        start: at,
        instant: true,
        state: "error",
        detail: details,
      });
      break;
    }
    case "run.checkpoint_saved":
      model.checkpoints.push({
        checkpointId: str(payload.checkpointId),
        step: num(payload.step) ?? 0,
        phase: str(payload.phase) || undefined,
        transcriptLength: num(payload.transcriptLength),
        timestampMs: at,
        sequence: chunk.sequence,
      });
      break;
    case "run.finished": {
      const result = payload.result as RunResult;
      model.result = result;
      model.endMs = at;
      model.pending = result.pendingToolCalls ?? [];
      model.phase = result.stopReason === "suspended" ? "waiting" : "finished";
      for (const key of [...model.open.keys()]) if (!key.startsWith("suspension:")) close(key, "ok");
      break;
    }
  }
  return true;
}

/** The answer as one text: the steps that wrote any, a blank line between them. */
export function answerText(model: RunModel): string {
  return model.answer.filter((part) => part.trim() !== "").join("\n\n");
}
