import { z } from "zod";
import type { Message } from "../contracts/message.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";
import type { ContextAssembler, ContextAssemblyInput, ContextAssemblyResult } from "./context-assembler.js";
import {
  dropOrphanToolMessages,
  messageTokens,
  newestArtifacts,
  newestWindow,
  omissionSummaryMessage,
  totalTokens,
} from "./transcript-window.js";

/** The config of the `truncating` context assembler. */
export const truncatingContextAssemblerConfigSchema = builtOnFirstUse(() =>
  z.object({
    max_messages: z.number().int().min(0).default(20),
    max_artifacts: z.number().int().min(0).default(10),
    include_summary_message: z.boolean().default(true),
    max_tokens: z.number().int().min(1).nullable().default(null),
  }),
);

/** Options of {@link TruncatingContextAssembler}. */
export interface TruncatingContextAssemblerOptions {
  /** Newest stored messages kept (default 20). */
  maxMessages?: number;
  /** Newest artifacts kept (default 10). */
  maxArtifacts?: number;
  /** Prepend a system message saying how many older messages were left out (default true). */
  includeSummaryMessage?: boolean;
  /** Also bound the kept messages by approximate tokens; null (default) for no token bound. */
  maxTokens?: number | null;
}

/**
 * Keeps the newest messages bounded by count (and optionally tokens) and the newest artifacts. A tool result
 * whose assistant call fell out of the window is dropped as well. The summary message is not counted against
 * `maxTokens`.
 */
export class TruncatingContextAssembler implements ContextAssembler {
  readonly maxMessages: number;
  readonly maxArtifacts: number;
  readonly includeSummaryMessage: boolean;
  readonly maxTokens: number | null;

  constructor(options: TruncatingContextAssemblerOptions = {}) {
    this.maxMessages = options.maxMessages ?? 20;
    this.maxArtifacts = options.maxArtifacts ?? 10;
    this.includeSummaryMessage = options.includeSummaryMessage ?? true;
    this.maxTokens = options.maxTokens ?? null;
  }

  async assemble(input: ContextAssemblyInput): Promise<ContextAssemblyResult> {
    const [messages, artifacts] = await Promise.all([
      input.sessionManager.loadMessages(input.sessionId),
      input.sessionManager.listArtifacts(input.sessionId),
    ]);
    const tokensOf = (message: Message) => messageTokens(message, input.countTokens);
    const { start } = newestWindow(messages, tokensOf, {
      maxMessages: this.maxMessages,
      maxTokens: this.maxTokens,
    });
    const kept = dropOrphanToolMessages(start === 0 ? messages : messages.slice(start));
    const omittedMessages = messages.length - kept.length;
    const keptTokens = totalTokens(kept, tokensOf);
    const transcript =
      omittedMessages > 0 && this.includeSummaryMessage
        ? [omissionSummaryMessage(omittedMessages), ...kept]
        : kept;
    const { sessionArtifacts, omittedArtifacts } = newestArtifacts(artifacts, this.maxArtifacts);
    return {
      transcript,
      sessionArtifacts,
      metadata: {
        assembler: "truncating",
        strategy: "truncate",
        omittedMessages,
        omittedArtifacts,
        keptTokens,
      },
    };
  }
}
