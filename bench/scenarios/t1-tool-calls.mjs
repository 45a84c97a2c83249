/**
 * T1 sandboxed tool calls (issue 6): what the sandbox and the run folder cost.
 *
 * - `read_file` and `write_file` of a 4 KiB file called directly (no model), against a hand-written
 *   `fs.promises` call on the same path (no checks at all) and a hand-written "typical" check (realpath and a
 *   string-prefix test, the check Keel refuses to rely on). µs per call, median over repetitions.
 * - A run of 10 `read_file` steps through the Runtime with `runtime.run_folders` off and on: µs per model call
 *   and the run folder's cost per step (tools.jsonl, errors.jsonl, events.jsonl, the folder itself).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createFilesystemToolset, Runtime } from "../../dist/index.js";
import { check, fullGc, median, round, timeSequentialRuns } from "../measure.mjs";
import { MODEL_SPECIFICATION_VERSION, PartsStream } from "../models.mjs";

const CONTENT = "k".repeat(4096);
const TOOL_STEPS = 10;

export async function t1ToolCalls({ quick, log }) {
  const base = mkdtempSync(path.join(tmpdir(), "keel-bench-t1-"));
  try {
    const ws = path.join(base, "ws");
    mkdirSync(ws);
    writeFileSync(path.join(ws, "f.txt"), CONTENT);
    const reps = quick ? 2 : 7;
    const timing = { minRuns: quick ? 200 : 2000, minMs: quick ? 50 : 300 };
    const direct = await measureDirect(ws, { reps, timing, log });
    const runs = await measureRuns(base, ws, {
      reps,
      timing: { minRuns: quick ? 10 : 50, minMs: quick ? 50 : 300 },
      log,
    });
    return [...direct, ...runs];
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

/** Calls per implementation, interleaved per repetition; median µs per call. */
async function measureDirect(ws, { reps, timing, log }) {
  const ctx = { runId: "bench", sessionId: "bench", signal: new AbortController().signal, artifacts: [] };
  const toolset = createFilesystemToolset({ sandbox: { roots: [{ path: ws, mode: "rw" }] } });
  const tools = Object.fromEntries(toolset.tools().map((tool) => [tool.name, tool]));
  const target = path.join(ws, "f.txt");
  const out = path.join(ws, "out.txt");
  const realWs = await realpath(ws);
  const impls = {
    read: {
      keel: async () => {
        const result = await tools.read_file.invoke({ path: "f.txt" }, ctx);
        check(result.data.content.length === CONTENT.length, "read_file read the file");
      },
      "hand-written": () => readFile(target, "utf8"),
      "hand-written-prefix-check": async () => {
        const real = await realpath(path.resolve(ws, "f.txt"));
        if (!real.startsWith(realWs)) throw new Error("outside");
        return readFile(real, "utf8");
      },
    },
    write: {
      keel: () => tools.write_file.invoke({ path: "out.txt", content: CONTENT }, ctx),
      "hand-written": () => writeFile(out, CONTENT),
      "hand-written-prefix-check": async () => {
        const parent = await realpath(path.dirname(path.resolve(ws, "out.txt")));
        if (!parent.startsWith(realWs)) throw new Error("outside");
        return writeFile(path.join(parent, "out.txt"), CONTENT);
      },
    },
  };
  const lines = [];
  for (const [operation, byImpl] of Object.entries(impls)) {
    const samples = new Map(Object.keys(byImpl).map((impl) => [impl, []]));
    for (const call of Object.values(byImpl)) for (let index = 0; index < 200; index++) await call();
    for (let rep = 0; rep < reps; rep++) {
      for (const [impl, call] of Object.entries(byImpl)) {
        await fullGc();
        const timed = await timeSequentialRuns(call, timing);
        samples.get(impl).push((timed.wallMs * 1000) / timed.runs);
      }
    }
    for (const [impl, list] of samples) {
      const usPerCall = median(list);
      log(`  ${operation} ${impl}: ${usPerCall.toFixed(2)} µs/call`);
      lines.push({ scenario: "T1", impl, operation: `${operation}_file`, usPerCall: round(usPerCall) });
    }
  }
  return lines;
}

/** The 10-step `read_file` run with run folders off and on, interleaved; median µs per model call. */
async function measureRuns(base, ws, { reps, timing, log }) {
  const model = readLoopModel();
  const runtimeWith = (runFolders) =>
    Runtime.fromDict({
      agents: [
        {
          id: "bench",
          name: "Bench",
          llm: model,
          tools: [{ id: "fs", type: "filesystem", config: { tools: ["read_file"] } }],
          sandbox: { roots: [{ path: ws, mode: "rw" }] },
          runtime: { max_steps: 64, ...(runFolders ? { run_folders: { root_dir: base } } : {}) },
        },
      ],
    });
  const variants = { off: false, on: true };
  const samples = { off: [], on: [] };
  for (let rep = 0; rep < reps; rep++) {
    for (const [name, runFolders] of Object.entries(variants)) {
      const runtime = await runtimeWith(runFolders);
      const runOnce = async () => {
        const result = await runtime.runDetailed({ agentId: "bench", inputText: "go" });
        check(result.stopReason === "completed", `run ${result.stopReason}: ${result.error ?? ""}`);
      };
      for (let index = 0; index < 5; index++) await runOnce();
      await fullGc();
      const timed = await timeSequentialRuns(runOnce, timing);
      await runtime.close();
      rmSync(path.join(base, "runs"), { recursive: true, force: true });
      samples[name].push((timed.wallMs * 1000) / (timed.runs * (TOOL_STEPS + 1)));
    }
  }
  const off = median(samples.off);
  const on = median(samples.on);
  log(`  run folders off ${off.toFixed(2)} µs/step, on ${on.toFixed(2)} µs/step`);
  return [
    {
      scenario: "T1",
      impl: "keel",
      operation: "read_file_run",
      usPerStepOff: round(off),
      usPerStepOn: round(on),
      usPerStepRunFolder: round(on - off),
    },
  ];
}

/** Asks for `read_file({path: "f.txt"})` TOOL_STEPS times, then answers; decides from the request alone. */
function readLoopModel() {
  const usage = { type: "usage", usage: { inputTokens: 10, outputTokens: 5 } };
  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    provider: "bench",
    modelId: "bench-read-loop",
    stream(request) {
      const last = request.messages[request.messages.length - 1];
      const done = last?.role === "tool" ? Number(last.toolCallId.slice(5)) + 1 : 0;
      if (done >= TOOL_STEPS) {
        return new PartsStream([
          { type: "text-delta", text: "done" },
          usage,
          { type: "finish", stopReason: "end_turn", model: "bench-read-loop" },
        ]);
      }
      return new PartsStream([
        { type: "tool-call", id: `call_${done}`, name: "read_file", arguments: { path: "f.txt" } },
        usage,
        { type: "finish", stopReason: "tool_use", model: "bench-read-loop" },
      ]);
    },
  };
}
