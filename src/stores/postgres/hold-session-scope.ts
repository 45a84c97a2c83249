import type { Pool, PoolClient } from "pg";
import type { HeldScope } from "../../sessions/enter-session-scope.js";
import { SESSION_SCHEMA_VERSION, type SessionScope } from "../../sessions/session-manager.js";
import { acquireAdvisorySessionLock } from "./advisory-session-lock.js";
import { checkSchemaVersion } from "./check-schema-version.js";
import { withConflictRetry } from "./to-store-error.js";

/** What {@link holdSessionScope} needs from its store. */
export interface SessionScopeStore {
  readonly lockPool: Pool;
  readonly schema: string;
  /** `schema`, quoted for SQL. */
  readonly quoted: string;
  /** Where the server is, without a password, for error hints. */
  readonly where: string;
  readonly lockTimeoutMs: number;
  /** Scopes held now, by session; a nested call with the holder's token finds its state here. */
  readonly held: Map<string, HeldScope>;
}

/** Which session a scope holds, the token that lets a nested call re-enter it, and the caller's abort signal. */
export interface ScopeHold {
  readonly sessionId: string;
  readonly token: symbol;
  readonly signal: AbortSignal | undefined;
}

/**
 * Run `fn` holding the session across processes: take the advisory lock, load the state (creating the session
 * as the in-memory store does), run `fn`, write the state back, unlock. The caller already holds the session in
 * this process, so only one connection per session ever waits on the server.
 */
export async function holdSessionScope<T>(
  store: SessionScopeStore,
  hold: ScopeHold,
  fn: (scope: SessionScope) => Promise<T>,
): Promise<T> {
  const { sessionId, token, signal } = hold;
  const lock = await acquireAdvisorySessionLock(store.lockPool, `${store.schema}:${sessionId}`, {
    lockTimeoutMs: store.lockTimeoutMs,
    where: store.where,
    signal,
  });
  try {
    if (signal?.aborted) throw signal.reason;
    const state = await loadState(store, lock.client, sessionId);
    store.held.set(sessionId, { token, state });
    try {
      let result: T;
      try {
        result = await fn({ sessionId, state, token });
      } catch (error) {
        // Like the in-memory store, a failed scope still persists what it changed before failing.
        await saveState(store, lock.client, { sessionId, state }).catch(() => {});
        throw error;
      }
      // Through the lock's own connection: if it died, the lock is gone too and the write must not land.
      await saveState(store, lock.client, { sessionId, state });
      return result;
    } finally {
      store.held.delete(sessionId);
    }
  } finally {
    await lock.release();
  }
}

async function loadState(
  store: SessionScopeStore,
  client: PoolClient,
  sessionId: string,
): Promise<Record<string, unknown>> {
  // One round trip: the CTE creates the row or the select finds it; both read the same snapshot, so exactly
  // one branch answers.
  const result = await withConflictRetry(
    () =>
      client.query<{ state: Record<string, unknown>; schema_version: number }>(
        `with ins as (
           insert into ${store.quoted}.sessions (session_id, state, schema_version) values ($1, '{}', $2)
           on conflict (session_id) do nothing returning state, schema_version)
         select state, schema_version from ins
         union all select state, schema_version from ${store.quoted}.sessions where session_id = $1`,
        [sessionId, SESSION_SCHEMA_VERSION],
      ),
    store.where,
    "session load",
  );
  const row = result.rows[0] as { state: Record<string, unknown>; schema_version: number };
  checkSchemaVersion(row.schema_version, { schema: store.schema, table: "sessions", key: sessionId });
  return row.state;
}

async function saveState(
  store: SessionScopeStore,
  client: PoolClient,
  session: Pick<SessionScope, "sessionId" | "state">,
): Promise<void> {
  const { sessionId, state } = session;
  // An update, not an upsert: a session deleted inside its own scope stays deleted.
  await withConflictRetry(
    () =>
      client.query(
        `update ${store.quoted}.sessions set state = $2, schema_version = $3, updated_at = now()
         where session_id = $1`,
        [sessionId, JSON.stringify(state), SESSION_SCHEMA_VERSION],
      ),
    store.where,
    "session save",
  );
}
