import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import { registerBuiltins } from "../../builtins/register-builtins.js";
import type { Tool, ToolContext, ToolResult } from "../../contracts/tool.js";
import { PluginConfigError } from "../../errors/error-classes.js";
import { ERROR_CODES } from "../../errors/error-codes.js";
import { setLogger } from "../../logging/logger.js";
import { loadPlugin } from "../../plugins/load-plugin.js";
import type { SandboxSettings } from "../../sandbox/sandbox-provider.js";
import { isToolset, type Toolset } from "../../tools/toolset.js";
import { createFilesystemToolset, type FilesystemToolsetOptions } from "./filesystem-toolset.js";
import type { GrepFilesData } from "./grep-files-tool.js";

/** The filesystem tools, called without a model. */

const base = mkdtempSync(path.join(tmpdir(), "keel-fs-tools-"));
const ws = path.join(base, "ws");
const ctx = { runId: "run-1" } as ToolContext;

afterAll(() => rmSync(base, { recursive: true, force: true }));

beforeEach(() => {
  rmSync(ws, { recursive: true, force: true });
  mkdirSync(ws, { recursive: true });
});

function toolsOf(options: Omit<FilesystemToolsetOptions, "sandbox"> & { sandbox?: SandboxSettings } = {}) {
  const toolset = createFilesystemToolset({
    tools: ["read_file", "write_file", "list_files", "grep_files", "delete_file"],
    ...options,
    sandbox: { roots: [{ path: ws, mode: "rw" }], ...options.sandbox },
  });
  const byName = Object.fromEntries(toolset.tools().map((tool) => [tool.name, tool])) as Record<string, Tool>;
  const call = async <T = Record<string, unknown>>(name: string, params: Record<string, unknown>) =>
    (await byName[name]!.invoke(params, ctx)) as ToolResult<T>;
  return { byName, call };
}

function file(relative: string, content: string | Buffer): void {
  const full = path.join(ws, relative);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, content);
}

