import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { createServer } from "node:net";
import { promisify } from "node:util";
import pg from "pg";

/**
 * A PostgreSQL cluster of a test file's own, made with Debian's postgresql-common on a free port, that the test
 * may stop and start as a real server restart, and drops at the end. The shared server is never touched.
 * Making a cluster needs root.
 */

const run = promisify(execFile);
/** Every throwaway cluster is named this and the pid of the test process that made it. */
const NAME = "keelfault";

export interface ThrowawayPostgres {
  /** Why this machine cannot make a cluster, or null when it can. */
  readonly reason: string | null;
  /** The cluster's URL (its port is known once `create` resolved). */
  url(): string;
  /** Drop what killed test processes left behind, make the cluster on a free port, and start it. */
  create(options?: { maxConnections?: number }): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Resolves with the moment (`performance.now()`) the server first answers a query, polling every 20 ms. */
  answering(): Promise<number>;
  /** Stop and drop the cluster; a failure is printed, not thrown. */
  drop(): Promise<void>;
}

/** A throwaway cluster named after `label`, so that two test files in one process do not share one. */
export function throwawayPostgres(label: string): ThrowawayPostgres {
  const reason = unavailableReason();
  const version = reason === null ? readdirSync("/etc/postgresql").sort().at(-1)! : "";
  const cluster = `${NAME}${process.pid}${label}`;
  let port = 0;
  const ctl = async (action: "start" | "stop") => {
    await run("pg_ctlcluster", ["--skip-systemctl-redirect", version, cluster, action]);
  };
  const url = () => `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    reason,
    url,
    create: async (options = {}) => {
      await dropLeftovers();
      port = await freePort();
      const settings = ["-o", `max_connections=${options.maxConnections ?? 250}`];
      await run("pg_createcluster", [
        version,
        cluster,
        "-p",
        String(port),
        ...settings,
        "--",
        "--auth=trust",
      ]);
      await ctl("start");
    },
    stop: () => ctl("stop"),
    start: () => ctl("start"),
    answering: () => answering(url()),
    drop: async () => {
      await run("pg_dropcluster", ["--stop", version, cluster]).catch((error: Error) => {
        console.log(`could not drop the throwaway cluster ${cluster}: ${error.message}`);
      });
    },
  };
}

function unavailableReason(): string | null {
  if (process.getuid?.() !== 0) return "not running as root, which pg_createcluster needs";
  if (!existsSync("/usr/bin/pg_createcluster")) return "pg_createcluster is not installed";
  if (!existsSync("/etc/postgresql") || readdirSync("/etc/postgresql").length === 0)
    return "no PostgreSQL version under /etc/postgresql";
  return null;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Drop the clusters of test processes that were killed before their afterAll. */
async function dropLeftovers(): Promise<void> {
  const { stdout } = await run("pg_lsclusters", ["-h"]);
  const pattern = new RegExp(`^${NAME}(\\d+)`);
  for (const line of stdout.split("\n")) {
    const [clusterVersion, name] = line.split(/\s+/);
    const pid = Number(pattern.exec(name ?? "")?.[1]);
    if (!pid || isAlive(pid)) continue;
    await run("pg_dropcluster", ["--stop", clusterVersion!, name!]).catch(() => {});
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function answering(url: string): Promise<number> {
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.query("select 1");
      return performance.now();
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await client.end().catch(() => {});
    }
  }
}
