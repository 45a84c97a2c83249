import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PLAIN_TOOLS_PRELUDE } from "./support/cli-harness.js";
import { keel, useBuiltCli } from "./support/cli-process.js";

/**
 * The pictures of a run in the terminal, from the built CLI in processes of its own: `keel run` prints a line
 * per step with its duration, tokens and cost; `keel runs` a table with each run's steps, time, tokens and cost;
 * `keel trace` the run from its stored events as a timeline of bars — across a suspension decided from another
 * process, and for a run that fails.
 */

useBuiltCli();
const dir = mkdtempSync(join(tmpdir(), "keel-cli-trace-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(
  join(dir, "tools.mjs"),
  `${PLAIN_TOOLS_PRELUDE}export const add = tool("add", ({ a, b }) => a + b);
export const pay = tool("pay", ({ amount }) => "paid " + amount, { approvalMode: "always" });
export const boom = tool("boom", () => { throw new Error("kaboom"); });
`,
);

/** A config whose agent runs `script` on a priced mock model, its runs kept in a jsonl_file store. */
function config(name: string, script: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({
      session: { type: "jsonl_file", config: { root_dir: join(dir, `${name}.store`) } },
      agents: [
        {
          id: "helper",
          name: "Helper",
          llm: { provider: "mock", model: "gpt-test", script, pricing: { input: 2, output: 8 } },
          tools: ["add", "pay", "boom"].map((id) => ({ id, impl: `./tools.mjs#${id}` })),
        },
      ],
    }),
  );
  return path;
}

const usage = { input_tokens: 1000, output_tokens: 100 };
// Each model call costs 1,000 × $2 + 100 × $8 per million tokens.
const CALL_COST = "$0.0028";

const ROW = (label: string) => new RegExp(`^${label} +[·█]+ {2}`);