describe("read_file", () => {
  it("reads a whole file as a ToolResult", async () => {
    file("notes/todo.md", "buy milk\n");
    const result = await toolsOf().call("read_file", { path: "notes/todo.md" });
    expect(result).toEqual({
      ok: true,
      summary: "Read 9 of 9 bytes of notes/todo.md",
      data: {
        path: "notes/todo.md",
        content: "buy milk\n",
        offset: 0,
        bytesRead: 9,
        totalBytes: 9,
        truncated: false,
      },
      artifacts: [],
    });
  });

  it("reads a window with offset and limit, says it is truncated and where to go on", async () => {
    file("digits.txt", "0123456789");
    const result = await toolsOf().call("read_file", { path: "digits.txt", offset: 3, limit: 4 });
    expect(result.data).toMatchObject({
      content: "3456",
      offset: 3,
      bytesRead: 4,
      truncated: true,
      nextOffset: 7,
    });
    expect(result.summary).toBe("Read 4 of 10 bytes of digits.txt; truncated, continue at offset 7");
    const rest = await toolsOf().call("read_file", { path: "digits.txt", offset: 7 });
    expect(rest.data).toMatchObject({ content: "789", truncated: false });
    expect(rest.data).not.toHaveProperty("nextOffset");
  });

  it("never returns more than max_read_bytes, whatever limit asks", async () => {
    file("big.txt", "x".repeat(100));
    const { call } = toolsOf({ sandbox: { limits: { maxReadBytes: 16 } } });
    const result = await call("read_file", { path: "big.txt", limit: 1000 });
    expect(result.data).toMatchObject({ bytesRead: 16, totalBytes: 100, truncated: true, nextOffset: 16 });
  });

  it("reads nothing past the end", async () => {
    file("short.txt", "abc");
    const result = await toolsOf().call("read_file", { path: "short.txt", offset: 99 });
    expect(result.data).toMatchObject({ content: "", offset: 3, bytesRead: 0, truncated: false });
  });

  it("cuts a window at a whole UTF-8 character", async () => {
    file("accent.txt", "a\u00e9b");
    const result = await toolsOf().call("read_file", { path: "accent.txt", limit: 2 });
    expect(result.data).toMatchObject({ content: "a", bytesRead: 1, truncated: true, nextOffset: 1 });
    const next = await toolsOf().call("read_file", { path: "accent.txt", offset: 1, limit: 2 });
    expect(next.data).toMatchObject({ content: "\u00e9", bytesRead: 2, nextOffset: 3 });
  });

  it("does not show a binary file's bytes", async () => {
    file("image.bin", Buffer.from([0x89, 0x50, 0x00, 0x01]));
    const result = await toolsOf().call("read_file", { path: "image.bin" });
    expect(result.data).toMatchObject({ content: "", binary: true, totalBytes: 4 });
    expect(result.summary).toBe("image.bin is a binary file of 4 bytes; its content is not shown");
  });

  it("follows a symlink that stays inside the workspace", async () => {
    file("real.txt", "real");
    symlinkSync("real.txt", path.join(ws, "alias.txt"));
    const result = await toolsOf().call("read_file", { path: "alias.txt" });
    expect(result.data).toMatchObject({ path: "real.txt", content: "real" });
  });

  it("accepts an absolute path inside the workspace and ./ and trailing slashes", async () => {
    file("a/b.txt", "b");
    const { call } = toolsOf();
    expect((await call("read_file", { path: path.join(ws, "a", "b.txt") })).data).toMatchObject({
      path: "a/b.txt",
    });
    expect((await call("read_file", { path: "./a//b.txt" })).data).toMatchObject({ path: "a/b.txt" });
    expect((await call("read_file", { path: "a/../a/b.txt" })).data).toMatchObject({ path: "a/b.txt" });
  });

  it("reports a missing file, a directory and a file used as a directory", async () => {
    file("plain.txt", "x");
    mkdirSync(path.join(ws, "dir"));
    const { byName } = toolsOf();
    await expect(byName.read_file!.invoke({ path: "nope.txt" }, ctx)).rejects.toMatchObject({
      code: ERROR_CODES.FS_NOT_FOUND,
      message: "read_file: 'nope.txt' does not exist",
    });
    await expect(byName.read_file!.invoke({ path: "dir" }, ctx)).rejects.toMatchObject({
      code: ERROR_CODES.FS_IS_DIRECTORY,
    });
    await expect(byName.read_file!.invoke({ path: "plain.txt/x" }, ctx)).rejects.toMatchObject({
      code: ERROR_CODES.FS_NOT_DIRECTORY,
    });
  });

  it("declares itself a concurrency-safe reader and validates its arguments", async () => {
    const tool = toolsOf().byName.read_file!;
    expect(tool.executionSpec()).toMatchObject({ readsFiles: true, writesFiles: false, sideEffects: "read" });
    expect(tool.executionSpec().concurrencySafe).toBe(true);
    expect(tool.schema()).toMatchObject({ required: ["path"] });
    expect(await tool.validateParams!({ path: "a", offset: -1 })).toMatchObject({ ok: false });
    expect(await tool.validateParams!({ offset: 1 })).toMatchObject({ ok: false });
  });
});

