import { describe, expect, it } from "vitest";
import { langBotErrors } from "../../../test/support/langbot-schemas.js";
import type { SuspendedToolCall } from "../../contracts/run-types.js";
import { DeliveryContextSchema } from "../wire/run-context.js";
import {
  decisionOfSubmission,
  interactionSupportOf,
  parseSuspensionInteractionId,
  submittedInteraction,
  suspensionInteractionId,
  suspensionInteractions,
} from "./suspension-interactions.js";

const approval: SuspendedToolCall = {
  toolCallId: "call:1",
  toolId: "delete_all",
  params: { everything: true },
  resumeMode: "replay_tool_call",
};
const askNumber: SuspendedToolCall = {
  toolCallId: "call-2",
  toolId: "ask_count",
  params: {},
  reason: "How many?",
  resumeMode: "use_decision_as_tool_result",
  responseSchema: { type: "integer" },
};

const supportOf = (interactions: unknown) =>
  interactionSupportOf(DeliveryContextSchema.parse({ surface: "platform", interactions }));

const payloadsOf = (calls: SuspendedToolCall[], interactions: unknown) =>
  suspensionInteractions("run/1", calls, supportOf(interactions)!).map((result) => {
    const payload = (result.data as { payload: Record<string, unknown> }).payload;
    expect(langBotErrors("InteractionRequest", payload)).toEqual([]);
    return payload as { kind: string; fields: { type: string }[]; actions: { id: string; style: string }[] };
  });

const submission = (action_id: string | null, values: Record<string, unknown> = {}) => ({
  interaction_id: "x",
  action_id,
  values: values as Record<string, never>,
  submitted_at: null,
});

describe("suspension interactions", () => {
  it("names the run and the call in the id, whatever characters they hold", () => {
    const id = suspensionInteractionId("run:a/b", "call:1");
    expect(parseSuspensionInteractionId(id)).toEqual({ runId: "run:a/b", toolCallId: "call:1" });
    expect(parseSuspensionInteractionId("pick-colour")).toBeUndefined();
    expect(parseSuspensionInteractionId("keel:only-one-part")).toBeUndefined();
  });

  it("is offered only where the delivery names interactions", () => {
    expect(interactionSupportOf(DeliveryContextSchema.parse({ surface: "platform" }))).toBeUndefined();
    expect(supportOf({})).toEqual({ fieldTypes: undefined, actionStyles: undefined });
  });

  it("asks a number in a number field, or in a text field read as a number where the platform has none", () => {
    const [numberField] = payloadsOf([askNumber], { field_types: ["text", "number"] });
    expect(numberField!.fields[0]!.type).toBe("number");
    const [textField] = payloadsOf([askNumber], { field_types: ["text"], action_styles: ["default"] });
    expect(textField!.fields[0]!.type).toBe("text");
    expect(textField!.actions.every((action) => action.style === "default")).toBe(true);
    expect(decisionOfSubmission(askNumber, submission("submit", { value: " 42 " }))).toEqual({
      toolCallId: "call-2",
      action: "approve",
      value: 42,
    });
    expect(decisionOfSubmission(askNumber, submission("submit", { value: "many" }))).toEqual({
      invalid: expect.stringMatching(/does not fit/),
    });
  });

  it("asks no form where the platform shows no field, and still asks a confirmation", () => {
    const payloads = payloadsOf([askNumber, approval], { field_types: [], max_fields: 0 });
    expect(payloads.map((payload) => payload.kind)).toEqual(["confirmation"]);
  });

  it("offers a choice among a schema's strings as a select", () => {
    const call = { ...askNumber, responseSchema: { enum: ["red", "blue"] } };
    const [form] = payloadsOf([call], {});
    expect(form!.fields[0]).toMatchObject({ type: "select", options: [{ value: "red" }, { value: "blue" }] });
  });

  it("reads approve, approve for the run and deny on a confirmation, and refuses other actions", () => {
    expect(decisionOfSubmission(approval, submission("approve"))).toEqual({
      toolCallId: "call:1",
      action: "approve",
    });
    expect(decisionOfSubmission(approval, submission("approve_always"))).toEqual({
      toolCallId: "call:1",
      action: "approve",
      always: true,
    });
    expect(decisionOfSubmission(approval, submission("deny"))).toMatchObject({ action: "deny" });
    expect(decisionOfSubmission(approval, submission("submit"))).toEqual({
      invalid: "the confirmation has no action submit",
    });
  });

  it("ends an answer it cannot place with a typed run.failed and resumes nothing", async () => {
    const getRun = async () => ({ status: "waiting", pendingToolCalls: [approval] });
    const failureOf = async (interaction: unknown, waiting?: string) => {
      const answered = await submittedInteraction({ interaction, waiting, getRun, support: undefined });
      expect("results" in answered).toBe(true);
      const results = (answered as { results: { type: string; data: Record<string, unknown> }[] }).results;
      expect(results.at(-1)!.type).toBe("run.failed");
      expect(langBotErrors("RunFailedPayload", results.at(-1)!.data)).toEqual([]);
      return results.at(-1)!.data;
    };
    expect(await failureOf({ interaction_id: "pick-colour", values: {} })).toMatchObject({
      code: "runner.interaction_unknown",
      error: expect.stringContaining("hint: "),
    });
    expect(await failureOf({ values: {} })).toMatchObject({ code: "runner.interaction_unknown" });
    const id = suspensionInteractionId("run-1", "call:1");
    expect(await failureOf({ interaction_id: id, action_id: "approve" }, "run-2")).toMatchObject({
      code: "runner.interaction_stale",
    });
    const other = suspensionInteractionId("run-1", "call-9");
    expect(await failureOf({ interaction_id: other, action_id: "approve" }, "run-1")).toMatchObject({
      code: "runner.interaction_stale",
      error: expect.stringMatching(/already decided/),
    });
    expect(
      await submittedInteraction({
        interaction: { interaction_id: id, action_id: "approve_always" },
        waiting: "run-1",
        getRun,
        support: undefined,
      }),
    ).toEqual({
      resume: { runId: "run-1", decisions: [{ toolCallId: "call:1", action: "approve", always: true }] },
    });
  });
});
