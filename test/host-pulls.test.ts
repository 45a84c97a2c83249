import { afterEach, describe, expect, it } from "vitest";
import type { AgentEventEnvelope } from "../src/host/index.js";
import { binding, collect, createTestHost, message, typesOf } from "./support/host-scenario.js";
import { langBotErrors } from "./support/langbot-schemas.js";
import { attachScriptedRunners, gate } from "./support/scripted-runners.js";
import { apiCodeOf } from "./support/scripted-runtime.js";

/**
 * The newer text's two context pulls, served by a Keel host to a runner written in the test: the binding's prompt
 * (`get_prompt`) and the follow-up input the application steers into a live run (`steering_pull`). Each refusal
 * has its code and its audit record.
 */

const hosts: ReturnType<typeof createTestHost>[] = [];
afterEach(async () => {
  for (const test of hosts.splice(0)) await test.host.close();
});

async function setUp() {
  const unclaimed: { runId: string; events: AgentEventEnvelope[] }[] = [];
  const test = createTestHost({
    onUnclaimedSteering: (runId, events) => void unclaimed.push({ runId, events }),
  });
  hosts.push(test);
  const runtime = await attachScriptedRunners(test.host, [
    { name: "steer", capabilities: { steering: true } },
    { name: "plain" },
  ]);
  return { ...test, runtime, unclaimed };
}

const steerBinding = (overrides: Parameters<typeof binding>[0] = {}) =>
  binding({ binding_id: "b-steer", runner_id: "plugin:test/scripted/steer", ...overrides });
const plainBinding = () => binding({ binding_id: "b-plain", runner_id: "plugin:test/scripted/plain" });
const auditOf = (test: ReturnType<typeof createTestHost>, action: string) =>
  test.stores.audit.entries.filter((entry) => entry.action === action).map((entry) => entry.result);

describe("get_prompt", () => {
  it("answers the binding's prompt, a text becoming a system message, and says so in available_apis", async () => {
    const test = await setUp();
    let prompt: unknown;
    let offered: unknown;
    test.runtime.play(async function* (context, api) {
      offered = context.context.available_apis;
      prompt = await api.prompt.get();
      yield { run_id: context.run_id, type: "run.completed", data: { finish_reason: "stop" } };
    });
    await collect(test.host.run(message("hi"), steerBinding({ prompt: "Answer in one line." })));
    expect(prompt).toEqual([{ role: "system", content: "Answer in one line." }]);
    expect(offered).toMatchObject({ prompt_get: true, steering_pull: true, run_get: true });
    expect(auditOf(test, "get_prompt")).toEqual(["ok"]);
  });

  it("is unauthorized for a binding without a prompt", async () => {
    const test = await setUp();
    let code: string | undefined;
    test.runtime.play(async function* (context, api) {
      expect(context.context.available_apis.prompt_get).toBe(false);
      code = await apiCodeOf(api.prompt.get());
      yield { run_id: context.run_id, type: "run.completed", data: { finish_reason: "stop" } };
    });
    await collect(test.host.run(message("hi"), steerBinding()));
    expect(code).toBe("unauthorized");
    expect(auditOf(test, "get_prompt")).toEqual(["unauthorized"]);
  });
});

