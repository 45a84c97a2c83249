import type * as OtelApi from "@opentelemetry/api";
import type { RunTraceContext } from "../contracts/run-types.js";
import { importOtelApi } from "./import-otel-api.js";

let loading: Promise<typeof OtelApi | undefined> | undefined;

/**
 * The W3C trace context of the span active here, or undefined when there is none or `@opentelemetry/api` is not
 * installed — a project without OpenTelemetry pays one failed import, once.
 */
export async function activeTraceContext(): Promise<RunTraceContext | undefined> {
  loading ??= importOtelApi().catch(() => undefined);
  const api = await loading;
  const span = api?.trace.getActiveSpan();
  if (api === undefined || span === undefined) return undefined;
  const context = span.spanContext();
  return api.trace.isSpanContextValid(context) ? traceContextOfSpan(context) : undefined;
}

/** The W3C form of a span's context. */
export function traceContextOfSpan(context: OtelApi.SpanContext): RunTraceContext {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, "0");
  const carried: RunTraceContext = { traceparent: `00-${context.traceId}-${context.spanId}-${flags}` };
  const state = context.traceState?.serialize();
  if (state) carried.tracestate = state;
  return carried;
}
