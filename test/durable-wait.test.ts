import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileForChildren, repoRoot } from "./support/compile-for-children.js";

/**
 * A durable run that meets a retryable model error waits `retryAfterMs` and resumes. That wait is the
 * run's work: the process must not exit during it, which only a process of its own shows (vitest keeps the event
 * loop alive). And a rate limit on the first model call, before any checkpoint, resumes the run from its start.
 */

const execute = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), "keel-durable-wait-"));
let buildDir = "";

beforeAll(() => {
  buildDir = compileForChildren(root);
}, 120_000);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Run node on `args` to its end, whatever its exit code. */
async function node(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execute(process.execPath, args, { cwd: repoRoot });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function rateLimitedRun(rateLimitedCall: number) {
  const child = await node([
    join(repoRoot, "test/support/rate-limit-child.mjs"),
    buildDir,
    JSON.stringify({ rateLimitedCall }),
  ]);
  const line = child.stdout.split("\n").find((text) => text.startsWith("@@result "));
  return { ...child, result: line === undefined ? undefined : JSON.parse(line.slice("@@result ".length)) };
}

describe("a durable run waiting to resume after a rate limit, in a process of its own", () => {
  it("keeps the process alive through the wait and completes (the second model call is limited)", async () => {
    const { code, stderr, result } = await rateLimitedRun(2);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(result).toMatchObject({ stopReason: "completed", finalOutput: "The sum is 3", toolCalls: 1 });
  });

  it("resumes from its start when the first model call is limited, before any checkpoint", async () => {
    const { code, stderr, result } = await rateLimitedRun(1);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(result).toMatchObject({
      stopReason: "completed",
      finalOutput: "The sum is 3",
      toolCalls: 1,
      errorCode: null,
    });
  });

  it("keel run --durable waits out the rate limit and exits 0 with the answer", async () => {
    writeFileSync(
      join(root, "tools.mjs"),
      `export const add = {
        name: "add",
        description: "Add two numbers",
        schema() { return { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } }; },
        executionSpec() {
          return { concurrencySafe: false, interruptBehavior: "cancel", sideEffects: "unknown",
            approvalMode: "inherit", defaultTimeoutMs: null, readsFiles: false, writesFiles: false,
            supportsStreaming: false };
        },
        invoke: ({ a, b }) => a + b,
      };\n`,
    );
    const config = join(root, "agent.json");
    const script = [
      { tool_calls: [{ name: "add", arguments: { a: 1, b: 2 } }] },
      { error: { type: "rate_limit", message: "429 slow down", retry_after_ms: 50 } },
      { text: "The sum is 3" },
    ];
    writeFileSync(
      config,
      JSON.stringify({
        session: { type: "jsonl_file", config: { root_dir: join(root, "store") } },
        agents: [
          {
            id: "assistant",
            name: "Assistant",
            llm: { provider: "mock", script },
            tools: [{ id: "add", impl: "./tools.mjs#add" }],
          },
        ],
      }),
    );
    const { code, stdout, stderr } = await node([
      join(buildDir, "cli/main.js"),
      "run",
      config,
      "go",
      "--durable",
    ]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toContain("The sum is 3");
    expect(stdout).toMatch(/✓ completed · 2 steps/);
  });
});