describe("write_file", () => {
  it("creates a file and its directories", async () => {
    const result = await toolsOf().call("write_file", {
      path: "reports/2024/summary.md",
      content: "# Sum\n",
    });
    expect(result).toMatchObject({
      ok: true,
      summary: "Wrote 6 bytes to reports/2024/summary.md (created; now 6 bytes)",
      data: { path: "reports/2024/summary.md", bytesWritten: 6, totalBytes: 6, created: true, mode: "w" },
    });
    expect(readFileSync(path.join(ws, "reports/2024/summary.md"), "utf8")).toBe("# Sum\n");
  });

  it("replaces with mode w and appends with mode a", async () => {
    const { call } = toolsOf();
    file("log.txt", "a long first line\n");
    const replaced = await call("write_file", { path: "log.txt", content: "one\n", mode: "w" });
    expect(replaced.data).toMatchObject({ created: false, mode: "w", totalBytes: 4 });
    expect(replaced.summary).toContain("(replaced; now 4 bytes)");
    const appended = await call("write_file", { path: "log.txt", content: "two\n", mode: "a" });
    expect(appended.data).toMatchObject({ created: false, mode: "a", totalBytes: 8 });
    expect(appended.summary).toContain("(appended; now 8 bytes)");
    expect(readFileSync(path.join(ws, "log.txt"), "utf8")).toBe("one\ntwo\n");
  });

  it("appends to a file that does not exist yet by creating it", async () => {
    const result = await toolsOf().call("write_file", { path: "new.log", content: "x", mode: "a" });
    expect(result.data).toMatchObject({ created: true, mode: "a", totalBytes: 1 });
  });

  it("writes multi-byte text exactly", async () => {
    await toolsOf().call("write_file", { path: "u.txt", content: "\u00e9\u{1f600}" });
    expect(readFileSync(path.join(ws, "u.txt"), "utf8")).toBe("\u00e9\u{1f600}");
  });

  it("refuses a directory and the workspace itself", async () => {
    mkdirSync(path.join(ws, "dir"));
    const tool = toolsOf().byName.write_file!;
    for (const target of ["dir", ".", path.join(ws)]) {
      await expect(tool.invoke({ path: target, content: "x" }, ctx)).rejects.toMatchObject({
        code: ERROR_CODES.FS_IS_DIRECTORY,
      });
    }
  });

  it("refuses a path under a file", async () => {
    file("plain.txt", "x");
    await expect(
      toolsOf().byName.write_file!.invoke({ path: "plain.txt/child.txt", content: "x" }, ctx),
    ).rejects.toMatchObject({ code: ERROR_CODES.FS_NOT_DIRECTORY });
  });

  it("declares itself a writer that a resume must not silently repeat", () => {
    const tool = toolsOf().byName.write_file!;
    expect(tool.executionSpec()).toMatchObject({
      writesFiles: true,
      sideEffects: "write",
      concurrencySafe: false,
    });
    expect(tool.durableIdempotent).toBe(false);
  });
});

describe("list_files", () => {
  it("lists a directory with types and sizes, sorted, without following symlinks", async () => {
    file("b.txt", "bb");
    file("a/inner.txt", "i");
    symlinkSync("/etc", path.join(ws, "etc-link"));
    const result = await toolsOf().call("list_files", {});
    expect(result).toMatchObject({
      ok: true,
      summary: "3 entries in .",
      data: {
        path: ".",
        truncated: false,
        entries: [
          { path: "a", type: "directory" },
          { path: "b.txt", type: "file", size: 2 },
          { path: "etc-link", type: "symlink" },
        ],
      },
    });
  });

  it("lists recursively, and a subdirectory by its path", async () => {
    file("a/b/c.txt", "c");
    file("a/d.txt", "dd");
    const { call } = toolsOf();
    const all = await call<{ entries: { path: string }[] }>("list_files", { path: ".", recursive: true });
    expect(all.data!.entries.map((entry) => entry.path)).toEqual(["a", "a/b", "a/b/c.txt", "a/d.txt"]);
    const sub = await call<{ entries: { path: string }[] }>("list_files", { path: "a" });
    expect(sub.data!.entries.map((entry) => entry.path)).toEqual(["a/b", "a/d.txt"]);
    expect(sub.summary).toBe("2 entries in a");
  });

  it("stops at max_list_entries and says so", async () => {
    for (let index = 0; index < 30; index++) file(`f${String(index).padStart(2, "0")}.txt`, "x");
    const { call } = toolsOf({ sandbox: { limits: { maxListEntries: 10 } } });
    const result = await call<{ entries: unknown[]; truncated: boolean }>("list_files", { recursive: true });
    expect(result.data!.entries).toHaveLength(10);
    expect(result.data!.truncated).toBe(true);
    expect(result.summary).toBe("10 entries in . (truncated: there are more)");
  });

  it("reports a missing directory and a file", async () => {
    file("plain.txt", "x");
    const tool = toolsOf().byName.list_files!;
    await expect(tool.invoke({ path: "missing" }, ctx)).rejects.toMatchObject({
      code: ERROR_CODES.FS_NOT_FOUND,
    });
    await expect(tool.invoke({ path: "plain.txt" }, ctx)).rejects.toMatchObject({
      code: ERROR_CODES.FS_NOT_DIRECTORY,
    });
  });

  it("says one entry", async () => {
    file("only.txt", "x");
    expect((await toolsOf().call("list_files", { path: "." })).summary).toBe("1 entry in .");
  });
});

