import { afterEach, describe, expect, it } from "vitest";
import { appConfigSchema } from "../src/config/app-config-schema.js";
import {
  type LanguageModel,
  MODEL_SPECIFICATION_VERSION,
  type ModelRequest,
  type ModelStreamPart,
} from "../src/contracts/language-model.js";
import {
  ActionChannel,
  createInMemoryTransportPair,
  type KeelHostOptions,
  serveKeelRunner,
} from "../src/host/index.js";
import { MAX_RESULT_BYTES, TRUNCATED_TEXT_CHARS, TRUNCATION_MARKER } from "../src/host/wire/result-size.js";
import { Runtime } from "../src/index.js";
import { attachForeign } from "./support/foreign-runtime.js";
import {
  binding,
  collect,
  createTestHost,
  HOST_RUNNER_CONFIG,
  message,
  RUNNER_ID,
  typesOf,
} from "./support/host-scenario.js";
import { langBotErrors } from "./support/langbot-schemas.js";

/**
 * The protocol's bounds and names as LangBot's newest text states them: a result over 1 MiB of JSON is cut
 * (content to 10,000 characters and `...[truncated]`), not failed — on the host for any runner's result, on a
 * Keel runner before it sends, and for a host tool's output; and `list_runners` / `run_runner` work beside
 * `list_agent_runners` / `run_agent` in both roles.
 */

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const CUT = TRUNCATED_TEXT_CHARS + TRUNCATION_MARKER.length;

/** A Keel runner on the in-memory pair with a host whose model is `model`. */
async function attachKeel(model: LanguageModel, tools?: KeelHostOptions["tools"]) {
  const runtime = await Runtime.fromDict(HOST_RUNNER_CONFIG);
  const [hostEnd, runnerEnd] = createInMemoryTransportPair();
  const { channel } = serveKeelRunner({
    runtime,
    agents: appConfigSchema().parse(HOST_RUNNER_CONFIG).agents,
    transport: runnerEnd,
  });
  const test = createTestHost({ models: { "model-1": model }, ...(tools ? { tools } : {}) });
  await test.host.attach(hostEnd);
  closers.push(
    () => runtime.close(),
    () => channel.close(),
    () => test.host.close(),
  );
  return test;
}

/** A model that answers with one long text, or calls `report` first when asked for it. */
class LongAnswerModel implements LanguageModel {
  readonly specificationVersion = MODEL_SPECIFICATION_VERSION;
  readonly provider = "test";
  readonly modelId = "long";
  constructor(private readonly length: number) {}
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const last = request.messages.at(-1);
    if (last?.role === "user" && typeof last.content === "string" && last.content.includes("report")) {
      yield { type: "tool-call", id: "call-report", name: "report", arguments: {} };
      yield { type: "finish", stopReason: "tool_use" };
      return;
    }
    yield { type: "text-delta", text: "L".repeat(this.length) };
    yield { type: "finish", stopReason: "end_turn" };
  }
}

