import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { binding, collect, createTestHost, message, typesOf } from "../../../test/support/host-scenario.js";
import { ActionChannel } from "../transport/action-channel.js";
import type { ActionCallError } from "../transport/channel-errors.js";
import { createStdioTransport } from "../transport/stdio-transport.js";
import type { AgentRunContext } from "../wire/run-context.js";

const RUNNER = "plugin:evil/plugin/r";

/**
 * A plugin runtime that misbehaves on purpose, attached over stdio streams so that raw lines can be written
 * too: every refusal must carry the right error code and leave an audit record, and the host must stay up.
 */
async function attachRogue(test: ReturnType<typeof createTestHost>) {
  const toHost = new PassThrough();
  const toRuntime = new PassThrough();
  const rogue = new ActionChannel({ transport: createStdioTransport({ input: toRuntime, output: toHost }) });
  const contexts: AgentRunContext[] = [];
  let release: () => void = () => {};
  let discoverySeqId = -1;
  const extraResults: Record<string, unknown>[] = [];
  rogue.handle("list_agent_runners", async (_data, context) => {
    discoverySeqId = context.seqId;
    const manifest = {
      id: RUNNER,
      name: "r",
      label: { en_US: "R" },
      permissions: { models: ["invoke"], tools: ["call"], history: ["page"] },
    };
    return {
      runners: [
        { plugin_author: "evil", plugin_name: "plugin", runner_name: "r", manifest },
        {
          plugin_author: "evil",
          plugin_name: "plugin",
          runner_name: "v2",
          manifest: { ...manifest, id: "plugin:evil/plugin/v2", protocol_version: "2" },
        },
        {
          plugin_author: "evil",
          plugin_name: "plugin",
          runner_name: "nolabel",
          manifest: { id: "plugin:evil/plugin/nolabel", name: "x" },
        },
        {
          plugin_author: "evil",
          plugin_name: "plugin",
          runner_name: "other",
          manifest: { ...manifest, id: "plugin:evil/plugin/mismatch" },
        },
      ],
    };
  });
  rogue.handle("run_agent", async function* (data) {
    const context = data.context as AgentRunContext;
    contexts.push(context);
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    for (const result of extraResults) yield { run_id: context.run_id, ...result };
    yield { run_id: context.run_id, type: "run.completed", data: { finish_reason: "stop" }, sequence: 99 };
  });
  const runtime = await test.host.attach(createStdioTransport({ input: toHost, output: toRuntime }));
  return {
    rogue,
    runtime,
    contexts,
    extraResults,
    release: () => release(),
    discoverySeqId: () => discoverySeqId,
    writeRaw: (line: string) => toHost.write(`${line}\n`),
  };
}

const rogueBinding = () =>
  binding({
    binding_id: "rogue",
    runner_id: RUNNER,
    resource_policy: { allowed_model_uuids: ["model-1"], allowed_tool_names: ["lookup"] },
  });

