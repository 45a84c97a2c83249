// The whole command line, in-process against one temp dir and one set of helpers: hence past 400 lines.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { cliHarness, jsonLines, TOOLS } from "../../test/support/cli-harness.js";
import { bundlePackage } from "../../test/support/cli-process.js";
import { Runtime } from "../runtime/runtime.js";
import { USAGE } from "./cli.js";
import { describeError } from "./commands/run.js";

const run = promisify(execFile);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const STACK_LINE = /\n\s+at /;

const { dir, config, storedConfig, cli } = cliHarness();

const COMPLETED_SCRIPT = [
  {
    text: "Working on it.",
    tool_calls: [{ name: "add", arguments: { a: 2, b: 40 } }],
    usage: { input_tokens: 10, output_tokens: 4 },
  },
  {
    tool_calls: [{ name: "boom", arguments: { why: "testing" } }],
    usage: { input_tokens: 10, output_tokens: 4 },
  },
  { deltas: ["The sum ", "is 42 ", "and boom failed."], usage: { input_tokens: 10, output_tokens: 4 } },
];

describe("keel run (readable)", () => {
  it("streams text, tool lines with arguments, results and durations, and a usage summary", async () => {
    const path = await config("completed.json", COMPLETED_SCRIPT);
    const { code, out, err } = await cli(["run", path, "add 2 and 40"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain('Working on it.\n→ add {"a":2,"b":40}\n');
    expect(out).toMatch(/← add 42 \(\d+(\.\d)? (ms|s)\)\n/);
    expect(out).toMatch(/→ boom \{"why":"testing"\}\n✗ boom .*kaboom.* \(\d+(\.\d)? (ms|s)\)\n/);
    expect(out).toContain("The sum is 42 and boom failed.\n");
    const summary = out.trimEnd().split("\n").at(-1)!;
    expect(summary).toMatch(
      /^✓ completed · 3 steps · 3 llm calls · \d+ tool calls? · tokens 30 in \/ 12 out · cost \$0 · run [0-9a-f-]{36}$/,
    );
    expect(out).not.toContain("\u001b[");
  });

  it("cuts long tool values to one line of about 200 characters", async () => {
    const path = await config("long.json", [
      { tool_calls: [{ name: "shout", arguments: { text: "abc\ndef " } }] },
      { text: "done" },
    ]);
    const { code, out } = await cli(["run", path, "shout"]);
    expect(code).toBe(0);
    const line = out.split("\n").find((text) => text.startsWith("← shout "))!;
    expect(line).toMatch(/… \(\d+(\.\d)? (ms|s)\)$/);
    expect(line.length).toBeLessThan(230);
  });

  it("colours only a terminal without NO_COLOR", async () => {
    const path = await config("colour.json", [{ text: "hi" }]);
    const coloured = await cli(["run", path, "hi"], { isTTY: true });
    expect(coloured.out).toContain("\u001b[");
    const plain = await cli(["run", path, "hi"], { isTTY: true, env: { NO_COLOR: "1" } });
    expect(plain.out).not.toContain("\u001b[");
    expect(plain.out).toMatch(
      /^hi\n {2}step 1 · \d+(\.\d+)? (ms|s) · \d+ in \/ \d+ out · \$0\n✓ completed · 1 step · 1 llm call · 0 tool calls/,
    );
  });

  it("exits 1 and prints the error with its hint when the run fails", async () => {
    // The script has no turn for the model's second call.
    const path = await config("failed.json", [{ tool_calls: [{ name: "add", arguments: { a: 1, b: 1 } }] }]);
    const { code, out, err } = await cli(["run", path, "fail please"]);
    expect(code).toBe(1);
    expect(out).toMatch(/← add 2 /);
    expect(out).toMatch(/\n✗ failed · /);
    expect(err).toContain("LLMResponseError: The scripted model has no turn 2");
    expect(err).toContain("hint: Add a turn to the script");
    expect(err).not.toMatch(STACK_LINE);
  });

  it("exits 1 for a scripted model error", async () => {
    const path = await config("error-turn.json", [
      { error: { type: "response", message: "model exploded" } },
    ]);
    const { code, out, err } = await cli(["run", path, "hi"]);
    expect(code).toBe(1);
    expect(out).toMatch(/✗ failed · /);
    expect(err).toContain("model exploded");
    expect(err).not.toMatch(STACK_LINE);
  });

  it("exits 2 and shows the call awaiting approval when the run suspends", async () => {
    const path = await config("suspended.json", [{ tool_calls: [{ name: "guarded", arguments: { a: 1 } }] }]);
    const { code, out, err } = await cli(["run", path, "guarded"]);
    expect(code).toBe(2);
    expect(out).toContain('⏸ guarded awaiting approval {"a":1}\n');
    expect(out).toMatch(/\n⏸ suspended · 1 step · 1 llm call · 0 tool calls · /);
    expect(err).toMatch(/waiting for a decision on guarded \(call_1_1\)/);
  });

  it("exits 1 when the run is cancelled", async () => {
    const path = await config("cancelled.json", [{ text: "never", delay_ms: 5_000 }]);
    const { code, out } = await cli(["run", path, "hi"], { signal: AbortSignal.abort() });
    expect(code).toBe(1);
    expect(out).toMatch(/✗ cancelled · /);
  });

  it("routes Keel's warnings to the CLI's stderr", async () => {
    const path = await config("warning.json", [{ text: "ok" }]);
    const raw = JSON.parse(readFileSync(path, "utf8")) as { agents: { llm: Record<string, unknown> }[] };
    raw.agents[0]!.llm.temprature = 0.2;
    await writeFile(path, JSON.stringify(raw), "utf8");
    const { code, err } = await cli(["run", path, "hi"]);
    expect(code).toBe(0);
    expect(err).toContain("[keel] warning: llm option 'temprature'");
  });
});

describe("keel run --json", () => {
  it("prints one chunk per line with sequences from 1 and run.finished last", async () => {
    const path = await config("json.json", COMPLETED_SCRIPT);
    const { code, out, err } = await cli(["run", path, "add", "2", "and 40", "--json", "--session", "s-1"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const lines = out.trimEnd().split("\n");
    const chunks = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(chunks.map((chunk) => chunk.sequence)).toEqual(chunks.map((_chunk, index) => index + 1));
    expect(chunks.at(-1)!.kind).toBe("run.finished");
    expect(chunks.at(-1)!.payload).toMatchObject({ result: { stopReason: "completed" } });
    // The result is on the line once.
    expect(chunks.at(-1)).not.toHaveProperty("result");
    expect(chunks.every((chunk) => chunk.sessionId === "s-1" && chunk.agentId === "assistant")).toBe(true);
    const text = chunks
      .filter((chunk) => chunk.kind === "llm.delta")
      .map((chunk) => (chunk.payload as { text: string }).text);
    expect(text.join("")).toContain("The sum is 42 and boom failed.");
    const started = chunks.find((chunk) => chunk.kind === "tool.started")!;
    expect(started.payload).toMatchObject({ toolId: "add", params: { a: 2, b: 40 } });
    const runStarted = chunks[0]!;
    expect(runStarted.kind).toBe("run.started");
  });

  it("reports an invalid config as one JSON error line on stdout, and as text on stderr", async () => {
    const path = join(dir(), "json-bad.json");
    await writeFile(path, JSON.stringify({ agents: [] }), "utf8");
    const { code, out, err } = await cli(["run", path, "hi", "--json"]);
    expect(code).toBe(1);
    expect(jsonLines(out)).toEqual([
      {
        kind: "error",
        error: expect.objectContaining({ code: "config.validation", message: expect.any(String) }),
      },
    ]);
    expect(err).toContain("ConfigValidationError");
  });
});

describe("keel run errors", () => {
  it("prints an invalid config's path and hint without a stack trace", async () => {
    const path = await config("invalid.json", [], { runtime: { max_step: 3 } });
    const { code, out, err } = await cli(["run", path, "hi"]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toContain("agents[0].runtime.max_step: unknown key 'max_step'");
    expect(err).toContain("hint: Did you mean 'max_steps'?");
    expect(err).not.toMatch(STACK_LINE);
  });

  it("suggests the nearest agent id", async () => {
    const path = await config("agents.json", [{ text: "hi" }]);
    const { code, err } = await cli(["run", path, "hi", "--agent", "asistant"]);
    expect(code).toBe(1);
    expect(err).toContain("Unknown agent id: 'asistant'");
    expect(err).toContain("hint: Did you mean 'assistant'?");
  });

  it("prints a plugin load error, with the stack only under KEEL_DEBUG=1", async () => {
    const path = await config("plugin.json", [{ text: "hi" }]);
    const raw = JSON.parse(readFileSync(path, "utf8")) as { agents: { tools: unknown[] }[] };
    raw.agents[0]!.tools = [{ id: "missing", impl: "./no-such-module.mjs#missing" }];
    await writeFile(path, JSON.stringify(raw), "utf8");
    const quiet = await cli(["run", path, "hi"]);
    expect(quiet.code).toBe(1);
    expect(quiet.err).toContain("PluginLoadError");
    expect(quiet.err).toContain("hint:");
    expect(quiet.err).not.toMatch(STACK_LINE);
    const loud = await cli(["run", path, "hi"], { env: { KEEL_DEBUG: "1" } });
    expect(loud.code).toBe(1);
    expect(loud.err).toMatch(STACK_LINE);
  });

  it("points at KEEL_DEBUG for an unexpected error", () => {
    expect(describeError(new TypeError("oops"), false)).toBe(
      "TypeError: oops\nhint: Set KEEL_DEBUG=1 to print the stack trace.",
    );
    expect(describeError(new TypeError("oops"), true)).toMatch(STACK_LINE);
  });
});

describe("keel command line", () => {
  it("suggests the nearest command for an unknown one", async () => {
    const { code, out, err } = await cli(["rnu", "x.json"]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toBe("Unknown command 'rnu'. Did you mean 'run'?\nRun 'keel --help' for usage.\n");
    const far = await cli(["deploy"]);
    expect(far.err).toContain(
      "Unknown command 'deploy'. Commands: run, validate, runs, checkpoints, trace, resume, decide, pending, policy, runner, serve, dev, worker, help.",
    );
    const option = await cli(["--verison"]);
    expect(option.err).toContain("Unknown option '--verison'. Did you mean '--version'?");
  });

  it("suggests the nearest flag and checks flag values", async () => {
    const unknown = await cli(["run", "a.json", "hi", "--agnet", "x"]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("Unknown option '--agnet' for 'keel run'. Did you mean '--agent'?");
    const missing = await cli(["run", "a.json", "hi", "--agent", "--json"]);
    expect(missing.err).toContain("Option '--agent' needs a value");
    const valued = await cli(["run", "a.json", "hi", "--json=yes"]);
    expect(valued.err).toContain("Option '--json' takes no value");
    const far = await cli(["validate", "a.json", "--zzz"]);
    expect(far.err).toContain("Options: --help.");
  });

  it("asks for the arguments a command needs", async () => {
    const run = await cli(["run", "a.json"]);
    expect(run.code).toBe(1);
    expect(run.err).toContain('Usage: keel run <config> "<input>"');
    const validate = await cli(["validate"]);
    expect(validate.code).toBe(1);
    expect(validate.err).toContain("Usage: keel validate <config>");
  });

  it("prints the usage for --help, help and a command's --help", async () => {
    for (const argv of [["--help"], ["-h"], ["help"], ["run", "--help"], ["validate", "-h"]]) {
      const { code, out, err } = await cli(argv);
      expect(code).toBe(0);
      expect(out).toBe(USAGE);
      expect(err).toBe("");
    }
    expect(USAGE).toMatch(/keel run <config> "<input>"\|- \[--agent ID\] \[--session ID\] \[--json\]/);
    expect(USAGE).toContain("keel validate <config>");
    expect(USAGE).toContain("keel dev <config> [the options of serve]");
    const bare = await cli([]);
    expect(bare.code).toBe(1);
    expect(bare.err).toBe(USAGE);
  });

  it("prints the package version", async () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
      version: string;
    };
    for (const flag of ["--version", "-v"]) {
      const { code, out } = await cli([flag]);
      expect(code).toBe(0);
      expect(out).toBe(`${version}\n`);
    }
  });

  it("validates a config", async () => {
    const path = await config("valid.json", [{ text: "hi" }]);
    const { code, out } = await cli(["validate", path]);
    expect(code).toBe(0);
    expect(out).toBe(`✓ ${path}: 1 agent(s): assistant\n`);
  });
});

describe("the built keel bin", () => {
  const bin = join(repoRoot, "dist/cli/main.js");

  beforeAll(async () => {
    // Build only when needed: the full build takes seconds and other suites may share dist/.
    if (!existsSync(bin) || !existsSync(join(repoRoot, "dist/index.js"))) {
      bundlePackage();
    }
  }, 120_000);

  it("starts from its shebang and validates a config", async () => {
    const path = await config("bin.json", [{ text: "hi" }]);
    expect(readFileSync(bin, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    const { stdout, stderr } = await run(process.execPath, [bin, "validate", path], { cwd: repoRoot });
    expect(stdout).toBe(`✓ ${path}: 1 agent(s): assistant\n`);
    expect(stderr).toBe("");
  });

  it("exits 1 from the bin for an invalid config, without a stack trace", async () => {
    const path = join(dir(), "bin-bad.json");
    await writeFile(path, "{ nope", "utf8");
    const failure = (await run(process.execPath, [bin, "validate", path]).catch(
      (error: unknown) => error,
    )) as {
      code: number;
      stderr: string;
    };
    expect(failure.code).toBe(1);
    expect(failure.stderr).toContain("ConfigLoadError: Invalid JSON");
    expect(failure.stderr).not.toMatch(STACK_LINE);
  });

  it("validate refuses from the bin what run refuses: a misspelt tool type, with run's hint", async () => {
    const path = join(dir(), "bin-typo.json");
    await writeFile(
      path,
      JSON.stringify({ agents: [{ id: "a", name: "A", tools: [{ id: "fs", type: "filesytem" }] }] }),
      "utf8",
    );
    const fail = (args: string[]) =>
      run(process.execPath, [bin, ...args], { cwd: repoRoot }).then(
        () => ({ code: 0, stderr: "" }),
        (error: { code: number; stderr: string }) => error,
      );
    const validated = await fail(["validate", path]);
    const ran = await fail(["run", path, "hi"]);
    expect(validated.code).toBe(1);
    expect(ran.code).toBe(1);
    for (const stderr of [validated.stderr, ran.stderr]) {
      expect(stderr).toContain('unknown tool type "filesytem"');
      expect(stderr).toContain('Did you mean "filesystem"?');
    }
    expect(validated.stderr).not.toMatch(STACK_LINE);
  });

  it("runs the quickstart example offline", async () => {
    const { stdout } = await run(
      process.execPath,
      [bin, "run", "examples/quickstart/agent.json", "Add 2 and 40, then count the words"],
      { cwd: repoRoot },
    );
    expect(stdout).toContain('→ add {"a":2,"b":40}\n');
    expect(stdout).toMatch(/← add 42 \(/);
    expect(stdout).toMatch(/← word_count 6 \(/);
    expect(stdout).toContain("The sum is 42 and the sentence has 6 words.\n");
    expect(stdout).toMatch(
      /✓ completed · 3 steps · 3 llm calls · 2 tool calls · tokens 280 in \/ 46 out · cost \$0 · run /,
    );
  });
});

describe("keel runs", () => {
  it("lists the runs of a persistent store, filtered by session and status, readable or as JSON", async () => {
    const path = await storedConfig("stored.json", [{ text: "one" }, { text: "two" }], {
      root: join(dir(), "store"),
    });
    expect((await cli(["run", path, "first", "--session", "s1"])).code).toBe(0);
    expect((await cli(["run", path, "second", "--session", "s2"])).code).toBe(0);

    const all = await cli(["runs", path]);
    expect(all.code).toBe(0);
    const [headings, ...rows] = all.out.trimEnd().split("\n");
    expect(headings).toMatch(/^RUN +AGENT +STATUS +STEPS +ELAPSED +TOKENS IN\/OUT +COST +SESSION +UPDATED$/);
    expect(rows).toHaveLength(2);
    // Each row: its id, agent, status, steps, elapsed time, tokens and cost (from its run.finished), session.
    expect(rows[0]).toMatch(
      /^[0-9a-f-]{36} {2}assistant {2}done \(completed\) +1 +\d+(\.\d+)? (ms|s) +\d+ \/ \d+ +\$0 +s1 +\d{4}-/,
    );

    const json = await cli(["runs", path, "--session", "s2", "--json"]);
    const records = jsonLines(json.out);
    expect(records.map((record) => [record.sessionId, record.status, record.stopReason])).toEqual([
      ["s2", "done", "completed"],
    ]);
    expect((await cli(["runs", path, "--status", "waiting"])).out).toContain("No runs in this store.");
  });

  it("refuses an unknown status with the allowed ones", async () => {
    const path = await config("status.json", [{ text: "x" }]);
    const { code, err } = await cli(["runs", path, "--status", "finished"]);
    expect(code).toBe(1);
    expect(err).toContain("--status must be created, running, waiting or done, not 'finished'");
  });
});

describe("keel run --durable, keel checkpoints and keel resume", () => {
  const root = () => join(dir(), "durable-store");
  // Step 1 asks for add, step 2 answers.
  const script = [{ tool_calls: [{ name: "add", arguments: { a: 2, b: 40 } }] }, { text: "The sum is 42." }];
  const runIdOf = (out: string) => /run ([0-9a-f-]{36})\n$/.exec(out)?.[1] ?? "";
  let path: string;
  let runId: string;

  beforeAll(async () => {
    path = await storedConfig("durable.json", script, { root: root() });
    const run = await cli(["run", path, "add 2 and 40", "--durable"]);
    expect(run.code).toBe(0);
    runId = runIdOf(run.out);
  });

  it("lists a durable run's checkpoints oldest first, the latest marked, readable or as JSON", async () => {
    const { code, out, err } = await cli(["checkpoints", path, runId]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const lines = out.trimEnd().split("\n");
    expect(lines.map((line) => line.replace(/ {2}\d{4}-\d\d-\d\dT[\d:.]+Z/, "  <time>"))).toEqual([
      `${runId}:step:1  tools      step 1  transcript 2  <time>`, // the model asked for add
      `${runId}:step:2  step_end   step 1  transcript 3  <time>`, // add's result, written with StepEnd
      `${runId}:step:3  step_end   step 2  transcript 4  <time>  latest`,
    ]);

    const json = await cli(["checkpoints", path, runId, "--json"]);
    const records = jsonLines(json.out);
    expect(records).toHaveLength(3);
    expect(records[2]).toEqual({
      checkpointId: `${runId}:step:3`,
      phase: "step_end",
      step: 2,
      transcriptLength: 4,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      latest: true,
    });
    expect(records.slice(0, 2).every((record) => record.latest === false)).toBe(true);
  });

  it("says so for a run without checkpoints, and refuses an unknown run with exit 2 and a hint", async () => {
    const plain = await cli(["run", path, "add 2 and 40"]);
    expect(plain.code).toBe(0);
    const none = await cli(["checkpoints", path, runIdOf(plain.out)]);
    expect(none).toMatchObject({ code: 0, err: "" });
    expect(none.out).toContain("has no checkpoints. (Durable runs, `keel run --durable`");
    expect((await cli(["checkpoints", path, runIdOf(plain.out), "--json"])).out).toBe("");

    const unknown = await cli(["checkpoints", path, "no-such-run"]);
    expect(unknown.code).toBe(2);
    expect(unknown.out).toBe("");
    expect(unknown.err).toBe(
      "run.unknown: Unknown run 'no-such-run': the config's session store has no such run\n" +
        "hint: `keel runs <config>` lists the runs it knows\n",
    );
  });

  it("refuses to continue a finished run from its latest checkpoint, with exit 2 and the earlier ones", async () => {
    const { code, out, err } = await cli(["resume", path, `${runId}:step:3`]);
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toBe(
      `run.not_resumable: Run '${runId}' already finished (completed); it cannot go on\n` +
        `hint: To start a new run from one of its checkpoints (${runId}:step:1, ${runId}:step:2, ` +
        `${runId}:step:3), pass branch: true (\`keel resume --branch\`)\n`,
    );
  });

  it("does not branch from an earlier checkpoint unless asked to, with exit 2 and the way to ask", async () => {
    const runsBefore = (await cli(["runs", path, "--json"])).out.trimEnd().split("\n").length;
    const { code, out, err } = await cli(["resume", path, `${runId}:step:2`]);
    expect(code).toBe(2);
    expect(out).toBe("");
    expect(err).toBe(
      `run.not_resumable: Run '${runId}' went on past checkpoint '${runId}:step:2' and finished (completed)\n` +
        `hint: To start a new run from '${runId}:step:2', pass branch: true (\`keel resume --branch\`)\n`,
    );
    expect((await cli(["runs", path, "--json"])).out.trimEnd().split("\n")).toHaveLength(runsBefore);
  });

  it("branches a new run from an earlier checkpoint and streams it to completion", async () => {
    // The scripted model answers after the turns the transcript holds, as a real model would: here step 2's.
    const { code, out, err } = await cli(["resume", path, `${runId}:step:2`, "--branch"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toMatch(
      /^The sum is 42\.\n {2}step 2 · [^\n]+\n✓ completed · 2 steps · 2 llm calls · 1 tool call · /,
    );
    const branchId = runIdOf(out);
    expect(branchId).not.toBe(runId);
    const runs = await cli(["runs", path, "--json"]);
    const branch = jsonLines(runs.out).find((record) => record.runId === branchId);
    expect(branch).toMatchObject({ parentRunId: runId, status: "done", stopReason: "completed" });
    // The original run is untouched; the branch, durable as its origin, has checkpoints of its own.
    expect((await cli(["checkpoints", path, runId])).out.trimEnd().split("\n")).toHaveLength(3);
    expect((await cli(["checkpoints", path, branchId])).out).toMatch(/:step:1 .* latest\n$/);
  });

  it("streams a resumed run as JSON chunks, run.finished last", async () => {
    // From the step in flight: the branch runs add itself, then answers.
    const { code, out } = await cli(["resume", path, `${runId}:step:1`, "--json", "--branch"]);
    expect(code).toBe(0);
    const chunks = jsonLines(out) as {
      kind: string;
      payload: { result?: { stopReason: string; runId: string } };
    }[];
    expect(chunks[0]!.kind).toBe("run.started");
    expect(chunks.at(-1)!.kind).toBe("run.finished");
    expect(chunks.at(-1)!.payload.result).toMatchObject({ stopReason: "completed" });
    expect(chunks.at(-1)!.payload.result!.runId).not.toBe(runId);
  });

  it("refuses unknown checkpoints and runs with exit 2, the error's code and its hint", async () => {
    const malformed = await cli(["resume", path, "nonsense"]);
    expect(malformed).toMatchObject({ code: 2, out: "" });
    expect(malformed.err).toBe(
      "checkpoint.unknown: 'nonsense' is not a run checkpoint id\n" +
        "hint: Run checkpoint ids look like '<runId>:step:<n>'; `keel checkpoints <config> <runId>` lists a run's\n",
    );
    const noRun = await cli(["resume", path, "no-such-run:step:1"]);
    expect(noRun.code).toBe(2);
    expect(noRun.err).toMatch(/^checkpoint\.unknown: Unknown checkpoint 'no-such-run:step:1'.*\nhint: /);
    const noStep = await cli(["resume", path, `${runId}:step:99`]);
    expect(noStep.code).toBe(2);
    expect(noStep.err).toContain(`checkpoint.unknown: Unknown checkpoint '${runId}:step:99'`);
    expect(noStep.err).toContain(`hint: The session's checkpoints: ${runId}:step:1, `);
  });

  it("refuses a checkpoint of another agent shape, or of an agent the config lacks", async () => {
    const otherTools = await storedConfig("durable-other-tools.json", script, {
      root: root(),
      extra: {
        tools: TOOLS.slice(0, 1),
      },
    });
    const changed = await cli(["resume", otherTools, `${runId}:step:3`]);
    expect(changed).toMatchObject({ code: 2, out: "" });
    expect(changed.err).toMatch(/^checkpoint\.agent_mismatch: .* with other tools, pattern or model\nhint: /);

    const otherAgent = await storedConfig("durable-other-agent.json", script, {
      root: root(),
      extra: { id: "helper" },
    });
    const missing = await cli(["resume", otherAgent, `${runId}:step:3`]);
    expect(missing).toMatchObject({ code: 2, out: "" });
    expect(missing.err).toBe(
      `checkpoint.agent_mismatch: Checkpoint '${runId}:step:3' belongs to agent 'assistant', which this config ` +
        "does not define\nhint: Resume it with the config that defines agent 'assistant' (this one has helper)\n",
    );
  });

  it("refuses a checkpoint of another schema version", async () => {
    const runtime = await Runtime.fromConfig(path);
    try {
      const record = (await runtime.getRun(runId))!;
      const stored = (await runtime.sessionManager.loadCheckpoint(record.sessionId, `${runId}:step:1`))!;
      await runtime.sessionManager.createCheckpoint(record.sessionId, {
        checkpointId: `${runId}:step:5`,
        state: { ...stored.state, schemaVersion: 99 },
        transcriptLength: stored.transcriptLength,
        artifactCount: 0,
      });
    } finally {
      await runtime.close();
    }
    const { code, err } = await cli(["resume", path, `${runId}:step:5`]);
    expect(code).toBe(2);
    expect(err).toMatch(
      /^checkpoint\.schema_version: Checkpoint '.*:step:5' has schema version 99; .*\nhint: /,
    );
  });

  it("asks for the arguments checkpoints and resume need", async () => {
    const checkpoints = await cli(["checkpoints", path]);
    expect(checkpoints.code).toBe(1);
    expect(checkpoints.err).toContain("Usage: keel checkpoints <config> <runId> [--json]");
    const resume = await cli(["resume", path]);
    expect(resume.code).toBe(1);
    expect(resume.err).toContain("Usage: keel resume <config> <checkpointId> [--branch] [--json]");
    expect((await cli(["resume", path, "x", "--durable"])).err).toContain(
      "Unknown option '--durable' for 'keel resume'.",
    );
  });
});
