import { afterEach, describe, expect, it } from "vitest";
import { binding, collect, createTestHost, message, typesOf } from "./support/host-scenario.js";
import { langBotResultErrors } from "./support/langbot-schemas.js";
import { attachScriptedRunners, gate } from "./support/scripted-runners.js";
import { apiCodeOf } from "./support/scripted-runtime.js";

/**
 * The run ledger: the host records every run and its results; a runner reads its own runs (this one, and its
 * runner's runs of the same binding in its conversations), and cancels, appends to or ends only the run it is in.
 */

const hosts: ReturnType<typeof createTestHost>[] = [];
afterEach(async () => {
  for (const test of hosts.splice(0)) await test.host.close();
});

async function setUp() {
  // A scripted run never ends on its own once cancelled: the host ends it after this grace.
  const test = createTestHost({ cancelGraceMs: 50 });
  hosts.push(test);
  const runtime = await attachScriptedRunners(test.host, [{ name: "a" }, { name: "b" }]);
  return { ...test, runtime };
}

const bindingA = () => binding({ binding_id: "b-a", runner_id: "plugin:test/scripted/a" });
const bindingB = () => binding({ binding_id: "b-b", runner_id: "plugin:test/scripted/b" });
const completed = (runId: string) => ({
  run_id: runId,
  type: "run.completed",
  data: { finish_reason: "stop" },
});
const auditOf = (test: ReturnType<typeof createTestHost>, action: string) =>
  test.stores.audit.entries.filter((entry) => entry.action === action).map((entry) => entry.result);

