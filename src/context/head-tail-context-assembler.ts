import { z } from "zod";
import type { Message } from "../contracts/message.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";
import type { ContextAssembler, ContextAssemblyInput, ContextAssemblyResult } from "./context-assembler.js";
import {
  reserveBelowMaximum,
  reserveBelowMaximumIssue,
  SlidingWindowContextAssembler,
  type TokenBudgetOptions,
  tokenBudgetConfigShape,
} from "./sliding-window-context-assembler.js";
import {
  dropOrphanToolMessages,
  messageTokens,
  newestArtifacts,
  newestWindow,
  totalTokens,
} from "./transcript-window.js";

/** The config of the `head_tail` context assembler. */
export const headTailContextAssemblerConfigSchema = builtOnFirstUse(() =>
  z
    .object({ ...tokenBudgetConfigShape(), head_messages: z.number().int().min(0).default(3) })
    .refine(reserveBelowMaximum, reserveBelowMaximumIssue),
);

/** Options of {@link HeadTailContextAssembler}. */
export interface HeadTailContextAssemblerOptions extends TokenBudgetOptions {
  /** The first messages of the session always kept when they fit (default 3). */
  headMessages?: number;
}

/**
 * Keeps the session's first `headMessages` messages (where the task is usually stated) and then the newest
 * messages that fit the rest of the token budget. The head never ends between an assistant's tool calls and
 * their results: it grows to include them, or stops before the assistant message if they do not fit.
 */
export class HeadTailContextAssembler extends SlidingWindowContextAssembler implements ContextAssembler {
  readonly headMessages: number;

  constructor(options: HeadTailContextAssemblerOptions = {}) {
    super(options);
    this.headMessages = options.headMessages ?? 3;
  }

  override async assemble(input: ContextAssemblyInput): Promise<ContextAssemblyResult> {
    const [messages, artifacts] = await Promise.all([
      input.sessionManager.loadMessages(input.sessionId),
      input.sessionManager.listArtifacts(input.sessionId),
    ]);
    const tokensOf = (message: Message) => messageTokens(message, input.countTokens);
    const budget = this.budget;
    let headEnd = 0;
    let headTokens = 0;
    while (headEnd < messages.length && headEnd < this.headMessages) {
      // A message and the tool results that follow it go in or stay out together.
      let groupEnd = headEnd + 1;
      while (groupEnd < messages.length && messages[groupEnd]!.role === "tool") groupEnd++;
      const groupTokens = totalTokens(messages.slice(headEnd, groupEnd), tokensOf);
      if (headTokens + groupTokens > budget) break;
      headTokens += groupTokens;
      headEnd = groupEnd;
    }
    const tail = newestWindow(messages, tokensOf, {
      maxMessages: null,
      maxTokens: budget - headTokens,
      from: headEnd,
    });
    // Nothing dropped when the tail reaches back to the head.
    const kept =
      tail.start === headEnd ? messages : [...messages.slice(0, headEnd), ...messages.slice(tail.start)];
    const transcript = dropOrphanToolMessages(kept);
    const keptTokens = totalTokens(transcript, tokensOf);
    const { sessionArtifacts, omittedArtifacts } = newestArtifacts(artifacts, this.maxArtifacts);
    return {
      transcript,
      sessionArtifacts,
      metadata: {
        assembler: "head_tail",
        strategy: "head_tail",
        budgetInputTokens: budget,
        headMessages: headEnd,
        keptTokens,
        omittedMessages: messages.length - transcript.length,
        omittedTokens: totalTokens(messages, tokensOf) - keptTokens,
        omittedArtifacts,
      },
    };
  }
}
