import {
  type ActionRequest,
  type ActionResponse,
  type ChunkStatus,
  parseActionFrame,
} from "../wire/action-frame.js";
import { AGENT_API_ERROR_CODES, AgentApiError } from "../wire/api-error.js";
import {
  ActionCallError,
  ActionCallTimeoutError,
  ChannelBusyError,
  ChannelClosedError,
  MessageTooLargeError,
} from "./channel-errors.js";
import { type HeartbeatOptions, startHeartbeat } from "./channel-heartbeat.js";
import { type MessageTransport, TransportLimitError, type TransportProblemKind } from "./transport.js";

/** What a handler learns about the request it serves. */
export interface ActionContext {
  action: string;
  seqId: number;
  /** Aborted when the channel closes. */
  signal: AbortSignal;
}

/** Answers one request: with one object, or with a stream of them (each a `continue` chunk, then `end`). */
export type ActionHandler = (
  data: Record<string, unknown>,
  context: ActionContext,
) => Promise<Record<string, unknown>> | AsyncIterable<Record<string, unknown>>;

export type ChannelProblemKind =
  | TransportProblemKind
  | "malformed_message"
  | "unknown_response"
  | "too_many_in_flight";

/** Something the other end sent that was refused or dropped; the channel stays up. */
export interface ChannelProblem {
  kind: ChannelProblemKind;
  message: string;
  seqId?: number;
  action?: string;
}

export interface ActionChannelOptions {
  transport: MessageTransport;
  /** A single call's timeout, and a streamed call's idle timeout between chunks; 15 s. */
  callTimeoutMs?: number;
  /** Requests served at once, and calls awaiting an answer, each; 128. */
  maxInFlight?: number;
  /** Chunks of one streamed call held for a consumer that has not read them; 4,096. */
  streamBufferFrames?: number;
  onProblem?: (problem: ChannelProblem) => void;
  /** Once, when the channel closes; `error` when it was lost rather than closed. */
  onClose?: (error?: Error) => void;
  /**
   * Ping the other end (`__ping`) every `intervalMs` and declare the channel lost after `missLimit` pongs missed
   * in a row (3). Off unless given: the host turns it on for the runtimes it attaches over a real transport.
   */
  heartbeat?: HeartbeatOptions;
}

export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

interface PendingCall {
  action: string;
  settle(response: ActionResponse): void;
  fail(error: Error): void;
}

const DEFAULT_TIMEOUT_MS = 15_000;
// Chunks that arrive for a stream the consumer stopped reading are expected, not a peer's mistake.
const ABANDONED_LIMIT = 1024;

/**
 * The plugin-runtime action protocol over a transport: both ends call and serve actions on one connection.
 * Each request is served in its own task, so a slow handler never holds the read loop. A lost channel fails
 * every call in flight at once and aborts every handler; a malformed message, an answer to no call, or a request
 * beyond the in-flight limit is reported to `onProblem` (and answered with an error when it can be) while the
 * channel stays up.
 */
export class ActionChannel {
  private readonly transport: MessageTransport;
  private readonly handlers = new Map<string, ActionHandler>();
  private readonly pending = new Map<number, PendingCall>();
  private readonly abandoned = new Set<number>();
  private readonly serving = new Map<number, AbortController>();
  private readonly callTimeoutMs: number;
  private readonly maxInFlight: number;
  private readonly streamBufferFrames: number;
  private nextSeqId = Math.floor(Math.random() * 1_000_000_000);
  private closeError: Error | undefined;
  private isClosed = false;
  private readonly closedPromise: Promise<Error | undefined>;
  private resolveClosed!: (error: Error | undefined) => void;
  private stopHeartbeat: (() => void) | undefined;

