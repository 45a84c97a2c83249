import type { SuspendedToolCall } from "../../contracts/run-types.js";
import type { ToolDecision } from "../../loop/decisions.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { RunStreamChunk } from "../../runtime/stream-chunk.js";
import type { OutputStream } from "./validate.js";

/** Asks the user one question and resolves with the answer; rejects when there is no one to answer (EOF). */
export type Prompt = (question: string) => Promise<string>;

/** The decisions for one waiting run; aborting `signal` cancels the run once it resumes. */
export interface FollowedDecisions {
  runId: string;
  decisions: readonly ToolDecision[];
  signal?: AbortSignal | undefined;
}

/**
 * Apply decisions to a waiting run and yield the chunks of its resumption as they happen, `run.finished` last.
 * The run is attached before the decisions go in, so no event of the resumption is missed; a refused decision
 * (`DecisionError`) rejects and nothing was applied. Aborting `signal` cancels the resumed run.
 */
export async function* decideAndFollow(
  runtime: Runtime,
  { runId, decisions, signal }: FollowedDecisions,
): AsyncGenerator<RunStreamChunk> {
  const record = await runtime.getRun(runId);
  if (record?.status !== "waiting") {
    // Unknown, running or finished: the runtime refuses the decisions with its own message and hint.
    await runtime.decide({ runId, decisions });
    return;
  }
  const stored = await runtime.sessionManager.loadEvents(runId);
  const chunks = runtime.attach(runId, { afterSequence: stored.at(-1)?.sequence ?? 0 });
  // The attachment waits for the resumption; its first step must be under way before the decisions start it.
  let next = chunks.next();
  const decided = runtime.decide({ runId, decisions });
  // Only a refusal matters here: the chunks tell how the run goes on.
  const refused = decided.then(() => new Promise<never>(() => {}));
  refused.catch(() => {});
  const cancel = () => {
    // The chunks tell how the run ends; a store that refuses the cancellation leaves it as it was.
    runtime.cancel(runId, { reason: "signal aborted" }).catch(() => {});
  };
  signal?.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const item = await Promise.race([next, refused]);
      if (item.done) break;
      yield item.value;
      next = chunks.next();
    }
    await decided;
  } finally {
    signal?.removeEventListener("abort", cancel);
  }
}

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
