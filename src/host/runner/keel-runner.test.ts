import { afterEach, describe, expect, it } from "vitest";
import { langBotErrors, langBotResultErrors } from "../../../test/support/langbot-schemas.js";
import { appConfigSchema } from "../../config/app-config-schema.js";
import type { KeelConfig } from "../../config/keel-config.js";
import { Runtime } from "../../runtime/runtime.js";
import { ActionChannel } from "../transport/action-channel.js";
import { createInMemoryTransportPair } from "../transport/in-memory-transport.js";
import { AgentApiError } from "../wire/api-error.js";
import type { AgentRunContextInput } from "../wire/run-context.js";
import { SUSPENDED_RUN_KEY } from "./keel-result-mapper.js";
import { serveKeelRunner } from "./serve-keel-runner.js";

const CONFIG: KeelConfig = {
  agents: [
    {
      id: "helper",
      name: "Helper",
      description: "Answers with the host's model and tools",
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
        {
          id: "delete_all",
          type: "host_tool",
          config: { description: "Deletes everything", approval_mode: "always" },
        },
      ],
    },
  ],
};

type ModelTurn = { text?: string; toolCall?: { name: string; arguments: Record<string, unknown> } } | "hang";

/** A host with a scripted model and one tool, speaking to a Keel runner over an in-memory channel. */
async function setUp(turns: ModelTurn[]) {
  const runtime = await Runtime.fromDict(CONFIG);
  const [hostEnd, runnerEnd] = createInMemoryTransportPair();
  const { channel: runnerChannel } = serveKeelRunner({
    runtime,
    agents: appConfigSchema().parse(CONFIG).agents,
    transport: runnerEnd,
  });
  const host = new ActionChannel({ transport: hostEnd });
  const calls: { action: string; data: Record<string, unknown> }[] = [];
  host.handle("invoke_llm_stream", async function* (data) {
    calls.push({ action: "invoke_llm_stream", data });
    const turn = turns.shift() ?? { text: "done" };
    if (turn === "hang") return await new Promise<never>(() => {});
    if (turn.text)
      for (const word of turn.text.split(" ")) yield { chunk: { role: "assistant", content: `${word} ` } };
    if (turn.toolCall) {
      const call = {
        id: `call-${calls.length}`,
        type: "function",
        function: { name: turn.toolCall.name, arguments: JSON.stringify(turn.toolCall.arguments) },
      };
      yield { chunk: { role: "assistant", content: "", tool_calls: [call], is_final: true } };
    }
  });
  host.handle("call_tool", async (data) => {
    calls.push({ action: "call_tool", data });
    return { result: { meaning: `the meaning of ${String((data.parameters as { word?: string }).word)}` } };
  });
  opened.push({ runtime, host, runnerChannel });
  return { host, calls };
}

const opened: { runtime: Runtime; host: ActionChannel; runnerChannel: ActionChannel }[] = [];
afterEach(async () => {
  for (const { runtime, host, runnerChannel } of opened.splice(0)) {
    await host.close();
    await runnerChannel.close();
    await runtime.close();
  }
});

function contextFor(runId: string, overrides: Partial<AgentRunContextInput> = {}): AgentRunContextInput {
  return {
    run_id: runId,
    trigger: { type: "message.received", source: "host_adapter" },
    event: { event_id: `event-${runId}`, event_type: "message.received", source: "host_adapter", data: {} },
    conversation: { conversation_id: "conversation-1" },
    input: { text: "What does keel mean?" },
    delivery: { surface: "platform", supports_streaming: true },
    resources: { models: [{ model_id: "model-1" }], tools: [{ tool_name: "lookup" }] },
    runtime: { trace_id: runId, deadline_at: Date.now() / 1000 + 60 },
    ...overrides,
  };
}

async function run(host: ActionChannel, context: AgentRunContextInput, runnerName = "helper") {
  const results: Record<string, unknown>[] = [];
  for await (const result of host.stream("run_agent", {
    plugin_author: "keel",
    plugin_name: "agents",
    runner_name: runnerName,
    context,
  })) {
    results.push(result);
  }
  for (const result of results) expect(langBotResultErrors(result), JSON.stringify(result)).toEqual([]);
  return results;
}

const typesOf = (results: Record<string, unknown>[]) => results.map((result) => result.type);

