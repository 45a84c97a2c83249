import { describe, expect, it, vi } from "vitest";
import { quotedNode as node, shellWorkspace } from "../../../test/support/shell-tools.js";
import { type AgentConfig, Runtime } from "../../index.js";
import { getLogger } from "../../logging/logger.js";
import { scriptedModel } from "../../testing/index.js";

/** shell_exec, execute_command and set_env in runs: off unless `permissions.enable` has shell. */

const { ws } = shellWorkspace("keel-shell-run-");

function agent(
  model: ReturnType<typeof scriptedModel>,
  tools: AgentConfig["tools"],
  extra: Partial<AgentConfig> = {},
): AgentConfig {
  return { id: "a", name: "A", llm: model, tools, sandbox: { roots: [{ path: ws, mode: "rw" }] }, ...extra };
}

const CALLS: [string, Record<string, unknown>, Record<string, unknown>][] = [
  [
    "shell_exec",
    { command: process.execPath, args: ["-e", "console.log('hi')"] },
    { data: { exitCode: 0, stdout: "hi\n" } },
  ],
  ["execute_command", { command: `${node} -e 'console.log(42)'` }, { data: { exitCode: 0, stdout: "42\n" } }],
  ["set_env", { name: "KEEL_X", value: "1" }, { data: { name: "KEEL_X", action: "set" } }],
];

describe("shell tools in a run", () => {
  it.each(CALLS)(
    "%s: a tool.failed with shell_not_enabled the model sees; enabled, it runs",
    async (tool, args, ran) => {
      const script = () =>
        scriptedModel([{ toolCalls: [{ id: "c", name: tool, arguments: args }] }, { text: "done" }]);
      const offModel = script();
      const off = await Runtime.fromDict({ agents: [agent(offModel, [{ id: tool, type: tool }])] });
      const failed: Record<string, unknown>[] = [];
      off.eventBus.subscribe("tool.failed", (event) => {
        failed.push(event.payload);
      });
      const offResult = await off.runDetailed({ agentId: "a", inputText: "x" });
      expect(offResult).toMatchObject({ stopReason: "completed", finalOutput: "done" });
      expect(failed).toEqual([
        expect.objectContaining({ toolId: tool, code: "tool.permission_denied", rule: "shell_not_enabled" }),
      ]);
      expect(JSON.parse(offModel.requests[1]!.messages.at(-1)!.content as string).error.message).toContain(
        "shell_not_enabled",
      );
      await off.close();

      const onModel = script();
      const on = await Runtime.fromDict({
        agents: [agent(onModel, [{ id: tool, type: tool }], { permissions: { enable: ["shell"] } })],
      });
      await on.runDetailed({ agentId: "a", inputText: "x" });
      expect(JSON.parse(onModel.requests[1]!.messages.at(-1)!.content as string)).toMatchObject({
        ok: true,
        ...ran,
      });
      await on.close();
    },
  );

  it("set_env is kept in the session state: the session's next run's execute_command sees it", async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: "s", name: "set_env", arguments: { name: "KEEL_RUN_VAR", value: "from run 1" } }] },
      { text: "set" },
      {
        toolCalls: [
          {
            id: "e",
            name: "execute_command",
            arguments: { command: `${node} -e 'process.stdout.write(process.env.KEEL_RUN_VAR)'` },
          },
        ],
      },
      { text: "ran" },
    ]);
    const tools = [
      { id: "set_env", type: "set_env", config: { deny: ["SECRET_*"] } },
      { id: "execute_command", type: "execute_command", config: { timeout_ms: 30_000 } },
    ];
    const runtime = await Runtime.fromDict({
      agents: [agent(model, tools, { permissions: { enable: ["shell"] } })],
    });
    await runtime.run({ agentId: "a", sessionId: "s", inputText: "1" });
    await runtime.run({ agentId: "a", sessionId: "s", inputText: "2" });
    expect(JSON.parse(model.requests[3]!.messages.at(-1)!.content as string)).toMatchObject({
      ok: true,
      data: { stdout: "from run 1" },
    });
    expect(process.env.KEEL_RUN_VAR).toBeUndefined();
    await runtime.close();
  });

  it.each([
    ["shell_exec", { command_alowlist: ["ls"] }, "command_allowlist"],
    ["execute_command", { timeout: 5 }, "timeout_ms"],
    ["set_env", { alow: ["A"] }, "allow"],
  ])(
    "%s: a misspelt config key is warned about by name, with the keys it may have meant",
    async (type, config, known) => {
      const warnings: string[] = [];
      const warn = vi.spyOn(getLogger(), "warn").mockImplementation((message: string) => {
        warnings.push(message);
      });
      try {
        const runtime = await Runtime.fromDict({
          agents: [agent(scriptedModel([{ text: "x" }]), [{ id: type, type, config }])],
        });
        await runtime.run({ agentId: "a", inputText: "x" });
        await runtime.close();
      } finally {
        warn.mockRestore();
      }
      const [key] = Object.keys(config);
      expect(warnings).toContainEqual(
        expect.stringMatching(new RegExp(`unknown config key "${key}" is ignored \\(known keys: .*${known}`)),
      );
    },
  );
});
