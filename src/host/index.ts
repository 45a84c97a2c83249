/**
 * Keel and the host ↔ runner protocol v1 (LangBot's AgentRunner protocol): the wire types, the transports that
 * carry the plugin-runtime action protocol, Keel agents served as runners, and Keel as a host that runs them.
 */

export {
  type AgentBinding,
  type AgentBindingInput,
  AgentBindingSchema,
  type AgentEventEnvelope,
  type AgentEventEnvelopeInput,
  AgentEventEnvelopeSchema,
  type ResourcePolicy,
  type StatePolicy,
} from "./host/agent-binding.js";
export { EMBEDDING_INVALID, type Embedder } from "./host/embedder.js";
export type {
  ArtifactRecord,
  ArtifactStore,
  AuditEntry,
  AuditLog,
  BlobStorage,
  EventLogStore,
  EventRecord,
  HostStores,
  StateStore,
  TranscriptRecord,
  TranscriptStore,
} from "./host/host-stores.js";
export { createHybridKnowledgeBase } from "./host/hybrid-knowledge-base.js";
export { createInMemoryHostStores, InMemoryAuditLog } from "./host/in-memory-host-stores.js";
export {
  type AttachedRuntime,
  type HostRunOptions,
  KeelHost,
  type KeelHostOptions,
  type WebSocketAttachOptions,
} from "./host/keel-host.js";
export {
  InMemoryKnowledgeBase,
  type KnowledgeBase,
  type KnowledgeDocument,
  lexicalReranker,
  MAX_RERANK_DOCUMENTS,
  type RerankModel,
  type RerankResult,
  type RetrievalEntry,
  type RetrieveOptions,
  tokenize,
} from "./host/knowledge-base.js";
export type { InteractionOrigin, PendingInteraction } from "./host/pending-interactions.js";
export { createPostgresHostStores } from "./host/postgres-host-stores.js";
export { createPostgresKnowledgeBase, type PostgresKnowledgeBase } from "./host/postgres-knowledge-base.js";
export { createPostgresVectorKnowledgeBase } from "./host/postgres-vector-knowledge-base.js";
export { type HostFile, MAX_HOST_FILE_BYTES } from "./host/resource-answers.js";
export type { HostTool } from "./host/run-api-proxy.js";
export { DEFAULT_RUN_TIMEOUT_SECONDS } from "./host/run-context-builder.js";
export {
  InMemoryRunLedger,
  RUN_STATUSES,
  type RunLedger,
  type RunLedgerEvent,
  type RunLedgerEventsQuery,
  type RunLedgerQuery,
  type RunLedgerRecord,
  type RunLedgerStatus,
} from "./host/run-ledger.js";
export type { RunGrant } from "./host/run-session.js";
export { discoverRunners, type RunnerDescriptor } from "./host/runner-registry.js";
export { DEFAULT_EMBED_BATCH, InMemoryVectorKnowledgeBase } from "./host/vector-knowledge-base.js";
export { INLINE_ARTIFACT_BYTES } from "./runner/artifact-result.js";
export { HostRunApi, PROXY_ACTIONS, type StorageArea } from "./runner/host-run-api.js";
export { SUSPENDED_RUN_KEY } from "./runner/keel-result-mapper.js";
export {
  KeelRunner,
  type KeelRunnerOptions,
  RUNNER_ACTIONS,
  type RunnerAgent,
} from "./runner/keel-runner.js";
export {
  type KeelRunnerServer,
  listenKeelRunner,
  type RunnerChannelOptions,
  serveKeelRunner,
} from "./runner/serve-keel-runner.js";
export {
  ActionChannel,
  type ActionChannelOptions,
  type ActionContext,
  type ActionHandler,
  type CallOptions,
  type ChannelProblem,
  type ChannelProblemKind,
} from "./transport/action-channel.js";
export {
  ActionCallError,
  ActionCallTimeoutError,
  CHANNEL_ERROR_CODES,
  ChannelBusyError,
  ChannelClosedError,
  MessageTooLargeError,
} from "./transport/channel-errors.js";
export {
  DEFAULT_HEARTBEAT,
  HeartbeatLostError,
  type HeartbeatOptions,
} from "./transport/channel-heartbeat.js";
export {
  DEFAULT_MAX_FILE_BYTES,
  FILE_CHUNK_ACTION,
  FILE_CHUNK_BYTES,
  FILE_TRANSFER_ERROR_CODES,
  FileReceiver,
  type FileReceiverOptions,
  FileTransferError,
  receiveFiles,
  sendFile,
} from "./transport/file-transfer.js";
export { createInMemoryTransportPair } from "./transport/in-memory-transport.js";
export { DEFAULT_RECONNECT_POLICY, type ReconnectPolicy } from "./transport/reconnect-policy.js";
export { createStdioTransport, type StdioTransportOptions } from "./transport/stdio-transport.js";
export {
  DEFAULT_TRANSPORT_LIMITS,
  type MessageTransport,
  STDIO_CHUNK_BYTES,
  splitUtf8,
  TransportClosedError,
  type TransportEvents,
  TransportLimitError,
  type TransportLimits,
  type TransportProblem,
  WEBSOCKET_CHUNK_BYTES,
} from "./transport/transport.js";
export {
  createWebSocketTransport,
  type WebSocketTransportOptions,
  webSocketLimitOptions,
  webSocketMaxPayload,
} from "./transport/websocket-transport.js";
export {
  type ActionFrame,
  type ActionRequest,
  ActionRequestSchema,
  type ActionResponse,
  ActionResponseSchema,
  CHUNK_STATUS,
  type ChunkStatus,
  type ParsedFrame,
  parseActionFrame,
} from "./wire/action-frame.js";
export {
  AGENT_API_ERROR_CODES,
  AgentApiError,
  type AgentApiErrorBody,
  type AgentApiErrorCode,
  AgentApiErrorSchema,
} from "./wire/api-error.js";
export {
  INTERACTION_REQUESTED_ACTION,
  INTERACTION_SUBMITTED_EVENT,
  type InteractionRequest,
  type InteractionRequestInput,
  InteractionRequestSchema,
  type InteractionSubmission,
  type InteractionSubmissionInput,
  InteractionSubmissionSchema,
} from "./wire/interaction.js";
export {
  fromWireMessages,
  partsOfWireChunk,
  toWireFunctions,
  toWireMessages,
  type WireFunction,
} from "./wire/llm-messages.js";
export {
  type AgentRunnerCapabilities,
  AgentRunnerCapabilitiesSchema,
  type AgentRunnerContextPolicy,
  AgentRunnerContextPolicySchema,
  type AgentRunnerManifest,
  type AgentRunnerManifestInput,
  AgentRunnerManifestSchema,
  type AgentRunnerPermissions,
  AgentRunnerPermissionsSchema,
  type DynamicFormItem,
  formatRunnerId,
  isCompatibleProtocolVersion,
  type ListedRunner,
  PROTOCOL_VERSION,
  parseRunnerId,
  type RunnerAddress,
} from "./wire/manifest.js";
export {
  type AgentEventContext,
  type AgentInput,
  type AgentResources,
  type AgentRunContext,
  type AgentRunContextInput,
  AgentRunContextSchema,
  type AgentRunState,
  type AgentRuntimeContext,
  type ContextAccess,
  type DeliveryContext,
  STATE_SCOPES,
  type StateScope,
} from "./wire/run-context.js";
export {
  type AgentRunResult,
  type AgentRunResultType,
  type JsonValue,
  type Message,
  type MessageChunk,
  type ParsedRunResult,
  parseRunResult,
  RESULT_TYPES,
  RUN_FAILURE_CODES,
  type RunResultBody,
  type UnknownRunResult,
} from "./wire/run-result.js";
export {
  type SteeringInputItem,
  SteeringInputItemSchema,
  type SteeringPullMode,
} from "./wire/steering-item.js";
export { manifestForProfile, type WireProfile } from "./wire/wire-profile.js";
