import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Tool, ToolContext } from "../../contracts/tool.js";
import { ERROR_CODES } from "../../errors/error-codes.js";
import { KeelError } from "../../errors/keel-error.js";
import type { CheckedPath } from "../../sandbox/checked-path.js";
import { procFdAvailable } from "../../sandbox/open-verified.js";
import { Sandbox } from "../../sandbox/sandbox.js";
import { createFilesystemToolset } from "./filesystem-toolset.js";

/**
 * The attack table: every input is refused by every filesystem tool with the right code, and nothing
 * outside the workspace is read or changed — the canary keeps its content and mtime, no file appears outside,
 * and no result or message carries the canary's content.
 */

const CANARY = "CANARY-7f3a-do-not-leak";
const ctx = { runId: "attack-run" } as ToolContext;

const base = mkdtempSync(path.join(tmpdir(), "keel-attack-"));
const ws = path.join(base, "ws");
const ro = path.join(base, "ro");
const outside = path.join(base, "outside");
let socket: Server | undefined;
let tools: Record<string, Tool>;

function buildFixture(): void {
  mkdirSync(path.join(ws, "sub", "deeper"), { recursive: true });
  writeFileSync(path.join(ws, "ok.txt"), "ok\n");
  writeFileSync(path.join(ws, "sub", "inner.txt"), "inner\n");
  writeFileSync(path.join(ws, "sub", "deeper", "file.txt"), "deep\n");
  mkdirSync(outside);
  writeFileSync(path.join(outside, "canary.txt"), CANARY);
  mkdirSync(path.join(base, "ws-evil"));
  writeFileSync(path.join(base, "ws-evil", "secret.txt"), CANARY);
  mkdirSync(path.join(base, "WS"));
  writeFileSync(path.join(base, "WS", "ok.txt"), CANARY);
  mkdirSync(path.join(base, "caf\u00e9"));
  writeFileSync(path.join(base, "caf\u00e9", "secret.txt"), CANARY);
  mkdirSync(path.join(base, "cafe\u0301"));
  writeFileSync(path.join(base, "cafe\u0301", "secret.txt"), CANARY);
  mkdirSync(ro);
  writeFileSync(path.join(ro, "data.txt"), "read-only data\n");

  const link = (target: string, name: string) => symlinkSync(target, path.join(ws, name));
  link(path.join(outside, "canary.txt"), "link-out-file");
  link("../outside/canary.txt", "link-out-rel");
  link("../outside", "link-out-dir");
  link("../ws-evil", "link-evil-dir");
  link("chain-2", "chain-1");
  link("chain-3", "chain-2");
  link("../outside/canary.txt", "chain-3");
  symlinkSync("../../outside", path.join(ws, "sub", "to-out"));
  link("sub/to-out", "chain-in-out");
  link("../outside/created-by-attack.txt", "dangling-out");
  link(path.join(outside, "new-dir", "new.txt"), "dangling-abs");
  link("../outside/no-dir/x.txt", "dangling-dir-out");
  link("loop-b", "loop-a");
  link("loop-a", "loop-b");
  link("/", "link-root");
  link("..", "link-up");
  link("/dev/zero", "link-dev-zero");
  link("/dev/urandom", "link-urandom");
  link("/etc/passwd", "link-etc-passwd");
  link("/proc/self/cwd", "link-proc-cwd");
  link(ro, "link-ro");
  linkSync(path.join(outside, "canary.txt"), path.join(ws, "hard-canary"));
  execFileSync("mkfifo", [path.join(ws, "fifo")]);
}

/** Every file and directory outside the workspace with its content hash and mtime. */
function outsideSnapshot(): Record<string, string> {
  const snapshot: Record<string, string> = {};
  const visit = (directory: string) => {
    for (const name of readdirSync(directory)) {
      const full = path.join(directory, name);
      if (full === ws) continue;
      const stats = lstatSync(full);
      if (stats.isDirectory()) {
        snapshot[full] = `dir ${stats.mtimeMs}`;
        visit(full);
      } else if (stats.isFile()) {
        const hash = createHash("sha256").update(readFileSync(full)).digest("hex");
        snapshot[full] = `file ${hash} ${stats.mtimeMs} ${stats.size}`;
      } else {
        snapshot[full] = `other ${stats.mtimeMs}`;
      }
    }
  };
  visit(base);
  return snapshot;
}

