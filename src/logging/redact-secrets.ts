/**
 * The secret values this process knows (API keys, auth header values), registered when a provider loads them,
 * and the one function that takes them out of text Keel writes: error messages, event payloads, log lines, run
 * folder files. A gateway that echoes the key in its error body must not put it into any of those.
 */

/** What a secret, or any part of one, is replaced with. */
export const REDACTED_SECRET = "[redacted]";
/** Shorter values are not treated as secrets: real keys are far longer, and redacting "test" would mangle text. */
export const MIN_SECRET_LENGTH = 8;
/** Any run of this many characters of a secret counts as a leak of it, so a cut or prefixed key is caught too. */
export const SECRET_WINDOW = 10;

/** Header names whose values are credentials (matched in any case). */
const SECRET_HEADER = /auth|api[-_]?key|token|secret|cookie|password|credential|session/i;

const secrets = new Set<string>();
let index: SecretIndex | null = null;

interface SecretIndex {
  /** Secrets shorter than the window, found only whole. */
  short: string[];
  /** Rolling hash of every window of every longer secret → where that window sits in which secret. */
  windows: Map<number, [secret: string, offset: number][]>;
}

/** Remember a secret value; later text is redacted of it. Short or empty values are ignored. */
export function registerSecret(value: string | undefined): void {
  const secret = value?.trim();
  if (!secret || secret.length < MIN_SECRET_LENGTH || secrets.has(secret)) return;
  secrets.add(secret);
  index = null;
}

/**
 * Register the values of credential headers (`authorization`, `x-api-key`, `cookie`, …): the whole value, and the
 * token after an auth scheme (`Bearer <token>`, `Basic <token>`), since the token alone can be echoed.
 */
export function registerHeaderSecrets(headers: Readonly<Record<string, string>> | undefined): void {
  if (!headers) return;
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== "string" || !SECRET_HEADER.test(name)) continue;
    registerSecret(value);
    const scheme = /^\s*[A-Za-z][\w-]*\s+(\S.*)$/.exec(value);
    if (scheme) registerSecret(scheme[1]);
  }
}

/** Whether any secret is registered: callers skip work on hot paths when none is. */
export function hasSecrets(): boolean {
  return secrets.size > 0;
}

/** Forget every registered secret (tests only). */
export function clearSecretsForTesting(): void {
  secrets.clear();
  index = null;
}

/**
 * The text with every registered secret, and every run of {@link SECRET_WINDOW} or more of its characters,
 * replaced by `[redacted]`. Returns the same string when nothing matched; without secrets it costs one check.
 * One pass with a rolling hash over the text, so it stays linear in the text's length whatever the secrets.
 */
export function redactSecrets(text: string): string {
  if (secrets.size === 0 || text.length < MIN_SECRET_LENGTH) return text;
  const found = findSecretRanges(text, secretIndex());
  if (found.length === 0) return text;
  found.sort((a, b) => a[0] - b[0]);
  let out = "";
  let at = 0;
  for (const [start, end] of found) {
    if (end <= at) continue;
    if (start > at) out += text.slice(at, start);
    if (start >= at) out += REDACTED_SECRET;
    at = end;
  }
  return out + text.slice(at);
}

/**
 * A value with its strings redacted, at any depth (plain objects, arrays, errors); the same reference when
 * nothing in it changed, so clean payloads are never copied.
 */
export function redactSecretsIn<T>(value: T): T {
  if (secrets.size === 0) return value;
  return redactValue(value, 0) as T;
}

/** How deep {@link redactSecretsIn} looks; it also ends cycles. */
const MAX_DEPTH = 8;

function redactValue(value: unknown, depth: number): unknown {
  if (typeof value === "string") return redactSecrets(value);
  if (typeof value !== "object" || value === null || depth > MAX_DEPTH) return value;
  // An error's message, stack and cause chain; a copy (a plain Error of the same name) only when one had a secret.
  if (value instanceof Error) return redactError(value, depth);
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    value.forEach((item, position) => {
      const redacted = redactValue(item, depth + 1);
      if (redacted !== item) {
        copy ??= [...value];
        copy[position] = redacted;
      }
    });
    return copy ?? value;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  let copy: Record<string, unknown> | null = null;
  for (const [key, item] of Object.entries(value)) {
    const redacted = redactValue(item, depth + 1);
    if (redacted !== item) {
      copy ??= { ...(value as Record<string, unknown>) };
      copy[key] = redacted;
    }
  }
  return copy ?? value;
}