describe("grep_files", () => {
  const grep = (params: Record<string, unknown>, options?: Parameters<typeof toolsOf>[0]) =>
    toolsOf(options).call<GrepFilesData>("grep_files", params);

  it("finds matching lines with their paths and line numbers", async () => {
    file("src/a.ts", "const x = 1;\n// TODO: fix\nconst y = 2;\r\n// todo lower\n");
    file("src/b.ts", "nothing\n");
    file("README.md", "TODO: write\n");
    const result = await grep({ pattern: "TODO" });
    expect(result.data!.matches).toEqual([
      { path: "README.md", line: 1, text: "TODO: write" },
      { path: "src/a.ts", line: 2, text: "// TODO: fix" },
    ]);
    expect(result.data).toMatchObject({ truncated: false, filesScanned: 3, skippedCount: 0 });
    expect(result.summary).toBe("2 matching lines in 2 of 3 files scanned");
    const insensitive = await grep({ pattern: "todo", path: "src", case_sensitive: false });
    expect(insensitive.data!.matches.map((match) => match.line)).toEqual([2, 4]);
    const single = await grep({ pattern: "const \\w = \\d;$", path: "src/a.ts" });
    expect(single.data!.matches.map((match) => match.line)).toEqual([1, 3]);
  });

  it("answers an evil pattern on a long line at once: the engine is linear, so there is nothing to cut short", async () => {
    file("evil.txt", `${"a".repeat(200_000)}b\n`);
    const noMatch = await grep({ pattern: "(a+)+$" });
    expect(noMatch.data).toMatchObject({ matches: [], truncated: false, filesScanned: 1 });
    expect(noMatch.data).not.toHaveProperty("stoppedBy");
    const match = await grep({ pattern: "(a|aa)+b" });
    expect(match.data!.matches).toHaveLength(1);
    expect(match.data!.matches[0]!.text.length).toBeLessThanOrEqual(302);
    const nested = await grep({ pattern: "^(([a-z])+.)+[A-Z]([a-z])+$" });
    expect(nested.data!.matches).toEqual([]);
  });

  it("refuses what no linear engine can run, and patterns too long or too large", async () => {
    const tool = toolsOf({ grep: { maxPatternLength: 20, maxProgramSize: 40 } }).byName.grep_files!;
    for (const pattern of [
      "(a)\\1",
      "a(?=b)",
      "a(?!b)",
      "(?<=a)b",
      "[unclosed",
      "x{1001}",
      "",
      "a".repeat(21),
      "(abc){20}",
    ]) {
      await expect(tool.invoke({ pattern }, ctx), pattern).rejects.toMatchObject({
        code: ERROR_CODES.GREP_INVALID_PATTERN,
      });
    }
    await expect(tool.invoke({ pattern: "(a)\\1" }, ctx)).rejects.toThrow(/no backreferences/);
  });

  it("stops at max_matches", async () => {
    file("many.txt", "hit\n".repeat(50));
    const result = await grep({ pattern: "hit" }, { grep: { maxMatches: 5 } });
    expect(result.data).toMatchObject({ truncated: true, stoppedBy: "max_matches" });
    expect(result.data!.matches).toHaveLength(5);
    expect(result.summary).toContain("stopped early (max_matches)");
  });

  it("stops at max_files and max_scan_bytes", async () => {
    for (let index = 0; index < 5; index++) file(`f${index}.txt`, "0123456789\n");
    const byFiles = await grep({ pattern: "x" }, { grep: { maxFiles: 2 } });
    expect(byFiles.data).toMatchObject({ truncated: true, stoppedBy: "max_files", filesScanned: 2 });
    const byBytes = await grep({ pattern: "x" }, { grep: { maxScanBytes: 25 } });
    expect(byBytes.data).toMatchObject({ truncated: true, stoppedBy: "max_scan_bytes", filesScanned: 2 });
    expect(byBytes.data!.bytesScanned).toBeLessThanOrEqual(25);
  });

  it("skips binary files, large files, symlinks and special files, and says which", async () => {
    file("bin.dat", Buffer.from([1, 0, 2]));
    file("large.txt", `${"needle ".repeat(100)}\n`);
    file("small.txt", "needle\n");
    symlinkSync("small.txt", path.join(ws, "link.txt"));
    const result = await grep({ pattern: "needle" }, { grep: { maxFileBytes: 100 } });
    expect(result.data!.matches).toEqual([{ path: "small.txt", line: 1, text: "needle" }]);
    expect(result.data!.skipped).toEqual([
      { path: "bin.dat", reason: "binary" },
      { path: "large.txt", reason: "larger than 100 bytes" },
      { path: "link.txt", reason: "symbolic link (not followed)" },
    ]);
    expect(result.summary).toContain("3 skipped");
  });

  it("shows a window of a long matching line around the match", async () => {
    file("long.txt", `${"x".repeat(1000)}NEEDLE${"y".repeat(1000)}\n`);
    const result = await grep({ pattern: "NEEDLE" });
    const text = result.data!.matches[0]!.text;
    expect(text).toContain("NEEDLE");
    expect(text.startsWith("…")).toBe(true);
    expect(text.endsWith("…")).toBe(true);
    expect(text.length).toBeLessThanOrEqual(302);
  });

  it("reports a missing path", async () => {
    await expect(
      toolsOf().byName.grep_files!.invoke({ pattern: "x", path: "nope" }, ctx),
    ).rejects.toMatchObject({
      code: ERROR_CODES.FS_NOT_FOUND,
    });
  });
});

