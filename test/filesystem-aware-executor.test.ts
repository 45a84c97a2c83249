import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { registerBuiltins } from "../src/builtins/register-builtins.js";
import type { Message, ModelRequest } from "../src/index.js";
import {
  defineTool,
  Runtime,
  registerPlugin,
  type ToolExecutionRequest,
  type ToolExecutionResult,
  type ToolExecutionStreamPart,
} from "../src/index.js";
import { getPlugin } from "../src/plugins/plugin-registry.js";
import { scriptedModel } from "../src/testing/index.js";
import { isPathArgumentName } from "../src/tools/executors/filesystem-aware-tool-executor.js";
import { collect } from "./support/harness.js";

/**
 * The `filesystem_aware` tool executor: before a tool that declares readsFiles / writesFiles runs, its
 * path arguments are checked against the run's sandbox, and a refusal is the filesystem tools' own typed
 * sandbox refusal — the tool does not run, the model reads the refusal, the run goes on.
 */

const base = mkdtempSync(path.join(tmpdir(), "keel-fs-aware-"));
afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

function toolMessages(messages: readonly Message[]): Message[] {
  return messages.filter((message) => message.role === "tool");
}

/** A user tool that writes a file wherever it is told, counting its runs. */
function saveTool(runs: string[]) {
  return defineTool({
    name: "save",
    description: "Save text to a file",
    inputSchema: z.object({ path: z.string(), text: z.string() }),
    writesFiles: true,
    sideEffects: "write",
    execute: ({ path: target, text }) => {
      runs.push(target);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, text);
      return `saved ${target}`;
    },
  });
}

/** A user tool that reads a file, counting its runs. */
function peekTool(runs: string[]) {
  return defineTool({
    name: "peek",
    description: "Read a file",
    inputSchema: z.object({ file_path: z.string() }),
    readsFiles: true,
    sideEffects: "read",
    execute: ({ file_path }) => {
      runs.push(file_path);
      return readFileSync(file_path, "utf8");
    },
  });
}

/** One step of calls, then an answer naming what each call's result said. */
function callsThenAnswer(calls: { name: string; arguments: Record<string, unknown> }[]) {
  return scriptedModel([
    { toolCalls: calls.map((call, index) => ({ id: `c${index + 1}`, ...call })) },
    (request: ModelRequest) => ({
      text: toolMessages(request.messages)
        .map((message) => String(message.content))
        .join("\n"),
    }),
  ]);
}

