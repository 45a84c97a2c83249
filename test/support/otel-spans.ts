import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";

/** A finished span as the span tests compare it: what a backend would show, without SDK internals. */
export interface SpanView {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  status: { code: number; message?: string };
}

type Finished = ReturnType<InMemorySpanExporter["getFinishedSpans"]>[number];

export function viewOf(span: Finished): SpanView {
  const context = span.spanContext();
  return {
    name: span.name,
    kind: span.kind,
    traceId: context.traceId,
    spanId: context.spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    attributes: { ...span.attributes },
    events: span.events.map((event) => ({ name: event.name, attributes: { ...(event.attributes ?? {}) } })),
    status: { ...span.status },
  };
}

/** A tracer provider whose spans land in memory as they end. */
export function memoryTracing(): { provider: BasicTracerProvider; spans(): SpanView[]; reset(): void } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return {
    provider,
    spans: () => exporter.getFinishedSpans().map(viewOf),
    reset: () => exporter.reset(),
  };
}
