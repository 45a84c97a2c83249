import type { Message } from "../../../contracts/message.js";

/**
 * The model turns a transcript already holds. The mock models number their answers by it rather than by a
 * counter of their own, so a run continued in another process picks up where the transcript says it is.
 */
export function assistantTurns(messages: readonly Message[]): number {
  let count = 0;
  for (const message of messages) if (message.role === "assistant") count++;
  return count;
}
