import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { loadMcpSdk, type McpSdk, type McpTransportLike } from "../../src/mcp/mcp-sdk.js";
import type { McpServerConfig } from "../../src/mcp/mcp-toolset-options.js";

/**
 * The MCP reference servers from npm (`@modelcontextprotocol/server-everything` and `server-filesystem`, dev
 * dependencies) as the tests start them: over stdio through Keel, or server-everything's Streamable HTTP
 * transport as a child process on a free port, whose log lines tell which sessions it holds.
 */

const require = createRequire(import.meta.url);

function serverEntry(pkg: string): string {
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "dist", "index.js");
}

export const EVERYTHING_SERVER = serverEntry("@modelcontextprotocol/server-everything");
export const FILESYSTEM_SERVER = serverEntry("@modelcontextprotocol/server-filesystem");

/** server-everything over stdio, its stderr banner dropped. */
export function everythingStdio(): McpServerConfig {
  return {
    transport: "stdio",
    command: process.execPath,
    args: [EVERYTHING_SERVER, "stdio"],
    stderr: "ignore",
  };
}

/** server-filesystem over stdio, allowed to touch only `allowedDirs`. */
export function filesystemStdio(...allowedDirs: string[]): McpServerConfig {
  return {
    transport: "stdio",
    command: process.execPath,
    args: [FILESYSTEM_SERVER, ...allowedDirs],
    stderr: "ignore",
  };
}

/** A port nothing listens on now: listen on port 0, note the port, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** A server-everything process serving Streamable HTTP on `url`. */
export interface EverythingHttpServer {
  readonly port: number;
  readonly url: string;
  readonly pid: number;
  /** Session ids in the order the server initialized them. */
  readonly sessionsInitialized: string[];
  /** Session ids the server holds now (initialized, not yet closed). */
  readonly openSessions: Set<string>;
  /** SIGKILL the process and wait for it to be gone. Idempotent. */
  stop(): Promise<void>;
}

const children = new Set<ChildProcess>();

/** Start `server-everything streamableHttp` on `port` (default: a free one); resolves once it listens. */
export async function startEverythingHttp(port?: number): Promise<EverythingHttpServer> {
  const listenOn = port ?? (await freePort());
  const child = spawn(process.execPath, [EVERYTHING_SERVER, "streamableHttp"], {
    env: { ...process.env, PORT: String(listenOn) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  // Nothing to catch: `exited` never rejects.
  void exited.then(() => children.delete(child));
  const sessionsInitialized: string[] = [];
  const openSessions = new Set<string>();
  // The server logs `Session initialized with ID: <id>` and `Transport closed for session <id>, …` on stdout.
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const opened = /Session initialized with ID: (\S+)/.exec(line);
    if (opened) {
      sessionsInitialized.push(opened[1]!);
      openSessions.add(opened[1]!);
    }
    const closed = /Transport closed for session (\S+?),/.exec(line);
    if (closed) openSessions.delete(closed[1]!);
  });
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/listening on port/.test(stderr)) resolve();
    });
    child.once("error", reject);
    void exited.then(() => reject(new Error(`server-everything exited before listening: ${stderr.trim()}`)));
  });
  return {
    port: listenOn,
    url: `http://127.0.0.1:${listenOn}/mcp`,
    pid: child.pid!,
    sessionsInitialized,
    openSessions,
    stop: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Kill every server-everything process this module started that is still running (for afterAll). */
export async function stopAllHttpServers(): Promise<void> {
  await Promise.all(
    [...children].map((child) => {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      return gone;
    }),
  );
}

/**
 * The SDK Keel loads, noting the process id of every stdio server a transport starts (the transport forgets it
 * when it closes), so a test can tell which server processes Keel started and whether they still run.
 */
export async function pidRecordingSdk(): Promise<{ sdk: McpSdk; pids: number[] }> {
  const real = await loadMcpSdk();
  const pids: number[] = [];
  const sdk: McpSdk = {
    ...real,
    stdioTransport: (params) => {
      const transport = real.stdioTransport(params) as McpTransportLike & { start(): Promise<void> };
      const start = transport.start.bind(transport);
      transport.start = async () => {
        await start();
        if (typeof transport.pid === "number") pids.push(transport.pid);
      };
      return transport;
    },
  };
  return { sdk, pids };
}
