import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { waitFor } from "./support/child-processes.js";
import { startKeel, useBuiltCli } from "./support/cli-process.js";

/**
 * `keel dev` in a child process: the built CLI serves a config, and editing the file — in place, broken, or
 * saved the way editors do (a new file renamed over the old) — changes the agents it serves without a restart;
 * so does editing a module the config's `impl` refs name, or a skills folder.
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
  it("loads an agent again when a module its config references changes, and rescans a skills folder", async () => {
    const home = mkdtempSync(join(dir, "refs-"));
    const file = join(home, "agent.json");
    const tag = (version: string) =>
      `export async function tag(ctx, next) {\n  await next();\n  ctx.result = { finalOutput: "${version}" };\n}\n`;
    mkdirSync(join(home, "middleware"));
    writeFileSync(join(home, "middleware", "tag.mjs"), tag("first"));
    mkdirSync(join(home, "skills", "notes"), { recursive: true });
    writeFileSync(
      join(home, "skills", "notes", "SKILL.md"),
      "---\nname: notes\ndescription: Notes\n---\nTake notes.\n",
    );
    writeFileSync(
      file,
      JSON.stringify({
        agents: [
          { id: "tagged", name: "Tagged", middleware: { agent: [{ impl: "./middleware/tag.mjs#tag" }] } },
        ],
      }),
    );
    const child = startKeel(["dev", file, "--port", "0", "--no-console"]);
    try {
      await waitFor(
        () => child.stdout.includes("Watching") || child.code !== undefined,
        () => `the server to listen; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
      );
      const url = /at (http:\S+)/.exec(child.stdout)![1]!;
      const output = async () => {
        const response = await fetch(`${url}/runs`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ agentId: "tagged", inputText: "hi", wait: true }),
        });
        return ((await response.json()) as { finalOutput: unknown }).finalOutput;
      };
      expect(await output()).toBe("first");

      writeFileSync(join(home, "middleware", "tag.mjs"), tag("second"));
      await waitFor(
        () => child.stdout.includes("Reloaded middleware/tag.mjs"),
        () => `a reload of the module; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
      );
      expect(child.stdout).toContain("Reloaded middleware/tag.mjs: agent(s) tagged loaded again");
      expect(await output()).toBe("second");

      // A module that no longer loads is reported at once.
      writeFileSync(join(home, "middleware", "tag.mjs"), "export const tag = ;\n");
      await waitFor(
        () => child.stderr.includes("middleware/tag.mjs was not reloaded"),
        () => `a refused module; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
      );

      writeFileSync(
        join(home, "skills", "notes", "SKILL.md"),
        "---\nname: notes\ndescription: More notes\n---\n",
      );
      await waitFor(
        () => child.stdout.includes("Rescanned skills: 1 skill(s)"),
        () => `a rescan of the skills; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
      );

      child.kill("SIGINT");
      await child.done;
      expect(child.code).toBe(130);
    } finally {
      if (child.code === undefined) child.kill("SIGKILL");
    }
  }, 30_000);
});
