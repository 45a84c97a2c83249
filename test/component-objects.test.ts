import { describe, expect, it } from "vitest";
import {
  AsyncEventBus,
  ConfigValidationError,
  InMemorySessionManager,
  LocalSkillsManager,
  Runtime,
  type RuntimeEvent,
} from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";

/** A code-first config may give the runtime its store, event bus and skills manager as objects. */

const agents = () => [
  { id: "a", name: "A", llm: scriptedModel([{ text: "hi" }], { whenExhausted: "repeat-last" }) },
];

describe("components given as objects", () => {
  it("uses the store it is given, shares it between runtimes, and leaves it open on close()", async () => {
    const store = new InMemorySessionManager();
    const first = await Runtime.fromDict({ session: store, agents: agents() });
    expect(first.sessionManager).toBe(store);
    await first.run({ agentId: "a", inputText: "x", runId: "r1", sessionId: "s" });
    await first.close();
    // The caller owns the store: closing the runtime did not empty it.
    expect(await store.getRun("r1")).toMatchObject({ status: "done", stopReason: "completed" });

    const second = await Runtime.fromDict({ session: store, agents: agents() });
    expect((await second.getRun("r1"))?.runId).toBe("r1");
    expect(await second.sessionManager.loadMessages("s")).toHaveLength(2);
    await second.close();
    expect(await store.loadMessages("s")).toHaveLength(2);
  });

  it("uses the event bus and skills manager it is given, and leaves them open on close()", async () => {
    const events = new AsyncEventBus();
    const skills = new LocalSkillsManager();
    const seen: string[] = [];
    events.subscribe("run.finished", (event: RuntimeEvent) => void seen.push(event.runId));
    const runtime = await Runtime.fromDict({ events, skills, agents: agents() });
    expect(runtime.eventBus).toBe(events);
    expect(runtime.skillsManager).toBe(skills);
    await runtime.run({ agentId: "a", inputText: "x", runId: "r2" });
    await runtime.close();
    await events.flush();
    expect(seen).toEqual(["r2"]);
    // Still open: it delivers what is published after the runtime closed.
    events.emit("run.finished", { result: null });
    await events.flush();
    expect(seen).toHaveLength(2);
  });

  it("closes the components it loaded from refs", async () => {
    const runtime = await Runtime.fromDict({ session: { type: "in_memory" }, agents: agents() });
    await runtime.run({ agentId: "a", inputText: "x", runId: "r3" });
    const store = runtime.sessionManager;
    await runtime.close();
    expect(await store.getRun("r3")).toBeNull();
  });

  it("refuses an object that is neither a ref nor the component, naming the ref's keys", async () => {
    const refused = Runtime.fromDict({ session: { typ: "sqlite" }, agents: agents() });
    await expect(refused).rejects.toBeInstanceOf(ConfigValidationError);
    await expect(refused).rejects.toMatchObject({ message: expect.stringContaining("session") });
    const halfStore = { session: () => undefined, getState: () => ({}) };
    await expect(Runtime.fromDict({ session: halfStore, agents: agents() })).rejects.toBeInstanceOf(
      ConfigValidationError,
    );
  });
});
