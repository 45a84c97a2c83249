import type { ModelResponse } from "../contracts/hook.js";
import type { ModelStreamPart, ModelUsage } from "../contracts/language-model.js";
import type { ReasoningPart, ToolCall } from "../contracts/message.js";
import { LLMConnectionError } from "../errors/error-classes.js";
import { KeelError } from "../errors/keel-error.js";
import type { CancelScope } from "./cancel-scope.js";

export interface ModelStreamSink {
  onTextDelta(text: string): void;
  onReasoningDelta?(text: string): void;
}

/**
 * Who finishes a model call as soon as its stream ends, in the same reaction: the run's driver, so that a model
 * call is one promise and no `async` frame awaits the stream's.
 */
export interface ModelCallEnd {
  /** The stream added up to `response`; returns what the call answers, or throws to fail it. */
  modelAnswered(response: ModelResponse, startedAt: number): ModelResponse;
  /** The stream failed with `error` (already typed); throws what the call fails with. */
  modelFailed(error: unknown): never;
}

/**
 * Read a model's stream into one response: text deltas go to the sink as they come, tool-call deltas are
 * assembled by index, an `error` part is thrown as its typed error. Stops early when the run is cancelled.
 */
export function readModelStream(
  parts: AsyncIterable<ModelStreamPart>,
  sink: ModelStreamSink,
  read: { scope: CancelScope; fallbackModel: string },
): Promise<ModelResponse> {
  return StreamReader.take(parts, sink, read).read(undefined, 0);
}

/** What reads a model call's stream and then finishes the call: the run's driver. */
export interface ModelCallReader extends ModelStreamSink, ModelCallEnd {
  readonly scope: CancelScope;
  readonly fallbackModel: string;
}

/**
 * Read a model call's stream, then finish the call (`modelAnswered` or `modelFailed`) in the same reaction: the
 * promise is the call's answer.
 */
export function readModelCall(
  parts: AsyncIterable<ModelStreamPart>,
  caller: ModelCallReader,
  startedAt: number,
): Promise<ModelResponse> {
  return StreamReader.take(parts, caller, caller).read(caller, startedAt);
}

type Settle<T> = (value: T) => void;

function noop(): void {}

/** Readers between two streams: a reader is reset when its stream is read, and taken again by the next. */
const idleReaders: StreamReader[] = [];
const MAX_IDLE_READERS = 16;

/** What `close` passes when the stream is left without an error (a cancellation). */
const NO_ERROR = Symbol("no error");

/**
 * The response a model stream adds up to, part by part. It pulls the parts itself, one reaction per part on
 * the iterator's promise: an `async` frame that suspends costs a few hundred bytes more, and the readers and
 * their reactions are kept between streams, so a model call makes only its promise. It follows `for await`'s
 * rules: a stream left early (a cancellation, a part that throws) is closed with `return()`, a stream that fails
 * is not.
 */
class StreamReader {
  private text = "";
  // The first tool call on its own: the usual answer has one, and an array made here is held by the transcript
  // for the rest of the run, so it is made once, at its final size.
  private firstCall: ToolCall | null = null;
  private moreCalls: ToolCall[] | null = null;
  private reasoning: ReasoningPart[] | null = null;
  private reasoningText = "";
  private usage: ModelUsage | undefined = undefined;
  private stopReason: ModelResponse["stopReason"] = "unknown";
  private partial: { id: string; name: string; text: string }[] | null = null;
  private parts: AsyncIterable<ModelStreamPart> | null = null;
  private iterator: AsyncIterator<ModelStreamPart> | null = null;
  private sink: ModelStreamSink | null = null;
  private model = "";
  private scope: CancelScope | null = null;
  /** Who finishes the call when the stream ends; without one, the promise is the response itself. */
  private end: ModelCallEnd | undefined = undefined;
  private startedAt = 0;
  private resolve: Settle<ModelResponse> = noop;
  private reject: Settle<unknown> = noop;
  // Made once per reader, which is used for many streams.
  private readonly begin = this.start.bind(this);
  private readonly onNext = this.next.bind(this);
  private readonly onFailure = this.fail.bind(this);

