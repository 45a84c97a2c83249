import { describe, expect, it } from "vitest";
import {
  toolContext as context,
  quotedNode as node,
  shellWorkspace,
} from "../../../test/support/shell-tools.js";
import type { ToolContext, ToolResult } from "../../contracts/tool.js";
import { createExecuteCommandTool } from "./execute-command-tool.js";
import type { ProgramRunData } from "./run-program.js";
import {
  createSetEnvTool,
  MAX_ENV_VALUE_BYTES,
  type SetEnvData,
  type SetEnvToolOptions,
} from "./set-env-tool.js";
import { SHELL_ENV_STATE_KEY } from "./shell-env-state.js";
import { createShellExecTool } from "./shell-exec-tool.js";

const { sandbox } = shellWorkspace("keel-setenv-");

/** One `set_env` call in `ctx` (a fresh session by default), by a tool made with the other options. */
async function setEnv(
  name: string,
  value: string,
  { ctx = context(), ...options }: SetEnvToolOptions & { ctx?: ToolContext } = {},
) {
  return (await createSetEnvTool(options).invoke({ name, value }, ctx)) as ToolResult<SetEnvData>;
}

describe("set_env", () => {
  it("declares shell and is not idempotent", () => {
    const tool = createSetEnvTool();
    expect(tool.executionSpec().sideEffects).toBe("shell");
    expect(tool.durableIdempotent).toBe(false);
  });

  it("validates the name's form in its schema", async () => {
    const tool = createSetEnvTool();
    for (const name of ["1X", "A-B", "A B", "", "A=B", "Ä"]) {
      expect((await tool.validateParams!({ name, value: "v" })).ok, name).toBe(false);
    }
    expect((await tool.validateParams!({ name: "_Ok_9", value: "v" })).ok).toBe(true);
  });

  it.each([
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "ld_preload",
    "DYLD_INSERT_LIBRARIES",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PERL5OPT",
    "RUBYOPT",
    "BASH_ENV",
    "ENV",
    "IFS",
    "PATH",
    "GIT_CONFIG_COUNT",
    "GIT_SSH_COMMAND",
  ])("refuses %s with env_name_denied", async (name) => {
    await expect(setEnv(name, "x")).rejects.toMatchObject({
      code: "tool.permission_denied",
      rule: "env_name_denied",
    });
  });

  it("applies the config's allow and deny lists; PATH only when allow names it", async () => {
    const ctx = context();
    expect((await setEnv("PATH", "/opt/bin", { ctx, allow: ["PATH"] })).ok).toBe(true);
    await expect(setEnv("LD_PRELOAD", "x", { ctx, allow: ["LD_PRELOAD"] })).rejects.toMatchObject({
      rule: "env_name_denied",
    });
    await expect(setEnv("AWS_SECRET", "x", { ctx, deny: ["aws_*"] })).rejects.toMatchObject({
      rule: "env_name_denied",
    });
    await expect(setEnv("APP_KEY", "x", { ctx, allow: ["APP_*"], deny: ["APP_KEY"] })).rejects.toMatchObject({
      rule: "env_name_denied",
    });
    await expect(setEnv("OTHER", "x", { ctx, allow: ["APP_*"] })).rejects.toMatchObject({
      rule: "env_name_not_allowed",
    });
    expect((await setEnv("APP_MODE", "dev", { ctx, allow: ["APP_*"] })).ok).toBe(true);
    expect(ctx.session.state[SHELL_ENV_STATE_KEY]).toEqual({ PATH: "/opt/bin", APP_MODE: "dev" });
  });

  it("refuses NUL, oversized values and too many variables", async () => {
    await expect(setEnv("A", "x\0y")).rejects.toMatchObject({ rule: "env_value_refused" });
    await expect(setEnv("A", "é".repeat(MAX_ENV_VALUE_BYTES / 2 + 1))).rejects.toMatchObject({
      rule: "env_value_refused",
    });
    expect((await setEnv("A", "x".repeat(MAX_ENV_VALUE_BYTES))).ok).toBe(true);
    const ctx = context();
    for (let index = 0; index < 64; index += 1) await setEnv(`V${index}`, "x", { ctx });
    await expect(setEnv("ONE_MORE", "x", { ctx })).rejects.toMatchObject({ rule: "env_limit" });
    expect((await setEnv("V0", "changed", { ctx })).ok).toBe(true);
  });

  it("is seen by later execute_command and shell_exec calls, an empty value removes it, process.env is untouched", async () => {
    const before = { ...process.env };
    const ctx = context();
    const set = await setEnv("KEEL_GREETING", "hello 'world'", { ctx });
    expect(set).toMatchObject({
      ok: true,
      data: { name: "KEEL_GREETING", action: "set", names: ["KEEL_GREETING"] },
    });
    expect(set.summary).not.toContain("hello");
    expect(process.env).toEqual(before);
    expect(process.env.KEEL_GREETING).toBeUndefined();

    const print = "process.stdout.write(String(process.env.KEEL_GREETING))";
    const executed = (await createExecuteCommandTool({ sandbox }).invoke(
      { command: `${node} -e '${print}'` },
      ctx,
    )) as ToolResult<ProgramRunData>;
    expect(executed.data!.stdout).toBe("hello 'world'");
    const shelled = (await createShellExecTool({ sandbox }).invoke(
      { command: process.execPath, args: ["-e", print] },
      ctx,
    )) as ToolResult<ProgramRunData>;
    expect(shelled.data!.stdout).toBe("hello 'world'");

    const unset = await setEnv("KEEL_GREETING", "", { ctx });
    expect(unset).toMatchObject({ ok: true, data: { action: "unset", names: [] } });
    const after = (await createShellExecTool({ sandbox }).invoke(
      { command: process.execPath, args: ["-e", print] },
      ctx,
    )) as ToolResult<ProgramRunData>;
    expect(after.data!.stdout).toBe("undefined");
    expect(process.env).toEqual(before);
  });
});
