import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PermissionDeniedError, SandboxError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { procFdAvailable } from "./open-verified.js";
import { utf8Boundary } from "./read-at.js";
import { Sandbox } from "./sandbox.js";
import {
  createSandboxProvider,
  defaultWorkspaceDir,
  runFolderName,
  sandboxSettingsFromConfig,
} from "./sandbox-provider.js";

const base = realpathSync(mkdtempSync(path.join(tmpdir(), "keel-sandbox-")));
const ws = path.join(base, "ws");
mkdirSync(path.join(ws, "inputs"), { recursive: true });
writeFileSync(path.join(ws, "inputs", "data.csv"), "a,b\n");
writeFileSync(path.join(ws, "notes.txt"), "n");
mkdirSync(path.join(base, "refs"));
writeFileSync(path.join(base, "refs", "ref.md"), "ref");

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("Sandbox", () => {
  it("needs absolute roots, and at least one", async () => {
    await expect(Sandbox.create({ roots: [] })).rejects.toThrow("at least one root");
    await expect(Sandbox.create({ roots: [{ path: "relative", mode: "rw" }] })).rejects.toThrow("absolute");
  });

  it("refuses a missing root unless it may create a read-write one", async () => {
    await expect(
      Sandbox.create({
        roots: [{ path: path.join(base, "missing-ro"), mode: "ro" }],
        createMissingRoots: true,
      }),
    ).rejects.toMatchObject({ code: ERROR_CODES.SANDBOX_ROOT_MISSING, rule: "root_missing" });
    await expect(
      Sandbox.create({ roots: [{ path: path.join(base, "missing-rw"), mode: "rw" }] }),
    ).rejects.toMatchObject({ code: ERROR_CODES.SANDBOX_ROOT_MISSING });
    const created = await Sandbox.create({
      roots: [{ path: path.join(base, "fresh", "workspace"), mode: "rw" }],
      createMissingRoots: true,
    });
    expect(existsSync(path.join(base, "fresh", "workspace"))).toBe(true);
    expect(created.roots[0]).toEqual({
      real: path.join(base, "fresh", "workspace"),
      mode: "rw",
      primary: true,
    });
  });

  it("takes the most specific root: a read-only root inside the read-write workspace stays read-only", async () => {
    const sandbox = await Sandbox.create({
      roots: [
        { path: ws, mode: "rw" },
        { path: path.join(ws, "inputs"), mode: "ro" },
      ],
    });
    expect((await sandbox.readFile("inputs/data.csv", { tool: "read_file" })).content).toBe("a,b\n");
    await expect(sandbox.writeFile("inputs/data.csv", "x", { tool: "write_file" })).rejects.toMatchObject({
      code: ERROR_CODES.SANDBOX_READ_ONLY,
      rule: "path_read_only",
    });
    await expect(sandbox.writeFile("notes.txt", "ok", { tool: "write_file" })).resolves.toMatchObject({
      created: false,
    });
  });

  it("shows paths under other roots absolute, as the model must write them", async () => {
    const sandbox = await Sandbox.create({
      roots: [
        { path: ws, mode: "rw" },
        { path: path.join(base, "refs"), mode: "ro" },
      ],
    });
    const read = await sandbox.readFile(path.join(base, "refs", "ref.md"), { tool: "read_file" });
    expect(read.path).toBe(path.join(base, "refs", "ref.md"));
    expect(sandbox.display(ws)).toBe(".");
    expect(sandbox.allowed()).toBe(
      `Allowed: paths relative to the workspace (read-write), and under ${path.join(base, "refs")} (read-only).`,
    );
  });

  it("checks without opening, for a policy to ask", async () => {
    const sandbox = await Sandbox.create({ roots: [{ path: ws, mode: "ro" }] });
    const checked = await sandbox.check("inputs/../notes.txt", "read", "read_file");
    expect(checked).toMatchObject({ display: "notes.txt", exists: true, access: "read" });
    const refusal = await sandbox.check("notes.txt", "write", "write_file").catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(SandboxError);
    expect(refusal).toBeInstanceOf(PermissionDeniedError);
    expect(refusal).toMatchObject({ code: ERROR_CODES.SANDBOX_READ_ONLY, rule: "path_read_only" });
    expect(sandbox.allowed()).toBe("Allowed: paths relative to the workspace (read-only).");
  });

  it("uses /proc/self/fd where there is one", async () => {
    expect((await Sandbox.create({ roots: [{ path: ws, mode: "rw" }] })).raceFree).toBe(procFdAvailable());
    expect((await Sandbox.create({ roots: [{ path: ws, mode: "rw" }], useProcFd: false })).raceFree).toBe(
      false,
    );
  });
});

