import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { readLedger } from "./support/child-processes.js";
import { keel, useBuiltCli } from "./support/cli-process.js";
import { repoRoot } from "./support/compile-for-children.js";

/**
 * The offline quickstart's approval flow from two shells: `keel run` on the quickstart's own config and scripted
 * model, its `add` needing an approval and its runs kept in a `jsonl_file` store, suspends and exits 2; `keel
 * decide … approve` in another process goes on where the run stopped. `add` runs once, and the run completes.
 */

useBuiltCli();
const dir = mkdtempSync(join(tmpdir(), "keel-offline-approval-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ledger = join(dir, "ledger.txt");
const quickstart = join(repoRoot, "examples/quickstart");

/** The quickstart's tools, `add` asking for an approval and noting each call in the ledger. */
const TOOLS = `
import { appendFileSync } from "node:fs";
import { add as quickstartAdd, wordCount } from ${JSON.stringify(pathToFileURL(join(quickstart, "tools.mjs")).href)};
export { wordCount };
export const add = Object.create(quickstartAdd);
add.executionSpec = () => ({ ...quickstartAdd.executionSpec(), approvalMode: "always" });
add.invoke = (args, ctx) => {
  appendFileSync(${JSON.stringify(ledger)}, JSON.stringify(args) + "\\n");
  return quickstartAdd.invoke(args, ctx);
};
`;

function writeConfig(): string {
  const config = JSON.parse(readFileSync(join(quickstart, "agent.json"), "utf8"));
  config.session = { type: "jsonl_file", config: { root_dir: join(dir, "store") } };
  writeFileSync(join(dir, "tools.mjs"), TOOLS);
  const path = join(dir, "agent.json");
  writeFileSync(path, JSON.stringify(config));
  return path;
}

describe("the offline quickstart's approval, decided from another process", () => {
  it("runs the approved tool once and completes the run", async () => {
    const config = writeConfig();
    const input = "Add 2 and 40, then count the words in 'Keel runs agents you can trust'";

    const first = await keel(["run", config, input]);
    expect(first.code, first.stderr).toBe(2);
    expect(first.stdout).toContain("⏸ add awaiting approval");
    const command = /`keel decide \S+ ([0-9a-f-]{36}) (\S+) approve`/.exec(first.stderr);
    expect(command, first.stderr).not.toBeNull();
    const [, runId, toolCallId] = command!;
    expect(readLedger(ledger)).toEqual([]);

    const second = await keel(["decide", config, runId!, toolCallId!, "approve"]);
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("← add 42");
    expect(second.stdout).toContain("← word_count 6");
    expect(second.stdout).toContain("The sum is 42 and the sentence has 6 words.\n");
    expect(second.stdout).not.toContain("awaiting approval");
    expect(readLedger(ledger)).toEqual(['{"a":2,"b":40}']);

    const runs = await keel(["runs", config, "--json"]);
    const records = runs.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(records).toEqual([
      expect.objectContaining({ runId, status: "done", stopReason: "completed", pendingToolCalls: [] }),
    ]);
    // A second decision on the same call is refused: the run is no longer waiting.
    const again = await keel(["decide", config, runId!, toolCallId!, "approve"]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/is not waiting for a decision \(it is done, completed\)/);
    expect(readLedger(ledger)).toHaveLength(1);
  });
});
