import { LLMConnectionError } from "../../errors/error-classes.js";
import { KeelError } from "../../errors/keel-error.js";
import { errorFromResponse } from "./error-from-response.js";
import type { ModelClock } from "./model-clock.js";

export interface ModelHttpRequest {
  url: string;
  headers: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  body: unknown;
  /** Limit on the wait for the response to start, and on each silence between two chunks of its body. */
  timeoutMs: number;
  /** The run's signal: aborting it aborts the request and rejects with its reason. */
  signal?: AbortSignal | undefined;
  /** Names the provider in messages: "Anthropic", "OpenAI-compatible server". */
  provider: string;
  /** The variable the API key came from, for the hint of a 401. */
  keyVariable?: string | undefined;
  clock: ModelClock;
}

/** A 2xx response whose body is yet to be read. Read it to the end or `close()` it. */
export interface ModelHttpResponse {
  status: number;
  headers: Headers;
  /** The body's chunks; a drop or a silence past the timeout fails the iteration with `LLMConnectionError`. */
  chunks(): AsyncIterable<Uint8Array>;
  /** The whole body as text. */
  text(): Promise<string>;
  /** Abort the request unless its body was read to the end; the connection is never left open. */
  close(): void;
}

/**
 * One HTTP attempt of a model call on the built-in `fetch`. The request has its own AbortController, aborted by
 * the run's signal, by the timeout (armed until the headers come and again around every read of the body) and
 * by `close()` before the end of the body. A non-2xx answer is read and thrown as its typed error; a
 * failure to connect or a timeout is thrown as `LLMConnectionError`; a run's abort rejects with its reason.
 */
export async function sendModelRequest(request: ModelHttpRequest): Promise<ModelHttpResponse> {
  const outer = request.signal;
  if (outer?.aborted) throw outer.reason;
  const controller = new AbortController();
  const onOuterAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener("abort", onOuterAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  let bodyDone = false;
  let released = false;
  let phase: "connect" | "body" = "connect";
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${request.timeoutMs} ms`));
    }, request.timeoutMs);
  };
  const disarm = () => clearTimeout(timer);
  const release = () => {
    if (released) return;
    released = true;
    disarm();
    if (!bodyDone) controller.abort();
    outer?.removeEventListener("abort", onOuterAbort);
  };
  const failure = (error: unknown): unknown => {
    if (outer?.aborted) return outer.reason;
    if (KeelError.isInstance(error)) return error;
    const context = { provider: request.provider, timeoutMs: request.timeoutMs };
    if (timedOut) {
      return new LLMConnectionError(
        phase === "connect"
          ? `${request.provider} sent no response within ${request.timeoutMs} ms`
          : `${request.provider} sent nothing for ${request.timeoutMs} ms in the middle of its response`,
        { context, cause: error, hint: "Raise llm.timeout_ms, or check that the server is up" },
      );
    }
    return new LLMConnectionError(
      phase === "connect"
        ? `Could not reach ${request.provider} at ${request.url}: ${describeNetworkError(error)}`
        : `The connection to ${request.provider} dropped in the middle of its response: ${describeNetworkError(error)}`,
      { context, cause: error, hint: "Check the network and llm.api_base" },
    );
  };

  let response: Response;
  arm();
  try {
    response = await fetch(request.url, {
      method: "POST",
      headers: request.headers as Record<string, string>,
      body: JSON.stringify(request.body),
      signal: controller.signal,
    });
  } catch (error) {
    release();
    throw failure(error);
  }
  disarm();
  phase = "body";

  async function* chunks(): AsyncGenerator<Uint8Array> {
    const body = response.body;
    if (body === null) {
      bodyDone = true;
      release();
      return;
    }
    const reader = body.getReader();
    try {
      while (true) {
        arm();
        let result: Awaited<ReturnType<typeof reader.read>>;
        try {
          result = await reader.read();
        } catch (error) {
          throw failure(error);
        } finally {
          disarm();
        }
        if (result.done) {
          bodyDone = true;
          return;
        }
        yield result.value;
      }
    } finally {
      if (!bodyDone) reader.cancel().catch(() => {});
      release();
    }
  }

  const text = async (): Promise<string> => {
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of chunks()) text += decoder.decode(chunk, { stream: true });
    return text + decoder.decode();
  };

  if (response.status < 200 || response.status >= 300) {
    const bodyText = await text().catch((error: unknown) => {
      if (outer?.aborted) throw error;
      return "";
    });
    throw errorFromResponse({
      provider: request.provider,
      status: response.status,
      headers: response.headers,
      bodyText,
      keyVariable: request.keyVariable,
      url: request.url,
      nowMs: request.clock.now(),
    });
  }
  return { status: response.status, headers: response.headers, chunks, text, close: release };
}

/** `fetch failed (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9)` from undici's error and its cause. */
function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: string; message?: string } | undefined;
  if (cause && typeof cause === "object") {
    const detail = [cause.code, cause.message].filter(Boolean).join(": ");
    if (detail) return `${error.message} (${detail})`;
  }
  return error.message;
}
