import type * as OtelApi from "@opentelemetry/api";
import type { EventBus } from "../contracts/runtime-event.js";
import { AsyncEventBus } from "./async-event-bus.js";
import { importOtelApi } from "./import-otel-api.js";
import { OTEL_API_PACKAGE } from "./otel-api-package.js";
import { OtelBridgeEventBus } from "./otel-bridge-event-bus.js";
import type { TraceContextCarrier } from "./trace-context-carrier.js";

export { OTEL_API_PACKAGE };

/** Options of {@link createOtelBridge}. */
export interface OtelBridgeOptions {
  /** The bus every event is forwarded to first (its subscriptions and history); a new `AsyncEventBus` when absent. */
  inner?: EventBus;
  /**
   * Where the spans go: an OpenTelemetry `TracerProvider` (its `getTracer` is all that is used). Absent: the
   * global provider, as `trace.setGlobalTracerProvider()` or an SDK's `register()` installed it.
   */
  tracerProvider?: { getTracer(name: string, version?: string): unknown };
  /** Record the model's answers, tool arguments and tool results on the spans. Off by default: they may be private. */
  captureContent?: boolean;
}

/**
 * An event bus that turns runs into OpenTelemetry spans following the GenAI semantic conventions (the
 * `otel_bridge` builtin): `invoke_agent {agent}`, `chat {model}`, `execute_tool {tool}`. `@opentelemetry/api`
 * is imported here, on first use, so Keel costs nothing without it; its absence is a `PluginLoadError` that
 * says how to install it.
 *
 * @example
 * const runtime = await Runtime.fromDict({ events: await createOtelBridge(), agents: [...] });
 */
export async function createOtelBridge(
  options: OtelBridgeOptions = {},
): Promise<EventBus & TraceContextCarrier> {
  const api = await importOtelApi();
  const provider =
    (options.tracerProvider as OtelApi.TracerProvider | undefined) ?? api.trace.getTracerProvider();
  return new OtelBridgeEventBus({
    api,
    tracer: provider.getTracer("keel"),
    inner: options.inner ?? new AsyncEventBus(),
    captureContent: options.captureContent === true,
  });
}
