import { z } from "zod";
import type { Tool, ToolResult } from "../../contracts/tool.js";
import { PermissionDeniedError } from "../../errors/error-classes.js";
import { matchesToolPattern } from "../../permissions/effective-policy.js";
import type { PluginDefinition } from "../../plugins/plugin-registry.js";
import { defineTool } from "../../tools/define-tool.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";
import { SHELL_ENV_STATE_KEY, sessionShellEnv } from "./shell-env-state.js";

/**
 * Names `set_env` always refuses (case-insensitive, `*` globs): they make a loader, an interpreter or a common
 * tool run other code than the command asked for. `PATH` is refused too unless the `allow` list names it.
 */
export const DENIED_ENV_NAMES: readonly string[] = Object.freeze([
  "LD_*",
  "DYLD_*",
  "GCONV_PATH",
  "NODE_OPTIONS",
  "NODE_PATH",
  "PYTHONPATH",
  "PYTHONSTARTUP",
  "PYTHONHOME",
  "PERL5OPT",
  "PERL5LIB",
  "PERLLIB",
  "RUBYOPT",
  "RUBYLIB",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "BASH_ENV",
  "ENV",
  "ZDOTDIR",
  "IFS",
  "PS4",
  "SHELLOPTS",
  "BASHOPTS",
  "GIT_CONFIG*",
  "GIT_EXEC_PATH",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_EXTERNAL_DIFF",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "GIT_PROXY_COMMAND",
  "GIT_TEMPLATE_DIR",
]);

/** At most this many UTF-8 bytes per value. */
export const MAX_ENV_VALUE_BYTES = 32 * 1024;
/** At most this many variables per session. */
export const MAX_SESSION_ENV_VARIABLES = 64;

export interface SetEnvToolOptions {
  /** When given, the only names accepted (exact names or `*`/`?` globs, case-sensitive); may name `PATH`. */
  allow?: readonly string[];
  /** Names refused besides {@link DENIED_ENV_NAMES} (exact names or globs, case-insensitive); beats `allow`. */
  deny?: readonly string[];
  /** Ask for approval before every call. Default false. */
  requireApproval?: boolean;
}

export interface SetEnvData {
  name: string;
  action: "set" | "unset";
  /** The names the session's commands now get, sorted (values are not echoed). */
  names: string[];
}

/**
 * `set_env(name, value)`: set a variable for the session's later `shell_exec` and `execute_command` calls. It is
 * kept in the session state under `keel.shellEnv` (so it survives checkpoints and another process) and never
 * touches `process.env`. An empty value removes the variable again. Refusals are `PermissionDeniedError`s with
 * rule `env_name_denied` (a loader/interpreter variable, `PATH` unless allowed, or config `deny`),
 * `env_name_not_allowed` (outside the config `allow` list), `env_value_refused` (NUL or over
 * {@link MAX_ENV_VALUE_BYTES}) or `env_limit` (over {@link MAX_SESSION_ENV_VARIABLES}). Shell by declaration.
 */
export function createSetEnvTool(options: SetEnvToolOptions = {}): Tool {
  return defineTool({
    name: "set_env",
    description:
      "Set an environment variable for the later commands of this session (shell_exec, execute_command). " +
      "An empty value removes it. Variables that change how programs are loaded (LD_*, NODE_OPTIONS, " +
      "PYTHONPATH, PATH, …) are refused." +
      (options.allow ? ` Allowed names: ${options.allow.join(", ")}.` : ""),
    inputSchema: z.object({
      name: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "letters, digits and _, not starting with a digit")
        .describe("The variable's name, e.g. 'NO_COLOR'"),
      value: z.string().describe("Its value; an empty string removes the variable"),
    }),
    sideEffects: "shell",
    approvalMode: options.requireApproval ? "always" : "inherit",
    durableIdempotent: false,
    execute: ({ name, value }, ctx): ToolResult<SetEnvData> => {
      checkName(name, options);
      const current = sessionShellEnv(ctx.session.state);
      let next: Record<string, string>;
      if (value === "") {
        next = Object.fromEntries(Object.entries(current).filter(([key]) => key !== name));
      } else {
        checkValue(name, value);
        next = { ...current, [name]: value };
        if (Object.keys(next).length > MAX_SESSION_ENV_VARIABLES) {
          throw new PermissionDeniedError(
            `set_env: a session may set at most ${MAX_SESSION_ENV_VARIABLES} variables; remove one with an empty value first`,
            { rule: "env_limit" },
          );
        }
      }
      ctx.session.state[SHELL_ENV_STATE_KEY] = next;
      const action = value === "" ? "unset" : "set";
      return {
        ok: true,
        summary:
          action === "set"
            ? `Set ${name} (${Buffer.byteLength(value)} bytes) for later commands`
            : `Removed ${name} from later commands`,
        data: { name, action, names: Object.keys(next).sort() },
        artifacts: [],
      };
    },
  }) as Tool;
}

function checkName(name: string, options: SetEnvToolOptions): void {
  const upper = name.toUpperCase();
  const denied =
    [...DENIED_ENV_NAMES, ...(options.deny ?? [])].find((pattern) =>
      matchesToolPattern(pattern.toUpperCase(), upper),
    ) ?? (upper === "PATH" && !options.allow?.includes(name) ? "PATH" : undefined);
  if (denied !== undefined) {
    throw new PermissionDeniedError(
      `set_env: ${name} is refused (matches '${denied}'): it would change which code the commands run` +
        (denied === "PATH" ? "; the tool's config allow list may name PATH" : ""),
      { rule: "env_name_denied" },
    );
  }
  if (options.allow !== undefined && !options.allow.some((pattern) => matchesToolPattern(pattern, name))) {
    throw new PermissionDeniedError(
      `set_env: ${name} is not in the allow list (${options.allow.join(", ") || "empty"})`,
      { rule: "env_name_not_allowed" },
    );
  }
}

function checkValue(name: string, value: string): void {
  if (value.includes("\0")) {
    throw new PermissionDeniedError(`set_env: the value of ${name} contains a NUL byte`, {
      rule: "env_value_refused",
    });
  }
  const bytes = Buffer.byteLength(value);
  if (bytes > MAX_ENV_VALUE_BYTES) {
    throw new PermissionDeniedError(
      `set_env: the value of ${name} is ${bytes} bytes, over the ${MAX_ENV_VALUE_BYTES}-byte limit`,
      { rule: "env_value_refused" },
    );
  }
}

const setEnvToolConfig = builtOnFirstUse(() =>
  z.object({
    allow: z.array(z.string().min(1)).optional(),
    deny: z.array(z.string().min(1)).optional(),
    require_approval: z.boolean().optional(),
  }),
);

/** `{"id": "set_env", "type": "set_env", "config": {"allow": ["NO_COLOR", "APP_*"]}}`. */
export const setEnvToolPlugin: PluginDefinition<Tool> = {
  kind: "tool",
  type: "set_env",
  get configSchema() {
    return setEnvToolConfig();
  },
  create: (config) => {
    const parsed = setEnvToolConfig().parse(config);
    const options: SetEnvToolOptions = {};
    if (parsed.allow !== undefined) options.allow = parsed.allow;
    if (parsed.deny !== undefined) options.deny = parsed.deny;
    if (parsed.require_approval !== undefined) options.requireApproval = parsed.require_approval;
    return createSetEnvTool(options);
  },
};
