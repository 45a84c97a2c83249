import { describe, expect, it } from "vitest";
import { toStoreError } from "./to-store-error.js";

const WHERE = "postgres://127.0.0.1:5432/test";

/** An error as pg gives it: a message, and a SQLSTATE or errno `code` when it has one. */
function pgError(message: string, code?: string, cause?: unknown): Error {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), code ? { code } : {});
}

describe("toStoreError", () => {
  it.each([
    ["server shutdown", pgError("terminating connection due to administrator command", "57P01")],
    ["crash shutdown", pgError("terminating connection due to unexpected postmaster exit", "57P02")],
    ["cannot connect now", pgError("the database system is starting up", "57P03")],
    ["too many clients while everyone reconnects", pgError("sorry, too many clients already", "53300")],
    ["connection exception class", pgError("connection failure", "08006")],
    ["a socket closed under a query", pgError("Connection terminated unexpectedly")],
    [
      "a client used after its connection failed",
      pgError("Client has encountered a connection error and is not queryable"),
    ],
    ["a client the pool discarded", pgError("Client was closed and is not queryable")],
    ["a pool that could not connect in time", pgError("timeout exceeded when trying to connect")],
    ["a connect timeout", pgError("Connection terminated due to connection timeout")],
    ["refused", pgError("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED")],
    ["reset", pgError("read ECONNRESET", "ECONNRESET")],
    ["broken pipe", pgError("write EPIPE", "EPIPE")],
    [
      "a socket error as the cause",
      pgError("query failed", undefined, pgError("read ECONNRESET", "ECONNRESET")),
    ],
  ])("classes %s as store.connection, retryable, with a hint naming the server", (_, error) => {
    const typed = toStoreError(error, WHERE, "saveRun");
    expect(typed.code).toBe("store.connection");
    expect(typed.retryable).toBe(true);
    expect(typed.hint).toContain(WHERE);
  });

  it("keeps a statement's own failure a store.query that is not retried", () => {
    const typed = toStoreError(pgError('relation "x" does not exist', "42P01"), WHERE, "getRun");
    expect(typed.code).toBe("store.query");
    expect(typed.retryable).toBe(false);
  });
});
