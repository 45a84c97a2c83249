/**
 * S1 with tracing: the S1 run (11 model calls, 10 tool calls) on the default async bus and on the `otel_bridge`
 * bus: with the OpenTelemetry API alone (non-recording spans), and with the SDK's BasicTracerProvider and a
 * no-op span processor, a batch processor or a simple one (each span handed to the exporter as it ends), the
 * exporter dropping every span. µs of wall time per step each way; the difference is what tracing adds per step
 * (one `chat` and one `execute_tool` span, and a share of the run's `invoke_agent` span). Needs
 * @opentelemetry/sdk-trace-base (a devDependency); skipped with a warning without it.
 */

import { createOtelBridge } from "../../dist/index.js";
import { keelLoopImpl, loopImpls } from "../loop-impls.mjs";
import { measureLoopOverhead } from "../loop-overhead.mjs";
import { check, round } from "../measure.mjs";

const TOOL_STEPS = 10;

/** An exporter that takes every span and drops it. */
const DROP_EXPORTER = {
  export(_spans, resultCallback) {
    resultCallback({ code: 0 });
  },
  shutdown: () => Promise.resolve(),
  forceFlush: () => Promise.resolve(),
};

export async function s1Otel({ quick, log }) {
  let api;
  let sdk;
  try {
    api = await import("@opentelemetry/api");
    sdk = await import("@opentelemetry/sdk-trace-base");
  } catch (error) {
    log(`  S1-otel skipped: ${error.message}`);
    return [];
  }
  const providers = {
    // The API alone, no SDK: every span is a non-recording one. What selecting the bus costs by itself.
    "api-only": api.trace.getTracerProvider(),
    // The SDK records every span and hands it to no processor's exporter: the bridge and span creation.
    "sdk-noop-processor": new sdk.BasicTracerProvider({ spanProcessors: [new sdk.NoopSpanProcessor()] }),
    batch: new sdk.BasicTracerProvider({ spanProcessors: [new sdk.BatchSpanProcessor(DROP_EXPORTER)] }),
    simple: new sdk.BasicTracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor(DROP_EXPORTER)] }),
  };
  let ended = 0;
  const counting = new sdk.BasicTracerProvider({
    spanProcessors: [
      { onStart() {}, onEnd: () => ended++, forceFlush: async () => {}, shutdown: async () => {} },
    ],
  });
  const bridge = (tracerProvider) => () => createOtelBridge({ tracerProvider });
  // One run on a counting provider: the spans a run makes, so the figure can be put per span too.
  {
    const impl = keelLoopImpl(TOOL_STEPS, { impl: "count", events: await bridge(counting)() });
    const instance = await impl.open();
    await instance.runOnce();
    await instance.close();
  }
  check(ended === 2 * TOOL_STEPS + 2, `a traced S1 run made ${ended} spans, not ${2 * TOOL_STEPS + 2}`);
  const impls = (toolSteps) => [
    loopImpls(toolSteps)[0],
    ...Object.entries(providers).map(([name, provider]) => tracedImpl(toolSteps, name, bridge(provider))),
  ];
  const measured = await measureLoopOverhead([TOOL_STEPS], {
    impls,
    reps: quick ? 2 : 11,
    minMs: quick ? 100 : 400,
    minRuns: quick ? 20 : 100,
    warmupMs: quick ? 200 : 1000,
    log,
  });
  await Promise.all(Object.values(providers).map((provider) => provider.shutdown?.()));
  api.trace.disable();
  const off = measured.get("keel").get(TOOL_STEPS);
  return Object.keys(providers).map((name) => {
    const on = measured.get(`keel otel ${name}`).get(TOOL_STEPS);
    const added = on.usPerStepWall - off.usPerStepWall;
    return {
      scenario: "S1-otel",
      impl: "keel",
      processor: name,
      usPerStepWallOff: round(off.usPerStepWall),
      usPerStepWallOn: round(on.usPerStepWall),
      usPerStepAdded: round(added),
      usPerSpan: round((added * (TOOL_STEPS + 1)) / ended),
      spansPerRun: ended,
      usPerStepCpuAdded: round(on.usPerStepCpu - off.usPerStepCpu),
    };
  });
}

/** Keel on the S1 workload with a fresh `otel_bridge` bus per instance. */
function tracedImpl(toolSteps, name, makeBus) {
  return {
    impl: `keel otel ${name}`,
    async open() {
      const bus = await makeBus();
      const instance = await keelLoopImpl(toolSteps, { impl: `keel otel ${name}`, events: bus }).open();
      return {
        runOnce: instance.runOnce,
        close: async () => {
          await instance.close();
          await bus.close();
        },
      };
    },
  };
}