describe("the run ledger", () => {
  it("records each run with its status and results; a runner reads its own runs and not others'", async () => {
    const test = await setUp();
    test.runtime.play(async function* (context) {
      yield {
        run_id: context.run_id,
        type: "message.completed",
        data: { message: { role: "assistant", content: "one" } },
      };
      yield completed(context.run_id);
    });
    const first = await collect(test.host.run(message("first"), bindingA()));
    const firstId = first[0]!.run_id;
    const elsewhere = await collect(test.host.run(message("elsewhere", "conversation-x"), bindingA()));
    const otherRunner = await collect(test.host.run(message("other runner"), bindingB()));

    const seen: Record<string, unknown> = {};
    test.runtime.play(async function* (context, api) {
      seen.own = await api.runs.get();
      seen.first = await api.runs.get(firstId);
      seen.list = await api.runs.list();
      seen.events = await api.runs.eventsPage({ runId: firstId });
      seen.elsewhere = await apiCodeOf(api.runs.get(elsewhere[0]!.run_id));
      seen.otherRunner = await apiCodeOf(api.runs.get(otherRunner[0]!.run_id));
      seen.otherConversation = await apiCodeOf(api.runs.list({ conversationId: "conversation-x" }));
      seen.badStatus = await apiCodeOf(api.runs.list({ statuses: ["lost"] }));
      yield completed(context.run_id);
    });
    const second = await collect(test.host.run(message("second"), bindingA()));
    const secondId = second[0]!.run_id;
    expect(seen.own).toMatchObject({
      run_id: secondId,
      status: "running",
      runner_id: "plugin:test/scripted/a",
    });
    expect(seen.first).toMatchObject({
      run_id: firstId,
      status: "completed",
      status_reason: "stop",
      binding_id: "b-a",
      conversation_id: "conversation-1",
    });
    const list = seen.list as { items: { run_id: string }[]; total_count: number };
    expect(list.items.map((item) => item.run_id)).toEqual([secondId, firstId]);
    expect(list.total_count).toBe(2);
    const events = seen.events as { items: { type: string; sequence: number; source: string }[] };
    expect(events.items.map((item) => [item.sequence, item.type, item.source])).toEqual([
      [1, "message.completed", "stream"],
      [2, "run.completed", "stream"],
    ]);
    expect(seen).toMatchObject({
      elsewhere: "not_found",
      otherRunner: "not_found",
      otherConversation: "unauthorized",
      badStatus: "invalid_argument",
    });
    expect(await test.host.ledger.get(secondId)).toMatchObject({ status: "completed" });
    expect(auditOf(test, "run_get")).toEqual(["ok", "ok", "not_found", "not_found"]);
    expect(auditOf(test, "run_list")).toEqual(["ok", "unauthorized", "invalid_argument"]);
    // An ended run's calls are refused like any other proxy call of an ended run.
    expect(await apiCodeOf(test.runtime.apis.at(-1)!.runs.get())).toBe("not_found");
  });

  it("cancels the run it is in, and only that one", async () => {
    const test = await setUp();
    const waiting = gate<string>();
    test.runtime.play(async function* (context) {
      waiting.open(context.run_id);
      await new Promise(() => {});
      yield completed(context.run_id);
    });
    const other = collect(test.host.run(message("other"), bindingA()));
    const otherId = await waiting.opened;
    let codes: (string | undefined)[] = [];
    test.runtime.play(async function* (context, api) {
      codes = [
        await apiCodeOf(api.runs.cancel({ runId: otherId })),
        await apiCodeOf(api.runs.cancel({ reason: "done here" })),
      ];
      await new Promise(() => {});
      yield completed(context.run_id);
    });
    const results = await collect(test.host.run(message("cancel me"), bindingA()));
    expect(codes).toEqual(["unauthorized", undefined]);
    expect(results.at(-1)).toMatchObject({ type: "run.failed", data: { code: "cancelled" } });
    expect(await test.host.ledger.get(results[0]!.run_id)).toMatchObject({
      status: "cancelled",
      cancel_requested_at: expect.any(Number),
    });
    expect(test.host.cancel(otherId)).toBe(true);
    await other;
    expect(auditOf(test, "run_cancel")).toEqual(["unauthorized", "ok"]);
  }, 15_000);

  it("delivers an appended result as the stream's own and ends the run on run_finalize", async () => {
    const test = await setUp();
    const answers: unknown[] = [];
    test.runtime.play(async function* (context, api) {
      const appended = {
        run_id: context.run_id,
        type: "message.completed",
        data: { message: { role: "assistant", content: "from the side" } },
      };
      answers.push(await api.runs.appendResult(appended));
      answers.push(await apiCodeOf(api.runs.appendResult({ ...appended, type: "run.completed", data: {} })));
      answers.push(await apiCodeOf(api.runs.appendResult({ ...appended, run_id: "another" })));
      answers.push(await apiCodeOf(api.runs.appendResult({ ...appended, data: { message: 3 } })));
      answers.push(await apiCodeOf(api.runs.finalize({ status: "running" as "completed" })));
      answers.push(await api.runs.finalize({ status: "completed", reason: "answered through the ledger" }));
      await new Promise(() => {});
      yield completed(context.run_id);
    });
    const results = await collect(test.host.run(message("append"), bindingA()));
    const runId = results[0]!.run_id;
    expect(typesOf(results)).toEqual(["message.completed", "run.completed"]);
    expect(results.every((result) => langBotResultErrors(result).length === 0)).toBe(true);
    expect(results[1]!.data).toMatchObject({ finish_reason: "answered through the ledger" });
    expect(answers[0]).toMatchObject({
      run_id: runId,
      sequence: 1,
      type: "message.completed",
      source: "append",
    });
    // A result for another run names another run: that is acting on a run not its own.
    expect(answers.slice(1, 5)).toEqual([
      "invalid_argument",
      "unauthorized",
      "invalid_argument",
      "invalid_argument",
    ]);
    // The run may end before the runner reads the answer to its finalize.
    await expect.poll(() => answers.length).toBe(6);
    expect(answers[5]).toMatchObject({ run_id: runId, status: "completed" });
    expect(await test.host.ledger.get(runId)).toMatchObject({
      status: "completed",
      status_reason: "answered through the ledger",
    });
    // The appended answer is the conversation's, as a streamed one would be.
    const page = await test.stores.transcript.page({
      conversationId: "conversation-1",
      limit: 10,
      direction: "forward",
    });
    expect(page.items.map((item) => [item.role, item.content])).toEqual([
      ["user", "append"],
      ["assistant", "from the side"],
    ]);
    expect(auditOf(test, "run_append_result")).toEqual([
      "ok",
      "invalid_argument",
      "unauthorized",
      "invalid_argument",
    ]);
    expect(auditOf(test, "run_finalize")).toEqual(["invalid_argument", "ok"]);
  });

  it("refuses a call for a run another connection started, and one without a run id", async () => {
    const test = await setUp();
    const release = gate();
    let codes: (string | undefined)[] = [];
    test.runtime.play(async function* (context) {
      const intruder = await attachScriptedRunners(test.host, [{ name: "intruder" }]);
      codes = [
        await apiCodeOf(intruder.channel.call("run_get", { run_id: context.run_id })),
        await apiCodeOf(intruder.channel.call("run_finalize", { run_id: context.run_id, status: "failed" })),
        await apiCodeOf(intruder.channel.call("run_list", {})),
      ];
      await release.opened;
      yield completed(context.run_id);
    });
    const running = collect(test.host.run(message("mine"), bindingA()));
    await expect.poll(() => codes.length).toBe(3);
    release.open();
    expect(typesOf(await running)).toEqual(["run.completed"]);
    expect(codes).toEqual(["unauthorized", "unauthorized", "not_found"]);
  });
});
