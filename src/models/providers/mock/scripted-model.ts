import {
  approximateTokens,
  type LanguageModel,
  MODEL_SPECIFICATION_VERSION,
  type ModelRequest,
  type ModelStreamPart,
} from "../../../contracts/language-model.js";
import { LLMResponseError } from "../../../errors/error-classes.js";
import { assistantTurns } from "./assistant-turns.js";
import { parseScript, type ScriptedTurn, type ScriptStep, scriptedError } from "./scripted-turn.js";

export interface ScriptedModelOptions {
  modelId?: string;
  /** After the last turn: fail (default) or keep answering with the last turn. */
  whenExhausted?: "error" | "repeat-last";
}

/**
 * A deterministic model that answers with the turns it was given: text, streamed deltas, tool calls, usage,
 * errors and delays. Keel's own tests use it; so can yours (`keel/testing`).
 *
 * Which turn answers a call follows the transcript, not a counter: with `k` assistant messages in the request,
 * the model answers with its `k+1`-th answering turn. So a run continued in another process (a decision from
 * another shell, a resume after a crash) goes on where it stopped, and a fresh session starts at turn 1. An
 * `error` turn adds nothing to the transcript: it is served once before the answering turn that follows it,
 * and the call that retries gets the next turn.
 *
 * @example
 * const model = scriptedModel([
 *   { toolCalls: [{ name: "add", arguments: { a: 2, b: 40 } }] },
 *   { text: "The answer is 42." },
 * ]);
 */
export class ScriptedModel implements LanguageModel {
  readonly specificationVersion = MODEL_SPECIFICATION_VERSION;
  readonly provider = "mock";
  readonly modelId: string;
  /** Every request the model received, in order, with the messages as they were at the call (for assertions). */
  readonly requests: ModelRequest[] = [];
  private readonly steps: ScriptStep[];
  private readonly whenExhausted: "error" | "repeat-last";
  /** Where the turns that answer (all but `error` turns) are in the script. */
  private readonly answering: number[];
  /** Error turns served in a row to calls with this many assistant messages, so that their retry moves on. */
  private readonly failedAt = new Map<number, number>();
  private calls = 0;

  constructor(script: readonly unknown[], options: ScriptedModelOptions = {}) {
    this.steps = parseScript(script);
    this.modelId = options.modelId ?? "mock-scripted";
    this.whenExhausted = options.whenExhausted ?? "error";
    this.answering = [];
    this.steps.forEach((step, index) => {
      if (typeof step === "function" || step.error === undefined) this.answering.push(index);
    });
  }

  /** How many calls the model has answered. */
  get callCount(): number {
    return this.calls;
  }

  stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    this.requests.push(snapshot(request));
    this.calls++;
    const answered = assistantTurns(request.messages);
    const failed = this.failedAt.get(answered) ?? 0;
    const index = this.firstTurnAfter(answered) + failed;
    let step = this.steps[index];
    if (step === undefined && this.whenExhausted === "repeat-last") step = this.steps[this.steps.length - 1];
    if (step === undefined) {
      const error = new LLMResponseError(
        `The scripted model has no turn ${index + 1} (its script has ${this.steps.length}; the transcript ` +
          `already holds ${answered} assistant ${answered === 1 ? "turn" : "turns"})`,
        {
          hint: "Add a turn to the script, start a new session, or pass { whenExhausted: 'repeat-last' }",
        },
      );
      return single({ type: "error", error, errorType: "response" });
    }
    const turn = typeof step === "function" ? step(request, index) : step;
    if (turn.error === undefined) this.failedAt.delete(answered);
    else this.failedAt.set(answered, failed + 1);
    return streamTurn(turn, { modelId: this.modelId, index, signal: request.signal });
  }

  /** The script's turn after its first `answered` answering turns (past the end once they run out). */
  private firstTurnAfter(answered: number): number {
    if (answered === 0) return 0;
    const answering = this.answering;
    if (answered <= answering.length) return answering[answered - 1]! + 1;
    return this.steps.length + answered - answering.length;
  }

  countTokens(text: string): number {
    return approximateTokens(text);
  }
}

/** Build a scripted model. */
export function scriptedModel(
  script: readonly (ScriptedTurn | ScriptStep)[],
  options?: ScriptedModelOptions,
): ScriptedModel {
  return new ScriptedModel(script, options);
}

/** The request as it was: the transcript is the run's live array, so copy it; the signal stays unread. */
function snapshot(request: ModelRequest): ModelRequest {
  const copy: ModelRequest = { messages: [...request.messages], options: request.options };
  if (request.system !== undefined) copy.system = request.system;
  if (request.tools !== undefined) copy.tools = request.tools;
  if (request.toolChoice !== undefined) copy.toolChoice = request.toolChoice;
  if (request.outputSchema !== undefined) copy.outputSchema = request.outputSchema;
  if (request.clientKwargs !== undefined) copy.clientKwargs = request.clientKwargs;
  return copy;
}

async function* single(part: ModelStreamPart): AsyncGenerator<ModelStreamPart> {
  yield part;
}

/** Which call a scripted turn answers: `index` numbers its default tool-call ids, `signal` cuts its delay short. */
interface TurnCall {
  modelId: string;
  index: number;
  signal: AbortSignal | undefined;
}

async function* streamTurn(
  turn: ScriptedTurn,
  { modelId, index, signal }: TurnCall,
): AsyncGenerator<ModelStreamPart> {
  if (turn.delayMs) await delay(turn.delayMs, signal);
  if (turn.error) {
    const error = scriptedError(turn.error);
    yield { type: "error", error, errorType: turn.error.type };
    return;
  }
  if (turn.reasoning !== undefined)
    yield { type: "reasoning", reasoning: { type: "reasoning", text: turn.reasoning } };
  if (turn.deltas) for (const text of turn.deltas) yield { type: "text-delta", text };
  else if (turn.text) yield { type: "text-delta", text: turn.text };
  const calls = turn.toolCalls;
  if (calls) {
    for (let position = 0; position < calls.length; position++) {
      const call = calls[position]!;
      yield {
        type: "tool-call",
        id: call.id ?? `call_${index + 1}_${position + 1}`,
        name: call.name,
        arguments: call.rawArguments ?? call.arguments ?? {},
      };
    }
  }
  const usage = turn.usage;
  if (usage) {
    yield {
      type: "usage",
      usage: { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0, ...usage },
    };
  }
  yield { type: "finish", stopReason: calls && calls.length > 0 ? "tool_use" : "end_turn", model: modelId };
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
