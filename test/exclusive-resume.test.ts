import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonlFileSessionManager } from "../src/stores/jsonl/jsonl-file-session-manager.js";
import {
  type Child,
  persistentStores,
  readLedger,
  spawnChild,
  waitFor,
  withStore,
} from "./support/child-processes.js";
import { compileForChildren, repoRoot } from "./support/compile-for-children.js";

/**
 * Continuing a run is exclusive across processes: of two processes resuming one crashed run's latest
 * checkpoint, one goes on and the other is refused with a typed error — never a silent branch that runs the
 * run's side-effecting tool again — and `keel resume` on a run another process is running exits 2 with the
 * refusal's code and hint. The agent is test/support/crash-child.mjs's: step 1 calls `add` (c1); step 2 calls
 * `record` (c2, not idempotent) and `add` (c3); step 3 answers.
 */

const root = mkdtempSync(join(tmpdir(), "keel-exclusive-resume-"));
const { stores, drop } = persistentStores(root);
let buildDir = "";
const CHILD = "test/support/crash-child.mjs";

beforeAll(() => {
  buildDir = compileForChildren(root);
}, 120_000);

afterAll(async () => {
  await drop();
  rmSync(root, { recursive: true, force: true });
});

const REFUSAL_CODES = ["run.busy", "run.not_resumable"];
/** Longer than the waits below: a resume that waits for the live run shows up as a failed assertion. */
const TEST_TIMEOUT_MS = 90_000;

const reachedTool = (child: Child) => child.stdout.includes("@@reached mid-tool\n");
const exited = (child: Child) => child.process.exitCode !== null || child.process.signalCode !== null;

/** The `@@<tag> <json>` lines a child printed. */
function printed(child: Child, tag: string): Record<string, unknown>[] {
  const prefix = `@@${tag} `;
  return child.stdout
    .split("\n")
    .filter((line) => line.startsWith(prefix))
    .map((line) => JSON.parse(line.slice(prefix.length)));
}

