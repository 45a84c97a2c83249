// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are config text holding ${VAR} references
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigLoadError, ConfigValidationError } from "../errors/error-classes.js";
import type { LLMOptions } from "./app-config-schema.js";
import { loadConfig } from "./load-config.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "keel-load-config-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text, "utf8");
  return path;
}

async function rejection(path: string): Promise<Error> {
  try {
    await loadConfig(path);
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected loadConfig to reject");
}

describe("loadConfig", () => {
  it("loads a file and returns its absolute path and directory", async () => {
    const path = await file("ok.json", '\uFEFF{"agents": [{"id": "a", "name": "A"}]}');
    const loaded = await loadConfig(relative(process.cwd(), path));
    expect(loaded.path).toBe(path);
    expect(loaded.baseDir).toBe(dir);
    expect(loaded.config.agents.map((agent) => agent.id)).toEqual(["a"]);
    expect(loaded.config.session).toEqual({ type: "in_memory", config: {} });
  });

  it("expands environment variables before parsing", async () => {
    process.env.KEEL_TEST_MODEL = "claude-sonnet-4-6";
    try {
      const path = await file(
        "env.json",
        '{"agents": [{"id": "a", "name": "A", "runtime": {"max_steps": ${KEEL_TEST_UNSET_STEPS:-5}},\n' +
          '  "llm": {"provider": "anthropic", "model": "${KEEL_TEST_MODEL}"}}]}',
      );
      const agent = (await loadConfig(path)).config.agents[0];
      expect(agent?.runtime.max_steps).toBe(5);
      expect((agent?.llm as LLMOptions | undefined)?.model).toBe("claude-sonnet-4-6");
    } finally {
      delete process.env.KEEL_TEST_MODEL;
    }
  });

  it("names an unset variable", async () => {
    const path = await file("unset.json", '{"agents": [{"id": "${KEEL_TEST_UNSET_ID}", "name": "A"}]}');
    const error = await rejection(path);
    expect(error).toBeInstanceOf(ConfigLoadError);
    expect(error.message).toBe(
      "Environment variable 'KEEL_TEST_UNSET_ID' is not set (referenced in config as ${KEEL_TEST_UNSET_ID})",
    );
  });

  it("reports a missing file and a directory with a hint", async () => {
    const missing = await rejection(join(dir, "nope.json"));
    expect(missing).toBeInstanceOf(ConfigLoadError);
    expect(missing.message).toBe(`Config file not found: ${join(dir, "nope.json")}`);
    expect((missing as ConfigLoadError).hint).toContain("Check the path");
    const directory = await rejection(dir);
    expect(directory).toBeInstanceOf(ConfigLoadError);
    expect(directory.message).toBe(`Config path is not a file: ${dir}`);
    expect((directory as ConfigLoadError).hint).toBe(
      "Pass the path of a JSON config file, such as agent.json.",
    );
  });

  it("reports a JSON syntax error by line and column", async () => {
    const path = await file("bad.json", '{\n  "agents": [\n    {"id": "a", "name": "A"},\n  ]\n}\n');
    const error = await rejection(path);
    expect(error).toBeInstanceOf(ConfigLoadError);
    expect(error.message).toBe(`Invalid JSON in ${path} at line 4, column 3: Unexpected token ']'`);
    expect((error as ConfigLoadError).hint).toBe(
      "Fix the JSON near line 4, column 3; JSON allows no comments and no trailing commas.",
    );
    expect((error as ConfigLoadError).context).toMatchObject({ line: 4, column: 3 });
  });

  it("reports the position in the file as written, not in the expanded text", async () => {
    process.env.KEEL_TEST_LONG = "x".repeat(50);
    try {
      const path = await file("shifted.json", '{"a": "${KEEL_TEST_LONG}",\n "b": 1,, "c": 2}');
      const error = await rejection(path);
      expect(error.message).toBe(
        `Invalid JSON in ${path} at line 2, column 9: Expected double-quoted property name`,
      );
    } finally {
      delete process.env.KEEL_TEST_LONG;
    }
  });

  it("reports an unterminated document at its end", async () => {
    const path = await file("short.json", '{"agents": [');
    const error = await rejection(path);
    expect(error.message).toBe(`Invalid JSON in ${path} at line 1, column 13: Unexpected end of JSON input`);
  });

  it("validates the parsed config and keeps the file path in the error's context", async () => {
    const path = await file(
      "invalid.json",
      '{"agents": [{"id": "a", "name": "A", "runtime": {"max_step": 3}}]}',
    );
    const error = await rejection(path);
    expect(error).toBeInstanceOf(ConfigValidationError);
    expect(error.message).toBe("agents[0].runtime.max_step: unknown key 'max_step'");
    expect((error as ConfigValidationError).hint).toBe("Did you mean 'max_steps'?");
    expect((error as ConfigValidationError).context.configPath).toBe(path);
  });
});
