/**
 * The AG-UI wire shapes Keel produces and reads, written out here rather than imported: `@ag-ui/core` is only a
 * test dependency, and a published declaration must not name a package the user may not have.
 */

/** Which AG-UI event set a stream keeps to: `0.0.59` (what `@copilotkit/runtime` pins) or `1.0`. */
export type AgUiProfile = "0.0.59" | "1.0";

export const AG_UI_PROFILES: readonly AgUiProfile[] = ["0.0.59", "1.0"];

/** One AG-UI event as it goes on the wire; `type` names it, the other keys are the event's own. */
export interface AgUiEvent {
  readonly type: string;
  readonly [key: string]: unknown;
}

/** Something a paused run needs before it can go on: here, a decision on one suspended tool call. */
export interface AgUiInterrupt {
  id: string;
  reason: string;
  message?: string;
  toolCallId?: string;
  responseSchema?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/** A client's answer to one interrupt, in `RunAgentInput.resume`. */
export interface AgUiResumeEntry {
  interruptId: string;
  status: "resolved" | "cancelled";
  payload?: unknown;
  metadata?: Record<string, unknown>;
}

/** One message of `RunAgentInput.messages`; only what Keel reads of it is typed. */
export interface AgUiMessage {
  id: string;
  role: string;
  content?: unknown;
  [key: string]: unknown;
}

/** The body `HttpAgent` posts: the thread, the run, the client's view of the conversation, and answers. */
export interface RunAgentInput {
  threadId: string;
  runId: string;
  parentRunId?: string;
  protocolVersion?: string;
  state?: unknown;
  messages: AgUiMessage[];
  tools?: unknown[];
  context?: unknown[];
  forwardedProps?: unknown;
  resume?: AgUiResumeEntry[];
}