  constructor(private readonly options: ActionChannelOptions) {
    this.transport = options.transport;
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxInFlight = options.maxInFlight ?? 128;
    this.streamBufferFrames = options.streamBufferFrames ?? 4096;
    this.closedPromise = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    this.handlers.set("__ping", async () => ({}));
    this.transport.start({
      message: (text) => this.onMessage(text),
      problem: (problem) => this.options.onProblem?.(problem),
      close: (error) => this.onTransportClose(error),
    });
    if (options.heartbeat) this.startHeartbeat(options.heartbeat);
  }

  /** Starts pinging the other end (replacing an earlier heartbeat); see {@link ActionChannelOptions.heartbeat}. */
  startHeartbeat(options: HeartbeatOptions): void {
    if (this.isClosed) return;
    this.stopHeartbeat?.();
    this.stopHeartbeat = startHeartbeat(this, options);
  }

  /** Serves `action` with `handler`, replacing any earlier one. */
  handle(action: string, handler: ActionHandler): this {
    this.handlers.set(action, handler);
    return this;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Settles when the channel closes, with the error when it was lost. */
  whenClosed(): Promise<Error | undefined> {
    return this.closedPromise;
  }

  /** Calls `action` and waits for its one answer. */
  call(
    action: string,
    data: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<Record<string, unknown>> {
    const timeoutMs = options.timeoutMs ?? this.callTimeoutMs;
    return new Promise((resolve, reject) => {
      let seqId = -1;
      const timer = setTimeout(() => finish(new ActionCallTimeoutError(action, timeoutMs)), timeoutMs);
      const onAbort = () => finish(abortError(options.signal));
      const finish = (error?: Error, response?: ActionResponse) => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        if (!this.pending.delete(seqId)) return;
        if (error) return reject(error);
        if (response!.code !== 0)
          return reject(new ActionCallError(action, response!.message, response!.data));
        resolve(response!.data);
      };
      try {
        seqId = this.request(action, data, {
          action,
          settle: (response) => finish(undefined, response),
          fail: finish,
        });
      } catch (error) {
        clearTimeout(timer);
        return reject(error);
      }
      if (options.signal?.aborted) onAbort();
      else options.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Calls `action` and reads its streamed answer: each `continue` chunk's data, until the `end` chunk. The
   * timeout applies between chunks. Stopping early (`break`) stops reading; later chunks are dropped quietly.
   */
  stream(
    action: string,
    data: Record<string, unknown>,
    options: CallOptions = {},
  ): AsyncIterable<Record<string, unknown>> {
    return { [Symbol.asyncIterator]: () => this.openStream(action, data, options) };
  }

  private openStream(
    action: string,
    data: Record<string, unknown>,
    options: CallOptions,
  ): AsyncIterator<Record<string, unknown>> {
    const timeoutMs = options.timeoutMs ?? this.callTimeoutMs;
    const buffer: Record<string, unknown>[] = [];
    let ended = false;
    let failure: Error | undefined;
    // The reader waiting for the next chunk, if any: a chunk that finds one is handed to it directly.
    let waiting: ((result: IteratorResult<Record<string, unknown>>) => void) | undefined;
    let failWaiting: ((error: Error) => void) | undefined;
    // The idle timeout is one timer armed for the whole stream, not one per chunk: a chunk only notes when it came,
    // and a timer that fires early (a chunk came since it was armed) is armed again for the time still left.
    // Re-arming per chunk made and filed a timer per result on the receive path.
    let timer: NodeJS.Timeout | undefined;
    let lastChunkAt = 0;
    const onIdle = () => {
      const left = lastChunkAt + timeoutMs - performance.now();
      if (left > 0) timer = setTimeout(onIdle, left);
      else stop(new ActionCallTimeoutError(action, timeoutMs));
    };
    const stop = (error?: Error) => {
      if (ended) return;
      ended = true;
      failure = error;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      this.pending.delete(seqId);
      const resolve = waiting;
      const reject = failWaiting;
      waiting = undefined;
      failWaiting = undefined;
      if (error && reject) reject(error);
      else resolve?.({ done: true, value: undefined });
    };
    const onAbort = () => stop(abortError(options.signal));
    const seqId = this.request(action, data, {
      action,
      settle: (response) => {
        if (response.code !== 0) return stop(new ActionCallError(action, response.message, response.data));
        const last = response.chunk_status === "end";
        if (!last || Object.keys(response.data).length > 0) {
          const resolve = waiting;
          if (resolve !== undefined) {
            waiting = undefined;
            failWaiting = undefined;
            resolve({ done: false, value: response.data });
          } else if (buffer.length >= this.streamBufferFrames) {
            return stop(
              new ActionCallError(action, "the stream's consumer is too slow; its buffer is full", {}),
            );
          } else buffer.push(response.data);
        }
        if (last) stop();
        else lastChunkAt = performance.now();
      },
      fail: stop,
    });
    lastChunkAt = performance.now();
    timer = setTimeout(onIdle, timeoutMs);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    const forget = () => {
      if (ended) return;
      stop();
      this.abandon(seqId);
    };
    return {
      next: () => {
        if (buffer.length > 0) return Promise.resolve({ done: false, value: buffer.shift()! });
        if (ended)
          return failure ? Promise.reject(failure) : Promise.resolve({ done: true, value: undefined });
        return new Promise((resolve, reject) => {
          waiting = resolve;
          failWaiting = reject;
        });
      },
      return: async () => {
        forget();
        buffer.length = 0;
        return { done: true, value: undefined };
      },
    };
  }

  /**
   * One `__ping`: true when the other end answered within `timeoutMs` — with anything, since an error is an
   * answer too — or when the channel closed meanwhile (the heartbeat then stops on its own). A pong that comes
   * after the timeout is dropped quietly, not reported as an answer to no call.
   */
  ping(timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      let seqId = -1;
      const settle = (answered: boolean) => {
        clearTimeout(timer);
        this.pending.delete(seqId);
        resolve(answered);
      };
      const timer = setTimeout(() => {
        this.abandon(seqId);
        settle(false);
      }, timeoutMs);
      try {
        seqId = this.request(
          "__ping",
          {},
          { action: "__ping", settle: () => settle(true), fail: () => settle(true) },
        );
      } catch {
        settle(true);
      }
    });
  }

  /**
   * Declares the channel lost with `error` — a peer that stopped answering though the wire is open: every call in
   * flight fails at once and every handler is aborted, as when the wire breaks; then the transport is closed.
   */
  async lose(error: Error): Promise<void> {
    if (this.isClosed) return;
    this.onTransportClose(error);
    await this.transport.close().catch(() => {});
  }

  /** Closes the channel: calls in flight fail, handlers are aborted. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    await this.transport.close();
    this.onTransportClose();
  }

  private request(action: string, data: Record<string, unknown>, call: PendingCall): number {
    if (this.isClosed) throw new ChannelClosedError("the channel is closed", this.closeError);
    if (this.pending.size >= this.maxInFlight) throw new ChannelBusyError(this.maxInFlight);
    const seqId = this.nextSeqId++;
    this.send({ seq_id: seqId, action, data });
    this.pending.set(seqId, call);
    return seqId;
  }

  private abandon(seqId: number): void {
    this.abandoned.add(seqId);
    if (this.abandoned.size > ABANDONED_LIMIT) this.abandoned.delete(this.abandoned.values().next().value!);
  }

  /** Sends a frame; a frame over the transport's limits is refused with a typed error. */
  private send(frame: ActionRequest | ActionResponse): void {
    try {
      this.transport.send(JSON.stringify(frame));
    } catch (error) {
      if (error instanceof TransportLimitError) throw new MessageTooLargeError(error.message);
      throw new ChannelClosedError("the channel is closed", error);
    }
  }

  private onMessage(text: string): void {
    const parsed = parseActionFrame(text);
    if (!parsed.ok) {
      const problem: ChannelProblem = { kind: "malformed_message", message: parsed.error };
      if (parsed.seqId !== undefined) problem.seqId = parsed.seqId;
      this.options.onProblem?.(problem);
      // A request whose seq_id could be read is answered, so its caller is not left waiting for a timeout.
      if (parsed.seqId !== undefined && !this.pending.has(parsed.seqId) && /"action"\s*:/.test(text)) {
        this.respondError(
          parsed.seqId,
          new AgentApiError(AGENT_API_ERROR_CODES.INVALID_ARGUMENT, parsed.error),
        );
      }
      return;
    }
    const { frame } = parsed;
    if (frame.kind === "response") this.onResponse(frame.response);
    else void this.serve(frame.request);
  }

  private onResponse(response: ActionResponse): void {
    const seqId = response.seq_id;
    const call = seqId === null ? undefined : this.pending.get(seqId);
    if (call) {
      call.settle(response);
      return;
    }
    if (seqId !== null && this.abandoned.has(seqId)) {
      if (response.chunk_status === "end") this.abandoned.delete(seqId);
      return;
    }
    this.options.onProblem?.({
      kind: "unknown_response",
      message: `a response to seq_id ${seqId} answers no call in flight`,
      ...(seqId === null ? {} : { seqId }),
    });
  }

  private async serve(request: ActionRequest): Promise<void> {
    const { seq_id: seqId, action } = request;
    const handler = this.handlers.get(action);
    if (!handler) {
      this.respondError(
        seqId,
        new AgentApiError(AGENT_API_ERROR_CODES.NOT_FOUND, `unknown action ${action}`),
      );
      return;
    }
    if (this.serving.size >= this.maxInFlight || this.serving.has(seqId)) {
      const message = this.serving.has(seqId)
        ? `seq_id ${seqId} is already being served`
        : "too many actions in flight";
      this.options.onProblem?.({ kind: "too_many_in_flight", message, seqId, action });
      this.respondError(seqId, new AgentApiError(AGENT_API_ERROR_CODES.RATE_LIMITED, message));
      return;
    }
    const controller = new AbortController();
    this.serving.set(seqId, controller);
    try {
      const answer = handler(request.data, { action, seqId, signal: controller.signal });
      if (isAsyncIterable(answer)) {
        for await (const chunk of answer) {
          if (controller.signal.aborted) break;
          this.respond(seqId, chunk, "continue");
        }
        this.respond(seqId, {}, "end");
      } else {
        this.respond(seqId, await answer, "end");
      }
    } catch (error) {
      this.respondError(seqId, error);
    } finally {
      this.serving.delete(seqId);
    }
  }

  private respond(seqId: number, data: Record<string, unknown>, chunkStatus: ChunkStatus): void {
    if (this.isClosed) return;
    this.send({ seq_id: seqId, code: 0, message: "success", data, chunk_status: chunkStatus });
  }

  private respondError(seqId: number, error: unknown): void {
    if (this.isClosed) return;
    const apiError =
      error instanceof AgentApiError
        ? error
        : error instanceof MessageTooLargeError
          ? new AgentApiError(AGENT_API_ERROR_CODES.PAYLOAD_TOO_LARGE, error.message)
          : undefined;
    const name = error instanceof Error ? error.name : "Error";
    const text = error instanceof Error ? error.message : String(error);
    const data = apiError ? { error: apiError.toBody() } : {};
    try {
      this.send({ seq_id: seqId, code: 1, message: `${name}: ${text}`, data, chunk_status: "end" });
    } catch {
      // The channel went away while answering; its close already failed everything in flight.
    }
  }

  private onTransportClose(error?: Error): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.closeError = error;
    this.stopHeartbeat?.();
    const lost = new ChannelClosedError(
      error ? `the channel was lost: ${error.message}` : "the channel was closed",
      error,
    );
    for (const call of [...this.pending.values()]) call.fail(lost);
    this.pending.clear();
    for (const controller of this.serving.values()) controller.abort(lost);
    this.options.onClose?.(error);
    this.resolveClosed(error);
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<Record<string, unknown>> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value;
}

function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new ChannelClosedError("the call was aborted");
}