describe("steering_pull", () => {
  it("hands a live run what the application steered into it, in order, each once, as LangBot's model reads it", async () => {
    const test = await setUp();
    const steered = gate();
    const pulls: unknown[] = [];
    test.runtime.play(async function* (context, api) {
      await steered.opened;
      pulls.push(await api.steering.pull("one-at-a-time"));
      pulls.push(await api.steering.pull("all"));
      pulls.push(await api.steering.pull("all"));
      yield { run_id: context.run_id, type: "run.completed", data: { finish_reason: "stop" } };
    });
    const running = collect(test.host.run(message("first"), steerBinding()));
    await expect.poll(() => test.host.activeRuns().length).toBe(1);
    const runId = test.host.activeRuns()[0]!;
    expect(test.host.activeRunOf("conversation-1")).toBe(runId);
    expect(test.host.steer(runId, message("second"))).toBe(true);
    expect(test.host.steer(runId, message("third"))).toBe(true);
    expect(test.host.steer(runId, message("fourth"))).toBe(true);
    steered.open();
    await running;
    const texts = pulls.map((items) =>
      (items as { input: { text: string } }[]).map((item) => item.input.text),
    );
    expect(texts).toEqual([["second"], ["third", "fourth"], []]);
    const item = (pulls[0] as Record<string, unknown>[])[0]!;
    expect(item).toMatchObject({ claimed_run_id: runId, runner_id: "plugin:test/scripted/steer" });
    expect(langBotErrors("SteeringPullResult", { items: pulls[1] })).toEqual([]);
    expect(auditOf(test, "steering_pull")).toEqual(["ok", "ok", "ok"]);
    // A claimed input is part of the conversation, as the run's own event is.
    const page = await test.stores.transcript.page({
      conversationId: "conversation-1",
      limit: 10,
      direction: "forward",
    });
    expect(page.items.map((entry) => entry.content)).toEqual(["first", "second", "third", "fourth"]);
    expect(test.unclaimed).toEqual([]);
  });

  it("refuses a runner without the steering capability, a bad mode, a wrong caller and an ended run", async () => {
    const test = await setUp();
    const codes: Record<string, string | undefined> = {};
    test.runtime.play(async function* (context, api) {
      expect(context.context.available_apis.steering_pull).toBe(false);
      codes.plain = await apiCodeOf(api.steering.pull());
      yield { run_id: context.run_id, type: "run.completed", data: { finish_reason: "stop" } };
    });
    await collect(test.host.run(message("hi"), plainBinding()));
    expect(codes.plain).toBe("unauthorized");

    const release = gate();
    test.runtime.play(async function* (context, api) {
      codes.mode = await apiCodeOf(api.steering.pull("sideways" as "all"));
      codes.limit = await apiCodeOf(api.steering.pull("all", 0));
      // Another connection naming this run is not its runner.
      const other = await attachScriptedRunners(test.host, [{ name: "other" }]);
      codes.wrongCaller = await apiCodeOf(
        other.channel.call("steering_pull", { run_id: context.run_id, mode: "all" }),
      );
      await release.opened;
      yield { run_id: context.run_id, type: "run.completed", data: { finish_reason: "stop" } };
    });
    const running = collect(test.host.run(message("hi"), steerBinding()));
    await expect.poll(() => codes.wrongCaller).toBeDefined();
    const runId = test.host.activeRuns()[0]!;
    // A runner that does not steer is given nothing to pull.
    expect(test.host.steer("no-such-run", message("x"))).toBe(false);
    expect(test.host.steer(runId, message("never pulled"))).toBe(true);
    release.open();
    await running;
    expect(codes).toMatchObject({
      mode: "invalid_argument",
      limit: "invalid_argument",
      wrongCaller: "unauthorized",
    });
    // The run ended with an input it never took: the application hears of it.
    expect(
      test.unclaimed.map((entry) => [entry.runId, entry.events.map((event) => event.input.text)]),
    ).toEqual([[runId, ["never pulled"]]]);
    codes.ended = await apiCodeOf(test.runtime.apis.at(-1)!.steering.pull());
    expect(codes.ended).toBe("not_found");
    expect(auditOf(test, "steering_pull")).toEqual([
      "unauthorized",
      "invalid_argument",
      "invalid_argument",
      "unauthorized",
      "not_found",
    ]);
  });

  it("is offered in the run context as LangBot's model has it", async () => {
    const test = await setUp();
    let context: unknown;
    test.runtime.play(async function* (received) {
      context = received;
      yield { run_id: received.run_id, type: "run.completed", data: { finish_reason: "stop" } };
    });
    const results = await collect(
      test.host.run(message("hi"), steerBinding({ prompt: [{ role: "system", content: "x" }] })),
    );
    expect(typesOf(results)).toEqual(["run.completed"]);
    expect(langBotErrors("AgentRunContext", context)).toEqual([]);
    expect(langBotErrors("AgentRunContext", context, "langbot-4.11")).toEqual([]);
  });
});
