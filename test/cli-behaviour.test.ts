import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { waitFor } from "./support/child-processes.js";
import { PLAIN_TOOLS_PRELUDE } from "./support/cli-harness.js";
import { keel, startKeel, useBuiltCli } from "./support/cli-process.js";

/**
 * `keel` as a shell sees it, the built CLI in a process of its own: it exits once the run has ended, whatever a
 * tool still does; Ctrl-C cancels (exit 130) and a second Ctrl-C quits; the input can come from stdin; with
 * --json an error is a JSON line; and the config choices that are legal but rarely meant are said out loud.
 */

useBuiltCli();
const dir = mkdtempSync(join(tmpdir(), "keel-cli-behaviour-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Plain objects with the Tool members; `hang` never settles and holds nothing, `slow` and `stubborn` hold a
// timer for ten minutes, and `stubborn` will not be interrupted.
writeFileSync(
  join(dir, "tools.mjs"),
  `${PLAIN_TOOLS_PRELUDE}const tenMinutes = () => new Promise((resolve) => setTimeout(() => resolve("late"), 600_000));
export const hang = tool("hang", () => new Promise(() => {}));
export const slow = tool("slow", tenMinutes);
export const stubborn = tool("stubborn", tenMinutes, { interruptBehavior: "block" });
`,
);

/** Write a config with one agent `a`; `agent` adds to (or replaces) its keys. */
function config(name: string, agent: Record<string, unknown>, top: Record<string, unknown> = {}): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ ...top, agents: [{ id: "a", name: "A", ...agent }] }));
  return path;
}

/** An agent whose first turn calls `tool` and whose second answers. */
function calling(tool: string, runtime: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    llm: { provider: "mock", script: [{ tool_calls: [{ name: tool }] }, { text: "done" }] },
    tools: [{ id: tool, impl: `./tools.mjs#${tool}` }],
    runtime,
  };
}

describe("keel run ends when its run ends", () => {
  it("a tool that never settles ends in a timeout with a summary, and the run is stored as finished", async () => {
    const path = config("hang.json", calling("hang", { step_timeout_ms: 500 }), {
      session: { type: "jsonl_file", config: { root_dir: join(dir, "store") } },
    });
    const run = await keel(["run", path, "go"]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(
      /^→ hang \{\}\n✗ hang Tool 'hang' was stopped: the run ran out of time .*\n {2}step 1 · .*\n✗ timeout · 1 step · 1 llm call · 1 tool call · /,
    );
    expect(run.stderr).toContain("The run ran out of time at step 1");
    const runs = await keel(["runs", path, "--json"]);
    expect(JSON.parse(runs.stdout)).toMatchObject({ status: "done", stopReason: "timeout" });
  });

  it("exits after ✗ timeout while the tool it gave up on still holds a timer", async () => {
    const run = await keel(["run", config("slow.json", calling("slow", { step_timeout_ms: 500 })), "go"]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/\n✗ timeout · 1 step · /);
  });

  it("the first Ctrl-C cancels the run in flight, prints the summary and exits 130", async () => {
    const running = startKeel(["run", config("interrupt.json", calling("slow")), "go"]);
    await waitFor(
      () => running.stdout.includes("→ slow {}\n") || running.code !== undefined,
      () => `the tool to start; ${running.stdout}${running.stderr}`,
    );
    running.kill("SIGINT");
    await running.done;
    expect(running.code, running.stderr).toBe(130);
    expect(running.stderr).toContain(
      "Interrupted: cancelling and cleaning up (press Ctrl-C again to force quit)",
    );
    expect(running.stdout).toMatch(/\n✗ cancelled · 1 step · 1 llm call · 1 tool call · /);
  });

  it("a second Ctrl-C quits while the cleanup still waits for a tool that will not be interrupted", async () => {
    const running = startKeel(["run", config("stubborn.json", calling("stubborn")), "go"]);
    await waitFor(
      () => running.stdout.includes("→ stubborn {}\n") || running.code !== undefined,
      () => `the tool to start; ${running.stdout}${running.stderr}`,
    );
    running.kill("SIGINT");
    await waitFor(
      () => running.stderr.includes("press Ctrl-C again") || running.code !== undefined,
      () => `the first Ctrl-C to be acknowledged; ${running.stderr}`,
    );
    // The run waits for the tool, which holds on for minutes: only the second Ctrl-C can end the process now.
    expect(running.code).toBeUndefined();
    running.kill("SIGINT");
    await running.done;
    expect(running.code).toBe(130);
  });
});

describe("keel run's input and its words on stderr", () => {
  it("reads the input from stdin for `-`, and says which model an agent without llm runs on", async () => {
    const path = config("no-llm.json", {});
    const run = await keel(["run", path, "-"], { input: "hello from stdin\n" });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Echo: hello from stdin \(history=0\)\n {2}step 1 · .*\n✓ completed/);
    expect(run.stderr).toBe(
      `[keel] note: agent 'a' has no "llm", so it runs on the offline mock model 'mock-echo', which echoes the ` +
        `input (and calls a tool for "/tool <id> <query>"); set "llm" to use a real model\n`,
    );
    const empty = await keel(["run", path, "-"], { input: "" });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain("keel run <config> - reads the input from stdin, and stdin was empty");
  });

  it("reports a config that does not load as a JSON line with --json, and as text on stderr", async () => {
    const path = join(dir, "misspelt.json");
    writeFileSync(path, JSON.stringify({ agents: [{ id: "a", nmae: "A" }] }));
    const run = await keel(["run", path, "go", "--json"]);
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      kind: "error",
      error: { code: "config.validation", hint: "Did you mean 'name'?" },
    });
    expect(run.stderr).toContain("agents[0].nmae: unknown key 'nmae'");
  });

  it("warns that --durable on the in_memory store keeps nothing past the process", async () => {
    const path = config("durable-memory.json", { llm: { provider: "mock", script: [{ text: "ok" }] } });
    const run = await keel(["run", path, "go", "--durable"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      "[keel] warning: --durable on the in_memory session store: its checkpoints live in this process only",
    );
    const plain = await keel(["run", path, "go"]);
    expect(plain.stderr).toBe("");
  });

  it("warns at load about a shell_exec the agent's permissions do not enable", async () => {
    const llm = { provider: "mock", script: [{ text: "ok" }] };
    const tools = [{ id: "sh", type: "shell_exec" }];
    const off = await keel(["run", config("shell-off.json", { llm, tools }), "go"]);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stderr).toBe(
      `[keel] warning: agent 'a': tool 'sh' is refused on every call: it needs "permissions": ` +
        `{ "enable": ["shell"] } in the agent's config\n`,
    );
    const on = config("shell-on.json", { llm, tools, permissions: { enable: ["shell"] } });
    expect((await keel(["run", on, "go"])).stderr).toBe("");
  });
});
