import { createHash } from "node:crypto";
import type { ActionChannel } from "../transport/action-channel.js";
import { FILE_TRANSFER_ERROR_CODES, FileTransferError, receiveFiles } from "../transport/file-transfer.js";
import { AgentApiError } from "../wire/api-error.js";
import { INTERACTION_REQUESTED_ACTION } from "../wire/interaction.js";
import type { AgentRunnerPermissions } from "../wire/manifest.js";
import { nowSeconds } from "../wire/now-seconds.js";
import { limitResultSize } from "../wire/result-size.js";
import type { StateScope } from "../wire/run-context.js";
import { type AgentRunResult, type Message, parseRunResult } from "../wire/run-result.js";
import type { AgentBinding, AgentEventEnvelope } from "./agent-binding.js";
import type { HostStores } from "./host-stores.js";
import type { PendingInteraction, PendingInteractions } from "./pending-interactions.js";
import { checkStateValue } from "./proxy-helpers.js";

const MAX_INLINE_ARTIFACT_BYTES = 1024 * 1024;
const FILE_TORN = FILE_TRANSFER_ERROR_CODES.TORN;
const MAX_TRANSCRIPT_CHARS = 4000;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Reads a run's results as they arrive and applies their side effects on the host: state updates (checked for
 * scope, key, size and JSON), artifacts (strict base64, at most 1 MiB inline or a whole file sent beforehand
 * and named by `file_key`, scoped by the host), transcript
 * items for completed messages. A result that is malformed, for another run, repeated, or whose side effect is
 * refused is dropped with a warning; unknown types likewise. What it returns is what the host's caller sees.
 */
export class ResultApplier {
  private lastSequence = 0;
  private pendingArtifactRefs: Record<string, unknown>[] = [];

  constructor(
    private readonly run: {
      runId: string;
      runnerId: string;
      event: AgentEventEnvelope;
      stateKeys: Partial<Record<StateScope, string>>;
      /** The run's channel, where an artifact too large to come inline arrives as a file first. */
      channel: ActionChannel;
      stores: HostStores;
      warn: (message: string) => void;
      /** For `interaction.requested`: what the runner may ask, where requests wait, and who is told. */
      interactions?: {
        permissions: AgentRunnerPermissions;
        binding: AgentBinding;
        pending: PendingInteractions;
        onRequested?: ((interaction: PendingInteraction) => void) | undefined;
      };
    },
  ) {}

  /** Logs the event the run starts from and, for a message in a conversation, the user's transcript item. */
  async recordEvent(event: AgentEventEnvelope = this.run.event): Promise<void> {
    const { stores, runId, runnerId } = this.run;
    const text = event.input.text ?? "";
    await stores.events.append({
      event_id: event.event_id,
      event_type: event.event_type,
      event_time: event.event_time ?? null,
      source: event.source,
      conversation_id: event.conversation_id ?? null,
      thread_id: event.thread_id ?? null,
      actor_type: event.actor?.actor_type ?? null,
      actor_id: event.actor?.actor_id ?? null,
      subject_type: event.subject?.subject_type ?? null,
      subject_id: event.subject?.subject_id ?? null,
      input_summary: text.length > 1000 ? `${text.slice(0, 997)}...` : text,
      run_id: runId,
      runner_id: runnerId,
      metadata: {},
    });
    if (event.event_type === "message.received" && event.conversation_id) {
      await stores.transcript.append({
        event_id: event.event_id,
        conversation_id: event.conversation_id,
        thread_id: event.thread_id ?? null,
        role: "user",
        item_type: "message",
        content: text.slice(0, MAX_TRANSCRIPT_CHARS),
        artifact_refs: [],
        metadata: { actor_type: event.actor?.actor_type ?? null, actor_id: event.actor?.actor_id ?? null },
      });
    }
  }

  async apply(value: unknown): Promise<AgentRunResult | undefined> {
    const parsed = parseRunResult(value);
    if (!parsed.ok) return this.drop(`a malformed result: ${parsed.error}`);
    if (parsed.unknown) return this.drop(`a result of unknown type ${parsed.unknown.type}`);
    const limited = limitResultSize(parsed.result);
    const result = limited.result;
    if (limited.truncated)
      this.run.warn(`run ${this.run.runId}: a ${result.type} result over 1 MiB was cut to fit`);
    if (result.run_id !== this.run.runId) return this.drop(`a result for another run (${result.run_id})`);
    if (result.sequence != null) {
      if (result.sequence <= this.lastSequence)
        return this.drop(`a repeated result (sequence ${result.sequence})`);
      if (result.sequence !== this.lastSequence + 1)
        this.run.warn(
          `results ${this.lastSequence + 1}…${result.sequence - 1} of run ${result.run_id} are missing`,
        );
      this.lastSequence = result.sequence;
    }
    switch (result.type) {
      case "state.updated": {
        const key = this.run.stateKeys[result.data.scope];
        if (key === undefined)
          return this.drop(`a state update of scope ${result.data.scope}, which this run may not write`);
        let checked: ReturnType<typeof checkStateValue>;
        try {
          checked = checkStateValue(result.data.value);
        } catch (error) {
          return this.drop(`a state update of ${result.data.key}: ${(error as Error).message}`);
        }
        await this.run.stores.state.set(key, result.data.key, checked);
        return result;
      }
      case "artifact.created":
        return (await this.registerArtifact(result)) ? result : undefined;
      case "message.completed":
        await this.recordAnswer(result.data.message);
        return result;
      case "run.completed":
        if (result.data.message) await this.recordAnswer(result.data.message);
        return result;
      case "action.requested":
        if (result.data.action === INTERACTION_REQUESTED_ACTION) return this.requestInteraction(result);
        this.run.warn(
          `run ${this.run.runId} requested ${result.data.action}; platform actions are recorded, never executed`,
        );
        return result;
      default:
        return result;
    }
  }

