import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { type CliIO, main } from "../../src/cli/cli.js";

/** The `keel` command line run in-process against config files in a temp dir (src/cli/*.test.ts). */

/**
 * The head of a tools module whose tools are plain objects with the Tool members, so tests need no build of
 * the package: `tool(name, invoke, extraSpec?)`.
 */
export const PLAIN_TOOLS_PRELUDE = `
const spec = {
  concurrencySafe: false, interruptBehavior: "cancel", sideEffects: "unknown", approvalMode: "inherit",
  defaultTimeoutMs: null, readsFiles: false, writesFiles: false, supportsStreaming: false,
};
function tool(name, invoke, extra = {}) {
  return {
    name,
    description: "The " + name + " tool",
    schema() { return { type: "object", properties: {} }; },
    executionSpec() { return { ...spec, ...extra }; },
    invoke,
  };
}
`;

const TOOLS_MODULE = `${PLAIN_TOOLS_PRELUDE}export const add = tool("add", ({ a, b }) => a + b);
export const boom = tool("boom", () => { throw new Error("kaboom"); });
export const shout = tool("shout", ({ text }) => text.repeat(100));
export const guarded = tool("guarded", ({ a }) => a, { approvalMode: "always" });
export const pay = tool("pay", ({ query }) => "paid " + query, { approvalMode: "always" });
`;

/** The tools every config's agent has; `pay` and `guarded` need approval. */
export const TOOLS = [
  { id: "add", impl: "./tools.mjs#add" },
  { id: "boom", impl: "./tools.mjs#boom" },
  { id: "shout", impl: "./tools.mjs#shout" },
  { id: "guarded", impl: "./tools.mjs#guarded" },
  { id: "pay", impl: "./tools.mjs#pay" },
];

/** What `JSON.parse` gives: one per line of `--json` output. */
export function jsonLines(out: string): ReturnType<typeof JSON.parse>[] {
  return out
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line));
}

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/**
 * A temp dir with the tools module, made before the file's tests and removed after them, and helpers that write
 * configs into it and run the command line.
 */
export function cliHarness(prefix = "keel-cli-") {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
    await writeFile(join(dir, "tools.mjs"), TOOLS_MODULE, "utf8");
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Write an agent.json with one agent `assistant` answering with `script`. */
  async function config(name: string, script: unknown[], extra: Record<string, unknown> = {}) {
    const path = join(dir, name);
    const agent = {
      id: "assistant",
      name: "Assistant",
      llm: { provider: "mock", script },
      tools: TOOLS,
      ...extra,
    };
    await writeFile(path, JSON.stringify({ agents: [agent] }), "utf8");
    return path;
  }

  /** Like {@link config}, with the runs kept in a jsonl_file store under `root`. */
  async function storedConfig(
    name: string,
    script: unknown[],
    store: { root: string; extra?: Record<string, unknown> },
  ) {
    const { root, extra = {} } = store;
    const path = await config(name, script, extra);
    const withStore = JSON.parse(readFileSync(path, "utf8"));
    withStore.session = { type: "jsonl_file", config: { root_dir: root } };
    await writeFile(path, JSON.stringify(withStore), "utf8");
    return path;
  }

  async function cli(
    argv: string[],
    options: Partial<Pick<CliIO, "env" | "isTTY" | "signal" | "prompt">> = {},
  ): Promise<CliRun> {
    let out = "";
    let err = "";
    const code = await main(argv, {
      stdout: { write: (chunk: string) => (out += chunk) },
      stderr: { write: (chunk: string) => (err += chunk) },
      env: {},
      ...options,
    });
    return { code, out, err };
  }

  return { dir: () => dir, config, storedConfig, cli };
}