describe("delete_file", () => {
  it("deletes one file", async () => {
    file("trash.txt", "x");
    const result = await toolsOf().call("delete_file", { path: "trash.txt" });
    expect(result).toMatchObject({
      ok: true,
      summary: "Deleted trash.txt",
      data: { path: "trash.txt", deleted: true },
    });
    expect(existsSync(path.join(ws, "trash.txt"))).toBe(false);
  });

  it("never deletes a directory, and reports a missing file", async () => {
    mkdirSync(path.join(ws, "dir"));
    const tool = toolsOf().byName.delete_file!;
    await expect(tool.invoke({ path: "dir" }, ctx)).rejects.toMatchObject({
      code: ERROR_CODES.FS_IS_DIRECTORY,
    });
    await expect(tool.invoke({ path: "." }, ctx)).rejects.toMatchObject({
      code: ERROR_CODES.FS_IS_DIRECTORY,
    });
    await expect(tool.invoke({ path: "gone.txt" }, ctx)).rejects.toMatchObject({
      code: ERROR_CODES.FS_NOT_FOUND,
    });
    expect(existsSync(path.join(ws, "dir"))).toBe(true);
  });

  it("is destructive by declaration and always asks for approval", () => {
    const tool = toolsOf().byName.delete_file!;
    expect(tool.executionSpec()).toMatchObject({
      sideEffects: "destructive",
      approvalMode: "always",
      writesFiles: true,
    });
    expect(tool.durableIdempotent).toBe(false);
  });
});

