import { afterEach, describe, expect, it } from "vitest";
import {
  defineTool,
  getPlugin,
  listPlugins,
  Runtime,
  registerPlugin,
  type Tool,
  unregisterPlugin,
} from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";

/** One typed entry point registers every kind of plugin a config names by `type`. */
describe("registerPlugin", () => {
  afterEach(() => {
    unregisterPlugin("tool", "test_greeter");
  });

  it("registers a tool type that a config then loads with its config", async () => {
    registerPlugin("tool", "test_greeter", (config) =>
      defineTool({
        name: "greet",
        description: "Greet someone",
        execute: () => `${String(config.greeting)}, world`,
      }),
    );
    expect(listPlugins("tool")).toContain("test_greeter");
    expect(getPlugin("tool", "test_greeter")?.kind).toBe("tool");
    const llm = scriptedModel([{ toolCalls: [{ id: "g1", name: "greet", arguments: {} }] }, { text: "ok" }]);
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm,
          tools: [{ id: "greet", type: "test_greeter", config: { greeting: "hello" } }],
        },
      ],
    });
    try {
      expect(await runtime.run({ agentId: "a", inputText: "go" })).toBe("ok");
      const toolMessage = llm.requests[1]!.messages.find((message) => message.role === "tool");
      expect(toolMessage?.content).toBe("hello, world");
    } finally {
      await runtime.close();
    }
    expect(unregisterPlugin("tool", "test_greeter")).toBe(true);
    expect(getPlugin("tool", "test_greeter")).toBeUndefined();
  });

  it("is typed by kind: a factory must make what the kind needs, and the kind must exist", () => {
    const tool: Tool = defineTool({ name: "t", description: "", execute: () => 1 });
    // Checked by `tsc` (npm test's typecheck): each line below must stay a type error.
    // @ts-expect-error a tool factory cannot return a string
    const wrongInstance = () => registerPlugin("tool", "x", () => "not a tool");
    // @ts-expect-error there is no plugin kind "toolz"
    const wrongKind = () => registerPlugin("toolz", "x", () => tool);
    expect([typeof wrongInstance, typeof wrongKind]).toEqual(["function", "function"]);
  });
});