  /**
   * The one action the host carries out: an interaction for the user. It needs the manifest's `interactions:
   * ["request"]`; the request is checked and kept, and the host application is told. A refused one is dropped,
   * with a warning and an audit record saying why.
   */
  private async requestInteraction(
    result: Extract<AgentRunResult, { type: "action.requested" }>,
  ): Promise<AgentRunResult | undefined> {
    const { runId, runnerId, event, stores, interactions } = this.run;
    const audit = (code: string, detail?: string) =>
      stores.audit.record({
        at: Date.now(),
        run_id: runId,
        runner_id: runnerId,
        action: INTERACTION_REQUESTED_ACTION,
        resource:
          typeof result.data.payload?.interaction_id === "string"
            ? `interaction:${result.data.payload.interaction_id}`
            : null,
        scope: event.conversation_id ? `conversation:${event.conversation_id}` : null,
        result: code,
        ...(detail ? { detail } : {}),
      });
    let kept: PendingInteraction;
    try {
      if (!interactions?.permissions.interactions.includes("request"))
        throw new AgentApiError("unauthorized", "the runner's manifest does not permit interactions.request");
      kept = interactions.pending.request(
        result.data.payload,
        { runId, runnerId, binding: interactions.binding, event },
        nowSeconds(),
      );
    } catch (error) {
      const refused =
        error instanceof AgentApiError ? error : new AgentApiError("invalid_argument", String(error));
      await audit(refused.apiCode, refused.message);
      return this.drop(`an interaction request: ${refused.message}`);
    }
    await audit("ok");
    interactions.onRequested?.(kept);
    return { ...result, data: { ...result.data, payload: kept.request } };
  }

  private async registerArtifact(
    result: Extract<AgentRunResult, { type: "artifact.created" }>,
  ): Promise<boolean> {
    const data = result.data;
    let content: Buffer | undefined;
    if (data.content_base64 != null && data.file_key != null)
      return this.drop("an artifact with both inline content and a file") ?? false;
    if (data.content_base64 != null) {
      if (!BASE64.test(data.content_base64))
        return this.drop("an artifact whose content is not valid base64") ?? false;
      content = Buffer.from(data.content_base64, "base64");
      if (content.length > MAX_INLINE_ARTIFACT_BYTES)
        return this.drop("an inline artifact over 1 MiB") ?? false;
    }
    if (data.file_key != null) {
      // The whole file or nothing: a torn, refused or unknown transfer leaves no artifact behind.
      try {
        content = Buffer.from(receiveFiles(this.run.channel).take(data.file_key));
      } catch (error) {
        if (!(error instanceof FileTransferError)) throw error;
        return (
          this.drop(`an artifact whose file did not arrive whole (${error.code}): ${error.message}`) ?? false
        );
      }
      const digest = createHash("sha256").update(content).digest("hex");
      if (data.sha256 != null && data.sha256 !== digest)
        return this.drop(`an artifact whose file is not the one its sha256 names (${FILE_TORN})`) ?? false;
    }
    const { event, runId, runnerId, stores } = this.run;
    await stores.artifacts.register(
      {
        artifact_id: data.artifact_id,
        artifact_type: data.artifact_type,
        mime_type: data.mime_type ?? null,
        name: data.name ?? null,
        size_bytes: content?.length ?? data.size_bytes ?? null,
        sha256: content ? createHash("sha256").update(content).digest("hex") : (data.sha256 ?? null),
        source: "runner",
        // The host decides where an artifact belongs, whatever the runner says.
        conversation_id: event.conversation_id ?? null,
        thread_id: event.thread_id ?? null,
        run_id: runId,
        runner_id: runnerId,
        metadata: data.metadata,
      },
      content,
    );
    await stores.events.append({
      event_id: `artifact:${data.artifact_id}`,
      event_type: "artifact.created",
      source: "runner",
      conversation_id: event.conversation_id ?? null,
      thread_id: event.thread_id ?? null,
      input_summary: `Artifact created: ${data.artifact_type}`,
      run_id: runId,
      runner_id: runnerId,
      metadata: {},
    });
    this.pendingArtifactRefs.push({
      artifact_id: data.artifact_id,
      artifact_type: data.artifact_type,
      mime_type: data.mime_type ?? null,
    });
    return true;
  }

  private async recordAnswer(message: Message): Promise<void> {
    const { event, stores, runId, runnerId } = this.run;
    if (!event.conversation_id) return;
    const text =
      typeof message.content === "string"
        ? message.content
        : (message.content ?? []).map((part) => part.text ?? "").join("");
    await stores.transcript.append({
      event_id: event.event_id,
      conversation_id: event.conversation_id,
      thread_id: event.thread_id ?? null,
      role: "assistant",
      item_type: "message",
      content: text.slice(0, MAX_TRANSCRIPT_CHARS),
      content_json: message as Record<string, unknown>,
      artifact_refs: this.pendingArtifactRefs,
      metadata: { run_id: runId, runner_id: runnerId },
    });
    this.pendingArtifactRefs = [];
  }

  private drop(reason: string): undefined {
    this.run.warn(`run ${this.run.runId}: dropped ${reason}`);
    return undefined;
  }
}
