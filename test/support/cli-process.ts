import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { beforeAll } from "vitest";
import { repoRoot } from "./compile-for-children.js";

/** The built command line, as `npx keel` runs it. */
export const KEEL_MAIN = join(repoRoot, "dist/cli/main.js");

/**
 * Before the file's tests, build the package unless dist/ is newer than every source file: these tests run the
 * built `keel` in child processes, as a user's shell does (`npm test` builds first anyway).
 */
export function useBuiltCli(): void {
  beforeAll(() => {
    if (existsSync(KEEL_MAIN) && newestSource(join(repoRoot, "src")) <= statSync(KEEL_MAIN).mtimeMs) return;
    bundlePackage();
  }, 120_000);
}

/**
 * The package's JavaScript, bundled into dist/ as `npm run build` does first (a second or two), without the
 * declarations and the console: what a test that runs the built code needs.
 */
export function bundlePackage(): void {
  execFileSync(process.execPath, [join(repoRoot, "scripts/bundle.mjs")], { cwd: repoRoot, stdio: "pipe" });
}

/** Before the file's tests, build the web console into dist/console unless it is newer than its sources. */
export function useBuiltConsole(): void {
  beforeAll(() => {
    const index = join(repoRoot, "dist/console/index.html");
    if (existsSync(index) && newestFile(join(repoRoot, "console")) <= statSync(index).mtimeMs) return;
    const vite = join(repoRoot, "node_modules/vite/bin/vite.js");
    execFileSync(
      process.execPath,
      [vite, "build", "--config", "console/vite.config.ts", "--logLevel", "warn"],
      {
        cwd: repoRoot,
        stdio: "pipe",
        // Vitest sets NODE_ENV=test, which would make a development build.
        env: { ...process.env, NODE_ENV: "production" },
      },
    );
  }, 120_000);
}

function newestFile(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestFile(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts"))
      newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** A `keel` process: its output so far, and how it ended once it has. */
export interface KeelProcess {
  pid: number;
  stdout: string;
  stderr: string;
  /** The exit code, or null when a signal ended it; undefined while it runs. */
  code: number | null | undefined;
  signal: NodeJS.Signals | null;
  /** Settles once the process has exited and its output is read. */
  done: Promise<void>;
  kill(signal: NodeJS.Signals): void;
}

export interface KeelOptions {
  /** Written to its stdin, which is then closed; without it stdin is empty. */
  input?: string;
  /** Added to the environment (which never holds a provider key or KEEL_DEBUG). */
  env?: Record<string, string>;
  cwd?: string;
}

/** Start `keel <args>` (the built CLI) in a child process. */
export function startKeel(args: readonly string[], options: KeelOptions = {}): KeelProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", ...options.env };
  for (const name of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "KEEL_DEBUG"])
    if (options.env?.[name] === undefined) delete env[name];
  const child = spawn(process.execPath, [KEEL_MAIN, ...args], {
    cwd: options.cwd ?? repoRoot,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const keel: KeelProcess = {
    pid: child.pid ?? -1,
    stdout: "",
    stderr: "",
    code: undefined,
    signal: null,
    done: new Promise((resolve) =>
      child.on("close", (code, signal) => {
        keel.code = code;
        keel.signal = signal;
        resolve();
      }),
    ),
    kill: (signal) => {
      child.kill(signal);
    },
  };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    keel.stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    keel.stderr += chunk;
  });
  child.stdin.end(options.input ?? "");
  return keel;
}

/** Run `keel <args>` to its end. */
export async function keel(
  args: readonly string[],
  options: KeelOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const process_ = startKeel(args, options);
  await process_.done;
  return { code: process_.code ?? null, stdout: process_.stdout, stderr: process_.stderr };
}
