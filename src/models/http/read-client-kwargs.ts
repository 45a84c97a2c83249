/** What a run's `clientKwargs` add to an HTTP provider's request. */
export interface ClientExtras {
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
}

/**
 * The parts of a run's `clientKwargs` an HTTP provider uses: `extra_headers` / `extraHeaders` (added
 * to the request's headers, last) and `extra_body` / `extraBody` (merged into the JSON body, last). Other keys
 * are for chat middleware and are not sent.
 */
export function readClientKwargs(clientKwargs: Record<string, unknown> | undefined): ClientExtras {
  if (!clientKwargs) return {};
  const extras: ClientExtras = {};
  const headers = clientKwargs.extra_headers ?? clientKwargs.extraHeaders;
  if (isRecord(headers)) {
    extras.headers = {};
    for (const [name, value] of Object.entries(headers))
      if (typeof value === "string") extras.headers[name] = value;
  }
  const body = clientKwargs.extra_body ?? clientKwargs.extraBody;
  if (isRecord(body)) extras.body = body;
  return extras;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
