import type { Message } from "../contracts/message.js";
import type { RunSteering } from "../contracts/run-types.js";
import type { CancelScope } from "./cancel-scope.js";

/** What steering needs of the run's driver. */
export interface SteeredRun {
  readonly scope: CancelScope;
  checkpointBoundary(): void;
  appendMessage(message: Message): void;
}

/**
 * Messages that arrived while the run was going join its transcript as user messages before the model is called
 * again, so the call sees them and so does every later one (and the checkpoint that stores the transcript). A run
 * cancelled while it waited for them ends here rather than calling the model.
 */
export async function takeSteering(run: SteeredRun, steering: RunSteering): Promise<void> {
  const texts = await steering(run.scope.signal);
  run.checkpointBoundary();
  for (const text of texts) run.appendMessage({ role: "user", content: text });
}
