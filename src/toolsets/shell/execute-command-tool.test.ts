import { realpathSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  toolContext as context,
  quotedNode as node,
  shellWorkspace,
} from "../../../test/support/shell-tools.js";
import type { ToolResult } from "../../contracts/tool.js";
import { createExecuteCommandTool, type ExecuteCommandData } from "./execute-command-tool.js";
import { SHELL_ENV_STATE_KEY } from "./shell-env-state.js";

const { ws, sandbox } = shellWorkspace("keel-exec-");

async function call(
  options: Partial<Parameters<typeof createExecuteCommandTool>[0]>,
  command: string,
  ctx = context(),
) {
  const tool = createExecuteCommandTool({ sandbox, ...options });
  return (await tool.invoke({ command }, ctx)) as ToolResult<ExecuteCommandData>;
}

describe("execute_command", () => {
  it("declares shell, not idempotent, and runs the split argv in the workspace without a shell", async () => {
    const tool = createExecuteCommandTool({ sandbox });
    expect(tool.executionSpec().sideEffects).toBe("shell");
    expect(tool.durableIdempotent).toBe(false);
    const cwd = await call({}, `${node} -e 'process.stdout.write(process.cwd())'`);
    expect(cwd).toMatchObject({ ok: true, data: { exitCode: 0, stdout: realpathSync(ws) } });
    const argv = await call(
      {},
      `${node} -e 'console.log(JSON.stringify(process.argv.slice(1)))' "a b" 'c|d' e\\;f`,
    );
    expect(JSON.parse(argv.data!.stdout)).toEqual(["a b", "c|d", "e;f"]);
    expect(argv.data!.args).toEqual([
      "-e",
      "console.log(JSON.stringify(process.argv.slice(1)))",
      "a b",
      "c|d",
      "e;f",
    ]);
  });

  it("refuses shell operators before anything runs, with a typed error", async () => {
    await expect(call({}, `${node} -e 'console.log(1)' | wc -l`)).rejects.toMatchObject({
      code: "shell.command_syntax",
      reason: "shell_operator",
      operator: "|",
    });
    await expect(call({}, "echo 'open")).rejects.toMatchObject({ reason: "unterminated_quote" });
  });

  it("reports a non-zero exit as ok:false with its code", async () => {
    const failed = await call({}, `${node} -e 'process.exit(4)'`);
    expect(failed).toMatchObject({ ok: false, data: { exitCode: 4 }, error: { code: "shell.exit_status" } });
  });

  it("applies the allow-list to argv[0] and refuses NUL bytes", async () => {
    const allowed = await call({ commandAllowlist: [process.execPath] }, `${node} -e 'console.log(7)'`);
    expect(allowed.data!.stdout).toBe("7\n");
    await expect(call({ commandAllowlist: ["ls"] }, `${node} -v`)).rejects.toMatchObject({
      code: "tool.permission_denied",
      rule: "command_not_allowed",
    });
    await expect(call({ commandAllowlist: ["ls"] }, "ls x\0y")).rejects.toMatchObject({
      rule: "command_not_allowed",
    });
  });

  it("bounds output and time", async () => {
    const big = await call({ captureBytes: 100 }, `${node} -e 'process.stdout.write("x".repeat(10000))'`);
    expect(big.data).toMatchObject({ truncated: true });
    expect(big.data!.stdout.length).toBeLessThanOrEqual(100);
    await expect(call({ timeoutMs: 200 }, `${node} -e 'setTimeout(() => {}, 10000)'`)).rejects.toMatchObject({
      code: "tool.timeout",
    });
  });

  it("passes only the passthrough variables and the session's set_env variables", async () => {
    process.env.KEEL_EXEC_SECRET = "s3cret";
    process.env.KEEL_EXEC_PASSED = "passed";
    try {
      const ctx = context({ [SHELL_ENV_STATE_KEY]: { FROM_SET_ENV: "yes", KEEL_EXEC_PASSED: "overridden" } });
      const env = await call(
        { envPassthrough: ["KEEL_EXEC_PASSED", "KEEL_EXEC_UNSET"] },
        `${node} -e 'console.log(JSON.stringify(process.env))'`,
        ctx,
      );
      expect(JSON.parse(env.data!.stdout)).toEqual({ FROM_SET_ENV: "yes", KEEL_EXEC_PASSED: "overridden" });
    } finally {
      delete process.env.KEEL_EXEC_SECRET;
      delete process.env.KEEL_EXEC_PASSED;
    }
  });
});