let before: Record<string, string>;

beforeAll(async () => {
  buildFixture();
  socket = createServer();
  await new Promise<void>((resolve) => socket!.listen(path.join(ws, "sock"), resolve));
  const toolset = createFilesystemToolset({
    sandbox: {
      roots: [
        { path: ws, mode: "rw" },
        { path: ro, mode: "ro" },
      ],
    },
    tools: ["read_file", "write_file", "list_files", "grep_files", "delete_file"],
  });
  tools = Object.fromEntries(toolset.tools().map((tool) => [tool.name, tool]));
  before = outsideSnapshot();
});

afterAll(async () => {
  await new Promise<void>((resolve) => (socket ? socket.close(() => resolve()) : resolve()));
  rmSync(base, { recursive: true, force: true });
});

/** One call of each tool on a path. */
const CALLS: Record<string, (target: string) => Record<string, unknown>> = {
  read_file: (target) => ({ path: target }),
  write_file: (target) => ({ path: target, content: "pwned" }),
  list_files: (target) => ({ path: target }),
  grep_files: (target) => ({ pattern: ".", path: target }),
  delete_file: (target) => ({ path: target }),
};

const OUTSIDE = ERROR_CODES.SANDBOX_PATH_OUTSIDE;
const INVALID = ERROR_CODES.SANDBOX_INVALID_PATH;

