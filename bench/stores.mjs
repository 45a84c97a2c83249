/**
 * The session stores S4 compares, each in a place of its own: files in a fresh temp dir, Postgres in a fresh
 * schema. `close()` removes both. Postgres is `127.0.0.1:5432/test` unless `$PGURL` or `$DATABASE_URL` says
 * otherwise.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const STORE_NAMES = ["in_memory", "jsonl_file", "sqlite", "postgres"];

/** `[{ store, session }]` in {@link STORE_NAMES} order (`session` is the runtime config's entry) and `close()`. */
export async function openBenchStores(prefix) {
  const dir = await mkdtemp(join(tmpdir(), `${prefix}-`));
  const schema = `${prefix.replaceAll("-", "_")}_${randomBytes(6).toString("hex")}`;
  const stores = [
    { store: "in_memory", session: undefined },
    { store: "jsonl_file", session: { type: "jsonl_file", config: { root_dir: join(dir, "jsonl") } } },
    { store: "sqlite", session: { type: "sqlite", config: { db_path: join(dir, "bench.db") } } },
    { store: "postgres", session: { type: "postgres", config: { schema } } },
  ];
  const close = async () => {
    await rm(dir, { recursive: true, force: true });
    await dropPostgresSchema(schema);
  };
  return { stores, close };
}

/** Drop the schema (and nothing else); nothing to do when no Postgres server answers. */
async function dropPostgresSchema(schema) {
  const { resolveConnectionString } = await import("../dist/stores/postgres/index.js");
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: resolveConnectionString(), max: 1 });
  pool.on("error", () => {});
  try {
    await pool.query(`drop schema if exists ${schema} cascade`);
  } catch (error) {
    if (error.code !== "ECONNREFUSED") throw error;
  } finally {
    await pool.end();
  }
}
