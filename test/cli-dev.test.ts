import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { waitFor } from "./support/child-processes.js";
import { startKeel, useBuiltCli } from "./support/cli-process.js";

/**
 * `keel dev` in a child process: the built CLI serves a config, and editing the file — in place, broken, or
 * saved the way editors do (a new file renamed over the old) — changes the agents it serves without a restart.
 */
describe("keel dev", () => {
  useBuiltCli();
  const dir = mkdtempSync(join(tmpdir(), "keel-dev-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, "agent.json");
  const agents = (...ids: string[]) => JSON.stringify({ agents: ids.map((id) => ({ id, name: id })) });

  it("reloads the agents when the config changes, and keeps the last good ones when it breaks", async () => {
    writeFileSync(config, agents("echo"));
    const child = startKeel(["dev", config, "--port", "0", "--no-console"]);
    const count = (text: string, what: string) => text.split(what).length - 1;
    try {
      await waitFor(
        () => child.stdout.includes("Watching") || child.code !== undefined,
        () => `the server to listen; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
      );
      const url = /at (http:\S+)/.exec(child.stdout)![1]!;
      const listed = async () =>
        ((await (await fetch(`${url}/agents`)).json()) as { agents: { id: string }[] }).agents.map(
          (agent) => agent.id,
        );
      expect(await listed()).toEqual(["echo"]);

      writeFileSync(config, agents("echo", "greeter"));
      await waitFor(
        () => child.stdout.includes("Reloaded agent.json"),
        () => `a reload; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
      );
      expect(child.stdout).toContain("Reloaded agent.json: changed greeter; serving 2 agent(s)");
      expect(await listed()).toEqual(["echo", "greeter"]);
      const run = await fetch(`${url}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ agentId: "greeter", inputText: "hi", wait: true }),
      });
      expect(await run.json()).toMatchObject({ stopReason: "completed" });

      // A config that does not load is reported, and the agents it last loaded go on serving.
      writeFileSync(config, "{ not json");
      await waitFor(
        () => child.stderr.includes("was not reloaded"),
        () => `a refused reload; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
      );
      expect(await listed()).toEqual(["echo", "greeter"]);

      // Saved as editors save: written beside it, then renamed over it.
      const reloads = count(child.stdout, "Reloaded agent.json");
      writeFileSync(join(dir, "agent.json.tmp"), agents("greeter"));
      renameSync(join(dir, "agent.json.tmp"), config);
      await waitFor(
        () => count(child.stdout, "Reloaded agent.json") > reloads,
        () => `a reload after a rename; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
      );
      expect(await listed()).toEqual(["greeter"]);

      child.kill("SIGINT");
      await child.done;
      expect(child.code).toBe(130);
    } finally {
      if (child.code === undefined) child.kill("SIGKILL");
    }
  }, 30_000);
});