describe("Keel as a runner", () => {
  it("lists its agents as runners with manifests LangBot's models accept", async () => {
    const { host } = await setUp([]);
    const { runners } = (await host.call("list_agent_runners", {})) as { runners: Record<string, unknown>[] };
    expect(runners).toHaveLength(1);
    const [entry] = runners as [{ runner_name: string; manifest: Record<string, unknown> }];
    expect(entry.runner_name).toBe("helper");
    expect(entry.manifest).toMatchObject({
      id: "plugin:keel/agents/helper",
      protocol_version: "1",
      permissions: { models: ["invoke", "stream"], tools: ["detail", "call"] },
      capabilities: { steering: true, interrupt: true },
    });
    expect(langBotErrors("AgentRunnerManifest", entry.manifest)).toEqual([]);
  });

  it("runs an agent whose model and tools are the host's, streaming its answer", async () => {
    const { host, calls } = await setUp([
      { toolCall: { name: "lookup", arguments: { word: "keel" } } },
      { text: "A keel is a ship's spine" },
    ]);
    const results = await run(host, contextFor("run-1"));
    expect(typesOf(results)).toEqual([
      "tool.call.started",
      "tool.call.completed",
      "message.delta",
      "message.delta",
      "message.delta",
      "message.delta",
      "message.delta",
      "message.delta",
      "message.completed",
      "run.completed",
    ]);
    expect(results.map((result) => result.sequence)).toEqual(results.map((_, index) => index + 1));
    expect(results.every((result) => result.run_id === "run-1")).toBe(true);
    expect(results[1]!.data).toMatchObject({
      tool_name: "lookup",
      result: { meaning: "the meaning of keel" },
    });
    expect((results.at(-2)!.data as { message: { content: string } }).message.content.trim()).toBe(
      "A keel is a ship's spine",
    );
    expect(calls.map((call) => call.action)).toEqual(["invoke_llm_stream", "call_tool", "invoke_llm_stream"]);
    expect(calls.every((call) => call.data.run_id === "run-1")).toBe(true);
    expect(calls[0]!.data).toMatchObject({ llm_model_uuid: "model-1" });
  });

  it("sends no deltas when the delivery cannot stream", async () => {
    const { host } = await setUp([{ text: "plain answer" }]);
    const results = await run(
      host,
      contextFor("run-2", { delivery: { surface: "platform", supports_streaming: false } }),
    );
    expect(typesOf(results)).toEqual(["message.completed", "run.completed"]);
  });

  it("ends a suspended run runner.suspended, keeps its id in runner state, and resumes it on the next event", async () => {
    const { host, calls } = await setUp([
      { toolCall: { name: "delete_all", arguments: {} } },
      { text: "all gone" },
    ]);
    const first = await run(host, contextFor("run-3"));
    expect(typesOf(first)).toEqual(["state.updated", "run.failed"]);
    expect(first[1]!.data).toMatchObject({ code: "runner.suspended", retryable: false });
    const state = first[0]!.data as { scope: string; key: string; value: string };
    expect(state).toMatchObject({ scope: "runner", key: SUSPENDED_RUN_KEY });
    const second = await run(
      host,
      contextFor("run-4", {
        input: { text: "approve" },
        state: { runner: { [SUSPENDED_RUN_KEY]: state.value } },
      }),
    );
    expect(typesOf(second)).toContain("tool.call.completed");
    expect(second.find((result) => result.type === "state.updated")!.data).toEqual({
      scope: "runner",
      key: SUSPENDED_RUN_KEY,
      value: null,
    });
    expect(typesOf(second).slice(-2)).toEqual(["message.completed", "run.completed"]);
    expect(calls.filter((call) => call.action === "call_tool").map((call) => call.data.run_id)).toEqual([
      "run-4",
    ]);
  });

  it("keeps a suspended run in the conversation's state when the host keeps that scope, and only reads it there", async () => {
    const { host } = await setUp([{ toolCall: { name: "delete_all", arguments: {} } }, { text: "all gone" }]);
    const seeded = { conversation: { "external.conversation_id": "conversation-1" } };
    const first = await run(host, contextFor("run-c1", { state: seeded }));
    const state = first[0]!.data as { scope: string; key: string; value: string };
    expect(state).toMatchObject({ scope: "conversation", key: SUSPENDED_RUN_KEY });
    // The id under the runner scope is not this conversation's: "approve" there starts a new run.
    const elsewhere = await run(
      host,
      contextFor("run-c2", {
        input: { text: "approve" },
        state: { ...seeded, runner: { [SUSPENDED_RUN_KEY]: state.value } },
      }),
    );
    expect(typesOf(elsewhere)).not.toContain("tool.call.completed");
  });

  it("ends a cancelled run with run.failed cancelled", async () => {
    const { host, calls } = await setUp(["hang"]);
    const running = run(host, contextFor("run-5"));
    await expect.poll(() => calls.length).toBe(1);
    await expect(host.call("cancel_agent_run", { run_id: "run-5" })).resolves.toEqual({ cancelled: true });
    const results = await running;
    expect(results.at(-1)).toMatchObject({ type: "run.failed", data: { code: "cancelled" } });
  });

  it("ends a run that passes its deadline with runner.timeout, retryable", async () => {
    const { host } = await setUp(["hang"]);
    const results = await run(
      host,
      contextFor("run-6", { runtime: { trace_id: "run-6", deadline_at: Date.now() / 1000 + 0.2 } }),
    );
    expect(results.at(-1)).toMatchObject({
      type: "run.failed",
      data: { code: "runner.timeout", retryable: true },
    });
  });

  it("answers an unknown runner or a bad context with run.failed, never a transport error", async () => {
    const { host } = await setUp([]);
    expect((await run(host, contextFor("run-7"), "nobody")).at(-1)).toMatchObject({
      type: "run.failed",
      data: { code: "runner.not_found" },
    });
    const { event: _event, ...withoutEvent } = contextFor("run-8");
    expect((await run(host, withoutEvent as AgentRunContextInput)).at(-1)).toMatchObject({
      type: "run.failed",
      data: { code: "runner.invalid_context" },
    });
  });

  it("answers an interaction it did not ask with runner.interaction_unknown, running nothing", async () => {
    const { host, calls } = await setUp([]);
    const results = await run(
      host,
      contextFor("run-9", {
        event: { event_id: "e-9", event_type: "interaction.submitted", source: "host_adapter", data: {} },
        input: { interaction: { interaction_id: "pick-colour", action_id: "ok", values: {} } },
      }),
    );
    expect(typesOf(results)).toEqual(["run.failed"]);
    expect(results[0]!.data).toMatchObject({ code: "runner.interaction_unknown", retryable: false });
    expect(calls).toEqual([]);
  });

  it("pulls steering before each model call when the host offers it; the model sees it as a user message", async () => {
    const { host, calls } = await setUp([{ text: "noted" }]);
    const pulls: Record<string, unknown>[] = [];
    host.handle("steering_pull", async (data) => {
      pulls.push(data);
      if (pulls.length > 1) return { items: [] };
      const item = {
        claimed_run_id: "run-s1",
        runner_id: "plugin:keel/agents/helper",
        event: { event_id: "event-s2", event_type: "message.received", source: "platform", data: {} },
        input: { text: "and mind the tide" },
      };
      return { items: [item] };
    });
    const results = await run(
      host,
      contextFor("run-s1", { context: { available_apis: { steering_pull: true } } }),
    );
    expect(typesOf(results).slice(-2)).toEqual(["message.completed", "run.completed"]);
    expect(pulls).toEqual([{ run_id: "run-s1", mode: "all", limit: null }]);
    const messages = calls[0]!.data.messages as { role: string; content: unknown }[];
    expect(messages.slice(-2).map((message) => [message.role, message.content])).toEqual([
      ["user", "What does keel mean?"],
      ["user", "and mind the tide"],
    ]);
  });

  it("goes on without steering when the host refuses the pull, and never pulls when it is not offered", async () => {
    const { host, calls } = await setUp([{ text: "one" }, { text: "two" }]);
    let pulls = 0;
    host.handle("steering_pull", async () => {
      pulls++;
      throw new AgentApiError("not_found", "run session not found or expired");
    });
    const refused = await run(
      host,
      contextFor("run-s2", { context: { available_apis: { steering_pull: true } } }),
    );
    expect(typesOf(refused).at(-1)).toBe("run.completed");
    expect(pulls).toBe(1);
    const plain = await run(host, contextFor("run-s3"));
    expect(typesOf(plain).at(-1)).toBe("run.completed");
    expect(pulls).toBe(1);
    expect(calls.map((call) => call.action)).toEqual(["invoke_llm_stream", "invoke_llm_stream"]);
  });
});
