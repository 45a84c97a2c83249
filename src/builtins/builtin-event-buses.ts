import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import type { EventBus } from "../contracts/runtime-event.js";
import { AsyncEventBus, DEFAULT_MAX_HISTORY } from "../events/async-event-bus.js";
import { createOtelBridge } from "../events/create-otel-bridge.js";
import { DEFAULT_REDACT_KEYS, FileLoggingEventBus } from "../events/file-logging-event-bus.js";
import { type PluginDefinition, registerBuiltin } from "../plugins/plugin-registry.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";

/** Config of the `async` event bus. */
export const asyncEventBusConfig = builtOnFirstUse(() =>
  z.object({
    max_history: z.number().int().min(0).default(DEFAULT_MAX_HISTORY),
  }),
);

/** Config of the `file_logging` event bus. */
export const fileLoggingEventBusConfig = builtOnFirstUse(() =>
  z.object({
    /** A plugin ref (or an EventBus object) for the bus events are forwarded to. */
    inner: z.unknown().default({ type: "async" }),
    log_path: z.string().min(1),
    include_events: z.array(z.string()).nullable().optional(),
    exclude_events: z.array(z.string()).default([]),
    redact_keys: z.array(z.string()).default([...DEFAULT_REDACT_KEYS]),
    max_value_length: z.number().int().positive().default(10_000),
  }),
);

/** Config of the `otel_bridge` event bus; spans go to the global OpenTelemetry tracer provider. */
export const otelBridgeEventBusConfig = builtOnFirstUse(() =>
  z.object({
    /** A plugin ref (or an EventBus object) for the bus events are forwarded to. */
    inner: z.unknown().default({ type: "async" }),
    /** Record model answers, tool arguments and tool results on the spans (they may hold private data). */
    capture_content: z.boolean().default(false),
  }),
);

// `parse` again inside `create`: it is idempotent on already-parsed config and fills defaults when a caller
// hands the factory raw config.
const asyncEventBus: PluginDefinition<EventBus> = {
  kind: "event_bus",
  type: "async",
  get configSchema() {
    return asyncEventBusConfig();
  },
  create(config) {
    const parsed = asyncEventBusConfig().parse(config ?? {});
    return new AsyncEventBus({ maxHistory: parsed.max_history });
  },
};

const fileLoggingEventBus: PluginDefinition<EventBus> = {
  kind: "event_bus",
  type: "file_logging",
  get configSchema() {
    return fileLoggingEventBusConfig();
  },
  async create(config, context) {
    const parsed = fileLoggingEventBusConfig().parse(config ?? {});
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
  get configSchema() {
    return otelBridgeEventBusConfig();
  },
  async create(config, context) {
    const parsed = otelBridgeEventBusConfig().parse(config ?? {});
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
