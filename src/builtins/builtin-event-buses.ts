import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import type { EventBus } from "../contracts/runtime-event.js";
import { AsyncEventBus, DEFAULT_MAX_HISTORY } from "../events/async-event-bus.js";
import { createOtelBridge } from "../events/create-otel-bridge.js";
import { DEFAULT_REDACT_KEYS, FileLoggingEventBus } from "../events/file-logging-event-bus.js";
import { type PluginDefinition, registerBuiltin } from "../plugins/plugin-registry.js";

/** Config of the `async` event bus. */
export const ASYNC_EVENT_BUS_CONFIG = z.object({
  max_history: z.number().int().min(0).default(DEFAULT_MAX_HISTORY),
});

/** Config of the `file_logging` event bus. */
export const FILE_LOGGING_EVENT_BUS_CONFIG = z.object({
  /** A plugin ref (or an EventBus object) for the bus events are forwarded to. */
  inner: z.unknown().default({ type: "async" }),
  log_path: z.string().min(1),
  include_events: z.array(z.string()).nullable().optional(),
  exclude_events: z.array(z.string()).default([]),
  redact_keys: z.array(z.string()).default([...DEFAULT_REDACT_KEYS]),
  max_value_length: z.number().int().positive().default(10_000),
});

/** Config of the `otel_bridge` event bus; spans go to the global OpenTelemetry tracer provider. */
export const OTEL_BRIDGE_EVENT_BUS_CONFIG = z.object({
  /** A plugin ref (or an EventBus object) for the bus events are forwarded to. */
  inner: z.unknown().default({ type: "async" }),
  /** Record model answers, tool arguments and tool results on the spans (they may hold private data). */
  capture_content: z.boolean().default(false),
});

// `parse` again inside `create`: it is idempotent on already-parsed config and fills defaults when a caller
// hands the factory raw config.
const asyncEventBus: PluginDefinition<EventBus> = {
  kind: "event_bus",
  type: "async",
  configSchema: ASYNC_EVENT_BUS_CONFIG,
  create(config) {
    const parsed = ASYNC_EVENT_BUS_CONFIG.parse(config ?? {});
    return new AsyncEventBus({ maxHistory: parsed.max_history });
  },
};

const fileLoggingEventBus: PluginDefinition<EventBus> = {
  kind: "event_bus",
  type: "file_logging",
  configSchema: FILE_LOGGING_EVENT_BUS_CONFIG,
  async create(config, context) {
    const parsed = FILE_LOGGING_EVENT_BUS_CONFIG.parse(config ?? {});
    const inner = await context.load<EventBus>("event_bus", parsed.inner);
    return new FileLoggingEventBus({
      inner,
      logPath: isAbsolute(parsed.log_path) ? parsed.log_path : resolve(context.baseDir, parsed.log_path),
      includeEvents: parsed.include_events ?? null,
      excludeEvents: parsed.exclude_events,
      redactKeys: parsed.redact_keys,
      maxValueLength: parsed.max_value_length,
    });
  },
};

const otelBridgeEventBus: PluginDefinition<EventBus> = {
  kind: "event_bus",
  type: "otel_bridge",
  configSchema: OTEL_BRIDGE_EVENT_BUS_CONFIG,
  async create(config, context) {
    const parsed = OTEL_BRIDGE_EVENT_BUS_CONFIG.parse(config ?? {});
    const inner = await context.load<EventBus>("event_bus", parsed.inner);
    return createOtelBridge({ inner, captureContent: parsed.capture_content });
  },
};

/** Register the `async`, `file_logging` and `otel_bridge` event buses; calling it again changes nothing. */
export function registerEventBusBuiltins(): void {
  registerBuiltin(asyncEventBus);
  registerBuiltin(fileLoggingEventBus);
  registerBuiltin(otelBridgeEventBus);
}
