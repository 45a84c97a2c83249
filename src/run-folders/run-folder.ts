import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";
import type { RunFolderHandle } from "../contracts/run-folder-handle.js";
import type { RuntimeEvent } from "../contracts/runtime-event.js";
import { isToolResult } from "../contracts/tool.js";
import { getLogger } from "../logging/logger.js";
import { redactSecrets } from "../logging/redact-secrets.js";
import { runFolderName } from "../sandbox/sandbox-provider.js";
import { formatToolResult } from "../tools/format-tool-result.js";

/** One line of `logs/tools.jsonl`: a finished call, without its arguments or its data. */
export interface ToolLogLine {
  toolCallId: string;
  toolId: string;
  /** The config entry the tool was loaded from (a toolset's id), or null for a tool given as code. */
  toolset: string | null;
  status: "succeeded" | "failed" | "cancelled";
  startedAt: string;
  durationMs: number;
  summary: string;
  artifacts: { id: string; name: string; path?: string; bytes?: number }[];
  error?: { code: string; message: string; rule?: string };
}

/** Longest summary a log line carries. */
export const MAX_SUMMARY_CHARS = 200;
const MAX_VALUE_CHARS = 500;
const REDACTED = "[redacted]";
const SECRET_KEY = /api_?key|authori[sz]ation|token|secret|password|cookie|credential/i;
/** Payload keys whose values are data, shown in `events.jsonl` only as a bounded summary. */
const DATA_KEYS = new Set([
  "params",
  "arguments",
  "result",
  "data",
  "payload",
  "output",
  "content",
  "messages",
]);

/**
 * A run's folder: `<root>/runs/<run-id>/{logs/tools.jsonl, logs/errors.jsonl, events.jsonl, workspace/,
 * deliverables/, archive/}`. Made when the run starts; every write is appended synchronously (the files stay
 * open until {@link close}), so they are whole up to the last finished call whatever happens to the process.
 * A failed write is logged, never thrown: the run's outcome does not depend on its log files.
 */
export class RunFolder implements RunFolderHandle {
  readonly dir: string;
  readonly workspaceDir: string;
  readonly deliverablesDir: string;
  readonly archiveDir: string;
  readonly logsDir: string;
  private warned = false;
  /** The log files this folder appends to, opened on first use and kept open until {@link close}. */
  private readonly appending = new Map<string, number>();

  constructor(
    rootDir: string,
    readonly runId: string,
  ) {
    this.dir = path.join(path.resolve(rootDir), "runs", runFolderName(runId));
    this.workspaceDir = path.join(this.dir, "workspace");
    this.deliverablesDir = path.join(this.dir, "deliverables");
    this.archiveDir = path.join(this.dir, "archive");
    this.logsDir = path.join(this.dir, "logs");
  }

  /** Create the folder and its subfolders (idempotent: a resumed run keeps its folder). */
  open(): this {
    for (const dir of [this.workspaceDir, this.deliverablesDir, this.archiveDir, this.logsDir])
      mkdirSync(dir, { recursive: true });
    return this;
  }

  /** A finished call: one line in `tools.jsonl`, and one in `errors.jsonl` if it did not succeed. */
  recordTool(line: ToolLogLine): void {
    this.append(path.join(this.logsDir, "tools.jsonl"), `${JSON.stringify(line)}\n`);
    if (line.status !== "succeeded") {
      const error: Record<string, unknown> = {
        at: new Date().toISOString(),
        toolCallId: line.toolCallId,
        toolId: line.toolId,
        status: line.status,
        code: line.error?.code ?? "tool.error",
        message: line.error?.message ?? "failed",
      };
      if (line.error?.rule !== undefined) error.rule = line.error.rule;
      this.append(path.join(this.logsDir, "errors.jsonl"), `${JSON.stringify(error)}\n`);
    }
  }

  /** Store a large output under `archive/`; returns its path relative to the run folder, or undefined. */
  writeArchive(fileName: string, content: string): string | undefined {
    try {
      writeFileSync(path.join(this.archiveDir, fileName), content);
      return `archive/${fileName}`;
    } catch (error) {
      this.warn(error);
      return undefined;
    }
  }

  /** Append text to a file under `archive/` (e.g. `memory-candidates.jsonl`). */
  appendArchive(fileName: string, text: string): void {
    this.append(path.join(this.archiveDir, path.basename(fileName)), text);
  }

  /** Append the run's events to `events.jsonl`: sequence, kind, time, and the payload with data summarised. */
  writeEvents(events: readonly RuntimeEvent[]): void {
    if (events.length === 0) return;
    let text = "";
    for (const event of events) {
      text += `${JSON.stringify({
        sequence: event.sequence,
        kind: event.kind,
        timestamp: new Date(event.timestampMs).toISOString(),
        payload: summarizePayload(event.payload),
      })}\n`;
    }
    this.append(path.join(this.dir, "events.jsonl"), text);
  }

  /** Close the files kept open for appending (idempotent; a later append opens them again). */
  close(): void {
    for (const fd of this.appending.values()) {
      try {
        closeSync(fd);
      } catch (error) {
        this.warn(error);
      }
    }
    this.appending.clear();
  }

  private append(file: string, text: string): void {
    try {
      let fd = this.appending.get(file);
      if (fd === undefined) {
        fd = openSync(file, "a");
        this.appending.set(file, fd);
      }
      // Every line a run folder keeps is redacted of known secrets (an API key echoed in an error).
      const bytes = Buffer.from(redactSecrets(text));
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
    } catch (error) {
      this.warn(error);
    }
  }

  private warn(error: unknown): void {
    if (this.warned) return;
    this.warned = true;
    getLogger().warn(`Could not write the run folder of run ${this.runId}: ${(error as Error).message}`, {
      runId: this.runId,
    });
  }
}

/** A value as at most {@link MAX_SUMMARY_CHARS} characters: a ToolResult by its summary, anything else cut. */
export function summarizeValue(value: unknown, max = MAX_SUMMARY_CHARS): string {
  if (isToolResult(value)) return cut(value.summary, max);
  if (value === null || value === undefined) return "";
  const text = typeof value === "object" ? redactedJson(value) : formatToolResult(value);
  return cut(text, max);
}

/** An event payload for `events.jsonl`: secrets redacted, data keys summarised, long values cut. */
export function summarizePayload(payload: Record<string, unknown>): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(payload)) {
    if (SECRET_KEY.test(key)) shown[key] = REDACTED;
    else if (DATA_KEYS.has(key)) shown[key] = summarizeValue(value);
    else if (typeof value === "string") shown[key] = cut(value, MAX_VALUE_CHARS);
    else if (typeof value !== "object" || value === null) shown[key] = value;
    else {
      const json = redactedJson(value);
      shown[key] = json.length > MAX_VALUE_CHARS ? cut(json, MAX_VALUE_CHARS) : JSON.parse(json);
    }
  }
  return shown;
}

function redactedJson(value: unknown): string {
  try {
    return (
      JSON.stringify(value, (key, item) => {
        if (key !== "" && SECRET_KEY.test(key)) return REDACTED;
        return typeof item === "bigint" ? item.toString() : item;
      }) ?? ""
    );
  } catch {
    return String(value);
  }
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