async function codeOf(call: Promise<unknown>): Promise<string | undefined> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown as ActionCallError,
  );
  return error?.apiError?.apiCode;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("a host facing a misbehaving runner", () => {
  it("leaves out runners with an incompatible version, an invalid manifest or a mismatched id, with a warning each", async () => {
    const test = createTestHost();
    cleanups.push(() => test.host.close());
    const { runtime } = await attachRogue(test);
    expect(runtime.runners.map((runner) => runner.id)).toEqual([RUNNER]);
    expect(test.warnings.filter((warning) => warning.includes("left out"))).toHaveLength(3);
  });

  it("refuses every proxy call outside the run's grant with the right code and an audit record, and stays up", async () => {
    const test = createTestHost();
    cleanups.push(() => test.host.close());
    // Both runtimes serve the runner; the one attached last serves the run, the other only tries to call for it.
    const second = await attachRogue(test);
    const rogue = await attachRogue(test);
    const running = collect(test.host.run(message("hi"), rogueBinding()));
    await expect.poll(() => rogue.contexts.length).toBe(1);
    const context = rogue.contexts[0]!;
    const runId = context.run_id;
    expect(context.resources.tools.map((tool) => tool.tool_name)).toEqual(["lookup"]);
    expect(context.context.inline_policy.mode).toBe("current_event");
    const call = (action: string, data: Record<string, unknown>, channel = rogue.rogue) =>
      codeOf(channel.call(action, data));

    expect(await call("call_tool", { tool_name: "lookup", parameters: {} })).toBe("not_found");
    expect(await call("call_tool", { run_id: "no-such-run", tool_name: "lookup", parameters: {} })).toBe(
      "not_found",
    );
    expect(
      await call("call_tool", { run_id: runId, tool_name: "lookup", parameters: {} }, second.rogue),
    ).toBe("unauthorized");
    expect(
      await call("call_tool", {
        run_id: runId,
        tool_name: "lookup",
        parameters: {},
        caller_plugin_identity: "other/plugin",
      }),
    ).toBe("unauthorized");
    expect(await call("history_page", { run_id: runId, conversation_id: "someone-elses" })).toBe(
      "unauthorized",
    );
    expect(await call("call_tool", { run_id: runId, tool_name: "secret", parameters: {} })).toBe(
      "unauthorized",
    );
    expect(await call("invoke_llm", { run_id: runId, llm_model_uuid: "model-x", messages: [] })).toBe(
      "unauthorized",
    );
    expect(await call("invoke_llm_stream", { run_id: runId, llm_model_uuid: "model-1", messages: [] })).toBe(
      "unauthorized",
    );
    expect(await call("event_get", { run_id: runId, event_id: context.event.event_id })).toBe("unauthorized");
    expect(await call("state_set", { run_id: runId, scope: "subject", key: "k", value: 1 })).toBe(
      "unauthorized",
    );
    expect(
      await call("state_set", {
        run_id: runId,
        scope: "conversation",
        key: "k",
        value: "x".repeat(300 * 1024),
      }),
    ).toBe("payload_too_large");
    expect(
      await call("call_tool", {
        run_id: runId,
        tool_name: "lookup",
        parameters: { blob: "x".repeat(2 * 1024 * 1024) },
      }),
    ).toBe("payload_too_large");
    expect(await call("request_platform_action", { run_id: runId, action: "kick_member" })).toBe(
      "unauthorized",
    );
    // What the run may do still works, in between.
    await expect(
      rogue.rogue.call("call_tool", { run_id: runId, tool_name: "lookup", parameters: { word: "a" } }),
    ).resolves.toMatchObject({
      result: { meaning: "a is a ship's spine" },
    });
    await expect(rogue.rogue.call("history_page", { run_id: runId })).resolves.toMatchObject({
      has_more: false,
    });

    rogue.extraResults.push(
      { type: "state.updated", data: { scope: "subject", key: "k", value: 1 } },
      { type: "state.updated", data: { scope: "conversation", key: "big", value: "x".repeat(300 * 1024) } },
      { type: "state.updated", data: { scope: "conversation", key: "ok", value: { fine: true } } },
      { type: "message.delta", data: { chunk: { role: "assistant", content: "hi" } }, run_id: "another-run" },
      { type: "future.result", data: {} },
      {
        type: "artifact.created",
        data: { artifact_id: "a1", artifact_type: "file", content_base64: "not base64!" },
      },
    );
    rogue.release();
    const results = await running;
    expect(typesOf(results)).toEqual(["state.updated", "run.completed"]);
    expect(test.warnings.filter((warning) => warning.includes("dropped"))).toHaveLength(5);

    expect(await call("call_tool", { run_id: runId, tool_name: "lookup", parameters: {} })).toBe("not_found");
    const refusals = test.stores.audit.entries.filter((entry) => entry.result !== "ok");
    expect(refusals.map((entry) => entry.result)).toEqual([
      "not_found",
      "not_found",
      "unauthorized",
      "unauthorized",
      "unauthorized",
      "unauthorized",
      "unauthorized",
      "unauthorized",
      "unauthorized",
      "unauthorized",
      "payload_too_large",
      "payload_too_large",
      "unauthorized",
      "not_found",
    ]);
    expect(refusals.filter((entry) => entry.run_id === runId).every((entry) => entry.action.length > 0)).toBe(
      true,
    );
  });

  it("audits malformed JSON, answers to no call, answers twice and oversize frames, and stays up", async () => {
    const test = createTestHost();
    cleanups.push(() => test.host.close());
    const rogue = await attachRogue(test);
    rogue.writeRaw("{this is not json");
    rogue.writeRaw('{"seq_id": 7, "action": "call_tool", "data": 3}');
    rogue.writeRaw('{"seq_id": 123456789, "code": 0, "message": "", "data": {}, "chunk_status": "end"}');
    rogue.writeRaw(
      JSON.stringify({
        seq_id: rogue.discoverySeqId(),
        code: 0,
        message: "",
        data: { runners: [] },
        chunk_status: "end",
      }),
    );
    rogue.writeRaw(JSON.stringify({ type: "chunk_start", total_size: 17 * 1024 * 1024 }));
    rogue.writeRaw(JSON.stringify({ type: "chunk_data", data: "x", offset: 0 }));
    rogue.writeRaw(JSON.stringify({ type: "chunk_end" }));
    await expect.poll(() => test.stores.audit.entries.length).toBe(5);
    expect(test.stores.audit.entries.map((entry) => [entry.action, entry.result])).toEqual([
      ["(transport)", "invalid_argument"],
      ["(transport)", "invalid_argument"],
      ["(transport)", "invalid_argument"],
      ["(transport)", "invalid_argument"],
      ["(transport)", "payload_too_large"],
    ]);
    const running = collect(test.host.run(message("still there?"), rogueBinding()));
    await expect.poll(() => rogue.contexts.length).toBe(1);
    rogue.release();
    expect(typesOf(await running)).toEqual(["run.completed"]);
  });
});
