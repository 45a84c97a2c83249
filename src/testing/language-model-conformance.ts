import { afterEach, describe, expect, it } from "vitest";
import {
  isLanguageModel,
  type LanguageModel,
  MODEL_SPECIFICATION_VERSION,
  type ModelRequest,
  type ModelStreamPart,
} from "../contracts/language-model.js";
import type { Message } from "../contracts/message.js";
import { KeelError } from "../errors/keel-error.js";

type ModelFactory = () => Promise<LanguageModel> | LanguageModel;

/**
 * How to make the model under test answer each scenario; only `text` is required, and the tests of a scenario
 * are registered only when its factory is given. Each factory makes a fresh model for one call.
 */
export interface LanguageModelConformanceScenarios {
  /** A model that answers with text (any), reporting its usage. */
  text: ModelFactory;
  /** A model that answers by calling the tool `lookup` once with the arguments `{"query": "keel"}`. */
  toolCall?: ModelFactory;
  /** A model whose call fails with an error that is not retried (a vendor's 400, say). */
  error?: ModelFactory;
  /** A model whose answer never comes unless the request's signal aborts (a vendor that stalls). */
  stall?: ModelFactory;
}

/** The tool the `toolCall` scenario calls. */
export const LOOKUP_TOOL = {
  name: "lookup",
  description: "Look a term up in the glossary",
  inputSchema: {
    type: "object",
    properties: { query: { type: "string" } },
    required: ["query"],
    additionalProperties: false,
  },
} as const;

const PART_TYPES = new Set([
  "text-delta",
  "reasoning-delta",
  "reasoning",
  "tool-call-delta",
  "tool-call",
  "usage",
  "finish",
  "error",
]);
const ERROR_TYPES = new Set(["rate_limit", "connection", "response", "unknown"]);

/** A transcript with every kind of message, the latest a user's question. */
function transcript(): Message[] {
  return [
    { role: "user", content: "What does keel mean?" },
    {
      role: "assistant",
      content: "Let me look it up.",
      toolCalls: [{ id: "call_prev", name: "lookup", arguments: { query: "keel" } }],
    },
    { role: "tool", toolCallId: "call_prev", toolName: "lookup", content: "keel: the spine of a ship" },
    { role: "assistant", content: "A keel is the spine of a ship." },
    { role: "user", content: "And what does it do?" },
  ];
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    system: "You answer in one sentence.",
    messages: transcript(),
    tools: [LOOKUP_TOOL],
    options: { temperature: 0, maxTokens: 64 },
    ...overrides,
  };
}

async function collect(model: LanguageModel, given: ModelRequest): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of model.stream(given)) parts.push(part);
  return parts;
}

/** A finished call's parts: known types, one `finish` and last, usage before it, no `error`. */
function expectFinished(parts: readonly ModelStreamPart[]): Extract<ModelStreamPart, { type: "finish" }> {
  for (const part of parts) expect(PART_TYPES.has(part.type), `unknown part type ${part.type}`).toBe(true);
  expect(parts.filter((part) => part.type === "error")).toEqual([]);
  expect(parts.filter((part) => part.type === "finish")).toHaveLength(1);
  const finish = parts[parts.length - 1]!;
  expect(finish.type).toBe("finish");
  const usages = parts.filter((part) => part.type === "usage");
  expect(usages.length).toBeGreaterThan(0);
  for (const { usage } of usages) {
    expect(Number.isInteger(usage.inputTokens) && usage.inputTokens >= 0).toBe(true);
    expect(Number.isInteger(usage.outputTokens) && usage.outputTokens >= 0).toBe(true);
  }
  return finish as Extract<ModelStreamPart, { type: "finish" }>;
}

/** The tool calls of a call's parts, whole or assembled from deltas by index, arguments parsed. */
function toolCallsOf(parts: readonly ModelStreamPart[]): { id: string; name: string; arguments: unknown }[] {
  const calls: { id: string; name: string; arguments: unknown }[] = [];
  const partial: { id: string; name: string; text: string }[] = [];
  for (const part of parts) {
    if (part.type === "tool-call") {
      const args = typeof part.arguments === "string" ? JSON.parse(part.arguments) : part.arguments;
      calls.push({ id: part.id, name: part.name, arguments: args });
    } else if (part.type === "tool-call-delta") {
      partial[part.index] ??= { id: "", name: "", text: "" };
      const entry = partial[part.index]!;
      if (part.id) entry.id = part.id;
      if (part.name) entry.name += part.name;
      entry.text += part.argumentsDelta;
    }
  }
  for (const entry of partial) {
    if (entry) calls.push({ id: entry.id, name: entry.name, arguments: JSON.parse(entry.text || "{}") });
  }
  return calls;
}

/**
 * Register the vitest suite every `LanguageModel` (`keel.model.v1`) must pass: its identity, a finished call's
 * part order (content, then usage, then one `finish`), the request left unchanged, tool calls with JSON-object
 * arguments, failures as one typed `error` part, and an aborted signal ending the call (rejecting with the abort's
 * reason, or ending without `finish`).
 *
 * @example
 * describeLanguageModelConformance("my_provider", {
 *   text: () => new MyModel({ baseUrl: fake.url }),   // with the fake vendor answering text
 *   toolCall: () => new MyModel({ baseUrl: fakeToolCall.url }),
 * });
 */
