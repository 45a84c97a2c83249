import { useState } from "preact/hooks";
import type { Decision, SuspendedCall } from "../api.js";
import { JsonView } from "./json-view.js";

type Scope = "once" | "run" | "session";

const ALWAYS: Record<Scope, Decision["always"]> = { once: undefined, run: true, session: "session" };

/**
 * A call the run waits on, decided where it stands: approve or deny it (for this call, every call of the tool in
 * this run, or in the whole session), or answer it with a value in its place.
 */
export function ApprovalCard({
  call,
  onDecide,
}: {
  call: SuspendedCall;
  onDecide: (decision: Decision) => void;
}) {
  const [scope, setScope] = useState<Scope>("once");
  const [answering, setAnswering] = useState(false);
  const [value, setValue] = useState("");
  const [busy, setBusy] = useState(false);
  const decide = (action: Decision["action"], extra: Partial<Decision> = {}) => {
    setBusy(true);
    const always = action === "result" ? undefined : ALWAYS[scope];
    onDecide({ toolCallId: call.toolCallId, action, ...(always === undefined ? {} : { always }), ...extra });
  };
  const answer = () => {
    let parsed: unknown = value;
    try {
      parsed = JSON.parse(value);
    } catch {
      // Not JSON: the text itself is the answer.
    }
    decide("result", { value: parsed });
  };
  return (
    <section class="approval" data-testid="approval" data-tool-call-id={call.toolCallId}>
      <header>
        <span class="approval-icon" aria-hidden="true">
          !
        </span>
        <div>
          <div class="approval-title">
            <code>{call.toolId}</code> needs your decision
          </div>
          {call.reason && <div class="approval-reason">{call.reason}</div>}
        </div>
      </header>
      <JsonView label="Arguments" value={call.params} />
      {answering ? (
        <div class="approval-answer">
          <textarea
            rows={3}
            placeholder='The call&apos;s result, as JSON or text — e.g. {"approved": true}'
            value={value}
            onInput={(event) => setValue((event.target as HTMLTextAreaElement).value)}
          />
          <div class="approval-actions">
            <button type="button" class="button primary" disabled={busy} onClick={answer}>
              Send answer
            </button>
            <button type="button" class="button ghost" onClick={() => setAnswering(false)}>
              Back
            </button>
          </div>
        </div>
      ) : (
        <div class="approval-actions">
          <button type="button" class="button approve" disabled={busy} onClick={() => decide("approve")}>
            Approve
          </button>
          <button type="button" class="button deny" disabled={busy} onClick={() => decide("deny")}>
            Deny
          </button>
          <select
            class="scope"
            aria-label="Apply the decision to"
            value={scope}
            onChange={(event) => setScope((event.target as HTMLSelectElement).value as Scope)}
          >
            <option value="once">This call only</option>
            <option value="run">Always, in this run</option>
            <option value="session">Always, in this session</option>
          </select>
          <span class="spacer" />
          <button type="button" class="link" onClick={() => setAnswering(true)}>
            Answer with a value…
          </button>
        </div>
      )}
    </section>
  );
}
