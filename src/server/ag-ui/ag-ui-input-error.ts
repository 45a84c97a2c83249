import { KeelError } from "../../errors/keel-error.js";

/** A request to the AG-UI endpoint Keel cannot act on: a malformed body, an unknown agent, a bad resume. */
export class AgUiInputError extends KeelError {
  /** The HTTP status the endpoint answers with. */
  readonly status: 400 | 404 | 409;
  constructor(message: string, options: { hint: string; status?: 400 | 404 | 409; code?: string }) {
    super(message, { hint: options.hint, code: options.code ?? "server.bad_request", retryable: false });
    this.status = options.status ?? 400;
  }
}
