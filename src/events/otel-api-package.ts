/** The npm package the `otel_bridge` event bus needs (an optional peer dependency of Keel). */
export const OTEL_API_PACKAGE = "@opentelemetry/api";