/** [what it tries, the path, the code every tool must refuse it with] */
const ATTACKS: [string, string, string][] = [
  // `..` in every position
  ["bare ..", "..", OUTSIDE],
  ["../ with trailing slash", "../", OUTSIDE],
  ["leading ..", "../outside/canary.txt", OUTSIDE],
  ["two leading ..", "../../etc/passwd", OUTSIDE],
  ["many ..", "../../../../../../../../etc/passwd", OUTSIDE],
  [".. after a directory", "sub/../../outside/canary.txt", OUTSIDE],
  [".. after two directories", "sub/deeper/../../../outside/canary.txt", OUTSIDE],
  ["./ then ..", "./../outside/canary.txt", OUTSIDE],
  ["dots mixed in", "sub/./../.././outside/canary.txt", OUTSIDE],
  [".. after a file name", "ok.txt/../../outside/canary.txt", OUTSIDE],
  ["doubled slashes around ..", "sub/..//../outside", OUTSIDE],
  ["out, back in, out again", "../ws/../outside/canary.txt", OUTSIDE],
  ["..// repeated", "..//..//..//etc/passwd", OUTSIDE],
  ["trailing .. chain", "sub/deeper/../../..", OUTSIDE],
  ["sibling sharing the prefix", "../ws-evil/secret.txt", OUTSIDE],
  ["sibling directory itself", "../ws-evil", OUTSIDE],
  // absolute paths
  ["/etc/passwd", "/etc/passwd", OUTSIDE],
  ["the filesystem root", "/", OUTSIDE],
  ["absolute canary", path.join(outside, "canary.txt"), OUTSIDE],
  ["absolute sibling with the workspace as string prefix", `${ws}-evil/secret.txt`, OUTSIDE],
  ["absolute path through the workspace and out", `${ws}/../outside/canary.txt`, OUTSIDE],
  ["absolute path out to the sibling", `${ws}/../ws-evil/secret.txt`, OUTSIDE],
  ["double leading slash", "//etc/passwd", OUTSIDE],
  ["/proc/self/environ", "/proc/self/environ", OUTSIDE],
  ["/proc/self/root", "/proc/self/root/etc/passwd", OUTSIDE],
  ["/dev/zero", "/dev/zero", OUTSIDE],
  ["/dev/urandom", "/dev/urandom", OUTSIDE],
  ["/dev/stdin", "/dev/stdin", OUTSIDE],
  ["the temp directory", tmpdir(), OUTSIDE],
  // symlinks to outside
  ["symlink to an outside file (absolute target)", "link-out-file", OUTSIDE],
  ["symlink to an outside file (relative target)", "link-out-rel", OUTSIDE],
  ["file under a symlinked outside directory", "link-out-dir/canary.txt", OUTSIDE],
  ["symlink to an outside directory", "link-out-dir", OUTSIDE],
  ["symlink to the prefix-sharing sibling", "link-evil-dir/secret.txt", OUTSIDE],
  ["chain of three symlinks", "chain-1", OUTSIDE],
  ["chain through an inside symlink", "chain-in-out/canary.txt", OUTSIDE],
  ["dangling symlink to outside", "dangling-out", OUTSIDE],
  ["dangling symlink, absolute target in a missing dir", "dangling-abs", OUTSIDE],
  ["dangling symlink into a missing outside dir", "dangling-dir-out", OUTSIDE],
  ["symlink loop", "loop-a", INVALID],
  ["symlink to /", "link-root/etc/passwd", OUTSIDE],
  ["symlink to ..", "link-up/outside/canary.txt", OUTSIDE],
  ["symlink to .. itself", "link-up", OUTSIDE],
  ["symlink to /dev/zero", "link-dev-zero", OUTSIDE],
  ["symlink to /dev/urandom", "link-urandom", OUTSIDE],
  ["symlink to /etc/passwd", "link-etc-passwd", OUTSIDE],
  ["symlink to /proc/self/cwd", "link-proc-cwd/package.json", OUTSIDE],
  ["symlink reached after a lexical ..", "sub/../link-out-file", OUTSIDE],
  // hard links, devices, FIFOs, sockets
  ["hard link to an outside file", "hard-canary", ERROR_CODES.SANDBOX_HARD_LINK],
  ["FIFO", "fifo", ERROR_CODES.SANDBOX_SPECIAL_FILE],
  ["unix socket", "sock", ERROR_CODES.SANDBOX_SPECIAL_FILE],
  // NUL and control characters
  ["NUL byte truncation", "ok.txt\u0000../../etc/passwd", INVALID],
  ["NUL byte alone", "\u0000", INVALID],
  ["newline", "ok.txt\n", INVALID],
  ["escape character", "\u001b[2Jok.txt", INVALID],
  ["right-to-left override", "ok\u202e.txt", INVALID],
  ["zero-width space", "..\u200b/outside", INVALID],
  ["byte order mark", "\ufeff../outside", INVALID],
  // Windows-style
  ["backslash traversal", "..\\outside\\canary.txt", INVALID],
  ["mixed separators", "sub\\..\\..\\outside", INVALID],
  ["drive letter with backslashes", "C:\\Windows\\system32", INVALID],
  ["drive letter with slashes", "C:/Windows", INVALID],
  ["UNC path", "\\\\server\\share\\x", INVALID],
  ["drive-relative traversal", "c:..\\outside", INVALID],
  // URL-encoded
  ["encoded dots", "%2e%2e/outside/canary.txt", INVALID],
  ["encoded slashes", "..%2foutside%2fcanary.txt", INVALID],
  ["fully encoded, upper case", "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd", INVALID],
  ["encoded slash after a directory", "sub%2f..%2f..%2foutside", INVALID],
  ["double encoding", "%252e%252e/outside", INVALID],
  ["encoded NUL", "ok.txt%00", INVALID],
  ["file URL", "file:///etc/passwd", INVALID],
  // home directory
  ["~", "~", INVALID],
  ["~/", "~/.ssh/id_rsa", INVALID],
  ["~user", "~root/.bashrc", INVALID],
  // Unicode and case variants
  ["fullwidth full stops", "\uff0e\uff0e/outside/canary.txt", INVALID],
  ["fullwidth solidus", "..\uff0foutside\uff0fcanary.txt", INVALID],
  ["two dot leader", "\u2025/outside/canary.txt", INVALID],
  ["small full stops", "\ufe52\ufe52/outside", INVALID],
  ["division slash", "..\u2215outside", INVALID],
  ["fullwidth reverse solidus", "..\uff3coutside", INVALID],
  ["case variant of the workspace, relative", "../WS/ok.txt", OUTSIDE],
  ["case variant of the workspace, absolute", path.join(base, "WS", "ok.txt"), OUTSIDE],
  ["NFD name outside", "../cafe\u0301/secret.txt", OUTSIDE],
  ["NFD name outside, absolute", path.join(base, "cafe\u0301", "secret.txt"), OUTSIDE],
  ["NFC name outside, absolute", path.join(base, "caf\u00e9", "secret.txt"), OUTSIDE],
  // malformed
  ["empty path", "", INVALID],
  ["a path too long to be one", "a/".repeat(3000), INVALID],
  ["a segment too long to be one", "x".repeat(300), INVALID],
];

