/**
 * Bytes allocated per S1 step with and without tracing, from V8's `--trace-gc-nvp` (each collection reports the
 * bytes allocated since the one before): deterministic to a few per cent, unlike time on a shared machine. Not
 * part of `npm run bench`; `npm run build` first. CPU time and instructions of the tracing work itself:
 * `bench/otel-bridge-replay.mjs`.
 *
 *   node bench/otel-step-cost.mjs [modes…]        # default: off api sdk bare
 *
 * Modes: `off` — the S1 run on the default async bus; `api` — on `otel_bridge` with only the OpenTelemetry API
 * (no SDK registered: non-recording spans); `sdk` — on `otel_bridge` with the SDK's BasicTracerProvider and a
 * no-op span processor; `bare` — the plain S1 run plus, per step, the spans a traced step makes, made by the
 * SDK alone (one `tracer.startSpan().end()` for `chat` and one for `execute_tool`, and a run span per run).
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const STEPS = 11;
const WARMUP = 200;
const RUNS = 400;
const SELF = fileURLToPath(import.meta.url);

if (process.argv[2] === "child") await child(process.argv[3], Number(process.argv[4]));
else await main(process.argv.slice(2));

async function child(mode, runs) {
  const { keelLoopImpl } = await import("./loop-impls.mjs");
  const { createOtelBridge } = await import("../dist/index.js");
  let events;
  let bare;
  if (mode === "api") events = await createOtelBridge();
  if (mode === "sdk" || mode === "bare") {
    const sdk = await import("@opentelemetry/sdk-trace-base");
    const provider = new sdk.BasicTracerProvider({ spanProcessors: [new sdk.NoopSpanProcessor()] });
    if (mode === "sdk") events = await createOtelBridge({ tracerProvider: provider });
    else bare = provider.getTracer("keel");
  }
  const instance = await keelLoopImpl(10, { events }).open();
  const runOnce =
    bare === undefined
      ? instance.runOnce
      : async () => {
          const run = bare.startSpan("invoke_agent bench");
          for (let step = 0; step < STEPS; step++) {
            bare.startSpan("chat mock").end();
            if (step < STEPS - 1) bare.startSpan("execute_tool add").end();
          }
          await instance.runOnce();
          run.end();
        };
  for (let index = 0; index < WARMUP; index++) await runOnce();
  globalThis.gc?.();
  process.stdout.write("COST-BEGIN\n");
  const start = process.hrtime.bigint();
  for (let index = 0; index < runs; index++) await runOnce();
  const ns = Number(process.hrtime.bigint() - start);
  process.stdout.write(`COST-WALL ${ns}\n`);
  globalThis.gc?.();
  process.stdout.write("COST-END\n");
  await instance.close();
  await events?.close();
}

function exec(file, args) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) =>
      error ? reject(error) : resolve({ stdout, stderr }),
    );
  });
}

async function allocation(mode, runs) {
  const { stdout } = await exec(process.execPath, [
    "--trace-gc-nvp",
    "--expose-gc",
    SELF,
    "child",
    mode,
    String(runs),
  ]);
  const lines = stdout.split("\n");
  let bytes = 0;
  let wallNs = Number.NaN;
  for (const line of lines.slice(lines.indexOf("COST-BEGIN") + 1, lines.indexOf("COST-END"))) {
    if (line.startsWith("COST-WALL ")) wallNs = Number(line.slice(10));
    const allocated = /\ballocated=(\d+)/.exec(line);
    if (allocated !== null) bytes += Number(allocated[1]);
  }
  return { bytesPerStep: bytes / (runs * STEPS), usPerStep: wallNs / 1000 / (runs * STEPS) };
}

async function main(modes) {
  const chosen = modes.length > 0 ? modes : ["off", "api", "sdk", "bare"];
  const rows = {};
  for (const mode of chosen) {
    rows[mode] = await allocation(mode, RUNS);
    const row = rows[mode];
    console.log(
      `${mode.padEnd(5)} ${Math.round(row.bytesPerStep)} B/step, ${row.usPerStep.toFixed(2)} µs/step (wall, noisy)`,
    );
  }
  if (rows.off === undefined) return;
  for (const mode of chosen.filter((name) => name !== "off")) {
    const row = rows[mode];
    console.log(
      `${mode.padEnd(5)} − off: +${Math.round(row.bytesPerStep - rows.off.bytesPerStep)} B/step, ` +
        `+${(row.usPerStep - rows.off.usPerStep).toFixed(2)} µs/step`,
    );
  }
}