function redactError(error: Error, depth: number): Error {
  const message = redactSecrets(error.message);
  const stack = error.stack === undefined ? undefined : redactSecrets(error.stack);
  const cause = error.cause === undefined ? undefined : redactValue(error.cause, depth + 1);
  if (message === error.message && stack === error.stack && cause === error.cause) return error;
  const copy = new Error(message, cause === undefined ? undefined : { cause });
  copy.name = error.name;
  if (stack === undefined) delete copy.stack;
  else copy.stack = stack;
  return copy;
}

// 32-bit polynomial rolling hash; Math.imul keeps every step in the ring of integers mod 2^32.
const BASE = 0x01000193;

function secretIndex(): SecretIndex {
  if (index !== null) return index;
  const built: SecretIndex = { short: [], windows: new Map() };
  for (const secret of secrets) {
    if (secret.length < SECRET_WINDOW) {
      built.short.push(secret);
      continue;
    }
    let hash = hashOf(secret, 0);
    for (let offset = 0; ; offset++) {
      const list = built.windows.get(hash);
      if (list) list.push([secret, offset]);
      else built.windows.set(hash, [[secret, offset]]);
      if (offset + SECRET_WINDOW >= secret.length) break;
      hash = roll(hash, secret.charCodeAt(offset), secret.charCodeAt(offset + SECRET_WINDOW));
    }
  }
  index = built;
  return built;
}

/** Where secrets (whole short ones, windows of long ones grown to the longest match) occur in the text. */
function findSecretRanges(text: string, secretsIndex: SecretIndex): [number, number][] {
  const found: [number, number][] = [];
  for (const secret of secretsIndex.short) {
    for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + secret.length)) {
      found.push([at, at + secret.length]);
    }
  }
  if (secretsIndex.windows.size === 0 || text.length < SECRET_WINDOW) return found;
  let hash = hashOf(text, 0);
  let coveredEnd = 0;
  for (let at = 0; ; at++) {
    // A window inside a match already found adds nothing.
    if (at + SECRET_WINDOW > coveredEnd) {
      for (const [secret, offset] of secretsIndex.windows.get(hash) ?? []) {
        if (!sameWindow(text, at, secret, offset)) continue;
        let start = at;
        let from = offset;
        while (start > 0 && from > 0 && text.charCodeAt(start - 1) === secret.charCodeAt(from - 1)) {
          start--;
          from--;
        }
        let end = at + SECRET_WINDOW;
        let to = offset + SECRET_WINDOW;
        while (end < text.length && to < secret.length && text.charCodeAt(end) === secret.charCodeAt(to)) {
          end++;
          to++;
        }
        // A secret with a space in it ("Basic <token>") should not swallow the space before or after its piece.
        while (start < end && isSpace(text.charCodeAt(start))) start++;
        while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
        if (end > start) found.push([start, end]);
        if (end > coveredEnd) coveredEnd = end;
      }
    }
    if (at + SECRET_WINDOW >= text.length) break;
    hash = roll(hash, text.charCodeAt(at), text.charCodeAt(at + SECRET_WINDOW));
  }
  return found;
}

function hashOf(text: string, start: number): number {
  let hash = 0;
  for (let i = start; i < start + SECRET_WINDOW; i++) hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

/** BASE^(window − 1): the weight of the character leaving the window. */
const LEADING_WEIGHT = (() => {
  let weight = 1;
  for (let i = 1; i < SECRET_WINDOW; i++) weight = Math.imul(weight, BASE);
  return weight;
})();

function roll(hash: number, leaving: number, entering: number): number {
  return (Math.imul((hash - Math.imul(leaving, LEADING_WEIGHT)) | 0, BASE) + entering) | 0;
}

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

// biome-ignore lint/complexity/useMaxParams: inner loop of every logged line's scan; an object per hash hit would allocate on the hot path
function sameWindow(text: string, at: number, secret: string, offset: number): boolean {
  for (let i = 0; i < SECRET_WINDOW; i++) {
    if (text.charCodeAt(at + i) !== secret.charCodeAt(offset + i)) return false;
  }
  return true;
}
