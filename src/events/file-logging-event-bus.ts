import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { EventBus, RuntimeEvent } from "../contracts/runtime-event.js";
import { getLogger } from "../logging/logger.js";
import { redactSecrets } from "../logging/redact-secrets.js";
import { ForwardingEventBus } from "./forwarding-event-bus.js";

/** The keys `file_logging` redacts unless told otherwise. */
export const DEFAULT_REDACT_KEYS: readonly string[] = [
  "api_key",
  "authorization",
  "token",
  "secret",
  "password",
];

/** Options of {@link FileLoggingEventBus}. */
export interface FileLoggingEventBusOptions {
  /** The bus every event is forwarded to first; subscriptions and history are its own. */
  inner: EventBus;
  /** The JSON Lines file events are appended to; its directory is created on the first write. */
  logPath: string;
  /** Glob patterns (`*`, `?`) of event names to log; absent or null logs every name, `[]` none. */
  includeEvents?: readonly string[] | null;
  /** Glob patterns of event names never logged; they win over `includeEvents`. */
  excludeEvents?: readonly string[];
  /** Payload keys, at any depth, whose values are written as `"[redacted]"`; matched ignoring case, `_` and `-`. */
  redactKeys?: readonly string[];
  /** Longer strings are cut to this many characters and marked. Default 10,000. */
  maxValueLength?: number;
}

const REDACTED = "[redacted]";
// Key and name decisions are cached; the caps keep a stream of arbitrary user keys from growing them forever.
const CACHE_LIMIT = 4096;

/**
 * An event bus (type `file_logging`) that forwards every event to an inner bus and then appends it as one JSON
 * line `{kind, runId, sessionId, agentId, sequence, timestamp, payload}` to a file. Lines are serialised at
 * publish time (later mutation of a payload cannot change them), written in order and in batches with one
 * `appendFile` at a time, so publishing never waits for the disk. IO errors are logged and swallowed.
 */
export class FileLoggingEventBus extends ForwardingEventBus {
  /** The file lines are appended to. */
  readonly logPath: string;
  private readonly include: RegExp | null;
  private readonly exclude: RegExp | null;
  private readonly redactKeys: ReadonlySet<string>;
  private readonly maxValueLength: number;
  private readonly nameDecisions = new Map<string, boolean>();
  private readonly keyDecisions = new Map<string, boolean>();
  private lines: string[] = [];
  private writing: Promise<void> | null = null;
  private directoryReady = false;
  // One function for the whole bus: JSON.stringify calls it for every key, so it must not be made per event.
  private readonly replacer = (key: string, value: unknown): unknown => {
    // Array indices (and the root's empty key) are never redacted; skipping them keeps the key cache small.
    const first = key.charCodeAt(0);
    if (!(first >= 48 && first <= 57) && key !== "" && this.isRedacted(key)) return REDACTED;
    if (typeof value === "string" && value.length > this.maxValueLength) return this.truncate(value);
    return value;
  };

  constructor(options: FileLoggingEventBusOptions) {
    super(options.inner);
    this.logPath = options.logPath;
    this.include = options.includeEvents == null ? null : globsToRegExp(options.includeEvents);
    this.exclude = options.excludeEvents?.length ? globsToRegExp(options.excludeEvents) : null;
    this.redactKeys = new Set((options.redactKeys ?? DEFAULT_REDACT_KEYS).map(normaliseKey));
    this.maxValueLength = options.maxValueLength ?? 10_000;
  }

  /** Forward to the inner bus, then queue the event's line if its name passes the filters. */
  publish(event: RuntimeEvent): void {
    this.inner.publish(event);
    if (!this.isLogged(event.kind)) return;
    let line: string;
    try {
      line = JSON.stringify(
        {
          kind: event.kind,
          runId: event.runId,
          sessionId: event.sessionId,
          agentId: event.agentId,
          sequence: event.sequence,
          timestamp: event.timestamp,
          payload: event.payload,
        },
        this.replacer,
      );
    } catch (error) {
      getLogger().error(`file_logging: event "${event.kind}" could not be serialised and is not logged`, {
        event: event.kind,
        error,
      });
      return;
    }
    // Known secret values (an API key a gateway echoed into an error) are redacted wherever they sit.
    this.lines.push(redactSecrets(line));
    if (this.writing === null) this.writing = this.writeLoop();
  }

  /** Wait for the inner bus's handlers and for every queued line to reach the file (or fail). */
  override async flush(): Promise<void> {
    await this.inner.flush();
    while (this.writing !== null) await this.writing;
  }

  /** Flush, then close the inner bus. */
  override async close(): Promise<void> {
    await this.flush();
    await this.inner.close();
  }

  private async writeLoop(): Promise<void> {
    // Yield one turn so every event published in this burst goes out in the same write.
    await nextTurn();
    try {
      while (this.lines.length > 0) {
        const batch = this.lines;
        this.lines = [];
        await this.append(`${batch.join("\n")}\n`, batch.length);
      }
    } finally {
      this.writing = null;
    }
  }

  private async append(text: string, count: number): Promise<void> {
    try {
      if (!this.directoryReady) {
        await mkdir(dirname(this.logPath), { recursive: true });
        this.directoryReady = true;
      }
      await appendFile(this.logPath, text, "utf8");
    } catch (error) {
      getLogger().error(`file_logging: could not write ${count} event line(s) to ${this.logPath}`, { error });
    }
  }

  private isLogged(kind: string): boolean {
    let logged = this.nameDecisions.get(kind);
    if (logged === undefined) {
      logged = (this.include === null || this.include.test(kind)) && !(this.exclude?.test(kind) ?? false);
      remember(this.nameDecisions, kind, logged);
    }
    return logged;
  }

  private isRedacted(key: string): boolean {
    if (this.redactKeys.size === 0) return false;
    let redacted = this.keyDecisions.get(key);
    if (redacted === undefined) {
      redacted = this.redactKeys.has(normaliseKey(key));
      remember(this.keyDecisions, key, redacted);
    }
    return redacted;
  }

  private truncate(value: string): string {
    return `${value.slice(0, this.maxValueLength)}…[truncated ${value.length - this.maxValueLength} chars]`;
  }
}

function remember(cache: Map<string, boolean>, key: string, value: boolean): void {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
}

/** `apiKey`, `api_key`, `API-KEY` → `apikey`, so snake_case config names catch camelCase payload keys. */
function normaliseKey(key: string): string {
  return key.toLowerCase().replace(/[_-]/g, "");
}

/** One anchored expression for a list of globs; an empty list matches nothing. */
function globsToRegExp(patterns: readonly string[]): RegExp {
  if (patterns.length === 0) return /(?!)/;
  const alternatives = patterns.map((pattern) =>
    pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, "."),
  );
  return new RegExp(`^(?:${alternatives.join("|")})$`);
}
