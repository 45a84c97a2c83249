import { createHash } from "node:crypto";
import type { RunRecord } from "../contracts/run-types.js";

/**
 * Who a request speaks for. Each bearer token is a tenant; without a token (loopback only) every request is the
 * one local tenant. The tenant is written into the session id of every run the server starts, so the store
 * itself says whose a run is: it survives a restart, and two tenants naming the same session never share it.
 */
export interface Tenant {
  /** The prefix of this tenant's session ids in the store. */
  readonly prefix: string;
}

const SEPARATOR = "~";

export function tenantOf(token: string | undefined): Tenant {
  if (token === undefined) return { prefix: `local${SEPARATOR}` };
  // A digest, so the store never holds the token itself.
  const digest = createHash("sha256").update(token).digest("hex").slice(0, 24);
  return { prefix: `t${digest}${SEPARATOR}` };
}

/** The store's session id for a session the client names. */
export function storedSessionId(tenant: Tenant, sessionId: string): string {
  return tenant.prefix + sessionId;
}

/** The session id as the client named it. */
export function clientSessionId(tenant: Tenant, stored: string): string {
  return stored.startsWith(tenant.prefix) ? stored.slice(tenant.prefix.length) : stored;
}

export function ownsRun(tenant: Tenant, record: Pick<RunRecord, "sessionId">): boolean {
  return record.sessionId.startsWith(tenant.prefix);
}

/** A run record as its tenant sees it. */
export function presentRecord(tenant: Tenant, record: RunRecord): RunRecord {
  return { ...record, sessionId: clientSessionId(tenant, record.sessionId) };
}
