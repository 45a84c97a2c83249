import { z } from "zod";
import type { Tool, ToolResult } from "../../contracts/tool.js";
import type { SandboxProvider } from "../../sandbox/sandbox-provider.js";
import { defineTool } from "../../tools/define-tool.js";
import {
  compileGrepPattern,
  DEFAULT_GREP_PATTERN_LIMITS,
  type GrepPatternLimits,
} from "./compile-grep-pattern.js";
import { okResult } from "./tool-result.js";

/** Bounds on one `grep_files` call: what the pattern may cost and how much it may scan and return. */
export interface GrepLimits extends GrepPatternLimits {
  /** Most matching lines returned (default 100). */
  maxMatches: number;
  /** Most files scanned (default 2000). */
  maxFiles: number;
  /** Larger files are skipped (default 2 MiB). */
  maxFileBytes: number;
  /** Most bytes scanned in all (default 32 MiB). */
  maxScanBytes: number;
  /** Longest excerpt of a matching line, in characters (default 300). */
  maxLineChars: number;
}

export const DEFAULT_GREP_LIMITS: Readonly<GrepLimits> = Object.freeze({
  ...DEFAULT_GREP_PATTERN_LIMITS,
  maxMatches: 100,
  maxFiles: 2000,
  maxFileBytes: 2 * 1024 * 1024,
  maxScanBytes: 32 * 1024 * 1024,
  maxLineChars: 300,
});

export interface GrepMatch {
  path: string;
  /** 1-based. */
  line: number;
  text: string;
}

export interface GrepFilesData {
  pattern: string;
  path: string;
  matches: GrepMatch[];
  /** Whether a bound stopped the search before every file was scanned. */
  truncated: boolean;
  stoppedBy?: "max_matches" | "max_files" | "max_scan_bytes";
  filesScanned: number;
  bytesScanned: number;
  /** Files not searched (binary, too large, special, links), at most 20 of them. */
  skipped: { path: string; reason: string }[];
  skippedCount: number;
}

const SKIPPED_SHOWN = 20;

/**
 * `grep_files(pattern, path)`: the lines matching an RE2 pattern under a path. The engine is linear
 * (see `compileGrepPattern`) and the scan is bounded in files, bytes and matches, so no pattern and no
 * workspace can make one call run away; a bound that stops the search says so in `stoppedBy`.
 */
export function createGrepFilesTool(options: {
  sandbox: SandboxProvider;
  limits?: Partial<GrepLimits>;
}): Tool {
  const limits: GrepLimits = { ...DEFAULT_GREP_LIMITS, ...options.limits };
  return defineTool({
    name: "grep_files",
    description:
      "Search the files under a workspace path for lines matching a regular expression (RE2 syntax: no " +
      `backreferences or lookaround). Returns at most ${limits.maxMatches} matching lines with their paths and ` +
      "line numbers; binary and very large files are skipped.",
    inputSchema: z.object({
      pattern: z.string().describe("Regular expression matched against each line"),
      path: z.string().optional().describe("File or directory relative to the workspace (default '.')"),
      case_sensitive: z.boolean().optional().describe("Default true"),
    }),
    readsFiles: true,
    sideEffects: "read",
    concurrencySafe: true,
    execute: async ({ pattern, path, case_sensitive }, ctx): Promise<ToolResult<GrepFilesData>> => {
      const compiled = compileGrepPattern(pattern, { caseSensitive: case_sensitive ?? true, limits });
      const sandbox = await options.sandbox(ctx);
      const data: GrepFilesData = {
        pattern,
        path: path ?? ".",
        matches: [],
        truncated: false,
        filesScanned: 0,
        bytesScanned: 0,
        skipped: [],
        skippedCount: 0,
      };
      const stop = (reason: NonNullable<GrepFilesData["stoppedBy"]>) => {
        data.truncated = true;
        data.stoppedBy = reason;
      };
      const skip = (file: string, reason: string) => {
        data.skippedCount++;
        if (data.skipped.length < SKIPPED_SHOWN) data.skipped.push({ path: file, reason });
      };
      const maxFileBytes = Math.min(limits.maxFileBytes, limits.maxScanBytes);
      walk: for await (const file of sandbox.walkFiles(path ?? ".", { tool: "grep_files", maxFileBytes })) {
        if ("skipped" in file) {
          skip(file.path, file.skipped);
          continue;
        }
        if (data.filesScanned >= limits.maxFiles) {
          stop("max_files");
          break;
        }
        if (data.bytesScanned + file.content.length > limits.maxScanBytes) {
          stop("max_scan_bytes");
          break;
        }
        data.filesScanned++;
        data.bytesScanned += file.content.length;
        if (file.content.includes(0)) {
          skip(file.path, "binary");
          continue;
        }
        const lines = Buffer.from(file.content.buffer, file.content.byteOffset, file.content.byteLength)
          .toString("utf8")
          .split("\n");
        for (let index = 0; index < lines.length; index++) {
          const line = lines[index]!.endsWith("\r") ? lines[index]!.slice(0, -1) : lines[index]!;
          const at = compiled.search(line);
          if (at < 0) continue;
          if (data.matches.length >= limits.maxMatches) {
            stop("max_matches");
            break walk;
          }
          data.matches.push({
            path: file.path,
            line: index + 1,
            text: excerpt(line, at, limits.maxLineChars),
          });
        }
      }
      const files = new Set(data.matches.map((match) => match.path)).size;
      let summary = `${data.matches.length} matching ${data.matches.length === 1 ? "line" : "lines"} in ${files} of ${data.filesScanned} files scanned`;
      if (data.stoppedBy !== undefined) summary += `; stopped early (${data.stoppedBy})`;
      if (data.skippedCount > 0) summary += `; ${data.skippedCount} skipped`;
      return okResult(summary, data);
    },
  }) as Tool;
}

/** At most `max` characters of a line, starting a little before the match. */
function excerpt(line: string, at: number, max: number): string {
  if (line.length <= max) return line;
  const start = Math.max(0, Math.min(at - Math.floor(max / 4), line.length - max));
  return `${start > 0 ? "…" : ""}${line.slice(start, start + max)}${start + max < line.length ? "…" : ""}`;
}
