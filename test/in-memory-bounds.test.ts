import { describe, expect, it } from "vitest";
import { Runtime } from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";

/** The default store forgets what nobody can ask for again, and keeps what a named session or a resume needs. */
describe("the in_memory store's bounds, through the runtime", () => {
  async function runtimeWith(config: Record<string, unknown>) {
    return Runtime.fromDict({
      session: { type: "in_memory", config },
      agents: [
        {
          id: "a",
          name: "A",
          llm: scriptedModel([{ text: "hi" }], { whenExhausted: "repeat-last" }),
        },
      ],
    });
  }

  it("drops a session it made up once idle past generated_session_ttl_ms, and keeps a named one", async () => {
    const runtime = await runtimeWith({ generated_session_ttl_ms: 0 });
    const made = await runtime.runDetailed({ agentId: "a", inputText: "one" });
    const named = await runtime.runDetailed({ agentId: "a", inputText: "two", sessionId: "mine" });
    const manager = runtime.sessionManager;
    expect((await runtime.getRun(made.runId))?.sessionId).toMatch(/^session-/);
    expect(await manager.listSessions()).toEqual(["mine"]);
    expect(await manager.loadMessages("mine")).toHaveLength(2);
    expect((await runtime.getRun(made.runId))?.status).toBe("done");
    expect((await runtime.getRun(named.runId))?.status).toBe("done");
    await runtime.close();
  });

  it("keeps a made-up session by default, so its caller can continue it", async () => {
    const runtime = await runtimeWith({});
    const made = await runtime.runDetailed({ agentId: "a", inputText: "one" });
    const sessionId = (await runtime.getRun(made.runId))?.sessionId as string;
    await runtime.runDetailed({ agentId: "a", inputText: "again", sessionId });
    expect(await runtime.sessionManager.loadMessages(sessionId)).toHaveLength(4);
    await runtime.close();
  });

  it("keeps only max_runs records and max_sessions sessions over many runs", async () => {
    const runtime = await runtimeWith({ max_runs: 5, max_sessions: 3 });
    for (let index = 0; index < 20; index++)
      await runtime.runDetailed({ agentId: "a", inputText: "x", sessionId: `s${index}` });
    expect((await runtime.listRuns()).length).toBe(5);
    expect(await runtime.sessionManager.listSessions()).toEqual(["s17", "s18", "s19"]);
    await runtime.close();
  });
});