/** Writes and deletes under the read-only root: refused, while reads there work. */
const READ_ONLY_ATTACKS: [string, string][] = [
  ["existing file in the read-only root", path.join(ro, "data.txt")],
  ["new file in the read-only root", path.join(ro, "new.txt")],
  ["read-only root reached through a symlink", "link-ro/data.txt"],
  ["new directory in the read-only root", path.join(ro, "dir", "new.txt")],
];

async function refusal(tool: string, args: Record<string, unknown>): Promise<KeelError> {
  try {
    const result = await tools[tool]!.invoke(args, ctx);
    throw new Error(`${tool}(${JSON.stringify(args)}) was not refused: ${JSON.stringify(result)}`);
  } catch (error) {
    if (!KeelError.isInstance(error)) throw error;
    return error;
  }
}

describe("filesystem attack table", () => {
  it("has at least 60 inputs", () => {
    expect(ATTACKS.length + READ_ONLY_ATTACKS.length).toBeGreaterThanOrEqual(60);
  });

  describe.each(Object.keys(CALLS))("%s", (tool) => {
    it.each(ATTACKS)("refuses %s", async (_what, target, code) => {
      const error = await refusal(tool, CALLS[tool]!(target));
      expect(error.code).toBe(code);
      expect(error.message).toContain(tool);
      expect(error.message).not.toContain(CANARY);
      // A refusal names what the model gave and the configured roots, never another host path.
      if (!path.isAbsolute(target)) expect(error.message.replaceAll(ro, "<ro>")).not.toContain(base);
      expect(outsideSnapshot()).toEqual(before);
    });
  });

  describe.each(["write_file", "delete_file"])("%s in a read-only root", (tool) => {
    it.each(READ_ONLY_ATTACKS)("refuses %s", async (_what, target) => {
      const error = await refusal(tool, CALLS[tool]!(target));
      expect(error.code).toBe(ERROR_CODES.SANDBOX_READ_ONLY);
      expect(readFileSync(path.join(ro, "data.txt"), "utf8")).toBe("read-only data\n");
      expect(readdirSync(ro)).toEqual(["data.txt"]);
    });
  });

  it("reads from the read-only root", async () => {
    const result = (await tools.read_file!.invoke({ path: path.join(ro, "data.txt") }, ctx)) as {
      data: { content: string; path: string };
    };
    expect(result.data.content).toBe("read-only data\n");
    expect(result.data.path).toBe(path.join(ro, "data.txt"));
  });

  it("refuses a character device inside the workspace (mknod, where permitted)", async (context) => {
    const device = path.join(ws, "null-device");
    try {
      execFileSync("mknod", [device, "c", "1", "3"], { stdio: "ignore" });
    } catch {
      context.skip();
    }
    try {
      for (const tool of Object.keys(CALLS)) {
        expect((await refusal(tool, CALLS[tool]!("null-device"))).code).toBe(
          ERROR_CODES.SANDBOX_SPECIAL_FILE,
        );
      }
    } finally {
      rmSync(device);
    }
  });

  it("refuses /dev/zero and /dev/urandom as special files even when /dev is a root", async () => {
    const sandbox = await Sandbox.create({ roots: [{ path: "/dev", mode: "ro" }] });
    for (const device of ["/dev/zero", "/dev/urandom", "zero", "null"]) {
      await expect(sandbox.readFile(device, { tool: "read_file" })).rejects.toMatchObject({
        code: ERROR_CODES.SANDBOX_SPECIAL_FILE,
      });
    }
  });

  it("refuses a write larger than max_write_bytes before touching the disk", async () => {
    const sandbox = await Sandbox.create({
      roots: [{ path: ws, mode: "rw" }],
      limits: { maxWriteBytes: 16 },
    });
    await expect(sandbox.writeFile("big.txt", "x".repeat(17), { tool: "write_file" })).rejects.toMatchObject({
      code: ERROR_CODES.SANDBOX_TOO_LARGE,
    });
    expect(readdirSync(ws)).not.toContain("big.txt");
  });

  it("bounds a read of a huge (sparse) file and says it is truncated", async () => {
    const huge = path.join(ws, "huge.bin");
    execFileSync("truncate", ["-s", "8G", huge]);
    writeFileSync(path.join(ws, "huge.txt"), "");
    execFileSync("truncate", ["-s", "4G", path.join(ws, "huge.txt")]);
    try {
      const sandbox = await Sandbox.create({
        roots: [{ path: ws, mode: "rw" }],
        limits: { maxReadBytes: 4096 },
      });
      const read = await sandbox.readFile("huge.bin", { tool: "read_file", limit: 10 ** 9 });
      expect(read).toMatchObject({ truncated: true, totalBytes: 8 * 1024 ** 3, binary: true });
      expect(read.bytesRead).toBeLessThanOrEqual(4096);
      const skipped = [];
      for await (const file of sandbox.walkFiles("huge.txt", { tool: "grep_files", maxFileBytes: 1024 })) {
        skipped.push(file);
      }
      expect(skipped).toEqual([{ path: "huge.txt", skipped: "larger than 1024 bytes" }]);
    } finally {
      rmSync(huge);
      rmSync(path.join(ws, "huge.txt"));
    }
  });

  it("left everything outside the workspace as it was", () => {
    expect(outsideSnapshot()).toEqual(before);
    expect(readFileSync(path.join(outside, "canary.txt"), "utf8")).toBe(CANARY);
    expect(readdirSync(outside)).toEqual(["canary.txt"]);
  });
});