describe("the filesystem toolset", () => {
  it("offers four tools by default; delete_file only when listed", () => {
    const toolset = createFilesystemToolset({ sandbox: { roots: [{ path: ws, mode: "rw" }] } });
    expect(isToolset(toolset)).toBe(true);
    expect(toolset.tools().map((tool) => tool.name)).toEqual([
      "read_file",
      "write_file",
      "list_files",
      "grep_files",
    ]);
    const narrowed = createFilesystemToolset({ tools: ["read_file", "read_file", "delete_file"] });
    expect(narrowed.tools().map((tool) => tool.name)).toEqual(["read_file", "delete_file"]);
  });

  it("takes a sandbox provider", async () => {
    file("x.txt", "from provider");
    const { Sandbox } = await import("../../sandbox/sandbox.js");
    const sandbox = await Sandbox.create({ roots: [{ path: ws, mode: "ro" }] });
    const toolset = createFilesystemToolset({ sandbox: async () => sandbox });
    const [read, write] = toolset.tools();
    expect(
      ((await read!.invoke({ path: "x.txt" }, ctx)) as ToolResult<{ content: string }>).data!.content,
    ).toBe("from provider");
    await expect(write!.invoke({ path: "y.txt", content: "" }, ctx)).rejects.toMatchObject({
      code: ERROR_CODES.SANDBOX_READ_ONLY,
    });
  });

  it("gives each run its own workspace under runs/<run-id>/workspace when no roots are configured", async () => {
    const baseDir = path.join(base, "app");
    const [read, write] = createFilesystemToolset({ sandbox: { baseDir } }).tools();
    const run1 = { runId: "run-1" } as ToolContext;
    const run2 = { runId: "run:2/x" } as ToolContext;
    await write!.invoke({ path: "note.txt", content: "one" }, run1);
    await write!.invoke({ path: "note.txt", content: "two" }, run2);
    expect(readFileSync(path.join(baseDir, "runs", "run-1", "workspace", "note.txt"), "utf8")).toBe("one");
    expect(readFileSync(path.join(baseDir, "runs", "run%3A2%2Fx", "workspace", "note.txt"), "utf8")).toBe(
      "two",
    );
    expect(
      ((await read!.invoke({ path: "note.txt" }, run1)) as ToolResult<{ content: string }>).data!.content,
    ).toBe("one");
    // Run folders hand the workspace over on the context.
    const given = path.join(base, "given-workspace");
    const run3 = { runId: "run-3", workspaceDir: given } as unknown as ToolContext;
    await write!.invoke({ path: "n.txt", content: "three" }, run3);
    expect(readFileSync(path.join(given, "n.txt"), "utf8")).toBe("three");
  });
});

describe("filesystem plugins", () => {
  registerBuiltins();

  it("loads {type: filesystem} as a toolset sandboxed by the agent's sandbox config", async () => {
    file("data.txt", "hello");
    const loaded = await loadPlugin<Toolset>(
      "tool",
      { type: "filesystem", config: { tools: ["read_file", "grep_files"], grep_max_matches: 1 } },
      {
        baseDir: base,
        agent: { id: "a", sandbox: { roots: [{ path: "ws", mode: "ro" }], max_read_bytes: 3 } },
      },
    );
    expect(isToolset(loaded)).toBe(true);
    const [read, grep] = loaded.tools();
    const result = (await read!.invoke({ path: "data.txt" }, ctx)) as ToolResult<{ content: string }>;
    expect(result.data).toMatchObject({ content: "hel", truncated: true });
    expect(read!.description).toContain("at most 3 bytes");
    expect(grep!.description).toContain("at most 1 matching lines");
  });

  it("loads each tool as a type of its own", async () => {
    const tool = await loadPlugin<Tool>(
      "tool",
      { type: "list_files", config: {} },
      {
        baseDir: base,
        agent: { id: "a", sandbox: { roots: [{ path: ws, mode: "rw" }], max_list_entries: 7 } },
      },
    );
    expect(tool.name).toBe("list_files");
    expect(tool.description).toContain("At most 7 entries");
  });

  it("refuses an unknown tool name in the toolset's config", async () => {
    await expect(
      loadPlugin("tool", { type: "filesystem", config: { tools: ["rm_rf"] } }, { baseDir: base }),
    ).rejects.toBeInstanceOf(PluginConfigError);
  });

  it("warns about an unknown config key", async () => {
    const warn = vi.fn();
    const previous = setLogger({ debug() {}, info() {}, warn, error() {} });
    try {
      await loadPlugin("tool", { type: "filesystem", config: { root: "/" } }, { baseDir: base });
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('unknown config key "root"'));
    } finally {
      setLogger(previous);
    }
  });
});
