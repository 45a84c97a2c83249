/** What the runs API answers for a refusal: `{error: {code, message, hint}}`. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly hint: string;

  constructor(status: number, body: { code?: string; message?: string; hint?: string }) {
    super(body.message ?? `The server answered ${status}`);
    this.status = status;
    this.code = body.code ?? "http.error";
    this.hint = body.hint ?? "";
  }
}

const TOKEN_KEY = "keel.console.token";

/**
 * The bearer token for this tab. A `?token=` in the address is taken once, kept in sessionStorage (gone when the
 * tab closes) and removed from the address, so it is not left in the history or a shared screenshot.
 */
export function takeToken(): string | null {
  const url = new URL(location.href);
  const given = url.searchParams.get("token");
  if (given !== null) {
    sessionStorage.setItem(TOKEN_KEY, given);
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

export function saveToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** Called when the server refuses the token, so the page can ask for another. */
let onUnauthorized: () => void = () => {};
export function whenUnauthorized(callback: () => void): void {
  onUnauthorized = callback;
}

/** The API lives beside the page: the page is served at the API's base path. */
const base = () => new URL(".", location.href);

export async function request(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token !== null) headers.set("authorization", `Bearer ${token}`);
  if (init.body !== undefined) headers.set("content-type", "application/json");
  const response = await fetch(new URL(path, base()), { ...init, headers });
  if (response.ok) return response;
  const body = (await response.json().catch(() => ({}))) as { error?: Record<string, string> };
  const error = new ApiError(response.status, body.error ?? {});
  if (response.status === 401) onUnauthorized();
  throw error;
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  return (await request(path, signal === undefined ? {} : { signal })).json() as Promise<T>;
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  return (await request(path, { method: "POST", body: JSON.stringify(body) })).json() as Promise<T>;
}

export type * from "./wire-types.js";