/**
 * The race: a file or directory swapped for a symlink (or another file) after the check and before the open,
 * through the sandbox's `beforeOpen` seam. With procfs (Linux) files open inside a verified directory; without
 * it, the device and inode seen at the check must match the opened file.
 */
describe.each([
  ["through /proc/self/fd", true],
  ["by full path", false],
])("symlink swapped after the check, opened %s", (_label, useProcFd) => {
  const raceBase = mkdtempSync(path.join(tmpdir(), "keel-race-"));
  const raceWs = path.join(raceBase, "ws");
  const raceOutside = path.join(raceBase, "outside");
  let swap: ((target: CheckedPath) => void) | undefined;
  let sandbox: Sandbox;

  beforeEach(async (context) => {
    if (useProcFd && !procFdAvailable()) context.skip();
    rmSync(raceBase, { recursive: true, force: true });
    mkdirSync(path.join(raceWs, "sub"), { recursive: true });
    mkdirSync(path.join(raceOutside, "sub"), { recursive: true });
    writeFileSync(path.join(raceWs, "ok.txt"), "ok\n");
    writeFileSync(path.join(raceWs, "sub", "inner.txt"), "inner\n");
    writeFileSync(path.join(raceOutside, "canary.txt"), CANARY);
    writeFileSync(path.join(raceOutside, "sub", "inner.txt"), CANARY);
    swap = undefined;
    sandbox = await Sandbox.create({
      roots: [{ path: raceWs, mode: "rw" }],
      useProcFd,
      beforeOpen: (target) => swap?.(target),
    });
  });

  afterAll(() => rmSync(raceBase, { recursive: true, force: true }));

  const swapFileForLink = () => {
    rmSync(path.join(raceWs, "ok.txt"));
    symlinkSync(path.join(raceOutside, "canary.txt"), path.join(raceWs, "ok.txt"));
  };
  const swapDirectoryForLink = () => {
    renameSync(path.join(raceWs, "sub"), path.join(raceWs, "sub-moved"));
    symlinkSync(path.join(raceOutside, "sub"), path.join(raceWs, "sub"));
  };
  const outsideState = () => ({
    canary: readFileSync(path.join(raceOutside, "canary.txt"), "utf8"),
    inner: readFileSync(path.join(raceOutside, "sub", "inner.txt"), "utf8"),
    files: readdirSync(raceOutside).sort(),
    subFiles: readdirSync(path.join(raceOutside, "sub")).sort(),
  });
  const untouched = {
    canary: CANARY,
    inner: CANARY,
    files: ["canary.txt", "sub"],
    subFiles: ["inner.txt"],
  };

  it("read: the file became a symlink to the canary", async () => {
    swap = swapFileForLink;
    await expect(sandbox.readFile("ok.txt", { tool: "read_file" })).rejects.toMatchObject({
      code: ERROR_CODES.SANDBOX_PATH_CHANGED,
    });
  });

  it("read: the parent directory became a symlink to an outside directory", async () => {
    swap = swapDirectoryForLink;
    await expect(sandbox.readFile("sub/inner.txt", { tool: "read_file" })).rejects.toMatchObject({
      code: ERROR_CODES.SANDBOX_PATH_CHANGED,
    });
  });

  it("read: another file was renamed over the checked one", async () => {
    swap = () => {
      linkSync(path.join(raceOutside, "canary.txt"), path.join(raceWs, "hard"));
      renameSync(path.join(raceWs, "hard"), path.join(raceWs, "ok.txt"));
    };
    const error = await sandbox.readFile("ok.txt", { tool: "read_file" }).catch((caught: unknown) => caught);
    expect((error as KeelError).code).toBe(ERROR_CODES.SANDBOX_PATH_CHANGED);
    expect((error as Error).message).not.toContain(CANARY);
  });

  it("write: the existing file became a symlink to the canary", async () => {
    swap = swapFileForLink;
    await expect(sandbox.writeFile("ok.txt", "pwned", { tool: "write_file" })).rejects.toMatchObject({
      code: ERROR_CODES.SANDBOX_PATH_CHANGED,
    });
    expect(outsideState()).toEqual(untouched);
  });

  it("append: the existing file became a symlink to the canary", async () => {
    swap = swapFileForLink;
    await expect(
      sandbox.writeFile("ok.txt", "pwned", { tool: "write_file", mode: "a" }),
    ).rejects.toMatchObject({ code: ERROR_CODES.SANDBOX_PATH_CHANGED });
    expect(outsideState()).toEqual(untouched);
  });

  it("write: a new file's directory became a symlink to an outside directory; nothing is left outside", async () => {
    swap = swapDirectoryForLink;
    await expect(sandbox.writeFile("sub/new.txt", "pwned", { tool: "write_file" })).rejects.toMatchObject({
      code: ERROR_CODES.SANDBOX_PATH_CHANGED,
    });
    expect(outsideState()).toEqual(untouched);
  });

  it("write: a symlink was planted where the new file goes", async () => {
    swap = () => symlinkSync(path.join(raceOutside, "planted.txt"), path.join(raceWs, "new.txt"));
    await expect(sandbox.writeFile("new.txt", "pwned", { tool: "write_file" })).rejects.toMatchObject({
      code: ERROR_CODES.SANDBOX_PATH_CHANGED,
    });
    expect(outsideState()).toEqual(untouched);
  });

  it("write: a directory to be created was planted as a symlink", async () => {
    swap = () => symlinkSync(path.join(raceOutside, "sub"), path.join(raceWs, "fresh"));
    await expect(sandbox.writeFile("fresh/new.txt", "pwned", { tool: "write_file" })).rejects.toMatchObject({
      code: ERROR_CODES.SANDBOX_PATH_CHANGED,
    });
    expect(outsideState()).toEqual(untouched);
  });

  it("delete: the file became a symlink to the canary", async () => {
    swap = swapFileForLink;
    await expect(sandbox.deleteFile("ok.txt", { tool: "delete_file" })).rejects.toMatchObject({
      code: ERROR_CODES.SANDBOX_PATH_CHANGED,
    });
    expect(outsideState()).toEqual(untouched);
  });

  it("delete: the parent directory became a symlink to an outside directory", async () => {
    swap = swapDirectoryForLink;
    await expect(sandbox.deleteFile("sub/inner.txt", { tool: "delete_file" })).rejects.toMatchObject({
      code: ERROR_CODES.SANDBOX_PATH_CHANGED,
    });
    expect(outsideState()).toEqual(untouched);
  });

  it("list: the directory became a symlink to an outside directory", async () => {
    swap = swapDirectoryForLink;
    await expect(sandbox.listDirectory("sub", { tool: "list_files" })).rejects.toMatchObject({
      code: ERROR_CODES.SANDBOX_PATH_CHANGED,
    });
  });

  it("grep: the directory became a symlink to an outside directory", async () => {
    swap = swapDirectoryForLink;
    const walk = async () => {
      for await (const _file of sandbox.walkFiles("sub", { tool: "grep_files", maxFileBytes: 1024 })) {
        // drain
      }
    };
    await expect(walk()).rejects.toMatchObject({ code: ERROR_CODES.SANDBOX_PATH_CHANGED });
  });
});
