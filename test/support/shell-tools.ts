import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import type { ToolContext } from "../../src/contracts/tool.js";
import { createSandboxProvider } from "../../src/sandbox/sandbox-provider.js";

/** A fresh workspace folder (removed after the file's tests) and a sandbox rooted there. Call at top level. */
export function shellWorkspace(prefix: string) {
  const base = mkdtempSync(path.join(tmpdir(), prefix));
  const ws = path.join(base, "ws");
  mkdirSync(ws);
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  return { ws, sandbox: createSandboxProvider({ roots: [{ path: ws, mode: "rw" }] }) };
}

/** The running node binary, single-quoted for an `execute_command` line. */
export const quotedNode = `'${process.execPath.replaceAll("'", `'\\''`)}'`;

/** A tool context with a session state, as the loop gives a tool. */
export function toolContext(state: Record<string, unknown> = {}): ToolContext {
  return {
    runId: "run-1",
    session: { id: "s", state },
    signal: new AbortController().signal,
  } as unknown as ToolContext;
}
