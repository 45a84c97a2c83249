import { describe, expect, it } from "vitest";
import { cliHarness } from "../../test/support/cli-harness.js";
import { USAGE } from "./cli.js";

const { config, cli } = cliHarness("keel-cli-policy-");

const FS_TOOLS = [
  { id: "fs", type: "filesystem", config: { tools: ["read_file", "write_file", "delete_file"] } },
];

describe("keel policy", () => {
  it("prints each rule with its source and merge rule, and each tool's decision", async () => {
    const path = await config("policy.json", [], {
      tools: FS_TOOLS,
      permissions: { enable: ["network"], deny: ["write_*"] },
    });
    const { code, out, err } = await cli(["policy", path]);
    // A tool the config lists but never lets run is warned about whenever the agent loads.
    expect(err).toBe(
      `[keel] warning: agent 'assistant': tool 'delete_file' is refused on every call: it needs "permissions": ` +
        `{ "enable": ["destructive"] } in the agent's config\n`,
    );
    expect(code).toBe(0);
    expect(out).toContain("Effective permission policy of agent 'assistant'");
    expect(out).toContain("enabled capabilities: network");
    expect(out).toMatch(/deny\s+destructive_not_enabled\s+runtime\s+#5/);
    expect(out).toMatch(/allow\s+config\.enable:network\s+config\s+#3/);
    expect(out).toMatch(/deny\s+config\.deny:write_\*\s+config\s+#3/);
    expect(out).toMatch(/read_file\s+allow\s+runtime\.safe_default/);
    expect(out).toMatch(/write_file\s+deny\s+config\.deny:write_\*/);
    expect(out).toMatch(/delete_file\s+deny\s+destructive_not_enabled\s+\[destructive\]/);
    expect(out).toContain("4. Skill permissions only request capabilities");
  });

  it("--json prints what getEffectivePolicy returns; --agent picks the agent", async () => {
    const path = await config("policy-json.json", [], {
      tools: FS_TOOLS,
      permissions: { enable: ["destructive"] },
    });
    const { code, out } = await cli(["policy", path, "--agent", "assistant", "--json"]);
    expect(code).toBe(0);
    const policy = JSON.parse(out);
    expect(policy.agentId).toBe("assistant");
    expect(policy.tools.delete_file).toMatchObject({ effect: "ask", rule: "destructive_requires_approval" });
    expect(policy.rules.map((rule: { source: string }) => rule.source)).toContain("sandbox");
  });

  it("shows a tool that asks for approval by its own declaration as ask, from the tool", async () => {
    const path = await config("policy-approval.json", [], {
      tools: [{ id: "sh", type: "shell_exec", config: { require_approval: true } }],
      permissions: { enable: ["shell"] },
    });
    const { code, out } = await cli(["policy", path]);
    expect(code).toBe(0);
    expect(out).toMatch(/sh\s+ask\s+tool\.approval_mode:sh\s+\[shell\]/);
    expect(out).toMatch(/ask\s+tool\.approval_mode:sh\s+tool\s+#3\s+Tool 'sh' declares/);
    const json = await cli(["policy", path, "--json"]);
    expect(JSON.parse(json.out).tools.sh).toMatchObject({ effect: "ask", source: "tool" });
  });

  it("exits 1 for an unknown agent with the nearest id, and for a missing config argument", async () => {
    const path = await config("policy-unknown.json", []);
    const unknown = await cli(["policy", path, "--agent", "assistent"]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("Did you mean 'assistant'?");
    const missing = await cli(["policy"]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("Usage: keel policy <config>");
  });

  it("is in the usage text", () => {
    expect(USAGE).toContain("keel policy <config> [--agent ID] [--session ID] [--json]");
  });
});