describe("keel run, runs and trace", () => {
  it("shows each step's time, tokens and cost, lists runs with theirs, and draws a decided run's timeline", async () => {
    const path = config("decided.json", [
      { text: "Adding.", tool_calls: [{ id: "c1", name: "add", arguments: { a: 2, b: 40 } }], usage },
      { tool_calls: [{ id: "p1", name: "pay", arguments: { amount: 10 } }], usage },
      { text: "Paid.", usage },
    ]);
    const first = await keel(["run", path, "add, then pay"]);
    expect(first.code, first.stderr).toBe(2);
    const stepLines = first.stdout.split("\n").filter((line) => line.startsWith("  step "));
    expect(stepLines).toHaveLength(2);
    for (const [index, line] of stepLines.entries()) {
      expect(line).toMatch(
        new RegExp(`^ {2}step ${index + 1} · \\d+(\\.\\d)? (ms|s) · 1k in / 100 out · \\${CALL_COST}$`),
      );
    }
    const runId = /run ([0-9a-f-]{36})/.exec(first.stdout)![1]!;

    const decided = await keel(["decide", path, runId, "p1", "approve"]);
    expect(decided.code, decided.stderr).toBe(0);
    // The resumed stream starts from what the run had cost when it suspended: step 2 only ran the payment.
    expect(decided.stdout).toMatch(/\n {2}step 2 · [^\n]+ · 0 in \/ 0 out · \$0\n/);
    expect(decided.stdout).toMatch(
      new RegExp(`\\n {2}step 3 · [^\\n]+ · 1k in / 100 out · \\${CALL_COST}\\n`),
    );

    const runs = await keel(["runs", path]);
    expect(runs.code).toBe(0);
    const [headings, row] = runs.stdout.trimEnd().split("\n");
    expect(headings).toMatch(/^RUN +AGENT +STATUS +STEPS +ELAPSED +TOKENS IN\/OUT +COST /);
    expect(row).toMatch(
      new RegExp(`^${runId} {2}helper {2}done \\(completed\\) +3 +\\S+ (ms|s|min) +3k / 300 +\\$0\\.0084 `),
    );

    const trace = await keel(["trace", path, runId]);
    expect(trace.code, trace.stderr).toBe(0);
    const lines = trace.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`run ${runId}`);
    expect(lines[1]).toMatch(
      /^completed · 3 steps · \S+ (ms|s) · \S+ \S+ with waits · 3k in \/ 300 out · \$0\.0084$/,
    );
    expect(lines[2]).toMatch(/^ {26}0 +\S+ (ms|s)$/);
    const shapes = lines.slice(3).map((line) => line.replace(/ +[·█]+ {2}.*$/, "").trimEnd());
    expect(shapes).toEqual([
      "step 1",
      "  chat gpt-test",
      "  add",
      "step 2",
      "  chat gpt-test",
      "⏸ pay (p1) awaits a decision: Tool 'pay' requires approval",
      expect.stringMatching(/^┄ waited for a decision: \S+ \S+ \(left out of the time axis\)$/),
      "▶ resumed",
      "✔ approve pay (p1)",
      "step 2",
      "  pay",
      "step 3",
      "  chat gpt-test",
    ]);
    const chat = lines.find((line) => ROW(" {2}chat gpt-test").test(line))!;
    expect(chat).toMatch(new RegExp(`  \\S+ (ms|s) · 1k in / 100 out · \\${CALL_COST} · tool_use$`));
    expect(lines.find((line) => ROW(" {2}add").test(line))).toMatch(/ \{"a":2,"b":40\} → 42$/);
    // Every bar row draws the same width, so the bars line up under the axis.
    const widths = lines.filter((line) => /[█]/.test(line)).map((line) => /[·█]+/.exec(line)![0].length);
    expect(new Set(widths).size).toBe(1);

    const json = await keel(["trace", path, runId, "--json"]);
    const view = JSON.parse(json.stdout);
    expect(view).toMatchObject({ runId, steps: 3, result: { stopReason: "completed" } });
    expect(view.items.filter((item: { kind: string }) => item.kind === "tool")).toMatchObject([
      { toolId: "add", outcome: "ok", result: 42 },
      { toolId: "pay", outcome: "ok", result: "paid 10" },
    ]);
  });

  it("draws a failed run's failed calls and its error with the hint", async () => {
    // The script has no turn for the third model call.
    const path = config("failed.json", [
      { tool_calls: [{ id: "b1", name: "boom", arguments: {} }], usage },
      { tool_calls: [{ id: "b2", name: "boom", arguments: {} }], usage },
    ]);
    const run = await keel(["run", path, "break"]);
    expect(run.code).toBe(1);
    const runId = /run ([0-9a-f-]{36})/.exec(run.stdout)![1]!;
    const trace = await keel(["trace", path, runId]);
    expect(trace.code, trace.stderr).toBe(0);
    const lines = trace.stdout.trimEnd().split("\n");
    expect(lines[1]).toMatch(/^failed · 3 steps · /);
    expect(lines.filter((line) => ROW(" {2}boom").test(line))).toEqual([
      expect.stringMatching(/ ✗ kaboom$/),
      expect.stringMatching(/ ✗ kaboom$/),
    ]);
    expect(lines.at(-3)).toMatch(/^ {2}chat gpt-test +[·█]+ {2}✗ The scripted model has no turn 3/);
    expect(lines.at(-2)).toMatch(/^✗ \S+: The scripted model has no turn 3/);
    expect(lines.at(-1)).toMatch(/^ {2}hint: /);
  });

  it("exits 2 with a hint for a run the store does not know", async () => {
    const path = config("empty.json", [{ text: "hi" }]);
    const trace = await keel(["trace", path, "no-such-run"]);
    expect(trace.code).toBe(2);
    expect(trace.stderr).toContain("Unknown run 'no-such-run'");
    expect(trace.stderr).toContain("hint: `keel runs <config>` lists the runs it knows");
  });
});
