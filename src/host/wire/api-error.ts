import { z } from "zod";
import { KeelError } from "../../errors/keel-error.js";

/** The codes a host answers a refused or failed proxy call with. Branch on them, never on the message. */
export const AGENT_API_ERROR_CODES = {
  UNAUTHORIZED: "unauthorized",
  NOT_FOUND: "not_found",
  DEADLINE_EXCEEDED: "deadline_exceeded",
  PAYLOAD_TOO_LARGE: "payload_too_large",
  RATE_LIMITED: "rate_limited",
  INVALID_ARGUMENT: "invalid_argument",
  RUNTIME_ERROR: "runtime_error",
} as const;
export type AgentApiErrorCode = (typeof AGENT_API_ERROR_CODES)[keyof typeof AGENT_API_ERROR_CODES];

export const AgentApiErrorSchema = z.looseObject({
  code: z.string(),
  message: z.string(),
  retryable: z.boolean().default(false),
  details: z.record(z.string(), z.unknown()).default({}),
});
/** The error object as it travels in a failed response's `data.error`. */
export type AgentApiErrorBody = z.infer<typeof AgentApiErrorSchema>;

/**
 * A proxy call the host refused or could not serve. Its `apiCode` is the wire code (`unauthorized`, …); its Keel
 * `code` is `host.<apiCode>` so it reads like every other Keel error.
 */
export class AgentApiError extends KeelError {
  readonly apiCode: string;
  readonly details: Record<string, unknown>;

  constructor(
    apiCode: AgentApiErrorCode | (string & {}),
    message: string,
    options: { retryable?: boolean; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, {
      code: `host.${apiCode}`,
      retryable: options.retryable ?? apiCode === AGENT_API_ERROR_CODES.RATE_LIMITED,
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.apiCode = apiCode;
    this.details = options.details ?? {};
  }

  toBody(): AgentApiErrorBody {
    return { code: this.apiCode, message: this.message, retryable: this.retryable, details: this.details };
  }

  /** Reads an error body back; a body that is not one becomes a `runtime_error` carrying the text. */
  static fromBody(body: unknown, fallbackMessage: string): AgentApiError {
    const parsed = AgentApiErrorSchema.safeParse(body);
    if (!parsed.success) return new AgentApiError(AGENT_API_ERROR_CODES.RUNTIME_ERROR, fallbackMessage);
    const { code, message, retryable, details } = parsed.data;
    return new AgentApiError(code, message, { retryable, details });
  }
}
