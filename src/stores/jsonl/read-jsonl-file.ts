import { open } from "node:fs/promises";
import { KeelError } from "../../errors/keel-error.js";
import { getLogger } from "../../logging/logger.js";
import { SESSION_SCHEMA_VERSION } from "../../sessions/session-manager.js";

/** One stored line of a jsonl_file store: `{"schemaVersion":1,"type":…,"data":…,"ts":"ISO"}`. */
export interface JsonlRecord {
  schemaVersion: number;
  type: string;
  data: unknown;
  ts: string;
  /** 1-based line number in the file, for error messages. */
  line: number;
}

/** Where a file stood when last read or written, to notice another process's writes and a torn tail. */
export interface JsonlFileMark {
  exists: boolean;
  size: number;
  mtimeMs: number;
  /** The file's inode (0 when missing): a file deleted or replaced behind the mark has another one. */
  ino: number;
  /** Bytes up to and including the last good newline; below `size` when a torn last line was ignored. */
  goodLength: number;
}

/** What {@link readJsonlFile} found. */
export interface JsonlFileContents {
  records: JsonlRecord[];
  mark: JsonlFileMark;
}

const NEWLINE = 0x0a;

/** The mark of a file that does not exist (yet). */
export function missingFileMark(): JsonlFileMark {
  return { exists: false, size: 0, mtimeMs: 0, ino: 0, goodLength: 0 };
}

/** The typed error for a record that cannot be read; the hint names the file, the line and what to do. */
export function corruptRecordError(path: string, line: number, reason: string): KeelError {
  return new KeelError(`${path} line ${line} is not a valid record: ${reason}`, {
    code: "store.corrupt",
    hint: `Valid lines follow line ${line} of ${path}, so this is damage, not a torn write; nothing was skipped. Restore the file from a backup, or repair or remove line ${line} by hand, then retry.`,
    context: { file: path, line },
  });
}

/**
 * Read and parse a whole store file. A torn last line (no trailing newline, or not valid JSON) is reported and
 * ignored — it is the write a crash interrupted. A bad line with lines after it, or a record of an unknown
 * schema version, is refused: skipping it would silently lose data.
 */
export async function readJsonlFile(
  path: string,
  types: ReadonlySet<string>,
  maxLineBytes: number,
): Promise<JsonlFileContents> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { records: [], mark: missingFileMark() };
    throw error;
  }
  let buffer: Buffer;
  let mtimeMs: number;
  let ino: number;
  try {
    // Read exactly the size fstat reported so the mark matches the bytes parsed, even if a writer appends now.
    const stats = await handle.stat();
    mtimeMs = stats.mtimeMs;
    ino = stats.ino;
    buffer = Buffer.alloc(stats.size);
    let offset = 0;
    while (offset < buffer.length) {
      const { bytesRead } = await handle.read(buffer, offset, buffer.length - offset, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    buffer = buffer.subarray(0, offset);
  } finally {
    await handle.close();
  }

  const records: JsonlRecord[] = [];
  let start = 0;
  let line = 0;
  let goodLength = 0;
  while (start < buffer.length) {
    line++;
    const end = buffer.indexOf(NEWLINE, start);
    const terminated = end !== -1;
    const stop = terminated ? end : buffer.length;
    const isLast = !terminated || stop + 1 === buffer.length;
    const parsed = stop - start > maxLineBytes ? "longer than max_line_bytes" : parse(buffer, start, stop);
    if (typeof parsed === "string" || !terminated) {
      if (!isLast) throw corruptRecordError(path, line, parsed as string);
      getLogger().warn(`ignoring a torn last line in ${path} (line ${line})`, {
        file: path,
        line,
        bytes: buffer.length - start,
        reason: terminated ? parsed : "no trailing newline",
      });
      break;
    }
    if (parsed.schemaVersion !== SESSION_SCHEMA_VERSION) {
      throw new KeelError(`${path} line ${line} has schemaVersion ${parsed.schemaVersion}`, {
        code: "store.schema_version",
        hint: `This Keel reads schemaVersion ${SESSION_SCHEMA_VERSION} only; ${path} line ${line} was written by another version. Open the store with a Keel that reads schemaVersion ${parsed.schemaVersion}, or point root_dir at another directory.`,
        context: { file: path, line, schemaVersion: parsed.schemaVersion },
      });
    }
    if (!types.has(parsed.type)) throw corruptRecordError(path, line, `unknown type "${parsed.type}"`);
    records.push({ ...parsed, line });
    start = stop + 1;
    goodLength = start;
  }
  return { records, mark: { exists: true, size: buffer.length, mtimeMs, ino, goodLength } };
}

/** The record on one line, or why it is not one. */
function parse(buffer: Buffer, start: number, stop: number): Omit<JsonlRecord, "line"> | string {
  let value: unknown;
  try {
    value = JSON.parse(buffer.toString("utf8", start, stop));
  } catch (error) {
    return `invalid JSON (${(error as Error).message})`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a JSON object";
  const record = value as Record<string, unknown>;
  if (typeof record.schemaVersion !== "number") return "no numeric schemaVersion";
  if (typeof record.type !== "string") return "no string type";
  if (!("data" in record)) return "no data";
  if (typeof record.ts !== "string") return "no string ts";
  return record as unknown as Omit<JsonlRecord, "line">;
}
