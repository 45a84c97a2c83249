import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, type Decision } from "./api.js";
import { type Chunk, decideAndFollow, followRun } from "./event-stream.js";
import { applyChunk, createRunModel, type RunModel } from "./run-model.js";

const CACHE_PREFIX = "keel.console.events:";
/** A run's events are kept for a reload only while they are small; a larger run is read again from its start. */
const MAX_CACHED_CHARS = 1_500_000;

function restore(runId: string): RunModel {
  const model = createRunModel(runId);
  try {
    const cached = sessionStorage.getItem(CACHE_PREFIX + runId);
    if (cached !== null) for (const chunk of JSON.parse(cached) as Chunk[]) applyChunk(model, chunk);
  } catch {
    sessionStorage.removeItem(CACHE_PREFIX + runId);
  }
  return model;
}

function persist(model: RunModel): void {
  const key = CACHE_PREFIX + model.runId;
  const text = JSON.stringify(model.events);
  if (text.length > MAX_CACHED_CHARS) {
    sessionStorage.removeItem(key);
    return;
  }
  try {
    sessionStorage.setItem(key, text);
  } catch {
    // The tab's storage is full: the other runs' events make room (they replay from the server if opened again).
    for (const other of Object.keys(sessionStorage))
      if (other.startsWith(CACHE_PREFIX) && other !== key) sessionStorage.removeItem(other);
    try {
      sessionStorage.setItem(key, text);
    } catch {
      // Still too much: the next reload reads this run from its start.
    }
  }
}

export interface RunHandle {
  model: RunModel | null;
  connection: "live" | "reconnecting";
  error: ApiError | null;
  decide: (decisions: Decision[]) => Promise<void>;
}

/**
 * Follow a run: the events this tab already holds (kept across a reload), then the rest from the server after
 * the last of them (`Last-Event-ID`), to its end or its suspension; `decide` sends decisions and follows the
 * continuation. Renders at most once a frame, however fast the events come.
 */
export function useRun(runId: string | null): RunHandle {
  const [, setVersion] = useState(0);
  const [connection, setConnection] = useState<"live" | "reconnecting">("live");
  const [error, setError] = useState<ApiError | null>(null);
  const model = useRef<RunModel | null>(null);
  const abort = useRef<AbortController | null>(null);
  const frame = useRef(0);
  const saved = useRef(0);

  const redraw = useCallback(() => {
    if (frame.current !== 0) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      setVersion((version) => version + 1);
      const current = model.current;
      if (current !== null && (current.phase !== "running" || Date.now() - saved.current > 500)) {
        saved.current = Date.now();
        persist(current);
      }
    });
  }, []);

  const follow = useCallback(
    (start: (options: Parameters<typeof followRun>[0]) => Promise<unknown>): Promise<void> => {
      const current = model.current;
      if (current === null) return Promise.resolve();
      abort.current?.abort();
      const controller = new AbortController();
      abort.current = controller;
      setError(null);
      return start({
        runId: current.runId,
        after: () => current.lastSequence,
        onChunk: (chunk) => {
          if (applyChunk(current, chunk)) redraw();
        },
        onConnection: setConnection,
        signal: controller.signal,
      })
        .catch((caught: unknown) => {
          if (!controller.signal.aborted) setError(caught instanceof ApiError ? caught : new ApiError(0, {}));
        })
        .finally(() => {
          if (current.phase === "connecting") current.phase = "finished";
          persist(current);
          redraw();
        })
        .then(() => {});
    },
    [redraw],
  );

  useEffect(() => {
    if (runId === null) {
      model.current = null;
      return;
    }
    model.current = restore(runId);
    setVersion((version) => version + 1);
    const current = model.current;
    // A run already held to its end needs no connection.
    if (current.phase !== "finished") void follow(followRun);
    const save = () => persist(current);
    addEventListener("pagehide", save);
    return () => {
      removeEventListener("pagehide", save);
      abort.current?.abort();
      persist(current);
    };
  }, [runId, follow]);

  const decide = useCallback(
    (decisions: Decision[]) => {
      const current = model.current;
      if (current === null) return Promise.resolve();
      const before = { phase: current.phase, pending: current.pending };
      const sentAfter = current.lastSequence;
      current.phase = "running";
      current.pending = current.pending.filter(
        (call) => !decisions.some((decision) => decision.toolCallId === call.toolCallId),
      );
      redraw();
      return follow((options) =>
        decideAndFollow({ ...options, decisions }).catch((error: unknown) => {
          // A refused decision leaves the run waiting as it was: show its calls again, with the reason.
          if (current.lastSequence === sentAfter && current.phase === "running")
            Object.assign(current, before);
          throw error;
        }),
      );
    },
    [follow, redraw],
  );

  return { model: model.current, connection, error, decide };
}
