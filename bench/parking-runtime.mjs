/**
 * The S3 workload's Keel side, shared by the S3 scenario and the tools that look inside it: a runtime whose one
 * tool (`wait`) parks on a promise the caller holds, and helpers to park runs, release them and snapshot the heap.
 */
import fs from "node:fs";
import v8 from "node:v8";
import { AGENT_ID, createKeelRuntime, keelTool } from "./keel-runtime.mjs";
import { createToolLoopModel } from "./models.mjs";
import { createParkingTool, WAIT_SCHEMA } from "./tools.mjs";

/** `{ runtime, parking, start(sessionId), park(count, prefix), release() }`. */
export async function openParkingRuntime() {
  const parking = createParkingTool();
  const runtime = await createKeelRuntime({
    model: createToolLoopModel({ toolSteps: 1, toolName: "wait" }),
    tools: [keelTool("wait", parking.execute, WAIT_SCHEMA)],
    maxSteps: 4,
  });
  const start = (sessionId) => runtime.runDetailed({ agentId: AGENT_ID, sessionId, inputText: "Wait." });
  return {
    runtime,
    parking,
    start,
    /** Start `count` runs on sessions `<prefix>-<i>` and wait until every one is parked; their results' promises. */
    async park(count, prefix) {
      const done = [];
      for (let index = 0; index < count; index++) done.push(start(`${prefix}-${index}`));
      while (parking.resolvers.length < count) await new Promise((resolve) => setImmediate(resolve));
      return done;
    },
    release() {
      for (const resolve of parking.resolvers.splice(0)) resolve(1);
    },
  };
}

/** A heap snapshot after full collections, parsed. */
export function takeHeapSnapshot() {
  for (let pass = 0; pass < 3; pass++) globalThis.gc();
  const file = v8.writeHeapSnapshot();
  const parsed = JSON.parse(fs.readFileSync(file, "utf8"));
  fs.unlinkSync(file);
  return parsed;
}
