import { DEFAULT_CAPTURE_BYTES, type ProgramToolOptions } from "./run-program.js";

/**
 * What `shell_exec` and `execute_command` declare alike: shell side effects (off unless
 * `permissions.enable: ["shell"]`), not durably idempotent, approval when configured, and a description
 * that ends with the output bound and the allow-list.
 */
export function programToolSpec(lead: string, options: ProgramToolOptions) {
  const allowlist = options.commandAllowlist;
  return {
    description:
      `${lead} Returns exit code, stdout and stderr (at most ${options.captureBytes ?? DEFAULT_CAPTURE_BYTES} ` +
      "bytes each)." +
      (allowlist ? ` Allowed commands: ${allowlist.join(", ")}.` : ""),
    sideEffects: "shell" as const,
    approvalMode: options.requireApproval ? ("always" as const) : ("inherit" as const),
    durableIdempotent: false,
  };
}
