import type { Context } from "hono";
import { badRequest } from "./server-error.js";

/** The request's JSON object body; anything else (no body, bad JSON, an array) is a 400. */
export async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await c.req.text();
  } catch {
    throw badRequest("request.body", "The request body could not be read", "Send a JSON object body");
  }
  if (text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest(
      "request.json",
      "The request body is not valid JSON",
      'Send a JSON object, e.g. {"agentId": "assistant", "inputText": "Hello"}',
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw badRequest("request.json", "The request body must be a JSON object", "Send a JSON object body");
  return parsed as Record<string, unknown>;
}

export function stringField(
  body: Record<string, unknown>,
  name: string,
  options: { required: true; max?: number },
): string;
export function stringField(
  body: Record<string, unknown>,
  name: string,
  options?: { required?: false; max?: number },
): string | undefined;
export function stringField(
  body: Record<string, unknown>,
  name: string,
  options: { required?: boolean; max?: number } = {},
): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) {
    if (options.required)
      throw badRequest("request.field", `'${name}' is required`, `Give '${name}' as a string`);
    return undefined;
  }
  if (typeof value !== "string")
    throw badRequest("request.field", `'${name}' must be a string`, `Give '${name}' as a string`);
  if (options.max !== undefined && value.length > options.max)
    throw badRequest(
      "request.field",
      `'${name}' is longer than ${options.max} characters`,
      `Shorten '${name}'`,
    );
  return value;
}

export function booleanField(body: Record<string, unknown>, name: string): boolean | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean")
    throw badRequest("request.field", `'${name}' must be true or false`, `Give '${name}' as a JSON boolean`);
  return value;
}

const ID = /^[A-Za-z0-9._:-]{1,200}$/;

/** A run, session or checkpoint id: short, and of characters no store or header treats specially. */
export function checkId(value: string, what: string): string {
  if (!ID.test(value))
    throw badRequest(
      "request.id",
      `The ${what} is not a valid id`,
      `A ${what} is 1 to 200 letters, digits, '.', '_', ':' or '-'`,
    );
  return value;
}

const SEQUENCE = /^(0|[1-9][0-9]{0,14})$/;

/**
 * Where a re-attaching client left off: `Last-Event-ID` (what EventSource sends) or `?after=`, a whole number of
 * at most 15 digits; 0 when neither is given.
 */
export function afterSequenceOf(c: Context): number {
  const header = c.req.header("last-event-id");
  const query = c.req.query("after");
  const given = header ?? query;
  if (given === undefined || given === "") return 0;
  if (!SEQUENCE.test(given))
    throw badRequest(
      "request.last_event_id",
      `${header === undefined ? "?after=" : "Last-Event-ID"} must be an event's sequence, a whole number 0 or more`,
      "Send back the `id:` of the last event received, or leave it out to read the run from its start",
    );
  return Number(given);
}
