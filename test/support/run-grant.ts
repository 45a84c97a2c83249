import { computeRunGrant, type HostResourceIndex } from "../../src/host/host/run-session.js";
import {
  type AgentBindingInput,
  AgentBindingSchema,
  type AgentEventEnvelopeInput,
  AgentEventEnvelopeSchema,
  AgentRunnerManifestSchema,
  type RunGrant,
} from "../../src/host/index.js";
import { RUNNER_ID } from "./host-scenario.js";

const RESOURCES: HostResourceIndex = {
  models: new Map([["model-1", { provider: "test" }]]),
  tools: new Map([["lookup", {}]]),
  knowledgeBases: new Map(),
};

/**
 * The grant a run gets: a runner that invokes models and calls tools (plus `permissions`), a binding allowing
 * model-1 and lookup (plus `binding`), a message in conversation `own` (plus `event`).
 */
export function grantFor(options: {
  permissions?: Record<string, unknown>;
  binding?: Partial<AgentBindingInput>;
  event?: Partial<AgentEventEnvelopeInput>;
  authorize?: (grant: RunGrant) => RunGrant;
}): RunGrant {
  return computeRunGrant({
    manifest: AgentRunnerManifestSchema.parse({
      id: RUNNER_ID,
      name: "helper",
      label: { en_US: "Helper" },
      permissions: { models: ["invoke"], tools: ["call"], ...options.permissions },
    }),
    binding: AgentBindingSchema.parse({
      binding_id: "b",
      runner_id: RUNNER_ID,
      ...options.binding,
      resource_policy: {
        allowed_model_uuids: ["model-1"],
        allowed_tool_names: ["lookup"],
        ...options.binding?.resource_policy,
      },
    }),
    event: AgentEventEnvelopeSchema.parse({
      event_id: "e",
      event_type: "message.received",
      conversation_id: "own",
      ...options.event,
    }),
    resources: RESOURCES,
    authorize: options.authorize ? (grant) => options.authorize!(grant) : undefined,
  });
}
