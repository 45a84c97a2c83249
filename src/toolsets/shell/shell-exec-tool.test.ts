import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { shellWorkspace, toolContext } from "../../../test/support/shell-tools.js";
import type { ToolResult } from "../../contracts/tool.js";
import { createShellExecTool, type ShellExecData } from "./shell-exec-tool.js";

const { ws, sandbox } = shellWorkspace("keel-shell-");
const ctx = toolContext();
const node = process.execPath;

async function call(
  options: Partial<Parameters<typeof createShellExecTool>[0]>,
  params: Record<string, unknown>,
) {
  const tool = createShellExecTool({ sandbox, ...options });
  return (await tool.invoke(params, ctx)) as ToolResult<ShellExecData>;
}

describe("shell_exec", () => {
  it("declares shell and runs in the workspace with execFile, no shell interpretation", async () => {
    expect(createShellExecTool({ sandbox }).executionSpec().sideEffects).toBe("shell");
    const cwd = await call({}, { command: node, args: ["-e", "process.stdout.write(process.cwd())"] });
    expect(cwd).toMatchObject({ ok: true, data: { exitCode: 0, stdout: realpathSync(ws) } });
    // Metacharacters reach the program as plain arguments.
    const echoed = await call(
      {},
      { command: node, args: ["-e", "console.log(process.argv[1])", "$(touch pwned); rm -rf *"] },
    );
    expect(echoed.data!.stdout.trim()).toBe("$(touch pwned); rm -rf *");
    expect(existsSync(path.join(ws, "pwned"))).toBe(false);
  });

  it("reports a non-zero exit as ok:false with its code and stderr", async () => {
    const failed = await call({}, { command: node, args: ["-e", "console.error('bad'); process.exit(3)"] });
    expect(failed).toMatchObject({ ok: false, data: { exitCode: 3 }, error: { code: "shell.exit_status" } });
    expect(failed.data!.stderr).toContain("bad");
  });

  it("bounds output and time, passes only the listed environment", async () => {
    const big = await call(
      { captureBytes: 100 },
      { command: node, args: ["-e", "process.stdout.write('x'.repeat(10000))"] },
    );
    expect(big.data).toMatchObject({ truncated: true });
    expect(big.data!.stdout.length).toBeLessThanOrEqual(100);
    await expect(
      call({ timeoutMs: 200 }, { command: node, args: ["-e", "setTimeout(() => {}, 10000)"] }),
    ).rejects.toMatchObject({
      code: "tool.timeout",
    });
    process.env.KEEL_SHELL_SECRET = "s3cret";
    const env = await call(
      {},
      { command: node, args: ["-e", "process.stdout.write(String(process.env.KEEL_SHELL_SECRET))"] },
    );
    expect(env.data!.stdout).toBe("undefined");
    delete process.env.KEEL_SHELL_SECRET;
  });

  it("refuses a command outside the allow-list", async () => {
    await expect(call({ commandAllowlist: ["ls"] }, { command: node, args: ["-v"] })).rejects.toMatchObject({
      code: "tool.permission_denied",
      rule: "command_not_allowed",
    });
  });
});
