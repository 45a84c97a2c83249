/**
 * What the `otel_bridge` bus and the OpenTelemetry SDK cost per S1 step, without the run loop around them: the
 * events of one recorded S1 run (11 steps: 11 model calls, 10 tool calls) are published into a bridge over a
 * bus that drops them, again and again. Not part of `npm run bench`; `npm run build` first.
 *
 *   node bench/otel-bridge-replay.mjs [dist folder]          # CPU µs per step (median of batches) per mode
 *   node bench/otel-bridge-replay.mjs --instructions [dist]  # instructions per step, from callgrind
 *   node bench/otel-bridge-replay.mjs --bytes [dist]         # heap bytes allocated per step
 *
 * Modes: `plain` — the events into the dropping bus alone; `api` — through the bridge with the API alone (no
 * SDK: non-recording spans); `sdk` — through the bridge on the SDK's BasicTracerProvider with a no-op span
 * processor; `bare` — no bridge, just the spans the SDK makes for a run (one `startSpan().end()` per model call
 * and per tool call, and one for the run), what the SDK costs by itself; `same` — no bridge, the SDK making the
 * very spans the bridge makes (names, kinds, parents, start attributes and attributes set later). `api − plain`
 * and `sdk − plain` are what tracing adds per step; `sdk − plain − same` is the bridge's own part of it, and
 * `same − bare` the SDK's work on the parents and the attributes the conventions ask for; `unsampled` — through
 * the bridge on the SDK with `ParentBased(TraceIdRatioBased(0))`, every run sampled out.
 *
 * `--bytes` runs each mode in a child whose young generation is large enough that nothing is collected while
 * it measures, and reads the heap's growth: bytes allocated, steady to a few per cent from one process to the next.
 *
 * `--instructions` runs each mode under valgrind's callgrind twice (N1 and N2 replays after the same warm-up);
 * (I(N2) − I(N1)) / ((N2 − N1) × 11) is instructions per step with start-up and warm-up cancelled. A run loop
 * under callgrind varies by ±10 % from one process to the next (JIT timing), which hides a few thousand
 * instructions; this replay is short and steady enough to show them.
 */
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { allocatedBytes, noCollectionFlags } from "./measure.mjs";

const STEPS = 11;
const SELF = fileURLToPath(import.meta.url);
const MODES = ["plain", "api", "sdk", "bare", "same", "unsampled"];

const args = process.argv.slice(2);
if (args[0] === "child") await child(args[1], args[2], { warmup: Number(args[3]), runs: Number(args[4]) });
else if (args[0] === "bytes-child") await bytesChild(args[1], args[2]);
else if (args[0] === "--instructions") await instructions(resolve(args[1] ?? "dist"));
else if (args[0] === "--bytes") await bytes(resolve(args[1] ?? "dist"));
else await timings(resolve(args[0] ?? "dist"));

/** A replayer of one mode: `replay()` publishes one run's events (or makes its spans, for `bare`). */
async function replayer(dist, mode) {
  const keel = await import(pathToFileURL(`${dist}/index.js`).href);
  const { keelLoopImpl } = await import("./loop-impls.mjs");
  const events = [];
  const recorder = new keel.AsyncEventBus();
  const publish = recorder.publish.bind(recorder);
  recorder.publish = (event) => {
    events.push(event);
    publish(event);
  };
  const instance = await keelLoopImpl(STEPS - 1, { events: recorder }).open();
  await instance.runOnce();
  await instance.close();
  const dropping = {
    publish() {},
    emit() {},
    subscribe: () => () => {},
    getHistory: () => [],
    clearHistory() {},
    flush: async () => {},
    close: async () => {},
  };
  const sdk = await import("@opentelemetry/sdk-trace-base");
  const provider = new sdk.BasicTracerProvider({ spanProcessors: [new sdk.NoopSpanProcessor()] });
  if (mode === "same") return sameSpans(provider.getTracer("keel"), await import("@opentelemetry/api"));
  if (mode === "bare") {
    const tracer = provider.getTracer("keel");
    return () => {
      const run = tracer.startSpan("invoke_agent bench");
      for (let step = 0; step < STEPS; step++) {
        tracer.startSpan("chat mock").end();
        if (step < STEPS - 1) tracer.startSpan("execute_tool add").end();
      }
      run.end();
    };
  }
  const bus =
    mode === "plain"
      ? dropping
      : await keel.createOtelBridge({
          inner: dropping,
          ...(mode === "sdk" ? { tracerProvider: provider } : {}),
          ...(mode === "unsampled" ? { tracerProvider: unsampled(sdk) } : {}),
        });
  return () => {
    for (let index = 0; index < events.length; index++) bus.publish(events[index]);
  };
}

/** The SDK with the sampler a high-rate user would set, here dropping every run: `ParentBased(TraceIdRatio(0))`. */
function unsampled(sdk) {
  return new sdk.BasicTracerProvider({
    sampler: new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(0) }),
    spanProcessors: [new sdk.NoopSpanProcessor()],
  });
}

/**
 * The SDK making the very spans the bridge makes for the recorded run, with no bridge: the same names, kinds,
 * parents, start attributes (one frozen object per shape, as the bridge keeps) and attributes set later. What
 * the bridge costs beyond this is its own work: reading events, finding the run, building names and values.
 */
