import { readFile, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { ConfigLoadError } from "../errors/error-classes.js";
import { type AppConfig, appConfigSchema } from "./app-config-schema.js";
import { CONFIG_PARSE_OPTIONS, configValidationError, toConfigIssues } from "./config-issues.js";
import { expandEnvDetailed, toSourceOffset } from "./expand-env.js";
import { jsonErrorDetail, jsonErrorOffset, lineAndColumn } from "./json-error-location.js";

/** A config read from a file: relative `impl` specifiers and paths in it resolve against `baseDir`. */
export interface LoadedConfig {
  config: AppConfig;
  /** Absolute path of the file. */
  path: string;
  /** The file's directory. */
  baseDir: string;
}

/**
 * Validate a config given as an object (code-first, `Runtime.fromDict`). Tools, hooks and middleware may be
 * objects or functions in place of refs. Throws a `ConfigValidationError` listing every issue.
 */
export function parseConfig(input: unknown, { configPath }: { configPath?: string } = {}): AppConfig {
  const result = appConfigSchema().safeParse(input, CONFIG_PARSE_OPTIONS);
  if (result.success) return result.data;
  throw configValidationError(toConfigIssues(result.error), configPath === undefined ? {} : { configPath });
}

async function readConfigText(path: string): Promise<string> {
  let isFile: boolean;
  try {
    isFile = (await stat(path)).isFile();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw new ConfigLoadError(`Config file not found: ${path}`, {
        hint: `Check the path; a relative path resolves against the current directory (${process.cwd()}).`,
        context: { configPath: path },
        cause: error,
      });
    }
    throw new ConfigLoadError(`Cannot read config file ${path}: ${(error as Error).message}`, {
      hint: "Check that the file exists and that you may read it.",
      context: { configPath: path },
      cause: error,
    });
  }
  if (!isFile) {
    throw new ConfigLoadError(`Config path is not a file: ${path}`, {
      hint: "Pass the path of a JSON config file, such as agent.json.",
      context: { configPath: path },
    });
  }
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new ConfigLoadError(`Cannot read config file ${path}: ${(error as Error).message}`, {
      hint: "Check that you may read the file.",
      context: { configPath: path },
      cause: error,
    });
  }
}

/**
 * Read, env-expand, parse and validate a JSON config file. A missing file, an unset variable or a JSON
 * syntax error (reported by line and column of the file as written) is a `ConfigLoadError`; a schema problem a
 * `ConfigValidationError`.
 */
export async function loadConfig(path: string): Promise<LoadedConfig> {
  const absolute = resolve(path);
  // Editors on Windows may save a byte-order mark, which JSON.parse rejects.
  const source = (await readConfigText(absolute)).replace(/^\uFEFF/, "");
  const expanded = expandEnvDetailed(source);
  let input: unknown;
  try {
    input = JSON.parse(expanded.text);
  } catch (error) {
    const offset = toSourceOffset(expanded, jsonErrorOffset(expanded.text, error as Error));
    const { line, column } = lineAndColumn(source, offset);
    throw new ConfigLoadError(
      `Invalid JSON in ${absolute} at line ${line}, column ${column}: ${jsonErrorDetail(error as Error)}`,
      {
        hint: `Fix the JSON near line ${line}, column ${column}; JSON allows no comments and no trailing commas.`,
        context: { configPath: absolute, line, column },
        cause: error,
      },
    );
  }
  return { config: parseConfig(input, { configPath: absolute }), path: absolute, baseDir: dirname(absolute) };
}
