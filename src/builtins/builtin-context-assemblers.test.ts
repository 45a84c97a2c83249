import { afterEach, describe, expect, it, vi } from "vitest";
import { HeadTailContextAssembler } from "../context/head-tail-context-assembler.js";
import { PassthroughContextAssembler } from "../context/passthrough-context-assembler.js";
import { SlidingWindowContextAssembler } from "../context/sliding-window-context-assembler.js";
import { TruncatingContextAssembler } from "../context/truncating-context-assembler.js";
import { PluginConfigError } from "../errors/error-classes.js";
import { getLogger } from "../logging/logger.js";
import { getPlugin, listBuiltins } from "../plugins/plugin-registry.js";
import { registerContextAssemblerBuiltins } from "./builtin-context-assemblers.js";

registerContextAssemblerBuiltins();
registerContextAssemblerBuiltins();

const context = { baseDir: "/", load: async () => undefined as never };

async function create(type: string, config: Record<string, unknown> = {}) {
  const definition = getPlugin("context_assembler", type);
  if (!definition) throw new Error(`context_assembler ${type} is not registered`);
  return definition.create(config, context);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("registerContextAssemblerBuiltins", () => {
  it("registers the four builtin type keys", () => {
    expect(listBuiltins("context_assembler")).toEqual(
      expect.arrayContaining(["passthrough", "truncating", "sliding_window", "head_tail"]),
    );
  });

  it("builds passthrough", async () => {
    expect(await create("passthrough")).toBeInstanceOf(PassthroughContextAssembler);
  });

  it("maps truncating config", async () => {
    const assembler = (await create("truncating", {
      max_messages: 4,
      max_artifacts: 2,
      include_summary_message: false,
      max_tokens: 100,
    })) as TruncatingContextAssembler;
    expect(assembler).toBeInstanceOf(TruncatingContextAssembler);
    expect([
      assembler.maxMessages,
      assembler.maxArtifacts,
      assembler.includeSummaryMessage,
      assembler.maxTokens,
    ]).toEqual([4, 2, false, 100]);
    const defaults = (await create("truncating")) as TruncatingContextAssembler;
    expect([
      defaults.maxMessages,
      defaults.maxArtifacts,
      defaults.includeSummaryMessage,
      defaults.maxTokens,
    ]).toEqual([20, 10, true, null]);
  });

  it("maps sliding_window and head_tail config", async () => {
    const sliding = (await create("sliding_window", {
      max_input_tokens: 500,
      reserve_for_response: 100,
    })) as SlidingWindowContextAssembler;
    expect(sliding).toBeInstanceOf(SlidingWindowContextAssembler);
    expect(sliding.budget).toBe(400);
    const headTail = (await create("head_tail", {
      head_messages: 1,
      max_artifacts: 3,
    })) as HeadTailContextAssembler;
    expect(headTail).toBeInstanceOf(HeadTailContextAssembler);
    expect([headTail.headMessages, headTail.maxArtifacts, headTail.budget]).toEqual([1, 3, 6000]);
  });

  it("refuses a reserve that leaves no budget and a negative max_messages", async () => {
    await expect(
      create("sliding_window", { max_input_tokens: 100, reserve_for_response: 100 }),
    ).rejects.toThrow(PluginConfigError);
    await expect(create("head_tail", { reserve_for_response: 9000 })).rejects.toThrow(/reserve_for_response/);
    await expect(create("truncating", { max_messages: -1 })).rejects.toBeInstanceOf(PluginConfigError);
  });

  it("warns about unknown keys", async () => {
    const warn = vi.spyOn(getLogger(), "warn").mockImplementation(() => {});
    await create("passthrough", { max_messages: 3 });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toContain('unknown config key "max_messages"');
  });
});
