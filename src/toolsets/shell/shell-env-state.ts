/**
 * The session-state key holding the variables `set_env` set: `{name: value}`. `shell_exec` and `execute_command`
 * add them to their child's environment; being session state, they survive checkpoints, resumes and another
 * process, and never touch `process.env`.
 */
export const SHELL_ENV_STATE_KEY = "keel.shellEnv";

/** The variables a session state says `set_env` set (a copy; string values only). */
export function sessionShellEnv(
  state: Readonly<Record<string, unknown>> | undefined,
): Record<string, string> {
  const value = state?.[SHELL_ENV_STATE_KEY];
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  // fromEntries defines keys (even `__proto__`) instead of assigning them.
  return Object.fromEntries(Object.entries(value).filter((entry) => typeof entry[1] === "string"));
}