describe("the filesystem_aware tool executor", () => {
  it("is a registered builtin; path arguments are named path, file, dir… or end in _path, _file, _dir", () => {
    registerBuiltins();
    expect(getPlugin("tool_executor", "filesystem_aware")).toBeDefined();
    for (const name of ["path", "paths", "file", "filename", "dest", "file_path", "outputDir", "src"])
      expect(isPathArgumentName(name), name).toBe(true);
    for (const name of ["text", "pathology", "profile", "query", "mode"])
      expect(isPathArgumentName(name), name).toBe(false);
  });

  it("refuses a write outside the sandbox without running the tool; inside, the tool runs", async () => {
    const dir = mkdtempSync(path.join(base, "rw-"));
    const ws = path.join(dir, "ws");
    mkdirSync(ws);
    const outside = path.join(dir, "outside.txt");
    const runs: string[] = [];
    const model = callsThenAnswer([
      { name: "save", arguments: { path: outside, text: "pwned" } },
      { name: "save", arguments: { path: path.join(ws, "notes.txt"), text: "fine" } },
      { name: "save", arguments: { path: "../escape.txt", text: "pwned" } },
    ]);
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: model,
          tools: [saveTool(runs)],
          tool_executor: { type: "filesystem_aware" },
          sandbox: { roots: [{ path: ws, mode: "rw" }] },
        },
      ],
    });
    try {
      const chunks = await collect(runtime.stream({ agentId: "a", inputText: "save" }));
      const result = chunks.at(-1)!.result!;
      expect(result.stopReason).toBe("completed");
      expect(runs).toEqual([path.join(ws, "notes.txt")]);
      expect(existsSync(outside)).toBe(false);
      expect(existsSync(path.join(dir, "escape.txt"))).toBe(false);
      expect(readFileSync(path.join(ws, "notes.txt"), "utf8")).toBe("fine");

      const seen = toolMessages(model.requests[1]!.messages);
      expect(seen.map((message) => (message as { isError?: boolean }).isError ?? false)).toEqual([
        true,
        false,
        true,
      ]);
      expect(JSON.parse(seen[0]!.content as string)).toEqual({
        ok: false,
        error: {
          code: "sandbox.path_outside",
          message: expect.stringContaining(`save: '${outside}' is outside the sandbox`),
        },
      });
      const failed = chunks.filter((chunk) => chunk.kind === "tool.finished" && chunk.payload.code);
      expect(failed.map((chunk) => [chunk.payload.code, chunk.payload.rule])).toEqual([
        ["sandbox.path_outside", "path_outside_sandbox"],
        ["sandbox.path_outside", "path_outside_sandbox"],
      ]);
    } finally {
      await runtime.close();
    }
  });

  it("a read-only root refuses writes and allows reads; tools that declare no file access are not checked", async () => {
    const dir = mkdtempSync(path.join(base, "ro-"));
    const ws = path.join(dir, "ws");
    const docs = path.join(dir, "docs");
    mkdirSync(ws);
    mkdirSync(docs);
    writeFileSync(path.join(docs, "brief.md"), "the brief");
    const writes: string[] = [];
    const reads: string[] = [];
    const plain: string[] = [];
    const echo = defineTool({
      name: "echo_path",
      description: "Say a path back",
      inputSchema: z.object({ path: z.string() }),
      execute: ({ path: given }) => {
        plain.push(given);
        return given;
      },
    });
    const model = callsThenAnswer([
      { name: "save", arguments: { path: path.join(docs, "brief.md"), text: "overwritten" } },
      { name: "peek", arguments: { file_path: path.join(docs, "brief.md") } },
      { name: "peek", arguments: { file_path: "/etc/hostname" } },
      { name: "echo_path", arguments: { path: "/etc/hostname" } },
    ]);
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: model,
          tools: [saveTool(writes), peekTool(reads), echo],
          tool_executor: { type: "filesystem_aware", config: { inner: { type: "retry" } } },
          sandbox: {
            roots: [
              { path: ws, mode: "rw" },
              { path: docs, mode: "ro" },
            ],
          },
        },
      ],
    });
    try {
      const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
      expect(result.stopReason).toBe("completed");
      expect(writes).toEqual([]);
      expect(reads).toEqual([path.join(docs, "brief.md")]);
      expect(plain).toEqual(["/etc/hostname"]);
      expect(readFileSync(path.join(docs, "brief.md"), "utf8")).toBe("the brief");
      const seen = toolMessages(model.requests[1]!.messages).map((message) =>
        (message as { isError?: boolean }).isError
          ? JSON.parse(message.content as string).error.code
          : message.content,
      );
      expect(seen).toEqual([
        "sandbox.read_only",
        expect.stringContaining("the brief"),
        "sandbox.path_outside",
        expect.stringContaining("/etc/hostname"),
      ]);
    } finally {
      await runtime.close();
    }
  });
  it("streams a streaming tool's deltas once its paths are allowed, and refuses before it streams", async () => {
    const dir = mkdtempSync(path.join(base, "stream-"));
    const ws = path.join(dir, "ws");
    mkdirSync(ws);
    writeFileSync(path.join(ws, "log.txt"), "one two");
    const started: string[] = [];
    const tail = defineTool({
      name: "tail",
      description: "Stream a file's words",
      inputSchema: z.object({ path: z.string() }),
      readsFiles: true,
      execute: () => "unused",
      stream: async function* ({ path: target }: { path: string }) {
        started.push(target);
        for (const word of readFileSync(target, "utf8").split(" "))
          yield { type: "delta" as const, text: word };
      },
    });
    const model = callsThenAnswer([
      { name: "tail", arguments: { path: path.join(ws, "log.txt") } },
      { name: "tail", arguments: { path: "/etc/hostname" } },
    ]);
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: model,
          tools: [tail],
          tool_executor: { type: "filesystem_aware" },
          sandbox: { roots: [{ path: ws, mode: "rw" }] },
        },
      ],
    });
    try {
      const chunks = await collect(runtime.stream({ agentId: "a", inputText: "tail" }));
      expect(chunks.at(-1)!.result!.stopReason).toBe("completed");
      expect(started).toEqual([path.join(ws, "log.txt")]);
      expect(chunks.filter((chunk) => chunk.kind === "tool.delta").map((chunk) => chunk.payload)).toEqual([
        { toolCallId: "c1", toolId: "tail", text: "one" },
        { toolCallId: "c1", toolId: "tail", text: "two" },
      ]);
      const finished = chunks.filter((chunk) => chunk.kind === "tool.finished");
      expect(finished.map((chunk) => chunk.payload.code ?? null)).toEqual([null, "sandbox.path_outside"]);
    } finally {
      await runtime.close();
    }
  });
  it("hands an allowed streaming call to the inner executor's executeStream", async () => {
    const dir = mkdtempSync(path.join(base, "inner-stream-"));
    registerPlugin("tool_executor", "fs_aware_inner_stream", () => ({
      execute: (request: ToolExecutionRequest): Promise<ToolExecutionResult> =>
        Promise.resolve({ toolId: request.toolId, success: true, data: "via execute", metadata: {} }),
      async *executeStream(request: ToolExecutionRequest): AsyncIterable<ToolExecutionStreamPart> {
        yield { type: "delta", text: "via executeStream" };
        yield {
          type: "result",
          result: { toolId: request.toolId, success: true, data: "streamed", metadata: {} },
        };
      },
    }));
    const look = defineTool({
      name: "look",
      description: "Look at a path",
      inputSchema: z.object({ path: z.string() }),
      readsFiles: true,
      execute: () => "unused",
      stream: async function* () {
        yield { type: "delta" as const, text: "never seen" };
      },
    });
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: callsThenAnswer([{ name: "look", arguments: { path: path.join(dir, "x") } }]),
          tools: [look],
          tool_executor: { type: "filesystem_aware", config: { inner: { type: "fs_aware_inner_stream" } } },
          sandbox: { roots: [{ path: dir, mode: "rw" }] },
        },
      ],
    });
    try {
      const chunks = await collect(runtime.stream({ agentId: "a", inputText: "look" }));
      expect(
        chunks.filter((chunk) => chunk.kind === "tool.delta").map((chunk) => chunk.payload.text),
      ).toEqual(["via executeStream"]);
      expect(chunks.find((chunk) => chunk.kind === "tool.finished")!.payload.result).toBe("streamed");
    } finally {
      await runtime.close();
    }
  });
});
