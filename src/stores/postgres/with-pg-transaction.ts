import type { Pool, PoolClient } from "pg";

/**
 * Run `fn` on one pooled connection inside `BEGIN … COMMIT`, rolling back when it throws (the error it threw is
 * what the caller sees). A connection that could not roll back is in an unknown state, so it is destroyed rather
 * than returned to the pool.
 */
export async function withPgTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("begin");
    try {
      const result = await fn(client);
      await client.query("commit");
      return result;
    } catch (error) {
      await client.query("rollback").catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw error;
    }
  } finally {
    client.release(broken);
  }
}
