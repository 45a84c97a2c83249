import { describeContextAssemblerConformance } from "../testing/context-assembler-conformance.js";
import { HeadTailContextAssembler } from "./head-tail-context-assembler.js";
import { PassthroughContextAssembler } from "./passthrough-context-assembler.js";
import { SlidingWindowContextAssembler } from "./sliding-window-context-assembler.js";
import { TruncatingContextAssembler } from "./truncating-context-assembler.js";

describeContextAssemblerConformance("passthrough", () => new PassthroughContextAssembler());
describeContextAssemblerConformance(
  "truncating",
  () => new TruncatingContextAssembler({ maxMessages: 10, maxArtifacts: 3 }),
  { bounds: { maxMessages: 10, maxArtifacts: 3 } },
);
describeContextAssemblerConformance(
  "truncating (tokens)",
  () => new TruncatingContextAssembler({ maxMessages: 50, maxTokens: 150, maxArtifacts: 0 }),
  { bounds: { maxMessages: 50, maxTokens: 150, maxArtifacts: 0 } },
);
describeContextAssemblerConformance(
  "sliding_window",
  () => new SlidingWindowContextAssembler({ maxInputTokens: 500, reserveForResponse: 100, maxArtifacts: 4 }),
  { bounds: { maxTokens: 400, maxArtifacts: 4 } },
);
describeContextAssemblerConformance(
  "head_tail",
  () => new HeadTailContextAssembler({ maxInputTokens: 500, reserveForResponse: 100, headMessages: 3 }),
  { bounds: { maxTokens: 400, maxArtifacts: 10 } },
);
