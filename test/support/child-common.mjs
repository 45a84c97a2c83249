// What the child processes of the cross-process tests share (test/support/child-processes.ts starts them):
// the command line `node <script> <buildDir> <spec as JSON>`, Keel loaded from the private build, a ledger
// file the tools append to, and the `@@<tag> <json>` lines the parent reads.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** The spec the parent passed, and the build's `index.js` and scripted model. */
export async function childSetup() {
  const [buildDir, specJson] = process.argv.slice(2);
  const load = (path) => import(pathToFileURL(join(buildDir, path)).href);
  const keel = await load("index.js");
  const { scriptedModel } = await load("models/providers/mock/scripted-model.js");
  return { spec: JSON.parse(specJson), keel, scriptedModel };
}

/** Append one line to the ledger, synchronously, so that a kill cannot lose it. */
export function appendLedger(path, line) {
  appendFileSync(path, `${line}\n`);
}

/** Print one `@@<tag> <json>` line for the parent. */
export function report(tag, value) {
  process.stdout.write(`@@${tag} ${JSON.stringify(value)}\n`);
}

/** A RunResult as the parent compares it. */
export function resultSummary(result) {
  return {
    stopReason: result.stopReason,
    finalOutput: result.finalOutput,
    error: result.error ?? null,
    pendingToolCalls: result.pendingToolCalls,
    toolCalls: result.usage.toolCalls,
    sessionId: result.metadata.sessionId,
  };
}

/** The number of tool results in a transcript: the scripted models decide from it alone. */
export function toolResults(messages) {
  return messages.filter((message) => message.role === "tool").length;
}
