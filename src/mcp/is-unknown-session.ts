/**
 * Whether a Streamable HTTP error is the server saying it does not know the session id the request carried (it
 * restarted, or ended the session), so it refused the request before any handler ran and sending it again on a
 * new session cannot run a tool twice. The MCP spec prescribes 404 for this. The reference server-everything
 * (an Express app written after the SDK's examples, as many servers are) answers 400 with JSON-RPC error -32000
 * "Bad Request: No valid session ID provided" instead; the SDK's `StreamableHTTPError` carries the status as
 * `code` and the response body in its message. So a 400 counts only when its text says the session id is not
 * valid or unknown: any other 400 (a malformed request, a missing header) may have been about the request itself
 * and is not retried. See docs/decisions/0008-mcp-stale-session.md.
 */
export function isUnknownSession(status: number | undefined, message: string): boolean {
  if (status === 404) return true;
  return status === 400 && UNKNOWN_SESSION_TEXT.test(message);
}

const UNKNOWN_SESSION_TEXT =
  /\b(?:no valid|not a valid|invalid|unknown|expired) session\b|\bsession(?: id)? (?:not found|is not valid|is invalid|is unknown|unknown|expired|has expired)\b/i;
