import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { waitFor } from "./support/child-processes.js";
import { type KeelProcess, startKeel, useBuiltCli } from "./support/cli-process.js";
import { repoRoot } from "./support/compile-for-children.js";
import { idsOf, readSse, type SseRead } from "./support/sse-client.js";

/**
 * `keel serve` in a child process, killed with SIGKILL in the middle of a durable run on the SQLite store that
 * a client is streaming, then started again on the same config and database: with --resume-interrupted the
 * new server resumes the run from its latest checkpoint before it listens, and the client re-attaching with its
 * Last-Event-ID gets every remaining event once, to the run's end.
 */

useBuiltCli();
const dir = mkdtempSync(join(tmpdir(), "keel-serve-crash-"));
const children: KeelProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.code === undefined) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const STEPS = 8;
const TOKEN = "crash-test-token";

function writeConfig(): string {
  const require = createRequire(import.meta.url);
  const keelUrl = pathToFileURL(join(repoRoot, "dist/index.js")).href;
  const zodUrl = pathToFileURL(require.resolve("zod")).href;
  writeFileSync(
    join(dir, "tools.mjs"),
    `import { defineTool } from ${JSON.stringify(keelUrl)};
import { z } from ${JSON.stringify(zodUrl)};
export const tick = defineTool({
  name: "tick",
  description: "Wait a moment",
  inputSchema: z.object({ n: z.number() }),
  execute: async ({ n }) => { await new Promise((resolve) => setTimeout(resolve, 100)); return n; },
});
`,
  );
  const script = [
    ...Array.from({ length: STEPS }, (_, n) => ({ tool_calls: [{ name: "tick", arguments: { n } }] })),
    { text: "ticked" },
  ];
  const config = {
    session: { type: "sqlite", config: { db_path: join(dir, "runs.db") } },
    agents: [
      {
        id: "ticker",
        name: "Ticker",
        llm: { provider: "mock", model: "mock-scripted", script },
        tools: [{ id: "tick", impl: "./tools.mjs#tick" }],
      },
    ],
  };
  const path = join(dir, "agent.json");
  writeFileSync(path, JSON.stringify(config));
  return path;
}

async function startServer(config: string): Promise<{ child: KeelProcess; url: string }> {
  const child = startKeel(["serve", config, "--port", "0", "--resume-interrupted"], {
    env: { KEEL_SERVER_TOKEN: TOKEN },
  });
  children.push(child);
  await waitFor(
    () => /at (http:\S+)/.test(child.stdout) || child.code !== undefined,
    () => `the server to listen; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
  );
  const url = /at (http:\S+)/.exec(child.stdout)?.[1];
  if (url === undefined) throw new Error(`The server exited: ${child.stdout}\n${child.stderr}`);
  return { child, url };
}

const auth = { authorization: `Bearer ${TOKEN}` };

describe("keel serve, killed mid-run and started again", () => {
  it("lets the client re-attach with Last-Event-ID and get every remaining event once", async () => {
    const config = writeConfig();
    const first = await startServer(config);
    const started = await fetch(`${first.url}/runs`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ agentId: "ticker", inputText: "tick", durable: true }),
    });
    expect(started.status).toBe(202);
    const { runId } = (await started.json()) as { runId: string };

    // Read until a few tools have finished, then kill the server under the open stream.
    let before: SseRead = { events: [], comments: [], ended: false };
    const response = await fetch(`${first.url}/runs/${runId}/events`, { headers: auth });
    const reading = readSse(response, (read) => {
      before = read;
      if (read.events.filter((event) => event.event === "tool.finished").length === 3)
        first.child.kill("SIGKILL");
      return false;
    }).catch(() => before);
    await first.child.done;
    before = await reading;
    expect(first.child.signal).toBe("SIGKILL");
    expect(before.events.some((event) => event.event === "run.finished")).toBe(false);
    const lastId = idsOf(before).at(-1)!;

    const second = await startServer(config);
    expect(second.child.stderr).toContain(`Resumed interrupted run ${runId}`);
    const after = await readSse(
      await fetch(`${second.url}/runs/${runId}/events`, {
        headers: { ...auth, "last-event-id": String(lastId) },
      }),
    );
    const ids = [...idsOf(before), ...idsOf(after)];
    expect(ids).toEqual(ids.map((_, index) => index + 1));
    const finished = after.events.at(-1)!;
    expect(finished.event).toBe("run.finished");
    expect(JSON.parse(finished.data).result).toMatchObject({
      stopReason: "completed",
      finalOutput: "ticked",
    });
    const record = await (await fetch(`${second.url}/runs/${runId}`, { headers: auth })).json();
    expect(record).toMatchObject({ status: "done", stopReason: "completed" });

    second.child.kill("SIGTERM");
    await second.child.done;
    expect(second.child.code).toBe(0);
  }, 60_000);
});
