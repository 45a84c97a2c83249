import type { Pool, QueryResult, QueryResultRow } from "pg";
import { ERROR_CODES } from "../../errors/error-codes.js";
import { KeelError } from "../../errors/keel-error.js";
import type { HeldScope } from "../../sessions/enter-session-scope.js";
import { SESSION_SCHEMA_VERSION, type SessionScope } from "../../sessions/session-manager.js";
import type { StoreOutageWait } from "../../sessions/store-outage.js";
import { acquireAdvisorySessionLock } from "./advisory-session-lock.js";
import { checkSchemaVersion } from "./check-schema-version.js";
import { SessionLease } from "./session-lease.js";
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

/** Which session a scope holds, the token that lets a nested call re-enter it, the caller's abort signal, and
 * how long the scope waits out a store outage met inside it. */
export interface ScopeHold {
  readonly sessionId: string;
  readonly token: symbol;
  readonly signal: AbortSignal | undefined;
  readonly outage?: StoreOutageWait | undefined;
}

/**
 * Run `fn` holding the session across processes: take the advisory lock, load the state (creating the session
 * as the in-memory store does), run `fn`, write the state back, unlock. The caller already holds the session in
 * this process, so only one connection per session ever waits on the server. A lock lost with its connection
 * while `fn` runs is taken again (see {@link SessionLease}); the state goes back through the connection that holds
 * it, so it never lands while another process holds the session.
 */
export async function holdSessionScope<T>(
  store: SessionScopeStore,
  hold: ScopeHold,
  fn: (scope: SessionScope) => Promise<T>,
): Promise<T> {
  const { sessionId, token, signal, outage } = hold;
  const lease = await SessionLease.hold(
    (onLost, again) =>
      acquireAdvisorySessionLock(store.lockPool, `${store.schema}:${sessionId}`, {
        lockTimeoutMs: store.lockTimeoutMs,
        where: store.where,
        // Only the first take is the caller's to call off; taking a lost lock back is the scope's own business.
        signal: again ? undefined : signal,
        onLost,
      }),
    outage,
  );
  try {
    if (signal?.aborted) throw signal.reason;
    const state = await loadState(store, lease, sessionId);
    store.held.set(sessionId, { token, state });
    try {
      let result: T;
      try {
        result = await fn({ sessionId, state, token });
      } catch (error) {
        // Like the in-memory store, a failed scope still persists what it changed before failing.
        await saveState(store, lease, { sessionId, state }).catch(() => {});
        throw error;
      }
      await saveState(store, lease, { sessionId, state });
      return result;
    } finally {
      store.held.delete(sessionId);
    }
  } finally {
    await lease.release();
  }
}

/** One statement on the lock's connection, retried on conflicts, with failures typed. */
function onLease<R extends QueryResultRow>(
  store: SessionScopeStore,
  lease: SessionLease,
  statement: { operation: string; text: string; values: unknown[] },
): Promise<QueryResult<R>> {
  const { operation, text, values } = statement;
  return lease.withClient(
    operation,
    (client) => withConflictRetry(() => client.query<R>(text, values), store.where, operation),
    (error) => KeelError.isInstance(error) && error.code === ERROR_CODES.STORE_CONNECTION,
  );
}

async function loadState(
  store: SessionScopeStore,
  lease: SessionLease,
  sessionId: string,
): Promise<Record<string, unknown>> {
  // One round trip: the CTE creates the row or the select finds it; both read the same snapshot, so exactly
  // one branch answers.
  const result = await onLease<{ state: Record<string, unknown>; schema_version: number }>(store, lease, {
    operation: "session load",
    text: `with ins as (
           insert into ${store.quoted}.sessions (session_id, state, schema_version) values ($1, '{}', $2)
           on conflict (session_id) do nothing returning state, schema_version)
         select state, schema_version from ins
         union all select state, schema_version from ${store.quoted}.sessions where session_id = $1`,
    values: [sessionId, SESSION_SCHEMA_VERSION],
  });
  const row = result.rows[0] as { state: Record<string, unknown>; schema_version: number };
  checkSchemaVersion(row.schema_version, { schema: store.schema, table: "sessions", key: sessionId });
  return row.state;
}

async function saveState(
  store: SessionScopeStore,
  lease: SessionLease,
  session: Pick<SessionScope, "sessionId" | "state">,
): Promise<void> {
  const { sessionId, state } = session;
  // An update, not an upsert: a session deleted inside its own scope stays deleted.
  await onLease(store, lease, {
    operation: "session save",
    text: `update ${store.quoted}.sessions set state = $2, schema_version = $3, updated_at = now()
         where session_id = $1`,
    values: [sessionId, JSON.stringify(state), SESSION_SCHEMA_VERSION],
  });
}