/** Start the run in a child and SIGKILL it once the model's step-2 answer is checkpointed, before c2 runs. */
async function crashAfterModel(spec: Record<string, unknown>): Promise<void> {
  const child = spawnChild(CHILD, buildDir, { ...spec, mode: "start", crashAt: "after-model" });
  try {
    await waitFor(
      () => child.stdout.includes("@@reached after-model\n") || exited(child),
      () => `the run to reach after-model; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
    );
    expect(child.stdout).toContain("@@reached after-model\n");
  } finally {
    child.process.kill("SIGKILL");
    await child.exit;
  }
}

describe.each(stores)("two processes resuming one crashed run's latest checkpoint ($type)", (kind) => {
  it.each([
    ["at once", false],
    ["the second after the first has taken the run over", true],
  ])(
    "%s: one goes on, c2 runs once, the other is refused",
    async (_label, late) => {
      const which = late ? "late" : "once";
      const dir = join(root, `${kind.type}-${which}`);
      mkdirSync(dir, { recursive: true });
      const spec = {
        store: { type: kind.type, config: kind.config(which) },
        runId: `run-${which}`,
        sessionId: `session-${which}`,
        ledger: join(dir, "ledger"),
        recordIdempotent: false,
      };
      await crashAfterModel(spec);
      const gate = join(dir, "gate");
      // The resumer that goes on stops inside `record` (c2) until the gate opens: the run is live there while
      // the other resumer tries.
      const resume = { ...spec, mode: "resume", crashAt: null, holdAt: "mid-tool", gate };
      const children: Child[] = [spawnChild(CHILD, buildDir, resume)];
      let refusedWhileLive = false;
      try {
        if (late) {
          await waitFor(
            () => reachedTool(children[0]!) || exited(children[0]!),
            () => `the first resume to reach c2; stdout:\n${children[0]!.stdout}\n${children[0]!.stderr}`,
          );
        }
        children.push(spawnChild(CHILD, buildDir, resume));
        // Bounded so that a resume that waits for the live run fails the assertions below instead of hanging.
        await waitFor(
          () => children.every(exited) || (children.some(reachedTool) && children.some(exited)),
          () => "one resume to go on and the other to end",
        ).catch(() => {});
        refusedWhileLive =
          children.some(reachedTool) && children.some((child) => exited(child) && !reachedTool(child));
      } finally {
        writeFileSync(gate, "");
      }
      const codes = await Promise.all(children.map((child) => child.exit));
      const detail = children.map((child) => `${child.stdout}\n${child.stderr}`).join("\n----\n");
      expect(codes, detail).toEqual([0, 0]);
      const results = children.flatMap((child) => printed(child, "result"));
      const refusals = children.flatMap((child) => printed(child, "refused"));
      expect(results, detail).toEqual([
        expect.objectContaining({ stopReason: "completed", finalOutput: "All done: 3 and 7" }),
      ]);
      expect(refusals, detail).toHaveLength(1);
      expect(REFUSAL_CODES).toContain(refusals[0]!.code);
      expect(refusals[0]!.hint).toEqual(expect.stringContaining("branch"));
      expect(refusedWhileLive, detail).toBe(true);
      // The side-effecting tool ran once, and no branch was started.
      expect(readLedger(spec.ledger).filter((line) => line === "c2:start")).toHaveLength(1);
      await withStore(kind, which, async (store) => {
        expect((await store.listRuns()).map((run) => run.runId)).toEqual([spec.runId]);
        expect(await store.getRun(spec.runId)).toMatchObject({ status: "done", stopReason: "completed" });
      });
    },
    TEST_TIMEOUT_MS,
  );
});

describe("keel resume on a run another process is running", () => {
  it(
    "exits 2 with run.busy and its hint, without a stack trace, and leaves the run alone",
    async () => {
      const dir = join(root, "cli");
      mkdirSync(dir, { recursive: true });
      const started = join(dir, "started");
      const gate = join(dir, "gate");
      writeFileSync(
        join(dir, "tools.mjs"),
        `import { existsSync, writeFileSync } from "node:fs";
      export const wait = {
        name: "wait",
        description: "Wait for the gate",
        schema() { return { type: "object", properties: {} }; },
        executionSpec() {
          return { concurrencySafe: false, interruptBehavior: "cancel", sideEffects: "unknown",
            approvalMode: "inherit", defaultTimeoutMs: null, readsFiles: false, writesFiles: false,
            supportsStreaming: false };
        },
        invoke: () => {
          writeFileSync(${JSON.stringify(started)}, "");
          return new Promise((resolve) => {
            const poll = setInterval(() => {
              if (!existsSync(${JSON.stringify(gate)})) return;
              clearInterval(poll);
              resolve("opened");
            }, 5);
          });
        },
      };\n`,
      );
      const storeDir = join(dir, "store");
      const config = join(dir, "agent.json");
      writeFileSync(
        config,
        JSON.stringify({
          session: { type: "jsonl_file", config: { root_dir: storeDir } },
          agents: [
            {
              id: "assistant",
              name: "Assistant",
              llm: {
                provider: "mock",
                script: [{ tool_calls: [{ name: "wait", arguments: {} }] }, { text: "The gate opened" }],
              },
              tools: [{ id: "wait", impl: "./tools.mjs#wait" }],
            },
          ],
        }),
      );
      const main = join(buildDir, "cli/main.js");
      const running = cliProcess([main, "run", config, "go", "--durable"]);
      let resumed: CliProcess | undefined;
      try {
        await waitFor(
          () => existsSync(started) || running.code !== undefined,
          () => `the run to start its tool; ${running.stdout}${running.stderr}`,
        );
        const store = new JsonlFileSessionManager({ rootDir: storeDir });
        const [run] = await store.listRuns();
        const latest = (await store.listCheckpoints(run!.sessionId)).at(-1)!;
        await store.close();
        resumed = cliProcess([main, "resume", config, latest]);
        const resume = resumed;
        // Bounded only so that a resume that waits for the run fails this test instead of hanging it.
        await waitFor(
          () => resume.code !== undefined,
          () => "keel resume to end",
        ).catch(() => {});
      } finally {
        writeFileSync(gate, "");
      }
      await running.done;
      await resumed?.done;
      expect(resumed!.code, resumed!.stderr).toBe(2);
      expect(resumed!.stdout).toBe("");
      expect(resumed!.stderr).toMatch(
        /^run\.busy: Run '[0-9a-f-]{36}' is being continued elsewhere[^\n]*\nhint: [^\n]*--branch[^\n]*\n$/,
      );
      expect(resumed!.stderr).not.toMatch(/\n\s+at /);
      expect(running.code, running.stderr).toBe(0);
      expect(running.stdout).toContain("The gate opened");
    },
    TEST_TIMEOUT_MS,
  );
});

interface CliProcess {
  process: ChildProcess;
  stdout: string;
  stderr: string;
  code: number | null | undefined;
  done: Promise<void>;
}

/** `node <args>` from the repository's root, its output collected. */
function cliProcess(args: string[]): CliProcess {
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  const cli: CliProcess = {
    process: child,
    stdout: "",
    stderr: "",
    code: undefined,
    done: new Promise((resolve) =>
      child.on("close", (code) => {
        cli.code = code;
        resolve();
      }),
    ),
  };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    cli.stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    cli.stderr += chunk;
  });
  return cli;
}