describe("the 1 MiB result bound", () => {
  it("cuts a foreign runner's oversize message on the host, keeps the run, and warns", async () => {
    const content = "é".repeat(MAX_RESULT_BYTES);
    const { host, warnings, stores } = await attachForeign({
      closers,
      results: [{ type: "message.completed", data: { message: { role: "assistant", content } } }],
    });
    const results = await collect(host.run(message("hi", "conversation-big"), binding()));
    expect(typesOf(results)).toEqual(["message.completed", "run.completed"]);
    const cut = (results[0]!.data as { message: { content: string } }).message.content;
    expect(cut).toHaveLength(CUT);
    expect(cut.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(warnings.some((text) => text.includes("over 1 MiB was cut"))).toBe(true);
    const transcript = await stores.transcript.page({
      conversationId: "conversation-big",
      limit: 10,
      direction: "backward",
    });
    expect(transcript.items.find((item) => item.role === "assistant")?.content).toHaveLength(4000);
  });

  it("has a Keel runner cut its own oversize answer before sending it", async () => {
    const { host, warnings } = await attachKeel(new LongAnswerModel(2 * MAX_RESULT_BYTES));
    const results = await collect(host.run(message("say a lot"), binding()));
    expect(typesOf(results).at(-1)).toBe("run.completed");
    const delta = results.find((result) => result.type === "message.delta")!;
    expect((delta.data as { chunk: { content: string } }).chunk.content).toHaveLength(CUT);
    const completed = results.find((result) => result.type === "message.completed")!;
    expect((completed.data as { message: { content: string } }).message.content).toHaveLength(CUT);
    for (const result of results)
      expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThan(MAX_RESULT_BYTES);
    // Cut by the runner: nothing arrived oversize for the host to cut.
    expect(warnings.filter((text) => text.includes("over 1 MiB"))).toEqual([]);
  });

  it("cuts a host tool's oversize output instead of failing the call", async () => {
    const { host, stores } = await attachKeel(new LongAnswerModel(10), {
      report: { description: "The long report", invoke: async () => "r".repeat(3 * MAX_RESULT_BYTES) },
    });
    const results = await collect(host.run(message("the report please"), binding()));
    expect(typesOf(results).at(-1)).toBe("run.completed");
    const completed = results.find((result) => result.type === "tool.call.completed")!;
    expect(JSON.stringify(completed.data)).toContain(TRUNCATION_MARKER);
    expect(completed.data).not.toHaveProperty("error");
    const audit = stores.audit.entries.filter((entry) => entry.action === "call_tool");
    expect(audit.map((entry) => entry.result)).toEqual(["ok"]);
  });
});

describe("the newest text's action names", () => {
  it("a Keel runner answers list_runners and run_runner as it answers the older names", async () => {
    const runtime = await Runtime.fromDict(HOST_RUNNER_CONFIG);
    const [hostEnd, runnerEnd] = createInMemoryTransportPair();
    const served = serveKeelRunner({
      runtime,
      agents: appConfigSchema().parse(HOST_RUNNER_CONFIG).agents,
      transport: runnerEnd,
    });
    const host = new ActionChannel({ transport: hostEnd });
    closers.push(
      () => runtime.close(),
      () => served.channel.close(),
    );
    const older = await host.call("list_agent_runners", { include_plugins: null });
    const newer = await host.call("list_runners", { include_plugins: null });
    expect(newer).toEqual(older);
    expect((newer.runners as unknown[]).length).toBe(1);
    for (const action of ["run_agent", "run_runner"]) {
      const results: Record<string, unknown>[] = [];
      for await (const result of host.stream(action, {
        plugin_author: "keel",
        plugin_name: "agents",
        runner_name: "helper",
        context: {
          run_id: `run-${action}`,
          trigger: { type: "message.received", source: "host_adapter" },
          event: {
            event_id: `event-${action}`,
            event_type: "message.received",
            source: "host_adapter",
            data: {},
          },
          input: { text: "hello" },
          delivery: { surface: "platform", supports_streaming: false },
          // No model granted: the run fails the same way under either name.
          resources: {},
          runtime: {},
        },
      }))
        results.push(result);
      expect(results.at(-1)).toMatchObject({ run_id: `run-${action}`, type: "run.failed" });
      expect(langBotErrors("AgentRunResult", results.at(-1))).toEqual([]);
    }
  });

  it("a Keel host falls back to list_runners and run_runner for a runtime that knows only those", async () => {
    const { host, received } = await attachForeign({ closers, newNamesOnly: true });
    expect(host.listRunners().map((runner) => [runner.id, runner.runAction])).toEqual([
      [RUNNER_ID, "run_runner"],
    ]);
    const results = await collect(host.run(message("hi"), binding()));
    expect(typesOf(results)).toEqual(["run.completed"]);
    expect(received).toEqual(["list_runners", "run_runner"]);
  });

  it("a Keel host keeps the older names for a runtime that knows them", async () => {
    const { host, received } = await attachForeign({ closers });
    await collect(host.run(message("hi"), binding()));
    expect(received).toEqual(["list_agent_runners", "run_agent"]);
  });
});