function sameSpans(tracer, api) {
  const { context, trace, SpanKind } = api;
  const chatStart = Object.freeze({
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "bench",
    "gen_ai.request.model": "bench-tool-loop",
  });
  const toolStart = Object.freeze({
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "add",
    "gen_ai.tool.type": "function",
  });
  const toolCall = Object.freeze(["tool_call"]);
  const stop = Object.freeze(["stop"]);
  return () => {
    const run = tracer.startSpan(
      "invoke_agent bench",
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.id": "bench",
          "gen_ai.agent.name": "bench",
          "gen_ai.conversation.id": "session",
          "keel.run.id": "run",
        },
      },
      context.active(),
    );
    const parent = trace.setSpan(context.active(), run);
    run.setAttribute("gen_ai.provider.name", "bench");
    for (let step = 0; step < STEPS; step++) {
      const chat = tracer.startSpan(
        "chat bench-tool-loop",
        { kind: SpanKind.CLIENT, attributes: chatStart },
        parent,
      );
      chat.setAttribute("gen_ai.response.model", "bench-tool-loop");
      chat.setAttribute("gen_ai.usage.input_tokens", 10);
      chat.setAttribute("gen_ai.usage.output_tokens", 5);
      chat.setAttribute("gen_ai.response.finish_reasons", step < STEPS - 1 ? toolCall : stop);
      chat.end();
      if (step < STEPS - 1) {
        const tool = tracer.startSpan(
          "execute_tool add",
          { kind: SpanKind.INTERNAL, attributes: toolStart },
          parent,
        );
        tool.setAttribute("gen_ai.tool.call.id", "call");
        tool.end();
      }
    }
    run.setAttributes({
      "keel.run.stop_reason": "completed",
      "gen_ai.usage.input_tokens": 110,
      "gen_ai.usage.output_tokens": 55,
      "keel.usage.llm_calls": 11,
      "keel.usage.tool_calls": 10,
    });
    run.end();
  };
}

async function child(dist, mode, { warmup, runs }) {
  const replay = await replayer(dist, mode);
  for (let index = 0; index < warmup; index++) replay();
  for (let index = 0; index < runs; index++) replay();
}

async function timings(dist) {
  const figures = {};
  for (const mode of MODES) {
    const replay = await replayer(dist, mode);
    for (let index = 0; index < 20_000; index++) replay();
    const samples = [];
    for (let batch = 0; batch < 31; batch++) {
      // CPU time, not wall time: on a shared machine the wall clock also counts the time others had the core.
      const start = process.cpuUsage();
      for (let index = 0; index < 2000; index++) replay();
      const used = process.cpuUsage(start);
      samples.push((used.user + used.system) / (2000 * STEPS));
    }
    samples.sort((a, b) => a - b);
    figures[mode] = samples[15];
    console.log(`${mode.padEnd(5)} ${figures[mode].toFixed(3)} µs/step of CPU (median of 31 batches)`);
  }
  report(figures, "µs/step", 3);
}

/** Heap bytes one replay allocates: measured with a young generation large enough that nothing is collected. */
async function bytesChild(dist, mode) {
  const replay = await replayer(dist, mode);
  for (let index = 0; index < 20_000; index++) replay();
  const runs = 2000;
  const { bytes, collections } = await allocatedBytes(() => {
    for (let index = 0; index < runs; index++) replay();
  });
  process.stdout.write(`${JSON.stringify({ perStep: bytes / (runs * STEPS), collections })}\n`);
}

async function bytes(dist) {
  const figures = {};
  for (const mode of MODES) {
    const stdout = await new Promise((done, fail) =>
      execFile(process.execPath, [...noCollectionFlags(), SELF, "bytes-child", dist, mode], (error, out) =>
        error ? fail(error) : done(out),
      ),
    );
    const { perStep, collections } = JSON.parse(stdout);
    if (collections > 0)
      throw new Error(`${mode}: ${collections} collections during the measure; bytes unknown`);
    figures[mode] = perStep;
    console.log(`${mode.padEnd(5)} ${Math.round(perStep)} bytes/step allocated`);
  }
  report(figures, "bytes/step", 0);
}

function run(file, argv) {
  return new Promise((done, fail) => {
    execFile(file, argv, { maxBuffer: 64 * 1024 * 1024 }, (error, _stdout, stderr) =>
      error ? fail(error) : done(stderr),
    );
  });
}

async function instructions(dist) {
  const [warmup, n1, n2] = [5000, 2000, 12_000];
  const figures = {};
  for (const mode of MODES) {
    const count = async (runs) => {
      const stderr = await run("valgrind", [
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        process.execPath,
        "--single-threaded",
        SELF,
        "child",
        dist,
        mode,
        String(warmup),
        String(runs),
      ]);
      return Number(/Collected : (\d+)/.exec(stderr)[1]);
    };
    const [low, high] = await Promise.all([count(n1), count(n2)]);
    figures[mode] = (high - low) / ((n2 - n1) * STEPS);
    console.log(`${mode.padEnd(5)} ${Math.round(figures[mode])} instructions/step`);
  }
  report(figures, "instructions/step", 0);
}

function report(figures, unit, digits) {
  const show = (value) => value.toFixed(digits);
  console.log(`api − plain: +${show(figures.api - figures.plain)} ${unit}`);
  console.log(`sdk − plain: +${show(figures.sdk - figures.plain)} ${unit}`);
  console.log(`bare (SDK alone): ${show(figures.bare)} ${unit}`);
  console.log(
    `sdk − plain − bare (the bridge and the SDK's work on its attributes): ${show(figures.sdk - figures.plain - figures.bare)} ${unit}`,
  );
  console.log(
    `unsampled − plain (SDK, every run sampled out): +${show(figures.unsampled - figures.plain)} ${unit}`,
  );
  console.log(`same (the SDK making the bridge's spans, attributes and all): ${show(figures.same)} ${unit}`);
  console.log(
    `sdk − plain − same (the bridge's own part): ${show(figures.sdk - figures.plain - figures.same)} ${unit}`,
  );
}
