import type { SuspendedToolCall } from "../../contracts/run-types.js";
import type { ToolDecision } from "../../loop/decisions.js";
import type { OutputStream } from "./validate.js";

/** Asks the user one question and resolves with the answer; rejects when there is no one to answer (EOF). */
export type Prompt = (question: string) => Promise<string>;

const APPROVE = new Set(["a", "approve", "y", "yes"]);
const DENY = new Set(["d", "deny", "n", "no"]);

/**
 * Ask about each pending call at the terminal — its tool, arguments and reason — approve or deny. Resolves with
 * one decision per call, or null when the prompt gave up (end of input, Ctrl-C): the calls stay undecided.
 */
export async function askDecisions(
  pending: readonly SuspendedToolCall[],
  prompt: Prompt,
  stdout: OutputStream,
): Promise<ToolDecision[] | null> {
  const decisions: ToolDecision[] = [];
  for (const call of pending) {
    stdout.write(`${describePendingCall(call)}\n`);
    for (;;) {
      let answer: string;
      try {
        answer = (await prompt(`Approve ${call.toolId} (${call.toolCallId})? [a]pprove / [d]eny: `))
          .trim()
          .toLowerCase();
      } catch {
        return null;
      }
      if (APPROVE.has(answer)) {
        decisions.push({ toolCallId: call.toolCallId, action: "approve" });
        break;
      }
      if (DENY.has(answer)) {
        decisions.push({ toolCallId: call.toolCallId, action: "deny", reason: "denied at the terminal" });
        break;
      }
      stdout.write("Answer a to approve the call or d to deny it.\n");
    }
  }
  return decisions;
}

/** `<toolCallId>  <tool> <arguments as JSON>  — <reason>`: one pending call on one line. */
export function describePendingCall(call: SuspendedToolCall): string {
  return `${call.toolCallId}  ${call.toolId} ${JSON.stringify(call.params)}${call.reason ? `  — ${call.reason}` : ""}`;
}
