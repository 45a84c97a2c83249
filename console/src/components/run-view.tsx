import { useEffect, useState } from "preact/hooks";
import { type AgentSummary, type ApiError, getJson, postJson, type RunRecord } from "../api.js";
import { answerText } from "../run-model.js";
import { useRun } from "../use-run.js";
import { ApprovalCard } from "./approval-card.js";
import { RunSummary } from "./chat-view.js";
import { RunTabs } from "./run-tabs.js";

/** One run, finished or going on: its totals, the calls it waits on, its answer, and its tabs. */
export function RunView({
  runId,
  agents,
  navigate,
}: {
  runId: string;
  agents: AgentSummary[];
  navigate: (hash: string) => void;
}) {
  const handle = useRun(runId);
  const model = handle.model;
  const [record, setRecord] = useState<RunRecord | null>(null);
  useEffect(() => {
    getJson<RunRecord>(`runs/${runId}`)
      .then(setRecord)
      .catch(() => {});
  }, [runId]);
  if (handle.error !== null && (model === null || model.events.length === 0))
    return (
      <div class="page">
        <div class="error-box">
          {handle.error.message} {handle.error.hint && <div class="hint">{handle.error.hint}</div>}
        </div>
      </div>
    );
  if (model === null) return <div class="page empty">Loading…</div>;
  const running = model.phase === "running" || model.phase === "connecting";
  const cancel = () =>
    void postJson(`runs/${runId}/cancel`, {}).catch((caught: ApiError) => alert(caught.message));
  const text = answerText(model);
  return (
    <div class="page run-page">
      <header class="page-header">
        <div>
          <div class="crumbs">
            <a href="#/runs">Runs</a> / <code>{runId.slice(0, 8)}</code>
          </div>
          <h1>{agents.find((agent) => agent.id === model.agentId)?.name ?? model.agentId ?? "Run"}</h1>
          <div class="subtitle">
            run <code>{runId}</code>
            {model.sessionId && (
              <>
                {" "}
                · session <code>{model.sessionId}</code>
              </>
            )}
            {record?.parentRunId && (
              <>
                {" "}
                · branched from <a href={`#/runs/${record.parentRunId}`}>{record.parentRunId.slice(0, 8)}</a>
              </>
            )}
          </div>
        </div>
        {running && (
          <button type="button" class="button deny" onClick={cancel}>
            Cancel run
          </button>
        )}
      </header>
      <RunSummary model={model} connection={handle.connection} />
      {record?.inputText && (
        <section class="message-card" data-testid="run-input">
          <div class="answer-label">Message</div>
          <div class="message-text">{record.inputText}</div>
        </section>
      )}
      {model.pending.map((call) => (
        <ApprovalCard
          key={call.toolCallId}
          call={call}
          onDecide={(decision) => void handle.decide([decision])}
        />
      ))}
      {text !== "" && (
        <section class="answer-card">
          <div class="answer-label">Answer</div>
          <div class="answer-text">{text}</div>
        </section>
      )}
      <RunTabs
        key={runId}
        model={model}
        tabs={["timeline", "checkpoints", "policy", "events"]}
        onResumed={(next) => navigate(`#/runs/${next}`)}
      />
    </div>
  );
}
