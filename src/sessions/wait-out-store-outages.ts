import { isDeepStrictEqual } from "node:util";
import type { SessionManager, SessionScope, SessionScopeOptions } from "./session-manager.js";
import type { StoreOutageWait } from "./store-outage.js";

/**
 * `store` for one run that waits out a store outage instead of failing on it: every call is retried through
 * `outage` while the store is down. The writes a run makes are safe to repeat — upserts, appends keyed by sequence
 * or index — except the session's messages and artifacts, which are appended; a retry of those first looks
 * whether the attempt that failed landed after all (the server may commit and then lose the connection before
 * it answers). `session()` is retried only while its lock is being taken: once the scope ran, the store waits out
 * the rest itself through the scope's `outage` option.
 */
export function waitOutStoreOutages(store: SessionManager, outage: StoreOutageWait): SessionManager {
  const appendMessages: SessionManager["appendMessages"] = (sessionId, messages) =>
    appendOnce(outage, "appendMessages", {
      append: () => store.appendMessages(sessionId, messages),
      landed: async () => endsWith(await store.loadMessages(sessionId), messages),
    });
  const overrides: Partial<SessionManager> = {
    session: <T>(
      sessionId: string,
      fn: (scope: SessionScope) => Promise<T>,
      options?: SessionScopeOptions,
    ) => {
      let entered = false;
      const inScope = (scope: SessionScope) => {
        entered = true;
        return fn(scope);
      };
      return outage.run("session", () => store.session(sessionId, inScope, { ...options, outage }), {
        retryIf: () => !entered,
      });
    },
    appendMessages,
    appendMessage: (sessionId, message) => appendMessages(sessionId, [message]),
    saveArtifact: (sessionId, artifact) =>
      appendOnce(outage, "saveArtifact", {
        append: () => store.saveArtifact(sessionId, artifact),
        landed: async () => endsWith(await store.listArtifacts(sessionId), [artifact]),
      }),
    close: () => store.close(),
  };
  return new Proxy(store, {
    get(target, key) {
      const own = overrides[key as keyof SessionManager];
      if (own !== undefined) return own;
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) =>
        outage.run(String(key), () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
    },
  });
}

/** An append retried only if the failed attempt did not land. */
function appendOnce(
  outage: StoreOutageWait,
  operation: string,
  write: { append: () => Promise<void>; landed: () => Promise<boolean> },
): Promise<void> {
  let tried = false;
  return outage.run(operation, async () => {
    if (tried && (await write.landed())) return;
    tried = true;
    await write.append();
  });
}

/** Whether `stored` ends with `values` as a store gives them back (no `undefined` properties). */
function endsWith(stored: readonly unknown[], values: readonly unknown[]): boolean {
  if (values.length === 0 || stored.length < values.length) return false;
  return isDeepStrictEqual(stored.slice(-values.length), JSON.parse(JSON.stringify(values)));
}
