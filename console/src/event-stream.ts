import { createParser } from "eventsource-parser";
import { ApiError, type Decision, type RunResult, request } from "./api.js";
import type { Chunk } from "./wire-types.js";

export type { Chunk };

export interface FollowOptions {
  runId: string;
  /** The last sequence already held: the stream resumes after it (`Last-Event-ID`). */
  after: () => number;
  onChunk: (chunk: Chunk) => void;
  /** Told when the connection drops and when it is back, for the page's connection badge. */
  onConnection?: (state: "live" | "reconnecting") => void;
  signal: AbortSignal;
}

/**
 * Read an SSE response with fetch, not EventSource: the API wants an Authorization header, which EventSource
 * cannot send. Resolves with the run's result when the stream carried `run.finished`, or null when it ended
 * without it (a dropped connection, a server that cut off a stalled reader).
 */
export async function readRunStream(
  response: Response,
  onChunk: (chunk: Chunk) => void,
): Promise<RunResult | null> {
  let result: RunResult | null = null;
  let failure: ApiError | undefined;
  const parser = createParser({
    onEvent: (event) => {
      if (event.event === "error") {
        const body = JSON.parse(event.data) as { error?: Record<string, string> };
        failure = new ApiError(409, body.error ?? {});
        return;
      }
      const chunk = JSON.parse(event.data) as Chunk;
      onChunk(chunk);
      if (chunk.kind === "run.finished") result = chunk.payload.result as RunResult;
    },
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
  if (failure !== undefined) throw failure;
  return result;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Follow a run to its `run.finished` (a suspension's included), re-attaching with `Last-Event-ID` whenever the
 * connection drops, so no event is lost and none comes twice. Refusals (an unknown run, a bad token) end it.
 */
export async function followRun(options: FollowOptions): Promise<RunResult | null> {
  let delay = 250;
  while (!options.signal.aborted) {
    try {
      const response = await request(`runs/${encodeURIComponent(options.runId)}/events`, {
        headers: { "last-event-id": String(options.after()) },
        signal: options.signal,
      });
      options.onConnection?.("live");
      const result = await readRunStream(response, (chunk) => {
        delay = 250;
        options.onChunk(chunk);
      });
      if (result !== null) return result;
    } catch (error) {
      if (options.signal.aborted) return null;
      if (error instanceof ApiError && error.status < 500) throw error;
    }
    options.onConnection?.("reconnecting");
    await sleep(delay, options.signal);
    delay = Math.min(delay * 2, 4000);
  }
  return null;
}

/**
 * Send decisions and follow the continuation they start; if that stream drops, re-attach where it left off.
 */
export async function decideAndFollow(
  options: FollowOptions & { decisions: Decision[] },
): Promise<RunResult | null> {
  let result: RunResult | null = null;
  try {
    const response = await request(`runs/${encodeURIComponent(options.runId)}/decisions?stream=1`, {
      method: "POST",
      body: JSON.stringify({ decisions: options.decisions }),
      signal: options.signal,
    });
    result = await readRunStream(response, options.onChunk);
  } catch (error) {
    if (error instanceof ApiError) throw error;
  }
  return result ?? followRun(options);
}
