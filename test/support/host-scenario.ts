import { expect } from "vitest";
import type { KeelConfig } from "../../src/config/keel-config.js";
import {
  type LanguageModel,
  MODEL_SPECIFICATION_VERSION,
  type ModelRequest,
  type ModelStreamPart,
} from "../../src/contracts/language-model.js";
import type {
  AgentBindingInput,
  AgentEventEnvelopeInput,
  AgentRunResult,
  KeelHostOptions,
} from "../../src/host/index.js";
import { createInMemoryHostStores, KeelHost } from "../../src/host/index.js";
import { langBotResultErrors } from "./langbot-schemas.js";

/** A Keel config whose agent uses only the host: its model and its tools. */
export const HOST_RUNNER_CONFIG: KeelConfig = {
  agents: [
    {
      id: "helper",
      name: "Helper",
      llm: { provider: "host" },
      tools: [
        {
          id: "lookup",
          type: "host_tool",
          config: {
            description: "Look a word up",
            parameters: { type: "object", properties: { word: { type: "string" } } },
          },
        },
        { id: "report", type: "host_tool", config: { description: "Fetch the long report" } },
        { id: "pause", type: "host_tool", config: { description: "Wait for the user" } },
        {
          id: "delete_all",
          type: "host_tool",
          config: { description: "Delete everything", approval_mode: "always" },
        },
      ],
    },
  ],
};

export const RUNNER_ID = "plugin:keel/agents/helper";

/**
 * The host's model: calls the tool the user's words name, answers after a tool result, hangs on "hang" until
 * aborted, and otherwise greets in three deltas.
 */
export class HostTestModel implements LanguageModel {
  readonly specificationVersion = MODEL_SPECIFICATION_VERSION;
  readonly provider = "test";
  readonly modelId = "model-1";

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const last = request.messages.at(-1);
    const text = typeof last?.content === "string" ? last.content : "";
    if (last?.role === "tool") {
      yield* deltas(["Done", ": ", text.slice(0, 40)]);
    } else if (last?.role === "user" && text.startsWith("steer:")) {
      yield* deltas(["Heard", ": ", text.slice("steer:".length).trim()]);
    } else if (text.includes("hang")) {
      await new Promise((resolve) => request.signal?.addEventListener("abort", resolve, { once: true }));
      return;
    } else {
      const tool = ["lookup", "report", "delete", "pause", "ask_city"].find((word) => text.includes(word));
      if (tool) {
        yield {
          type: "tool-call",
          id: `call-${tool}`,
          name: tool === "delete" ? "delete_all" : tool,
          arguments: { word: "keel" },
        };
        yield { type: "finish", stopReason: "tool_use" };
        return;
      }
      yield* deltas(["Hello", " from", " the host"]);
    }
    yield { type: "finish", stopReason: "end_turn" };
  }
}

function* deltas(parts: string[]): Iterable<ModelStreamPart> {
  for (const text of parts) yield { type: "text-delta", text };
}

/**
 * A Keel host with the test model and its tools; warnings collected. The `pause` tool calls `onPause` with its
 * run's id before it answers, so a test can act on the host while the run is between two model calls.
 */
export function createTestHost(options: Partial<KeelHostOptions> = {}) {
  const warnings: string[] = [];
  const hooks: { onPause?: (runId: string) => void | Promise<void> } = {};
  const stores = createInMemoryHostStores();
  const host = new KeelHost({
    stores,
    models: { "model-1": new HostTestModel() },
    tools: {
      lookup: {
        description: "Look a word up",
        invoke: async (parameters) => ({ meaning: `${String(parameters.word)} is a ship's spine` }),
      },
      report: { description: "The long report", invoke: async () => "r".repeat(20 * 1024) },
      delete_all: { description: "Delete everything", invoke: async () => ({ deleted: 3 }) },
      pause: {
        description: "Wait for the user",
        invoke: async (_parameters, { runId }) => {
          await hooks.onPause?.(runId);
          return { paused: true };
        },
      },
      secret: { description: "Not for runners", invoke: async () => "classified" },
    },
    onWarning: (message) => void warnings.push(message),
    ...options,
  });
  return { host, stores, warnings, hooks };
}

export function binding(overrides: Partial<AgentBindingInput> = {}): AgentBindingInput {
  return {
    binding_id: "binding-1",
    runner_id: RUNNER_ID,
    resource_policy: {
      allowed_model_uuids: ["model-1"],
      allowed_tool_names: ["lookup", "report", "delete_all", "pause"],
    },
    state_policy: { state_scopes: ["conversation", "actor", "runner"] },
    ...overrides,
  };
}

let events = 0;
export function message(text: string, conversationId = "conversation-1"): AgentEventEnvelopeInput {
  events++;
  return {
    event_id: `event-${events}-${Date.now()}`,
    event_type: "message.received",
    source: "platform",
    conversation_id: conversationId,
    actor: { actor_type: "user", actor_id: "user-1" },
    input: { text },
    delivery: { surface: "platform", supports_streaming: true },
  };
}

/** Every result of a run, each checked against LangBot's models. */
export async function collect(results: AsyncIterable<AgentRunResult>): Promise<AgentRunResult[]> {
  const all: AgentRunResult[] = [];
  for await (const result of results) {
    expect(langBotResultErrors(result), JSON.stringify(result)).toEqual([]);
    all.push(result);
  }
  return all;
}

export const typesOf = (results: readonly AgentRunResult[]) => results.map((result) => result.type);
