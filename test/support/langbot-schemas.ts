import { readFileSync } from "node:fs";
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";

/**
 * LangBot's own runner-protocol models as JSON Schema (test/fixtures/vendor/langbot), compiled with ajv. The
 * `langbot-4.11` profile is checked against them as they are. The `seed` profile is the same models plus the
 * fields the first v1 text has and the newer one dropped — and nothing else: each addition is listed below, so
 * a field Keel invents still fails.
 */

type Schema = Record<string, unknown> & {
  properties?: Record<string, unknown>;
  $defs?: Record<string, Schema>;
};

const file = new URL("../fixtures/vendor/langbot/runner-v1.schemas.json", import.meta.url);
const vendor = JSON.parse(readFileSync(file, "utf8")) as { schemas: Record<string, Schema> };

export type LangBotModel =
  | "ActionRequest"
  | "ActionResponse"
  | "AgentAPIError"
  | "AgentRunContext"
  | "AgentRunResult"
  | "AgentRunnerManifest"
  | "EventPage"
  | "HistoryPage"
  | "MessageDeltaPayload"
  | "MessageCompletedPayload"
  | "RunCompletedPayload"
  | "RunFailedPayload"
  | "StateUpdatedPayload"
  | "ToolCallStartedPayload"
  | "ToolCallCompletedPayload"
  | "ActionRequestedPayload"
  | "SteeringPullResult"
  | "InteractionRequest"
  | "InteractionSubmission";

const bool = { type: "boolean" };
const ops = (values: string[]) => ({ type: "array", items: { enum: values, type: "string" } });
const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: "null" }] });

function seedSchema(name: LangBotModel): Schema {
  const schema = structuredClone(vendor.schemas[name]!) as Schema;
  if (name === "AgentRunnerManifest") {
    Object.assign(schema.properties!, {
      description: nullable({ type: "object", additionalProperties: { type: "string" } }),
      protocol_version: { type: "string" },
      context: { type: "object", additionalProperties: bool },
    });
    Object.assign(schema.$defs!.AgentRunnerCapabilities!.properties!, {
      event_context: bool,
      platform_api: bool,
      stateful_session: bool,
      self_managed_context: bool,
    });
    Object.assign(schema.$defs!.AgentRunnerPermissions!.properties!, {
      artifacts: ops(["metadata", "read"]),
      files: ops(["config", "knowledge"]),
      platform_api: { type: "array", items: { type: "string" } },
      storage: ops(["plugin", "workspace", "binding"]),
    });
  }
  if (name === "AgentRunContext") {
    // The first text's attachments are artifact refs; the newer one's inline attachment model forbids them.
    Object.assign(schema.$defs!.InputAttachment!.properties!, {
      artifact_id: nullable({ type: "string" }),
      artifact_type: nullable({ type: "string" }),
    });
  }
  return schema;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

/** The ajv errors of `value` against LangBot's model `name` in `profile`, or `[]` when it conforms. */
export function langBotErrors(
  name: LangBotModel,
  value: unknown,
  profile: "seed" | "langbot-4.11" = "seed",
): string[] {
  const key = `${profile}:${name}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(profile === "seed" ? seedSchema(name) : structuredClone(vendor.schemas[name]!));
    validators.set(key, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map(
    (error: ErrorObject) => `${error.instancePath || "(root)"} ${error.message ?? ""}`,
  );
}

const PAYLOAD_MODELS: Record<string, LangBotModel> = {
  "message.delta": "MessageDeltaPayload",
  "message.completed": "MessageCompletedPayload",
  "run.completed": "RunCompletedPayload",
  "run.failed": "RunFailedPayload",
  "state.updated": "StateUpdatedPayload",
  "tool.call.started": "ToolCallStartedPayload",
  "tool.call.completed": "ToolCallCompletedPayload",
  "action.requested": "ActionRequestedPayload",
};

/** A result's envelope and, for a type LangBot's models name, its payload. */
export function langBotResultErrors(result: unknown, profile: "seed" | "langbot-4.11" = "seed"): string[] {
  const errors = langBotErrors("AgentRunResult", result, profile);
  const { type, data } = result as { type?: string; data?: unknown };
  const payloadModel = type === undefined ? undefined : PAYLOAD_MODELS[type];
  if (payloadModel) errors.push(...langBotErrors(payloadModel, data, profile).map((error) => `data${error}`));
  return errors;
}
