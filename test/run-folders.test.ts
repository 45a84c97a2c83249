import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type AgentConfig, Runtime } from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";

/** Run folders and large outputs as artifacts, end to end with the filesystem toolset. */

const base = mkdtempSync(path.join(tmpdir(), "keel-run-folders-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const BIG = `${"x".repeat(39_990)}END-OF-BIG`;

function script() {
  return scriptedModel([
    {
      toolCalls: [
        { id: "w1", name: "write_file", arguments: { path: "big.txt", content: BIG } },
        { id: "r0", name: "read_file", arguments: { path: "../escape.txt" } },
      ],
    },
    { toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "big.txt" } }] },
    { text: "done" },
  ]);
}

function lines(file: string): Record<string, unknown>[] {
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function runWith(
  runtimeOptions: Record<string, unknown> | undefined,
  sandbox?: Record<string, unknown>,
) {
  const model = script();
  const agent: Record<string, unknown> = {
    id: "a",
    name: "A",
    llm: model,
    tools: [{ id: "fs", type: "filesystem" }],
  };
  if (runtimeOptions !== undefined) agent.runtime = runtimeOptions;
  if (sandbox !== undefined) agent.sandbox = sandbox;
  const runtime = await Runtime.fromDict({ agents: [agent as AgentConfig] });
  const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
  await runtime.close?.();
  return { model, result };
}

describe("run folders and large outputs", () => {
  it("writes logs/tools.jsonl, logs/errors.jsonl and events.jsonl; the workspace is the folder's", async () => {
    const root = path.join(base, "on");
    const { model, result } = await runWith({ run_folders: { root_dir: root } });
    expect(result.stopReason).toBe("completed");
    const dir = path.join(root, "runs", encodeURIComponent(result.runId));
    for (const sub of ["workspace", "deliverables", "archive", "logs"])
      expect(existsSync(path.join(dir, sub))).toBe(true);
    // The sandbox used the folder's workspace.
    expect(readFileSync(path.join(dir, "workspace", "big.txt"), "utf8")).toBe(BIG);

    const tools = lines(path.join(dir, "logs", "tools.jsonl"));
    expect(tools.map((line) => [line.toolCallId, line.toolId, line.toolset, line.status])).toEqual([
      ["w1", "write_file", "fs", "succeeded"],
      ["r0", "read_file", "fs", "failed"],
      ["r1", "read_file", "fs", "succeeded"],
    ]);
    for (const line of tools) {
      expect(typeof line.durationMs).toBe("number");
      expect(Number.isNaN(Date.parse(line.startedAt as string))).toBe(false);
      expect((line.summary as string).length).toBeLessThanOrEqual(200);
      expect(line).not.toHaveProperty("params");
    }
    expect(JSON.stringify(tools)).not.toContain("xxxxxxxxxx");
    expect((tools[1]!.error as { code: string }).code).toMatch(/^sandbox\./);

    const errors = lines(path.join(dir, "logs", "errors.jsonl"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ toolCallId: "r0", toolId: "read_file", status: "failed" });
    expect(errors[0]!.code).toMatch(/^sandbox\./);
    expect(typeof errors[0]!.message).toBe("string");

    const eventsText = readFileSync(path.join(dir, "events.jsonl"), "utf8");
    const events = lines(path.join(dir, "events.jsonl"));
    const kinds = events.map((event) => event.kind);
    expect(kinds[0]).toBe("run.started");
    expect(kinds).toContain("tool.started");
    expect(kinds).toContain("tool.completed");
    expect(kinds).toContain("tool.failed");
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
    expect(eventsText).not.toContain("x".repeat(300));

    // The large read became an artifact: its content under archive/, the model sees only the reference.
    const artifact = result.artifacts.find((entry) => entry.kind === "tool_output")!;
    expect(artifact.metadata).toMatchObject({
      id: "output-r1",
      toolCallId: "r1",
      path: "archive/output-r1.json",
    });
    expect(readFileSync(path.join(dir, "archive", "output-r1.json"), "utf8")).toContain("END-OF-BIG");
    const toolMessage = model.requests[2]!.messages.find(
      (message) => message.role === "tool" && message.toolCallId === "r1",
    ) as { content: string };
    expect(toolMessage.content).toContain("output-r1");
    expect(toolMessage.content).not.toContain("END-OF-BIG");
    expect(toolMessage.content.length).toBeLessThan(1000);
    expect(tools[2]!.artifacts).toEqual([
      expect.objectContaining({ id: "output-r1", path: "archive/output-r1.json" }),
    ]);
  });

  it("a policy refusal is a failed line with its rule in both logs; memory candidates go to archive/", async () => {
    const root = path.join(base, "refusal");
    const model = scriptedModel([
      {
        toolCalls: [
          { id: "d1", name: "delete_file", arguments: { path: "x.txt" } },
          { id: "m1", name: "write_memory", arguments: { content: "the user likes tea", tags: ["tea"] } },
        ],
      },
      { text: "done" },
    ]);
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: model,
          runtime: { run_folders: { root_dir: root } },
          tools: [
            { id: "fs", type: "filesystem", config: { tools: ["read_file", "delete_file"] } },
            { id: "mem", type: "memory" },
          ],
        },
      ],
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    await runtime.close();
    expect(result.stopReason).toBe("completed");
    const dir = path.join(root, "runs", encodeURIComponent(result.runId));
    const tools = lines(path.join(dir, "logs", "tools.jsonl"));
    expect(tools.map((line) => [line.toolCallId, line.toolset, line.status])).toEqual([
      ["d1", "fs", "failed"],
      ["m1", "mem", "succeeded"],
    ]);
    expect(tools[0]!.error).toMatchObject({
      code: "tool.permission_denied",
      rule: "destructive_not_enabled",
    });
    expect(lines(path.join(dir, "logs", "errors.jsonl"))).toEqual([
      expect.objectContaining({
        toolCallId: "d1",
        code: "tool.permission_denied",
        rule: "destructive_not_enabled",
      }),
    ]);
    const events = lines(path.join(dir, "events.jsonl"));
    // Refused before it started: tool.failed with the rule, no tool.started for it.
    const forCall = events.filter((event) => (event.payload as { toolCallId?: string }).toolCallId === "d1");
    expect(forCall.map((event) => event.kind)).toEqual(["tool.failed"]);
    expect(forCall[0]!.payload).toMatchObject({ rule: "destructive_not_enabled" });
    expect(events.find((event) => event.kind === "memory.write_mode")!.payload).toEqual({
      mode: "candidate",
    });
    const candidates = lines(path.join(dir, "archive", "memory-candidates.jsonl"));
    expect(candidates).toEqual([
      expect.objectContaining({
        content: "the user likes tea",
        tags: ["tea"],
        scope: "default",
        runId: result.runId,
      }),
    ]);
  });

  it("off by default: no run folder, the workspace fallback, large outputs still become artifacts", async () => {
    const cwdRuns = path.join(process.cwd(), "runs");
    const existed = existsSync(cwdRuns);
    const { model, result } = await runWith(undefined, { large_output_bytes: 100_000 });
    expect(result.stopReason).toBe("completed");
    // Under the threshold given: inlined as before.
    const inline = model.requests[2]!.messages.find(
      (message) => message.role === "tool" && message.toolCallId === "r1",
    ) as { content: string };
    expect(inline.content).toContain("END-OF-BIG");
    expect(result.artifacts.some((entry) => entry.kind === "tool_output")).toBe(false);
    const fallback = path.join(cwdRuns, encodeURIComponent(result.runId));
    expect(existsSync(path.join(fallback, "logs"))).toBe(false);
    expect(existsSync(path.join(fallback, "events.jsonl"))).toBe(false);
    if (!existed) rmSync(cwdRuns, { recursive: true, force: true });
    else rmSync(fallback, { recursive: true, force: true });

    // The default threshold (16 KiB) without run folders: an artifact without a path, a reference for the model.
    const second = await runWith(undefined);
    const artifact = second.result.artifacts.find((entry) => entry.kind === "tool_output")!;
    expect(artifact.metadata.path).toBeUndefined();
    expect(String(artifact.payload)).toContain("END-OF-BIG");
    const reference = second.model.requests[2]!.messages.find(
      (message) => message.role === "tool" && message.toolCallId === "r1",
    ) as { content: string };
    expect(reference.content).toContain("output-r1");
    expect(reference.content).not.toContain("END-OF-BIG");
    if (!existed) rmSync(cwdRuns, { recursive: true, force: true });
    else
      rmSync(path.join(cwdRuns, encodeURIComponent(second.result.runId)), { recursive: true, force: true });
  });
});
