/**
 * The Postgres store's checkpoint commits alone, without the run loop around them: the commits of one durable S1
 * run (S4's workload) are recorded, then written again as `runs` fresh runs into a schema of their own, through
 * one connection. Postgres is `127.0.0.1:5432/test` unless `$PGURL` or `$DATABASE_URL` says otherwise. Not part
 * of `npm run bench`.
 *
 *   node bench/postgres-commit-cost.mjs [runs]     # per commit: wall µs, this process's CPU, the server's, WAL bytes
 *
 * The server's CPU is its backend's `/proc/<pid>/schedstat`, so it is printed only when the server runs on this
 * machine and this user may read it. WAL bytes are the server's whole WAL between the first and last commit, so
 * other work on the server counts too; on a quiet server they are the same every time. The first 150 runs warm
 * the JIT up and are not counted (`WARMUP_RUNS`).
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { now } from "./measure.mjs";
import { recordCommits, renamed } from "./recorded-commits.mjs";
import { openBenchStores } from "./stores.mjs";

const runs = Number(process.argv[2] ?? 200);
const WARMUP_RUNS = Number(process.env.WARMUP_RUNS ?? 150);
const { PostgresSessionManager, resolveConnectionString } = await import("../dist/stores/postgres/index.js");
const { default: pg } = await import("pg");

const { stores, close } = await openBenchStores("keel-pg-commit");
const { session } = stores.find((entry) => entry.store === "postgres");
const pool = new pg.Pool({ connectionString: resolveConnectionString(), max: 1 });
pool.on("error", () => {});
const schema = `keel_pg_commit_${randomBytes(6).toString("hex")}`;
try {
  const recorded = await recordCommits(session);
  // One connection, so one backend does all the work and its CPU time can be read.
  const store = await PostgresSessionManager.open({ pool, schema });
  const backend = (await pool.query("select pg_backend_pid() as pid")).rows[0].pid;
  const replay = async (prefix, count) => {
    for (let index = 0; index < count; index++) {
      for (const commit of renamed(recorded, `${prefix}${index}`)) await store.commitCheckpoint(commit);
    }
  };
  await replay("warm-", WARMUP_RUNS);
  const walBefore = await walPosition();
  const serverBefore = serverCpuNs(backend);
  const cpuBefore = process.cpuUsage();
  const start = now();
  await replay("run-", runs);
  const wallMs = now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  const serverAfter = serverCpuNs(backend);
  const walBytes = Number(
    (await pool.query("select pg_wal_lsn_diff(pg_current_wal_lsn(), $1) as bytes", [walBefore])).rows[0]
      .bytes,
  );
  await store.close();
  const commits = runs * recorded.length;
  if (commits > 0) {
    const perCommit = (value) => (value / commits).toFixed(1);
    const server =
      serverBefore === null || serverAfter === null
        ? ""
        : `, server ${perCommit((serverAfter - serverBefore) / 1000)} µs CPU`;
    console.log(
      `${commits} commits (${recorded.length} a run): ${perCommit(wallMs * 1000)} µs wall, ` +
        `${perCommit(cpu.user)} µs user, ${perCommit(cpu.system)} µs system${server}, ` +
        `${perCommit(walBytes)} WAL bytes per commit`,
    );
  }
} finally {
  await pool.query(`drop schema if exists ${schema} cascade`).catch(() => {});
  await pool.end();
  await close();
}

async function walPosition() {
  return (await pool.query("select pg_current_wal_lsn()::text as lsn")).rows[0].lsn;
}

/** The backend's time on a CPU so far, in ns, or null when its `/proc` entry cannot be read from here. */
function serverCpuNs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]);
  } catch {
    return null;
  }
}
