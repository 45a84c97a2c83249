import { afterEach, describe, expect, it } from "vitest";
import type { AgentRunContext, PendingInteraction } from "../src/host/index.js";
import { binding, collect, createTestHost, message, typesOf } from "./support/host-scenario.js";
import { langBotErrors } from "./support/langbot-schemas.js";
import { attachScriptedRunners } from "./support/scripted-runners.js";

/**
 * `interaction.requested`: a runner asks the user something through the host; the host checks the request
 * (LangBot's model, 256 KiB, 24 hours at most, 30 minutes by default), hands it to the application, and runs the
 * runner again with the answer as `interaction.submitted`.
 */

const hosts: ReturnType<typeof createTestHost>[] = [];
afterEach(async () => {
  for (const test of hosts.splice(0)) await test.host.close();
});

const ASKER = "plugin:test/scripted/asker";

async function setUp() {
  const requested: PendingInteraction[] = [];
  const test = createTestHost({ onInteraction: (interaction) => void requested.push(interaction) });
  hosts.push(test);
  const runtime = await attachScriptedRunners(test.host, [
    { name: "asker", capabilities: { interactions: true }, permissions: { interactions: ["request"] } },
    { name: "mute", capabilities: { interactions: true } },
  ]);
  const contexts: AgentRunContext[] = [];
  const ask = (payload: unknown) =>
    runtime.play(async function* (context) {
      contexts.push(context);
      if (context.event.event_type !== "interaction.submitted")
        yield {
          run_id: context.run_id,
          type: "action.requested",
          data: { action: "interaction.requested", payload },
        };
      yield { run_id: context.run_id, type: "run.completed", data: { finish_reason: "stop" } };
    });
  return { ...test, runtime, requested, contexts, ask };
}

const REQUEST = {
  interaction_id: "pick-colour",
  kind: "choice",
  title: "Which colour?",
  fields: [
    {
      id: "colour",
      label: "Colour",
      type: "select",
      required: true,
      options: [
        { value: "red", label: "Red" },
        { value: "blue", label: "Blue" },
      ],
    },
    { id: "note", label: "Note", type: "text" },
  ],
  actions: [
    { id: "ok", label: "OK", style: "primary" },
    { id: "cancel", label: "Cancel" },
  ],
  fallback_text: "Reply red or blue.",
};

const askerBinding = () => binding({ binding_id: "b-ask", runner_id: ASKER });
const auditOf = (test: ReturnType<typeof createTestHost>, action: string) =>
  test.stores.audit.entries.filter((entry) => entry.action === action).map((entry) => entry.result);