  static take(
    parts: AsyncIterable<ModelStreamPart>,
    sink: ModelStreamSink,
    read: { scope: CancelScope; fallbackModel: string },
  ): StreamReader {
    const reader = idleReaders.pop() ?? new StreamReader();
    reader.parts = parts;
    reader.sink = sink;
    reader.model = read.fallbackModel;
    reader.scope = read.scope;
    return reader;
  }

  read(end: ModelCallEnd | undefined, startedAt: number): Promise<ModelResponse> {
    this.end = end;
    this.startedAt = startedAt;
    return new Promise<ModelResponse>(this.begin);
  }

  private start(resolve: Settle<ModelResponse>, reject: Settle<unknown>): void {
    this.resolve = resolve;
    this.reject = reject;
    const parts = this.parts!;
    this.parts = null;
    try {
      this.iterator = iteratorOf(parts);
    } catch (error) {
      this.fail(error);
      return;
    }
    this.pull();
  }

  private pull(): void {
    let next: Promise<IteratorResult<ModelStreamPart>>;
    try {
      next = this.iterator!.next();
    } catch (error) {
      this.fail(error);
      return;
    }
    (next instanceof Promise ? next : Promise.resolve(next)).then(this.onNext, this.onFailure);
  }

  private next(result: IteratorResult<ModelStreamPart>): void {
    if (typeof result !== "object" || result === null) {
      this.fail(new TypeError(`The stream's iterator result ${String(result)} is not an object`));
      return;
    }
    if (result.done) {
      this.finish();
      return;
    }
    try {
      this.add(result.value);
    } catch (error) {
      this.close(error);
      return;
    }
    if (this.scope!.cancelled) this.close(NO_ERROR);
    else this.pull();
  }

  /** Leave the stream early: `return()` is awaited, then the call ends with `error`, or its answer when none. */
  private close(error: unknown): void {
    const iterator = this.iterator!;
    const failed = error !== NO_ERROR;
    let closing: unknown;
    try {
      closing = iterator.return === undefined ? undefined : iterator.return();
    } catch (closeError) {
      // A part's own error wins over the close's, as in `for await`.
      this.fail(failed ? error : closeError);
      return;
    }
    if (closing === undefined) {
      if (failed) this.fail(error);
      else this.finish();
      return;
    }
    Promise.resolve(closing).then(
      (result) => {
        if (failed) this.fail(error);
        else if (typeof result !== "object" || result === null)
          this.fail(new TypeError(`The stream's return() result ${String(result)} is not an object`));
        else this.finish();
      },
      (closeError: unknown) => this.fail(failed ? error : closeError),
    );
  }

  private finish(): void {
    const response = this.response();
    const { end, resolve, reject, startedAt } = this;
    this.release();
    if (end === undefined) {
      resolve(response);
      return;
    }
    try {
      resolve(end.modelAnswered(response, startedAt));
    } catch (error) {
      reject(error);
    }
  }

  private fail(error: unknown): void {
    const typed = KeelError.isInstance(error) || this.scope!.cancelled ? error : connectionError(error);
    const { end, reject } = this;
    this.release();
    if (end === undefined) {
      reject(typed);
      return;
    }
    try {
      end.modelFailed(typed);
    } catch (thrown) {
      reject(thrown);
    }
  }

  /** Forget the stream (the response holds what it needs) and wait for the next one. */
  private release(): void {
    this.text = "";
    this.firstCall = null;
    this.moreCalls = null;
    this.reasoning = null;
    this.reasoningText = "";
    this.usage = undefined;
    this.stopReason = "unknown";
    this.partial = null;
    this.iterator = null;
    this.sink = null;
    this.scope = null;
    this.end = undefined;
    this.resolve = noop;
    this.reject = noop;
    if (idleReaders.length < MAX_IDLE_READERS) idleReaders.push(this);
  }

