import { existsSync } from "node:fs";
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

async function run(
  name: string,
  text?: string,
  env: Record<string, string | undefined> = {},
): Promise<{ code: number; out: string; err: string }> {
  const configPath = join(dir, name);
  if (text !== undefined) await writeFile(configPath, text, "utf8");
  let out = "";
  let err = "";
  const code = await validateCommand({
    configPath,
    stdout: { write: (chunk: string) => (out += chunk) },
    stderr: { write: (chunk: string) => (err += chunk) },
    env,
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

  it("resolves every plugin ref, impl and model key as run would, and reports every issue at once", async () => {
    await writeFile(join(dir, "plugins.mjs"), "export class ReactPattern {}\n", "utf8");
    const result = await run(
      "refs.json",
      JSON.stringify({
        session: { type: "jsonl_file" },
        agents: [
          {
            id: "a",
            name: "A",
            tools: [{ id: "fs", type: "filesytem" }],
            memory: { impl: "./no-such-memory.mjs#Memory" },
            llm: { provider: "anthropic", api_key_env: "KEEL_VALIDATE_TEST_KEY" },
          },
          { id: "b", name: "B", pattern: { impl: "./plugins.mjs#ReactPatern" } },
        ],
      }),
    );
    expect(result.code).toBe(1);
    expect(result.out).toBe("");
    const lines = result.err.split("\n");
    expect(lines[0]).toMatch(
      /^ConfigValidationError: session: session "jsonl_file": invalid config at root_dir/,
    );
    expect(lines).toContain("5 issues:");
    const body = lines.slice(lines.indexOf("5 issues:") + 1).join("\n");
    expect(body).toContain(
      '  - agents[0].tools[0]: unknown tool type "filesytem"\n    hint: Did you mean "filesystem"?',
    );
    expect(body).toContain(`  - agents[0].memory: cannot import "./no-such-memory.mjs"`);
    expect(body).toContain(`hint: No module at ${join(dir, "no-such-memory.mjs")}`);
    expect(body).toContain(
      '  - agents[1].pattern: "./plugins.mjs" has no export "ReactPatern"\n    hint: Did you mean "ReactPattern"?',
    );
    expect(body).toContain("the environment variable KEEL_VALIDATE_TEST_KEY is not set");
    expect(body).toContain("hint: Set KEEL_VALIDATE_TEST_KEY");
  });

  it("checks the plugins a builtin loads from its own config, such as the retry executor's inner one", async () => {
    const result = await run(
      "nested.json",
      JSON.stringify({
        agents: [
          {
            id: "a",
            name: "A",
            tool_executor: { type: "retry", config: { inner: { type: "saef" } } },
          },
        ],
      }),
    );
    expect(result.code).toBe(1);
    expect(result.err).toContain('agents[0].tool_executor.config.inner: unknown tool_executor type "saef"');
    expect(result.err).toContain('Did you mean "safe"?');
  });

  it("suggests the store type an unknown session type was meant to be", async () => {
    const result = await run(
      "sqlit.json",
      JSON.stringify({ session: { type: "sqlit" }, agents: [{ id: "a", name: "A" }] }),
    );
    expect(result.code).toBe(1);
    expect(result.err).toContain('ConfigValidationError: session: unknown session type "sqlit"');
    expect(result.err).toContain('hint: Did you mean "sqlite"?');
  });

  it("starts nothing: no MCP server process, no store connection, no request", async () => {
    const marker = join(dir, "server-started");
    const result = await run(
      "quiet.json",
      JSON.stringify({
        session: { type: "postgres", config: { connection_string: "postgres://nobody@127.0.0.1:1/none" } },
        agents: [
          {
            id: "a",
            name: "A",
            llm: { provider: "openai_compatible", api_base: "http://127.0.0.1:1/v1" },
            tools: [
              {
                id: "calc",
                type: "mcp",
                config: {
                  server: {
                    command: process.execPath,
                    args: ["-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "x")`],
                  },
                },
              },
            ],
          },
        ],
      }),
      { OPENAI_API_KEY: "sk-test" },
    );
    expect(result).toMatchObject({ code: 0, err: "" });
    expect(existsSync(marker)).toBe(false);
  });
});
