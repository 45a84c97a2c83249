import { z } from "zod";
import type { Message } from "../contracts/message.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";
import type { ContextAssembler, ContextAssemblyInput, ContextAssemblyResult } from "./context-assembler.js";
import {
  dropOrphanToolMessages,
  messageTokens,
  newestArtifacts,
  newestWindow,
  totalTokens,
} from "./transcript-window.js";

/** The token-budget keys `sliding_window` and `head_tail` share. */
export const tokenBudgetConfigShape = builtOnFirstUse(() => ({
  max_input_tokens: z.number().int().min(1).default(8000),
  reserve_for_response: z.number().int().min(0).default(2000),
  max_artifacts: z.number().int().min(0).default(10),
}));

/** Refuses a reserve that leaves no budget for the transcript at all. */
export function reserveBelowMaximum(config: {
  max_input_tokens: number;
  reserve_for_response: number;
}): boolean {
  return config.reserve_for_response < config.max_input_tokens;
}

/** The issue {@link reserveBelowMaximum} reports. */
export const reserveBelowMaximumIssue = {
  message: "must be less than max_input_tokens",
  path: ["reserve_for_response"],
};

/** The config of the `sliding_window` context assembler. */
export const slidingWindowContextAssemblerConfigSchema = builtOnFirstUse(() =>
  z.object(tokenBudgetConfigShape()).refine(reserveBelowMaximum, reserveBelowMaximumIssue),
);

/** Options of {@link SlidingWindowContextAssembler} (and the budget part of the head/tail one). */
export interface TokenBudgetOptions {
  /** The model's input window in approximate tokens (default 8000). */
  maxInputTokens?: number;
  /** Tokens left free for the response (default 2000); the transcript gets the rest. */
  reserveForResponse?: number;
  /** Newest artifacts kept (default 10). */
  maxArtifacts?: number;
}

/** Keeps the newest messages that fit `maxInputTokens − reserveForResponse` approximate tokens. */
export class SlidingWindowContextAssembler implements ContextAssembler {
  readonly maxInputTokens: number;
  readonly reserveForResponse: number;
  readonly maxArtifacts: number;

  constructor(options: TokenBudgetOptions = {}) {
    this.maxInputTokens = options.maxInputTokens ?? 8000;
    this.reserveForResponse = options.reserveForResponse ?? 2000;
    this.maxArtifacts = options.maxArtifacts ?? 10;
  }

  /** The tokens the kept transcript may use. */
  get budget(): number {
    return Math.max(0, this.maxInputTokens - this.reserveForResponse);
  }

  async assemble(input: ContextAssemblyInput): Promise<ContextAssemblyResult> {
    const [messages, artifacts] = await Promise.all([
      input.sessionManager.loadMessages(input.sessionId),
      input.sessionManager.listArtifacts(input.sessionId),
    ]);
    const tokensOf = (message: Message) => messageTokens(message, input.countTokens);
    const { start } = newestWindow(messages, tokensOf, { maxMessages: null, maxTokens: this.budget });
    const transcript = dropOrphanToolMessages(start === 0 ? messages : messages.slice(start));
    const keptTokens = totalTokens(transcript, tokensOf);
    const { sessionArtifacts, omittedArtifacts } = newestArtifacts(artifacts, this.maxArtifacts);
    return {
      transcript,
      sessionArtifacts,
      metadata: {
        assembler: "sliding_window",
        strategy: "sliding_window",
        budgetInputTokens: this.budget,
        keptTokens,
        omittedMessages: messages.length - transcript.length,
        omittedTokens: totalTokens(messages, tokensOf) - keptTokens,
        omittedArtifacts,
      },
    };
  }
}
