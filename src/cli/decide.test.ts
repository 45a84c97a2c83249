import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness, jsonLines } from "../../test/support/cli-harness.js";

/**
 * Suspended runs at the command line: `keel run` exits 2 with how to decide, `keel decide` (another process's
 * runtime over the same jsonl_file store) approves, denies or answers a call and streams the run on, `keel
 * pending` lists the calls, and on a terminal `keel run` asks. The offline echo model answers from the
 * transcript — `/tool pay <query>` calls pay, a tool result is reported back — so a fresh runtime goes on alike.
 */

const { dir, config, storedConfig, cli } = cliHarness("keel-cli-decide-");

/** The echo model (`llm` without a script), the runs in a jsonl_file store. */
const echoConfig = (name: string) =>
  storedConfig(name, [], { root: join(dir(), "store"), extra: { llm: { provider: "mock" } } });

const runIdOf = (out: string) => /run ([0-9a-f-]{36})\n$/.exec(out)?.[1] ?? "";

/** `keel run` of `/tool pay <query>`: suspended, exit 2; its run id. */
async function suspendedRun(path: string, query: string): Promise<string> {
  const run = await cli(["run", path, `/tool pay ${query}`]);
  expect(run.code).toBe(2);
  return runIdOf(run.out);
}

describe("keel run, suspended, then keel decide from another shell", () => {
  it("exits 2 and prints the keel decide command for the pending call", async () => {
    const path = await echoConfig("decide-hint.json");
    const { code, out, err } = await cli(["run", path, "/tool pay invoice-7"]);
    expect(code).toBe(2);
    expect(out).toContain('⏸ pay awaiting approval {"query":"invoice-7"}\n');
    const runId = runIdOf(out);
    expect(err).toBe(
      "The run is waiting for a decision on pay (call_1)\n" +
        `hint: decide each call with \`keel decide ${path} ${runId} call_1 approve\` (or deny, or result ` +
        `--value JSON); \`keel pending ${path} ${runId}\` lists them\n`,
    );
  });

  it("lists the pending calls with tool, arguments and reason, readable or as JSON", async () => {
    const path = await echoConfig("decide-pending.json");
    const runId = await suspendedRun(path, "invoice-8");
    const readable = await cli(["pending", path, runId]);
    expect(readable).toEqual({
      code: 0,
      out: `call_1  pay {"query":"invoice-8"}  — Tool 'pay' requires approval\n`,
      err: "",
    });
    const json = await cli(["pending", path, runId, "--json"]);
    expect(JSON.parse(json.out)).toMatchObject({
      toolCallId: "call_1",
      toolId: "pay",
      params: { query: "invoice-8" },
      reason: "Tool 'pay' requires approval",
    });
    const unknown = await cli(["pending", path, "no-such-run"]);
    expect(unknown).toMatchObject({ code: 2, out: "" });
    expect(unknown.err).toBe(
      "run.unknown: Unknown run 'no-such-run': the config's session store has no such run\n" +
        "hint: `keel runs <config>` lists the runs it knows\n",
    );
  });

  it("approve: the call runs, the run completes and streams as keel run does, exit 0", async () => {
    const path = await echoConfig("decide-approve.json");
    const runId = await suspendedRun(path, "invoice-9");
    const { code, out, err } = await cli(["decide", path, runId, "call_1", "approve"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    // Only the resumption: the call, the model's answer and the summary.
    expect(out).toMatch(/^→ pay \{"query":"invoice-9"\}\n← pay paid invoice-9 \(\d+(\.\d)? (ms|s)\)\n/);
    expect(out).toContain("Tool pay returned: paid invoice-9\n");
    expect(out).toMatch(/✓ completed · 2 steps · 2 llm calls · 1 tool call · .* · run [0-9a-f-]{36}\n$/);
    expect(runIdOf(out)).toBe(runId);
    const runs = await cli(["runs", path, "--json"]);
    const record = jsonLines(runs.out).find((candidate) => candidate.runId === runId);
    expect(record).toMatchObject({ status: "done", stopReason: "completed", pendingToolCalls: [] });
    expect((await cli(["pending", path, runId])).out).toBe(
      `Run ${runId} is not waiting for a decision (it is done, completed).\n`,
    );
  });

  it("deny: the call does not run and the model is told why, exit 0", async () => {
    const path = await echoConfig("decide-deny.json");
    const runId = await suspendedRun(path, "invoice-10");
    const { code, out } = await cli(["decide", path, runId, "call_1", "deny", "--reason", "not today"]);
    expect(code).toBe(0);
    expect(out).not.toContain("→ pay");
    expect(out).toMatch(/Tool pay returned: .*The call was denied: not today/);
    expect(out).toMatch(/✓ completed · /);
  });

  it("result: the value is the call's result, the tool does not run", async () => {
    const path = await echoConfig("decide-result.json");
    const runId = await suspendedRun(path, "invoice-11");
    const { code, out } = await cli([
      "decide",
      path,
      runId,
      "call_1",
      "result",
      "--value",
      '{"paid":"by hand"}',
    ]);
    expect(code).toBe(0);
    expect(out).not.toContain("→ pay");
    expect(out).toContain('Tool pay returned: {"paid":"by hand"}\n');
  });

  it("streams the resumption as JSON chunks with --json, numbered on from the run's log", async () => {
    const path = await echoConfig("decide-json.json");
    const first = await cli(["run", path, "/tool pay invoice-12", "--json"]);
    expect(first.code).toBe(2);
    const before = jsonLines(first.out);
    const runId = before.at(-1).payload.result.runId as string;
    const { code, out } = await cli(["decide", path, runId, "call_1", "approve", "--json"]);
    expect(code).toBe(0);
    const chunks = jsonLines(out);
    expect(chunks[0]).toMatchObject({ kind: "run.started", sequence: before.at(-1).sequence + 1 });
    expect(chunks.map((chunk) => chunk.sequence)).toEqual(
      chunks.map((_, index) => before.at(-1).sequence + 1 + index),
    );
    expect(chunks.some((chunk) => chunk.kind === "tool.decision")).toBe(true);
    expect(chunks.at(-1)).toMatchObject({
      kind: "run.finished",
      payload: { result: { stopReason: "completed", runId } },
    });
  });

  it("refuses a decision the runtime refuses with exit 2, its code, message and hint, and changes nothing", async () => {
    const path = await echoConfig("decide-refused.json");
    const runId = await suspendedRun(path, "invoice-13");
    const unknownCall = await cli(["decide", path, runId, "call_9", "approve"]);
    expect(unknownCall).toEqual({
      code: 2,
      out: "",
      err:
        `run.decision: Run '${runId}' has no suspended call 'call_9'\n` +
        "hint: Calls waiting for a decision: call_1 (pay)\n",
    });
    const noValue = await cli(["decide", path, runId, "call_1", "result"]);
    expect(noValue.code).toBe(2);
    expect(noValue.err).toBe(
      "run.decision: A 'result' decision for call 'call_1' needs a value\n" +
        "hint: Give the tool result the model should see: `--value JSON` (`value` in code)\n",
    );
    const unknownRun = await cli(["decide", path, "no-such-run", "call_1", "approve"]);
    expect(unknownRun).toMatchObject({ code: 2, out: "" });
    expect(unknownRun.err).toBe(
      "run.unknown: Unknown run 'no-such-run'\n" +
        "hint: `keel runs <config>` lists the runs the store knows (`runtime.listRuns()` in code)\n",
    );
    // Still waiting on the same call: the refusals changed nothing.
    expect((await cli(["pending", path, runId])).out).toMatch(/^call_1 {2}pay /);

    expect((await cli(["decide", path, runId, "call_1", "approve"])).code).toBe(0);
    const again = await cli(["decide", path, runId, "call_1", "deny"]);
    expect(again.code).toBe(2);
    expect(again.err).toBe(
      `run.decision: Run '${runId}' is not waiting for a decision (it is done, completed)\n` +
        "hint: The run has finished; a decision can no longer change it\n",
    );
  });

  it("--always approves the tool's later calls in the run without asking", async () => {
    const root = join(dir(), "store");
    const path = await storedConfig(
      "decide-always.json",
      [
        { tool_calls: [{ id: "p1", name: "pay" }] },
        { tool_calls: [{ id: "p2", name: "pay", arguments: { query: "again" } }] },
        { text: "both paid" },
      ],
      { root: root },
    );
    const run = await cli(["run", path, "pay twice"]);
    expect(run.code).toBe(2);
    const { code, out } = await cli(["decide", path, runIdOf(run.out), "p1", "approve", "--always"]);
    expect(code).toBe(0);
    expect(out).toContain("← pay paid again");
    expect(out).toContain("both paid\n");
  });

  it("checks the decision's words and --value before loading anything", async () => {
    const usage = await cli(["decide", "a.json", "run-1", "call_1"]);
    expect(usage.code).toBe(1);
    expect(usage.err).toContain("Usage: keel decide <config> <runId> <toolCallId> approve|deny|result");
    const action = await cli(["decide", "a.json", "run-1", "call_1", "allow"]);
    expect(action.err).toContain("The decision is approve, deny or result, not 'allow'");
    const value = await cli(["decide", "a.json", "run-1", "call_1", "result", "--value", "by hand"]);
    expect(value.code).toBe(1);
    expect(value.err).toContain("--value must be JSON, not 'by hand'");
    const pending = await cli(["pending", "a.json"]);
    expect(pending.err).toContain("Usage: keel pending <config> <runId> [--json]");
  });
});

describe("keel run on a terminal", () => {
  // Pays p1; once decided, pays p2; once that is decided too, answers.
  const script = [
    { tool_calls: [{ id: "p1", name: "pay", arguments: { query: "rent" } }] },
    { tool_calls: [{ id: "p2", name: "pay", arguments: { query: "tax" } }] },
    { text: "All settled." },
  ];

  /** A prompt that answers from a list, recording the questions; past the list, the input has ended. */
  function fakePrompt(answers: string[]) {
    const questions: string[] = [];
    const prompt = async (question: string) => {
      questions.push(question);
      const answer = answers.shift();
      if (answer === undefined) throw new Error("end of input");
      return answer;
    };
    return { prompt, questions };
  }

  it("asks to approve or deny each call the run suspends on, and goes on until it completes", async () => {
    // The in_memory store: the decisions are made in the process that holds the run.
    const path = await config("tty.json", script);
    const { prompt, questions } = fakePrompt(["x", "a", "d"]);
    const { code, out, err } = await cli(["run", path, "pay my bills"], {
      isTTY: true,
      prompt,
      env: { NO_COLOR: "1" },
    });
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(questions).toEqual([
      "Approve pay (p1)? [a]pprove / [d]eny: ",
      "Approve pay (p1)? [a]pprove / [d]eny: ",
      "Approve pay (p2)? [a]pprove / [d]eny: ",
    ]);
    expect(out).toContain(
      'p1  pay {"query":"rent"}  — Tool \'pay\' requires approval\n' +
        "Answer a to approve the call or d to deny it.\n",
    );
    expect(out).toMatch(/← pay paid rent \(/);
    expect(out).toContain('p2  pay {"query":"tax"}  — Tool \'pay\' requires approval\n');
    expect(out).toContain("✗ pay The call was denied: denied at the terminal\n");
    expect(out).not.toContain("paid tax");
    expect(out).toContain("All settled.\n");
    expect(out.trimEnd().split("\n").at(-1)).toMatch(/^✓ completed · 3 steps · /);
  });

  it("leaves the calls undecided and exits 2 when the input ends", async () => {
    const path = await storedConfig("tty-eof.json", script, { root: join(dir(), "store") });
    const { prompt, questions } = fakePrompt([]);
    const { code, err } = await cli(["run", path, "pay my bills"], { isTTY: true, prompt });
    expect(code).toBe(2);
    expect(questions).toHaveLength(1);
    expect(err).toMatch(
      /^The run is waiting for a decision on pay \(p1\)\nhint: decide each call with `keel decide /,
    );
  });

  it("does not ask when stdout is not a terminal, or with --json", async () => {
    const path = await config("tty-not.json", script);
    const { prompt, questions } = fakePrompt(["a", "a"]);
    const piped = await cli(["run", path, "pay my bills"], { prompt });
    expect(piped.code).toBe(2);
    expect(piped.err).toContain("hint: the config's in_memory session store forgets the run when keel exits");
    const json = await cli(["run", path, "pay my bills", "--json"], { isTTY: true, prompt });
    expect(json.code).toBe(2);
    expect(questions).toEqual([]);
  });
});
