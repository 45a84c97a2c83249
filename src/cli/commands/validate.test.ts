import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateCommand } from "./validate.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "keel-validate-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(name: string, text?: string): Promise<{ code: number; out: string; err: string }> {
  const configPath = join(dir, name);
  if (text !== undefined) await writeFile(configPath, text, "utf8");
  let out = "";
  let err = "";
  const code = await validateCommand({
    configPath,
    stdout: { write: (chunk: string) => (out += chunk) },
    stderr: { write: (chunk: string) => (err += chunk) },
  });
  return { code, out, err };
}

describe("validateCommand", () => {
  it("prints the agents of a valid config and returns 0", async () => {
    const result = await run(
      "ok.json",
      JSON.stringify({
        agents: [
          { id: "planner", name: "Planner" },
          { id: "coder", name: "Coder" },
        ],
      }),
    );
    expect(result).toEqual({
      code: 0,
      out: `✓ ${join(dir, "ok.json")}: 2 agent(s): planner, coder\n`,
      err: "",
    });
  });

  it("prints the error, its hint and every issue, and returns 1", async () => {
    const result = await run(
      "bad.json",
      JSON.stringify({ agents: [{ id: "a", name: "A", runtime: { max_step: 3 }, followup_resolver: {} }] }),
    );
    expect(result.code).toBe(1);
    expect(result.out).toBe("");
    expect(result.err).toBe(
      [
        "ConfigValidationError: agents[0].runtime.max_step: unknown key 'max_step' (and 1 more issue)",
        "hint: Did you mean 'max_steps'?",
        "2 issues:",
        "  - agents[0].runtime.max_step: unknown key 'max_step'",
        "    hint: Did you mean 'max_steps'?",
        "  - agents[0].followup_resolver: 'followup_resolver' was removed",
        "    hint: Implement Pattern.resolveFollowup in a custom pattern instead.",
        "",
      ].join("\n"),
    );
  });

  it("prints a load error with its hint and returns 1", async () => {
    const result = await run("missing.json");
    expect(result.code).toBe(1);
    expect(result.err).toBe(
      `ConfigLoadError: Config file not found: ${join(dir, "missing.json")}\n` +
        `hint: Check the path; a relative path resolves against the current directory (${process.cwd()}).\n`,
    );
  });

  it("reports JSON syntax errors by line and column", async () => {
    const result = await run("syntax.json", '{"agents": [\n  {"id": "a" "name": "A"}\n]}');
    expect(result.code).toBe(1);
    expect(result.err.split("\n")[0]).toBe(
      `ConfigLoadError: Invalid JSON in ${join(dir, "syntax.json")} at line 2, column 14: Expected ',' or '}' after property value`,
    );
  });
});
