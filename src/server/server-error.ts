import { KeelError } from "../errors/keel-error.js";

/** A request the server refuses: its HTTP status, and the JSON body `{error: {code, message, hint}}` it answers. */
export class ServerRequestError extends KeelError {
  readonly status: number;

  constructor(status: number, message: string, options: { code: string; hint: string }) {
    super(message, options);
    this.status = status;
  }
}

/** The HTTP status for a Keel error the runtime raised while serving a request; 500 only for the unforeseen. */
const STATUS_OF_CODE: Record<string, number> = {
  "config.error": 400,
  "run.unknown": 404,
  "checkpoint.unknown": 404,
  "run.decision": 409,
  "run.busy": 409,
  "run.not_resumable": 409,
  "checkpoint.schema_version": 409,
  "checkpoint.agent_mismatch": 409,
  "checkpoint.invalid": 409,
  "session.queue_full": 429,
};

/** The status and body for any error a handler met; an unforeseen one says nothing of its insides. */
export function errorResponseOf(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof ServerRequestError) return { status: error.status, body: bodyOf(error) };
  if (KeelError.isInstance(error)) {
    const status = STATUS_OF_CODE[error.code];
    if (status !== undefined) return { status, body: bodyOf(error) };
  }
  return {
    status: 500,
    body: {
      error: {
        code: "server.internal",
        message: "The server failed to handle the request",
        hint: "Look at the server's log; retry the request",
      },
    },
  };
}

export interface ErrorBody {
  error: { code: string; message: string; hint: string };
}

function bodyOf(error: KeelError): ErrorBody {
  return { error: { code: error.code, message: error.message, hint: error.hint ?? "" } };
}

/** A JSON error response. */
export function errorResponse(error: unknown): Response {
  const { status, body } = errorResponseOf(error);
  return Response.json(body, { status });
}

export const badRequest = (code: string, message: string, hint: string) =>
  new ServerRequestError(400, message, { code, hint });

export const notFound = (code: string, message: string, hint: string) =>
  new ServerRequestError(404, message, { code, hint });
