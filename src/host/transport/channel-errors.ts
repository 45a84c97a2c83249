import { KeelError } from "../../errors/keel-error.js";
import { AgentApiError } from "../wire/api-error.js";

/** Codes of the errors an action channel raises. */
export const CHANNEL_ERROR_CODES = {
  CALL_FAILED: "host.action_error",
  CALL_TIMEOUT: "host.action_timeout",
  CLOSED: "host.channel_closed",
  BUSY: "host.channel_busy",
  TOO_LARGE: "host.message_too_large",
} as const;

/** The other end answered a call with an error (`code` ≠ 0). */
export class ActionCallError extends KeelError {
  readonly action: string;
  readonly responseData: Record<string, unknown>;
  constructor(action: string, message: string, responseData: Record<string, unknown>) {
    super(`${action}: ${message}`, { code: CHANNEL_ERROR_CODES.CALL_FAILED });
    this.action = action;
    this.responseData = responseData;
  }

  /** The structured error the other end sent, when it sent one. */
  get apiError(): AgentApiError | undefined {
    const body = this.responseData.error;
    return body === undefined ? undefined : AgentApiError.fromBody(body, this.message);
  }
}

/** No answer (or, for a streamed call, no next chunk) within the timeout. */
export class ActionCallTimeoutError extends KeelError {
  constructor(action: string, timeoutMs: number) {
    super(`${action}: no response within ${timeoutMs} ms`, {
      code: CHANNEL_ERROR_CODES.CALL_TIMEOUT,
      retryable: true,
    });
  }
}

/** The channel closed, or was lost, before the call was answered. */
export class ChannelClosedError extends KeelError {
  constructor(message = "the channel is closed", cause?: unknown) {
    super(message, { code: CHANNEL_ERROR_CODES.CLOSED, ...(cause === undefined ? {} : { cause }) });
  }
}

/** Too many calls in flight on this channel. */
export class ChannelBusyError extends KeelError {
  constructor(limit: number) {
    super(`more than ${limit} actions in flight on this channel`, {
      code: CHANNEL_ERROR_CODES.BUSY,
      retryable: true,
    });
  }
}

/** A message over the transport's limits. */
export class MessageTooLargeError extends KeelError {
  constructor(message: string) {
    super(message, { code: CHANNEL_ERROR_CODES.TOO_LARGE });
  }
}
