import { afterEach, describe, expect, it } from "vitest";
import { appConfigSchema } from "../src/config/app-config-schema.js";
import type { AgentEventEnvelopeInput, AgentRunResult, PendingInteraction } from "../src/host/index.js";
import { createInMemoryTransportPair, serveKeelRunner } from "../src/host/index.js";
import { defineTool, Runtime, SuspendToolCall } from "../src/index.js";
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
 * A Keel run that suspends inside a host run asks its decisions as the host's interactions, where the platform
 * shows them: the real Keel host and a real Keel runner over the in-memory pair, each result and each request
 * checked against LangBot's models.
 */

/** Asks the person which city; the answer is the call's result. */
const askCity = defineTool({
  name: "ask_city",
  description: "Asks the user for a city",
  execute: () => {
    throw new SuspendToolCall({ reason: "Which city?", responseSchema: { type: "string" } });
  },
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function setUp() {
  const [agent] = HOST_RUNNER_CONFIG.agents!;
  const runtime = await Runtime.fromDict({
    agents: [{ ...agent!, tools: [...(agent!.tools ?? []), askCity] }],
  });
  const [hostEnd, runnerEnd] = createInMemoryTransportPair();
  const { channel } = serveKeelRunner({
    runtime,
    agents: appConfigSchema().parse(HOST_RUNNER_CONFIG).agents,
    transport: runnerEnd,
  });
  const requested: PendingInteraction[] = [];
  const test = createTestHost({ onInteraction: (interaction) => void requested.push(interaction) });
  await test.host.attach(hostEnd);
  closers.push(
    () => runtime.close(),
    () => channel.close(),
    () => test.host.close(),
  );
  return { ...test, runtime, requested };
}

/** A message from a platform that shows forms and confirmations. */
function shown(text: string, conversationId = "conversation-1"): AgentEventEnvelopeInput {
  const event = message(text, conversationId);
  return {
    ...event,
    delivery: {
      ...event.delivery!,
      interactions: {
        field_types: ["text", "textarea", "select", "number", "boolean"],
        action_styles: ["default", "primary", "danger"],
        supports_updates: false,
      },
    },
  };
}

const WAITING_KEY = "keel.suspended_run_id";
const stateKey = (conversation = "conversation-1") => `conversation:${RUNNER_ID}:binding-1:${conversation}`;

/** The interaction requests among a run's results, each checked against LangBot's models. */
function requestsOf(results: readonly AgentRunResult[]) {
  return results
    .filter((result) => result.type === "action.requested")
    .map((result) => {
      expect(langBotErrors("ActionRequestedPayload", result.data)).toEqual([]);
      const { action, payload } = result.data as { action: string; payload: Record<string, unknown> };
      expect(action).toBe("interaction.requested");
      expect(langBotErrors("InteractionRequest", payload)).toEqual([]);
      return payload as {
        interaction_id: string;
        kind: string;
        fields: { id: string; type: string }[];
        actions: { id: string }[];
        fallback_text: string;
      };
    });
}

/** Suspends a run on `text` and returns its one interaction and the Keel run id waiting. */
async function suspend(test: Awaited<ReturnType<typeof setUp>>, text: string) {
  const results = await collect(test.host.run(shown(text), binding()));
  // A tool that suspends itself has started first.
  expect(typesOf(results).filter((type) => type !== "tool.call.started")).toEqual([
    "state.updated",
    "action.requested",
    "run.failed",
  ]);
  expect(results.at(-1)!.data).toMatchObject({ code: "runner.suspended" });
  const waiting = (await test.stores.state.get(stateKey(), WAITING_KEY)) as string;
  const [request] = requestsOf(results);
  expect(test.requested.map((pending) => pending.request.interaction_id)).toContain(request!.interaction_id);
  return { request: request!, waiting };
}

/** The answer as LangBot's `InteractionSubmission`. */
function answer(interactionId: string, actionId: string, values: Record<string, string> = {}) {
  const submission = { interaction_id: interactionId, action_id: actionId, values };
  expect(langBotErrors("InteractionSubmission", submission)).toEqual([]);
  return submission;
}

describe("a suspended Keel run asks through the host's interactions", () => {
  it("asks approval as a confirmation; approving it resumes the run, which completes", async () => {
    const test = await setUp();
    const { request, waiting } = await suspend(test, "delete everything");
    expect(request).toMatchObject({
      interaction_id: `keel:${encodeURIComponent(waiting)}:call-delete`,
      kind: "confirmation",
      fields: [],
    });
    expect(request.actions.map((action) => action.id)).toEqual(["approve", "approve_always", "deny"]);
    expect(request.fallback_text).toMatch(/reply "approve" or "deny"/i);

    const resumed = await collect(
      test.host.submitInteraction(RUNNER_ID, answer(request.interaction_id, "approve")),
    );
    expect(resumed.find((result) => result.type === "tool.call.completed")!.data).toMatchObject({
      tool_name: "delete_all",
      result: { deleted: 3 },
    });
    expect(typesOf(resumed).slice(-2)).toEqual(["message.completed", "run.completed"]);
    expect(await test.stores.state.get(stateKey(), WAITING_KEY)).toBeNull();
    expect((await test.runtime.getRun(waiting))!.status).toBe("done");
  });

  it("denies the tool when the user denies; the run finishes without calling it", async () => {
    const test = await setUp();
    const { request } = await suspend(test, "delete everything");
    const resumed = await collect(
      test.host.submitInteraction(RUNNER_ID, answer(request.interaction_id, "deny")),
    );
    const completed = resumed.find((result) => result.type === "tool.call.completed")!;
    expect(completed.data).toMatchObject({ tool_name: "delete_all", error: expect.stringMatching(/denied/) });
    expect(typesOf(resumed).at(-1)).toBe("run.completed");
    expect(test.stores.audit.entries.some((entry) => entry.action === "call_tool")).toBe(false);
  });

  it("asks a value as a one-field form; the answer is the call's result", async () => {
    const test = await setUp();
    const { request } = await suspend(test, "ask_city please");
    expect(request).toMatchObject({
      kind: "form",
      fields: [{ id: "value", type: "text" }],
    });
    expect(request.actions.map((action) => action.id)).toEqual(["submit", "deny"]);
    const resumed = await collect(
      test.host.submitInteraction(RUNNER_ID, answer(request.interaction_id, "submit", { value: "Paris" })),
    );
    expect(resumed.find((result) => result.type === "tool.call.completed")!.data).toMatchObject({
      tool_name: "ask_city",
      result: { value: "Paris" },
    });
    expect(resumed.find((result) => result.type === "message.completed")!.data).toMatchObject({
      message: { content: expect.stringContaining("Paris") },
    });
    expect(typesOf(resumed).at(-1)).toBe("run.completed");
  });

  it("asks again when the answer is empty, and takes the next one", async () => {
    const test = await setUp();
    const { request, waiting } = await suspend(test, "ask_city please");
    const empty = await collect(
      test.host.submitInteraction(RUNNER_ID, answer(request.interaction_id, "submit")),
    );
    expect(typesOf(empty)).toEqual(["action.requested", "run.failed"]);
    expect(empty.at(-1)!.data).toMatchObject({
      code: "runner.interaction_invalid",
      error: expect.stringMatching(/empty.*hint: /),
    });
    expect(requestsOf(empty)[0]!.interaction_id).toBe(request.interaction_id);
    expect((await test.runtime.getRun(waiting))!.status).toBe("waiting");
    const resumed = await collect(
      test.host.submitInteraction(RUNNER_ID, answer(request.interaction_id, "submit", { value: "Oslo" })),
    );
    expect(typesOf(resumed).at(-1)).toBe("run.completed");
  });

  it("keeps the text reply working; the interaction it leaves behind is stale and resumes nothing", async () => {
    const test = await setUp();
    const { request, waiting } = await suspend(test, "delete everything");
    const byText = await collect(test.host.run(shown("approve"), binding()));
    expect(typesOf(byText).at(-1)).toBe("run.completed");
    // The host still holds the interaction: it cannot know the text answered it.
    const late = await collect(
      test.host.submitInteraction(RUNNER_ID, answer(request.interaction_id, "approve")),
    );
    expect(typesOf(late)).toEqual(["run.failed"]);
    expect(late[0]!.data).toMatchObject({
      code: "runner.interaction_stale",
      error: expect.stringMatching(/no run waits.*hint: nothing was resumed/),
      retryable: false,
    });
    expect((await test.runtime.getRun(waiting))!.status).toBe("done");
    expect(
      test.stores.audit.entries.filter((entry) => entry.action === "call_tool" && entry.result === "ok"),
    ).toHaveLength(1);
  });

  it("asks nothing where the platform shows no interactions", async () => {
    const test = await setUp();
    const results = await collect(test.host.run(message("delete everything"), binding()));
    expect(typesOf(results)).toEqual(["state.updated", "run.failed"]);
    expect(test.requested).toEqual([]);
  });
});