describe("utf8Boundary", () => {
  it.each([
    ["ascii", Buffer.from("abc"), 3],
    ["whole two-byte char", Buffer.from("a\u00e9"), 3],
    ["cut two-byte char", Buffer.from("a\u00e9").subarray(0, 2), 1],
    ["cut three-byte char", Buffer.from("a\u20ac").subarray(0, 3), 1],
    ["whole four-byte char", Buffer.from("\u{1f600}"), 4],
    ["cut four-byte char", Buffer.from("a\u{1f600}").subarray(0, 4), 1],
    ["only continuation bytes", Buffer.from([0x80, 0x80]), 2],
    ["empty", Buffer.alloc(0), 0],
  ])("%s", (_name, buffer, end) => {
    expect(utf8Boundary(buffer)).toBe(end);
  });
});

describe("sandbox settings and providers", () => {
  it("maps an agent's sandbox config", () => {
    expect(
      sandboxSettingsFromConfig(
        { roots: [{ path: "data", mode: "ro" }], max_read_bytes: 1, max_write_bytes: 2, max_list_entries: 3 },
        "/app",
      ),
    ).toEqual({
      baseDir: "/app",
      roots: [{ path: "data", mode: "ro" }],
      limits: { maxReadBytes: 1, maxWriteBytes: 2, maxListEntries: 3 },
    });
    expect(sandboxSettingsFromConfig({ roots: [] }, "/app")).toEqual({ baseDir: "/app", limits: {} });
    expect(sandboxSettingsFromConfig(undefined, "/app")).toEqual({ baseDir: "/app", limits: {} });
  });

  it("names run folders safely", () => {
    expect(runFolderName("run-1")).toBe("run-1");
    expect(runFolderName("a/../b")).toBe("a%2F..%2Fb");
    expect(runFolderName("..")).toBe("_..");
    expect(runFolderName(".")).toBe("_.");
    expect(runFolderName("")).toBe("_");
    expect(defaultWorkspaceDir({ runId: "r" }, "/app")).toBe("/app/runs/r/workspace");
    expect(defaultWorkspaceDir({ runId: "r", workspaceDir: "/w" }, "/app")).toBe("/w");
  });

  it("shares one sandbox for configured roots, relative to the base directory", async () => {
    const provider = createSandboxProvider({ baseDir: base, roots: [{ path: "ws", mode: "rw" }] });
    const first = await provider({ runId: "a" });
    expect(await provider({ runId: "b" })).toBe(first);
    expect(first.roots[0]!.real).toBe(ws);
  });

  it("tries again after a root was missing", async () => {
    const provider = createSandboxProvider({ baseDir: base, roots: [{ path: "later", mode: "ro" }] });
    await expect(provider({ runId: "a" })).rejects.toMatchObject({ code: ERROR_CODES.SANDBOX_ROOT_MISSING });
    mkdirSync(path.join(base, "later"));
    await expect(provider({ runId: "a" })).resolves.toBeInstanceOf(Sandbox);
  });

  it("gives each run its own workspace, keeping the last one", async () => {
    const provider = createSandboxProvider({ baseDir: base, limits: { maxReadBytes: 5 }, useProcFd: false });
    const one = await provider({ runId: "one" });
    expect(await provider({ runId: "one" })).toBe(one);
    const two = await provider({ runId: "two" });
    expect(two).not.toBe(one);
    expect(two.roots[0]!.real).toBe(path.join(base, "runs", "two", "workspace"));
    expect(two.limits.maxReadBytes).toBe(5);
  });

  it("forgets a workspace it could not make", async () => {
    writeFileSync(path.join(base, "blocker"), "");
    const provider = createSandboxProvider({
      baseDir: base,
      workspaceDir: () => path.join(base, "blocker", "ws"),
    });
    const failure = await provider({ runId: "x" }).catch((error: unknown) => error);
    expect(failure).toMatchObject({
      code: ERROR_CODES.SANDBOX_ROOT_MISSING,
      context: { root: path.join(base, "blocker", "ws") },
    });
    expect((failure as Error).message).toBe(
      "A read-write root of the sandbox is not available (ENOTDIR); no file can be used there until it is fixed.",
    );
    await expect(provider({ runId: "x" })).rejects.toMatchObject({ code: ERROR_CODES.SANDBOX_ROOT_MISSING });
  });
});
