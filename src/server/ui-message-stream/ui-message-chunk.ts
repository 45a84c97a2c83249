/**
 * The UI message chunks Keel sends to an AI SDK client (`useChat`), as the `ai` package's `uiMessageChunkSchema`
 * declares them. Only the fields of the oldest release of each major are used, because `ai` 5.0.0–5.0.216 and
 * 6.0.0–6.0.230 reject any field they do not know.
 */
export type UiMessageChunk =
  | { type: "start"; messageId?: string }
  | { type: "finish"; finishReason?: UiFinishReason }
  | { type: "abort" }
  | { type: "error"; errorText: string }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "text-start" | "text-end" | "reasoning-start" | "reasoning-end"; id: string }
  | { type: "text-delta" | "reasoning-delta"; id: string; delta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown }
  | { type: "tool-output-available"; toolCallId: string; output: unknown }
  | { type: "tool-output-error"; toolCallId: string; errorText: string }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string }
  | { type: "tool-output-denied"; toolCallId: string }
  | { type: `data-keel-${string}`; id?: string; data: unknown; transient?: boolean };

/** Why a message ended, in the values every supported major accepts. */
export type UiFinishReason = "stop" | "length" | "content-filter" | "tool-calls" | "error" | "other";

/**
 * Which major of the AI SDK the client runs: `v6` (the default) has tool approval chunks; `v5` does not, so a call
 * waiting for approval stays an `input-available` tool part there, and a denial is a tool error. `v7` gets the
 * chunks of `v6`, which its schema accepts unchanged; the chunk types only `v7` knows are not sent.
 */
export type UiMessageProfile = "v5" | "v6" | "v7";

export const UI_MESSAGE_PROFILES: readonly UiMessageProfile[] = ["v5", "v6", "v7"];
