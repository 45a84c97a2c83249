import { describe, expect, it } from "vitest";
import type { ModelStreamPart } from "../../../contracts/language-model.js";
import type { ToolContext } from "../../../contracts/tool.js";
import { hostToolPlugin } from "../../../toolsets/host/host-tool.js";
import { runWithHostBridge } from "./host-bridge.js";
import { HostModel } from "./host-model.js";

const request = { messages: [{ role: "user" as const, content: "hi" }], options: {} };

async function partsOf(stream: AsyncIterable<ModelStreamPart>): Promise<ModelStreamPart[]> {
  const parts: ModelStreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

describe("the host model and host tools", () => {
  it("go through the current host bridge", async () => {
    const bridge = {
      async *streamModel(_request: unknown, modelId: string | undefined): AsyncIterable<ModelStreamPart> {
        yield { type: "text-delta", text: `from ${modelId}` };
      },
      callTool: async (name: string, parameters: Record<string, unknown>) => ({ name, parameters }),
    };
    const tool = await hostToolPlugin.create(
      { tool_name: "lookup", description: "d" },
      { baseDir: ".", load: async () => undefined as never, id: "find" },
    );
    const result = await runWithHostBridge(bridge, async () => ({
      parts: await partsOf(new HostModel("m1").stream(request)),
      called: await tool.invoke({ word: "keel" }, { signal: new AbortController().signal } as ToolContext),
    }));
    expect(result.parts).toEqual([{ type: "text-delta", text: "from m1" }]);
    expect(result.called).toEqual({ name: "lookup", parameters: { word: "keel" } });
    expect(tool.name).toBe("find");
  });

  it("fail with a config error outside a host run", async () => {
    const [part] = await partsOf(new HostModel().stream(request));
    expect(part).toMatchObject({ type: "error", error: { code: "config.error" } });
    const tool = await hostToolPlugin.create(
      {},
      { baseDir: ".", load: async () => undefined as never, id: "lookup" },
    );
    await expect(
      tool.invoke({}, { signal: new AbortController().signal } as ToolContext),
    ).rejects.toMatchObject({
      code: "tool.permanent",
    });
  });
});