export function describeLanguageModelConformance(
  name: string,
  scenarios: LanguageModelConformanceScenarios,
): void {
  describe(`LanguageModel conformance: ${name}`, () => {
    const opened: LanguageModel[] = [];
    const make = async (factory: ModelFactory): Promise<LanguageModel> => {
      const model = await factory();
      opened.push(model);
      return model;
    };

    afterEach(async () => {
      for (const model of opened.splice(0)) await model.close?.();
    });

    it(`is a ${MODEL_SPECIFICATION_VERSION} model with a provider and a model id`, async () => {
      const model = await make(scenarios.text);
      expect(isLanguageModel(model)).toBe(true);
      expect(model.specificationVersion).toBe(MODEL_SPECIFICATION_VERSION);
      expect(typeof model.provider === "string" && model.provider.length > 0).toBe(true);
      expect(typeof model.modelId === "string" && model.modelId.length > 0).toBe(true);
      if (model.countTokens) expect(model.countTokens("a few words of text")).toBeGreaterThan(0);
    });

    it("streams text, then usage, then one finish with stop reason end_turn, last", async () => {
      const parts = await collect(await make(scenarios.text), request());
      const finish = expectFinished(parts);
      expect(finish.stopReason).toBe("end_turn");
      const text = parts.map((part) => (part.type === "text-delta" ? part.text : "")).join("");
      expect(text.length).toBeGreaterThan(0);
      const lastContent = parts.findLastIndex((part) => part.type !== "usage" && part.type !== "finish");
      expect(lastContent).toBeLessThan(parts.findIndex((part) => part.type === "usage"));
    });

    it("leaves the request as it was given: messages, tools and options are read-only", async () => {
      const given = deepFreeze(request());
      const before = structuredClone(given);
      expectFinished(await collect(await make(scenarios.text), given));
      expect(given).toEqual(before);
    });

    if (scenarios.toolCall) {
      const factory = scenarios.toolCall;
      it("answers with a tool call whose arguments are a JSON object, and finishes with tool_use", async () => {
        const parts = await collect(await make(factory), request({ toolChoice: "auto" }));
        expect(expectFinished(parts).stopReason).toBe("tool_use");
        const calls = toolCallsOf(parts);
        expect(calls).toHaveLength(1);
        expect(calls[0]).toMatchObject({ name: LOOKUP_TOOL.name, arguments: { query: "keel" } });
        expect(typeof calls[0]!.id === "string" && calls[0]!.id.length > 0).toBe(true);
      });
    }

    if (scenarios.error) {
      const factory = scenarios.error;
      it("reports a failed call as one typed error part, last, and no finish", async () => {
        const parts = await collect(await make(factory), request());
        const last = parts[parts.length - 1];
        expect(last?.type).toBe("error");
        expect(parts.filter((part) => part.type === "error" || part.type === "finish")).toHaveLength(1);
        const { error, errorType } = last as Extract<ModelStreamPart, { type: "error" }>;
        expect(KeelError.isInstance(error)).toBe(true);
        expect(ERROR_TYPES.has(errorType)).toBe(true);
      });
    }

    if (scenarios.stall) {
      const factory = scenarios.stall;
      /** Read until the stream settles; a rejection must carry the abort's reason. */
      async function settle(
        parts: AsyncIterator<ModelStreamPart>,
        reason: unknown,
      ): Promise<ModelStreamPart[]> {
        const seen: ModelStreamPart[] = [];
        try {
          for (let next = await parts.next(); !next.done; next = await parts.next()) seen.push(next.value);
        } catch (error) {
          expect(error).toBe(reason);
        }
        return seen;
      }

      it("ends a call whose signal aborts while it waits: rejecting with the reason, or ending without finish", async () => {
        const model = await make(factory);
        const controller = new AbortController();
        const parts = model.stream(request({ signal: controller.signal }))[Symbol.asyncIterator]();
        const reason = new Error("run cancelled");
        const first = parts.next();
        // Let the call reach the vendor before aborting, so the abort interrupts a call in flight.
        await new Promise((resolve) => setTimeout(resolve, 10));
        controller.abort(reason);
        const seen = await (async () => {
          try {
            const next = await first;
            return next.done ? [] : [next.value, ...(await settle(parts, reason))];
          } catch (error) {
            expect(error).toBe(reason);
            return [];
          }
        })();
        expect(seen.filter((part) => part.type === "finish")).toEqual([]);
      });

      it("does not wait at all when the signal is already aborted", async () => {
        const model = await make(factory);
        const reason = new Error("run cancelled");
        const parts = model.stream(request({ signal: AbortSignal.abort(reason) }))[Symbol.asyncIterator]();
        const seen = await settle(parts, reason);
        expect(seen.filter((part) => part.type === "finish")).toEqual([]);
      });
    }
  });
}
