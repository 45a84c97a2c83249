/**
 * S3, suspended form: N runs (each in its own session) whose one tool call needs approval, so each run ends
 * `suspended` and the process forgets it; then every run is decided and finishes. Per store: the bytes one
 * suspended run occupies (the store's files or tables over N, and this process's heap after a full GC over N),
 * and the time to resume one — `decide()` rebuilding the run from its checkpoint and running it to its end.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { defineTool } from "../../dist/index.js";
import { AGENT_ID, createKeelRuntime } from "../keel-runtime.mjs";
import { check, heapAfterGc, median, now, round } from "../measure.mjs";
import { createToolLoopModel } from "../models.mjs";
import { openBenchStores } from "../stores.mjs";

const approveMe = defineTool({
  name: "approve_me",
  description: "bench tool that needs approval",
  inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
  approvalMode: "always",
  execute: ({ a, b }) => a + b,
});

/** What the store holds on disk (or in its tables) now. */
async function storeBytes(store, session) {
  if (store === "jsonl_file") return directoryBytes(session.config.root_dir);
  if (store === "sqlite") {
    let total = 0;
    for (const suffix of ["", "-wal"])
      total += await stat(`${session.config.db_path}${suffix}`).then(
        (s) => s.size,
        () => 0,
      );
    return total;
  }
  if (store === "postgres") return postgresBytes(session.config.schema);
  return null;
}

async function directoryBytes(dir) {
  const { readdir } = await import("node:fs/promises");
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath ?? entry.path, entry.name))).size;
  }
  return total;
}

async function postgresBytes(schema) {
  const { resolveConnectionString } = await import("../../dist/stores/postgres/index.js");
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: resolveConnectionString() });
  await client.connect();
  try {
    const { rows } = await client.query(
      "select coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename))), 0)::bigint as bytes " +
        "from pg_tables where schemaname = $1",
      [schema],
    );
    return Number(rows[0].bytes);
  } finally {
    await client.end();
  }
}

async function measureStore({ store, session }, n) {
  const runtime = await createKeelRuntime({
    model: createToolLoopModel({ toolSteps: 1, toolName: "approve_me" }),
    tools: [approveMe],
    maxSteps: 4,
    session,
  });
  try {
    // Warm up (and create tables/files), then measure what N more suspended runs add.
    for (let index = 0; index < 20; index++) await suspendAndDecide(runtime, `warm-${index}`);
    const bytesBefore = await storeBytes(store, session);
    const heapBefore = await heapAfterGc();
    const runIds = [];
    for (let index = 0; index < n; index++) {
      const result = await runtime.runDetailed({
        agentId: AGENT_ID,
        sessionId: `s-${index}`,
        inputText: "Pay.",
      });
      check(result.stopReason === "suspended", `run ${index} ended ${result.stopReason}`);
      runIds.push(result.runId);
    }
    const heapAfter = await heapAfterGc();
    const bytesAfter = await storeBytes(store, session);
    const resumeUs = [];
    for (const runId of runIds) {
      const started = now();
      const result = await runtime.decide({
        runId,
        decisions: [{ toolCallId: "call_0", action: "approve" }],
      });
      resumeUs.push((now() - started) * 1000);
      check(result.stopReason === "completed", `decided run ended ${result.stopReason}`);
    }
    return {
      storeBytesPerSuspendedRun: bytesAfter === null ? null : Math.round((bytesAfter - bytesBefore) / n),
      heapBytesPerSuspendedRun: Math.round((heapAfter - heapBefore) / n),
      resumeUsMedian: round(median(resumeUs), 1),
    };
  } finally {
    await runtime.close();
  }
}

async function suspendAndDecide(runtime, sessionId) {
  const { runId } = await runtime.runDetailed({ agentId: AGENT_ID, sessionId, inputText: "Pay." });
  await runtime.decide({ runId, decisions: [{ toolCallId: "call_0", action: "approve" }] });
}

export async function s3SuspendedRuns({ quick, log }) {
  const { stores, close } = await openBenchStores("keel-bench-s3s");
  const lines = [];
  try {
    for (const entry of stores) {
      const n = entry.store === "in_memory" ? (quick ? 500 : 5000) : quick ? 100 : 500;
      let figures;
      try {
        figures = await measureStore(entry, n);
      } catch (error) {
        if (entry.store !== "postgres" || error.code !== "ECONNREFUSED") throw error;
        log(`  postgres skipped: no server`);
        continue;
      }
      log(
        `  ${entry.store} N=${n}: store ${figures.storeBytesPerSuspendedRun ?? "–"} B/run, heap ` +
          `${figures.heapBytesPerSuspendedRun} B/run, resume ${figures.resumeUsMedian} µs`,
      );
      lines.push({ scenario: "S3-suspended", impl: "keel", store: entry.store, n, ...figures });
    }
  } finally {
    await close();
  }
  return lines;
}
