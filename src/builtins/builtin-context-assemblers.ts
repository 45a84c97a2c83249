import { z } from "zod";
import {
  HeadTailContextAssembler,
  headTailContextAssemblerConfigSchema,
} from "../context/head-tail-context-assembler.js";
import { PassthroughContextAssembler } from "../context/passthrough-context-assembler.js";
import {
  SlidingWindowContextAssembler,
  slidingWindowContextAssemblerConfigSchema,
} from "../context/sliding-window-context-assembler.js";
import {
  TruncatingContextAssembler,
  truncatingContextAssemblerConfigSchema,
} from "../context/truncating-context-assembler.js";
import { parsePluginConfig } from "../plugins/plugin-config.js";
import { registerBuiltin } from "../plugins/plugin-registry.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";

const passthroughConfigSchema = builtOnFirstUse(() => z.object({}));

/**
 * Register the builtin context assemblers `passthrough`, `truncating`, `sliding_window` and `head_tail`; calling
 * it again is harmless.
 */
export function registerContextAssemblerBuiltins(): void {
  registerBuiltin({
    kind: "context_assembler",
    type: "passthrough",
    get configSchema() {
      return passthroughConfigSchema();
    },
    create(config) {
      parsePluginConfig(passthroughConfigSchema(), config, {
        kind: "context_assembler",
        type: "passthrough",
      });
      return new PassthroughContextAssembler();
    },
  });
  registerBuiltin({
    kind: "context_assembler",
    type: "truncating",
    get configSchema() {
      return truncatingContextAssemblerConfigSchema();
    },
    create(config) {
      const parsed = parsePluginConfig(truncatingContextAssemblerConfigSchema(), config, {
        kind: "context_assembler",
        type: "truncating",
      });
      return new TruncatingContextAssembler({
        maxMessages: parsed.max_messages,
        maxArtifacts: parsed.max_artifacts,
        includeSummaryMessage: parsed.include_summary_message,
        maxTokens: parsed.max_tokens,
      });
    },
  });
  registerBuiltin({
    kind: "context_assembler",
    type: "sliding_window",
    get configSchema() {
      return slidingWindowContextAssemblerConfigSchema();
    },
    create(config) {
      const parsed = parsePluginConfig(slidingWindowContextAssemblerConfigSchema(), config, {
        kind: "context_assembler",
        type: "sliding_window",
      });
      return new SlidingWindowContextAssembler({
        maxInputTokens: parsed.max_input_tokens,
        reserveForResponse: parsed.reserve_for_response,
        maxArtifacts: parsed.max_artifacts,
      });
    },
  });
  registerBuiltin({
    kind: "context_assembler",
    type: "head_tail",
    get configSchema() {
      return headTailContextAssemblerConfigSchema();
    },
    create(config) {
      const parsed = parsePluginConfig(headTailContextAssemblerConfigSchema(), config, {
        kind: "context_assembler",
        type: "head_tail",
      });
      return new HeadTailContextAssembler({
        maxInputTokens: parsed.max_input_tokens,
        reserveForResponse: parsed.reserve_for_response,
        maxArtifacts: parsed.max_artifacts,
        headMessages: parsed.head_messages,
      });
    },
  });
}