  add(part: ModelStreamPart): void {
    switch (part.type) {
      case "text-delta":
        if (part.text.length === 0) break;
        this.text += part.text;
        this.sink!.onTextDelta(part.text);
        break;
      case "reasoning-delta":
        this.reasoningText += part.text;
        this.sink!.onReasoningDelta?.(part.text);
        break;
      case "reasoning":
        if (this.reasoning === null) this.reasoning = [];
        this.reasoning.push(part.reasoning);
        break;
      case "tool-call-delta": {
        this.partial ??= [];
        let entry = this.partial[part.index];
        if (entry === undefined) {
          entry = { id: "", name: "", text: "" };
          this.partial[part.index] = entry;
        }
        if (part.id) entry.id = part.id;
        if (part.name) entry.name += part.name;
        entry.text += part.argumentsDelta;
        break;
      }
      case "tool-call":
        this.addCall(toToolCall(part.id, part.name, part.arguments));
        break;
      case "usage":
        this.usage = part.usage;
        break;
      case "finish":
        this.stopReason = part.stopReason;
        if (part.model) this.model = part.model;
        break;
      case "error":
        throw part.error;
    }
  }

  private addCall(call: ToolCall): void {
    if (this.firstCall === null) this.firstCall = call;
    else if (this.moreCalls === null) this.moreCalls = [call];
    else this.moreCalls.push(call);
  }

  response(): ModelResponse {
    if (this.partial !== null) {
      for (const entry of this.partial) if (entry) this.addCall(toToolCall(entry.id, entry.name, entry.text));
    }
    const first = this.firstCall;
    const more = this.moreCalls;
    const toolCalls: ToolCall[] = first === null ? [] : more === null ? [first] : [first, ...more];
    let reasoning = this.reasoning;
    if (this.reasoningText && reasoning === null)
      reasoning = [{ type: "reasoning", text: this.reasoningText }];
    let stopReason = this.stopReason;
    if (toolCalls.length > 0 && stopReason === "unknown") stopReason = "tool_use";
    return {
      text: this.text,
      toolCalls,
      reasoning: reasoning ?? EMPTY_REASONING,
      usage: this.usage,
      stopReason,
      model: this.model,
    };
  }
}

function connectionError(error: unknown): LLMConnectionError {
  return new LLMConnectionError(
    `The model stream failed: ${error instanceof Error ? error.message : String(error)}`,
    { cause: error },
  );
}

/** The stream's iterator; a synchronous iterable is read as `for await` reads one. */
function iteratorOf(parts: AsyncIterable<ModelStreamPart>): AsyncIterator<ModelStreamPart> {
  if (typeof parts[Symbol.asyncIterator] === "function") return parts[Symbol.asyncIterator]();
  return fromSync(parts as unknown as Iterable<ModelStreamPart>)[Symbol.asyncIterator]();
}

async function* fromSync(parts: Iterable<ModelStreamPart>): AsyncGenerator<ModelStreamPart> {
  yield* parts;
}

const EMPTY_REASONING: ReasoningPart[] = [];
let generatedIds = 0;

/** A tool call from the model, its argument text parsed; text that is not a JSON object is kept as an error. */
export function toToolCall(id: string, name: string, input: string | Record<string, unknown>): ToolCall {
  const callId = id || `call_${++generatedIds}`;
  if (typeof input !== "string") return { id: callId, name, arguments: input };
  if (input.trim() === "") return { id: callId, name, arguments: {}, rawArguments: input };
  try {
    const parsed: unknown = JSON.parse(input);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      return { id: callId, name, arguments: parsed as Record<string, unknown>, rawArguments: input };
    }
    return {
      id: callId,
      name,
      arguments: {},
      rawArguments: input,
      argumentsError: "the arguments are not a JSON object",
    };
  } catch (error) {
    return {
      id: callId,
      name,
      arguments: {},
      rawArguments: input,
      argumentsError: `the arguments are not valid JSON (${(error as Error).message})`,
    };
  }
}