describe("interaction.requested", () => {
  it("hands a valid request to the application and runs the runner again with the answer", async () => {
    const test = await setUp();
    test.ask(REQUEST);
    const asked = await collect(test.host.run(message("ask me"), askerBinding()));
    expect(typesOf(asked)).toEqual(["action.requested", "run.completed"]);
    const payload = (asked[0]!.data as unknown as { payload: { expires_at: number } }).payload;
    // No expiry given: 30 minutes from now.
    const now = Math.floor(Date.now() / 1000);
    expect(payload.expires_at).toBeGreaterThan(now + 29 * 60);
    expect(payload.expires_at).toBeLessThanOrEqual(now + 30 * 60);
    expect(langBotErrors("InteractionRequest", payload)).toEqual([]);
    expect(test.requested).toHaveLength(1);
    expect(test.requested[0]).toMatchObject({
      runId: asked[0]!.run_id,
      request: { interaction_id: "pick-colour" },
    });
    expect(test.host.pendingInteractions()).toHaveLength(1);

    const answer = await collect(
      test.host.submitInteraction(ASKER, {
        interaction_id: "pick-colour",
        action_id: "ok",
        values: { colour: "blue", note: "navy" },
      }),
    );
    expect(typesOf(answer)).toEqual(["run.completed"]);
    const context = test.contexts.at(-1)!;
    expect(context.event.event_type).toBe("interaction.submitted");
    expect(context.conversation?.conversation_id).toBe("conversation-1");
    expect(langBotErrors("InteractionSubmission", context.input.interaction)).toEqual([]);
    expect(context.input.interaction).toMatchObject({
      interaction_id: "pick-colour",
      action_id: "ok",
      values: { colour: "blue" },
    });
    expect(langBotErrors("AgentRunContext", context, "langbot-4.11")).toEqual([]);
    // Answered once: a second answer finds nothing waiting.
    expect(() =>
      test.host.submitInteraction(ASKER, {
        interaction_id: "pick-colour",
        action_id: "ok",
        values: { colour: "red" },
      }),
    ).toThrow(expect.objectContaining({ apiCode: "not_found" }));
    expect(auditOf(test, "interaction.requested")).toEqual(["ok"]);
    expect(auditOf(test, "interaction.submitted")).toEqual(["ok", "not_found"]);
  });

  it("refuses answers that do not fit the request, leaving it waiting", async () => {
    const test = await setUp();
    test.ask(REQUEST);
    await collect(test.host.run(message("ask me"), askerBinding()));
    const codeOf = (values: Record<string, unknown>, actionId: string | null = "ok") => {
      try {
        test.host.submitInteraction(ASKER, {
          interaction_id: "pick-colour",
          action_id: actionId,
          values: values as never,
        });
        return "accepted";
      } catch (error) {
        return (error as { apiCode?: string }).apiCode;
      }
    };
    expect(codeOf({ colour: "green" })).toBe("invalid_argument");
    expect(codeOf({ note: "no colour" })).toBe("invalid_argument");
    expect(codeOf({ colour: "red", size: 3 })).toBe("invalid_argument");
    expect(codeOf({ colour: "red" }, null)).toBe("invalid_argument");
    expect(codeOf({ colour: "red" }, "launch")).toBe("invalid_argument");
    expect(() => test.host.submitInteraction(ASKER, { interaction_id: "never-asked", values: {} })).toThrow(
      expect.objectContaining({ apiCode: "not_found" }),
    );
    // Another runner cannot answer this runner's interaction.
    expect(() =>
      test.host.submitInteraction("plugin:test/scripted/mute", {
        interaction_id: "pick-colour",
        action_id: "ok",
        values: { colour: "red" },
      }),
    ).toThrow(expect.objectContaining({ apiCode: "not_found" }));
    expect(test.host.pendingInteractions()).toHaveLength(1);
    expect(auditOf(test, "interaction.submitted")).toEqual([
      "invalid_argument",
      "invalid_argument",
      "invalid_argument",
      "invalid_argument",
      "invalid_argument",
      "not_found",
      "not_found",
    ]);
  });

  it("drops a request the manifest does not permit, one over 256 KiB, one malformed and one longer than 24 hours", async () => {
    const test = await setUp();
    const now = Math.floor(Date.now() / 1000);
    const refused = [
      {
        ...REQUEST,
        fallback_text: "x".repeat(20_000),
        description: "y".repeat(10_000),
        fields: Array.from({ length: 50 }, (_, i) => ({
          id: `f${i}`,
          label: "z".repeat(512),
          type: "select",
          options: Array.from({ length: 100 }, (_, j) => ({ value: `v${j}`, label: "w".repeat(60) })),
        })),
      },
      { ...REQUEST, kind: "survey" },
      { ...REQUEST, expires_at: now + 25 * 60 * 60 },
    ];
    for (const payload of refused) {
      test.ask(payload);
      const results = await collect(test.host.run(message("ask me"), askerBinding()));
      expect(typesOf(results)).toEqual(["run.completed"]);
    }
    test.ask(REQUEST);
    const mute = await collect(
      test.host.run(
        message("ask me"),
        binding({ binding_id: "b-mute", runner_id: "plugin:test/scripted/mute" }),
      ),
    );
    expect(typesOf(mute)).toEqual(["run.completed"]);
    expect(test.requested).toEqual([]);
    expect(test.host.pendingInteractions()).toEqual([]);
    expect(auditOf(test, "interaction.requested")).toEqual([
      "payload_too_large",
      "invalid_argument",
      "invalid_argument",
      "unauthorized",
    ]);
    expect(test.warnings.filter((warning) => warning.includes("interaction request"))).toHaveLength(4);
  });
});
