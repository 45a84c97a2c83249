import { AsyncLocalStorage } from "node:async_hooks";
import { type Context, type ContextManager, ROOT_CONTEXT } from "@opentelemetry/api";
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

/**
 * A context manager on AsyncLocalStorage, as `@opentelemetry/context-async-hooks` provides (not installed here):
 * with it, the span made active by `context.with` is the one `context.active()` sees across awaits.
 */
export class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  // biome-ignore lint/complexity/useMaxParams: the signature is OpenTelemetry's ContextManager.with
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(context, () => fn.apply(thisArg, args));
  }

  bind<T>(_context: Context, target: T): T {
    return target;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}
