import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, type Message, Runtime } from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";
import { collect } from "./support/harness.js";

/**
 * The filesystem toolset end to end: an agent configured with `{"type": "filesystem"}` works in a
 * temporary workspace; a path the sandbox refuses comes back to the model as an error tool result with its
 * code, and the run goes on.
 */

const CANARY = "CANARY-e2e-never-read";
const base = mkdtempSync(path.join(tmpdir(), "keel-fs-e2e-"));
const ws = path.join(base, "ws");
const canary = path.join(base, "canary.txt");

afterAll(() => rmSync(base, { recursive: true, force: true }));

beforeEach(() => {
  rmSync(ws, { recursive: true, force: true });
  mkdirSync(ws);
  writeFileSync(path.join(ws, "brief.md"), "Summarize the TODO items.\nTODO: ship the sandbox\n");
  writeFileSync(canary, CANARY);
});

function toolMessages(messages: readonly Message[]) {
  return messages.filter((message): message is Extract<Message, { role: "tool" }> => message.role === "tool");
}

describe("the filesystem toolset in a run", () => {
  it("reads, greps and writes in the workspace; a refused path is a tool result the model sees", async () => {
    const canaryBefore = statSync(canary).mtimeMs;
    const model = scriptedModel([
      {
        toolCalls: [
          { id: "c1", name: "read_file", arguments: { path: "brief.md" } },
          { id: "c2", name: "read_file", arguments: { path: "../canary.txt" } },
          { id: "c3", name: "grep_files", arguments: { pattern: "^TODO: (.*)$" } },
        ],
      },
      {
        toolCalls: [
          {
            id: "c4",
            name: "write_file",
            arguments: { path: "out/summary.md", content: "- ship the sandbox\n" },
          },
          { id: "c5", name: "write_file", arguments: { path: canary, content: "pwned" } },
          { id: "c6", name: "list_files", arguments: { recursive: true } },
        ],
      },
      { text: "Summary written to out/summary.md." },
    ]);
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "writer",
          name: "Writer",
          llm: model,
          tools: [{ id: "fs", type: "filesystem" }],
          sandbox: { roots: [{ path: ws, mode: "rw" }] },
        },
      ],
    });
    const chunks = await collect(runtime.stream({ agentId: "writer", inputText: "Summarize the brief" }));
    const result = chunks.at(-1)!.result!;
    expect(result.stopReason).toBe("completed");
    expect(result.finalOutput).toBe("Summary written to out/summary.md.");

    // The model was offered the four default tools, and no delete_file.
    expect(model.requests[0]!.tools!.map((tool) => tool.name).sort()).toEqual([
      "grep_files",
      "list_files",
      "read_file",
      "write_file",
    ]);

    const first = toolMessages(model.requests[1]!.messages);
    expect(first.map((message) => [message.toolCallId, message.isError ?? false])).toEqual([
      ["c1", false],
      ["c2", true],
      ["c3", false],
    ]);
    expect(JSON.parse(first[0]!.content as string)).toMatchObject({
      ok: true,
      data: { content: "Summarize the TODO items.\nTODO: ship the sandbox\n", truncated: false },
    });
    const refused = JSON.parse(first[1]!.content as string);
    expect(refused).toEqual({
      ok: false,
      error: {
        code: "sandbox.path_outside",
        message: expect.stringContaining("read_file: '../canary.txt' is outside the sandbox"),
      },
    });
    expect(JSON.parse(first[2]!.content as string).data.matches).toEqual([
      { path: "brief.md", line: 2, text: "TODO: ship the sandbox" },
    ]);

    const second = toolMessages(model.requests[2]!.messages).slice(3);
    expect(second.map((message) => [message.toolCallId, message.isError ?? false])).toEqual([
      ["c4", false],
      ["c5", true],
      ["c6", false],
    ]);
    expect(JSON.parse(second[1]!.content as string).error.code).toBe("sandbox.path_outside");
    expect(
      JSON.parse(second[2]!.content as string).data.entries.map((entry: { path: string }) => entry.path),
    ).toEqual(["brief.md", "out", "out/summary.md"]);

    // The refusals are tool.failed events with the code; the other calls completed.
    const finished = chunks.filter((chunk) => chunk.kind === "tool.finished").map((chunk) => chunk.payload);
    expect(finished.filter((payload) => payload.code !== undefined).map((payload) => payload.code)).toEqual([
      "sandbox.path_outside",
      "sandbox.path_outside",
    ]);

    expect(readFileSync(path.join(ws, "out", "summary.md"), "utf8")).toBe("- ship the sandbox\n");
    expect(readFileSync(canary, "utf8")).toBe(CANARY);
    expect(statSync(canary).mtimeMs).toBe(canaryBefore);
    expect(readdirSync(base).sort()).toEqual(["canary.txt", "ws"]);
    for (const message of toolMessages(model.requests[2]!.messages)) {
      expect(message.content).not.toContain(CANARY);
    }
    await runtime.close();
  });

  it("gives a run its own workspace when the agent configures no roots", async () => {
    const baseDir = path.join(base, "app");
    mkdirSync(baseDir, { recursive: true });
    const model = scriptedModel([
      { toolCalls: [{ id: "w", name: "write_file", arguments: { path: "hello.txt", content: "hi" } }] },
      { text: "done" },
    ]);
    const runtime = await Runtime.fromDict(
      { agents: [{ id: "a", name: "A", llm: model, tools: [{ id: "fs", type: "filesystem" }] }] },
      { baseDir },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go", runId: "run-42" });
    expect(result.stopReason).toBe("completed");
    expect(readFileSync(path.join(baseDir, "runs", "run-42", "workspace", "hello.txt"), "utf8")).toBe("hi");
    await runtime.close();
  });

  it("offers delete_file only when listed, and asks for approval before it runs", async () => {
    writeFileSync(path.join(ws, "old.txt"), "old");
    const model = scriptedModel([
      { toolCalls: [{ id: "d", name: "delete_file", arguments: { path: "old.txt" } }] },
      { text: "deleted" },
    ]);
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: model,
          tools: [{ id: "fs", type: "filesystem", config: { tools: ["read_file", "delete_file"] } }],
          sandbox: { roots: [{ path: ws, mode: "rw" }] },
          permissions: { enable: ["destructive"] },
        },
      ],
    });
    const waiting = await runtime.runDetailed({ agentId: "a", inputText: "clean up" });
    expect(model.requests[0]!.tools!.map((tool) => tool.name)).toEqual(["read_file", "delete_file"]);
    expect(waiting.stopReason).toBe("suspended");
    expect(readdirSync(ws)).toContain("old.txt");
    const done = await runtime.decide({
      runId: waiting.runId,
      decisions: [{ toolCallId: "d", action: "approve" }],
    });
    expect(done.stopReason).toBe("completed");
    expect(readdirSync(ws)).not.toContain("old.txt");
    await runtime.close();
  });

  it("loads single filesystem tools under their config ids", async () => {
    writeFileSync(path.join(ws, "a.txt"), "A");
    const model = scriptedModel([
      { toolCalls: [{ id: "r", name: "cat", arguments: { path: "a.txt" } }] },
      { text: "ok" },
    ]);
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: model,
          tools: [{ id: "cat", type: "read_file" }],
          sandbox: { roots: [{ path: ws, mode: "ro" }] },
        },
      ],
    });
    await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(model.requests[0]!.tools!.map((tool) => tool.name)).toEqual(["cat"]);
    expect(JSON.parse(toolMessages(model.requests[1]!.messages)[0]!.content as string).data.content).toBe(
      "A",
    );
    await runtime.close();
  });

  it("refuses two entries that give a tool the same name", async () => {
    const attempt = async () => {
      const runtime = await Runtime.fromDict({
        agents: [
          {
            id: "a",
            name: "A",
            llm: scriptedModel([{ text: "x" }]),
            tools: [
              { id: "fs", type: "filesystem" },
              { id: "read_file", type: "read_file" },
            ],
          },
        ],
      });
      try {
        await runtime.runDetailed({ agentId: "a", inputText: "go" });
      } finally {
        await runtime.close();
      }
    };
    const error = await attempt().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      "agents[a].tools[read_file]: a tool named 'read_file' is already loaded",
    );
  });
});
