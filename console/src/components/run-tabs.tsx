import { useEffect, useState } from "preact/hooks";
import { ApiError, type EffectivePolicy, getJson, postJson } from "../api.js";
import { formatDuration, formatWhen, shortId } from "../format.js";
import type { RunModel } from "../run-model.js";
import { Timeline } from "./timeline.js";

export type RunTab = "timeline" | "events" | "checkpoints" | "policy";

const TAB_NAMES: Record<RunTab, string> = {
  timeline: "Timeline",
  events: "Events",
  checkpoints: "Checkpoints",
  policy: "Policy",
};

/** A run's views side by side as tabs: its timeline, raw events, checkpoints and permission policy. */
export function RunTabs({
  model,
  tabs,
  onResumed,
}: {
  model: RunModel;
  tabs: readonly RunTab[];
  onResumed: (runId: string) => void;
}) {
  const [tab, setTab] = useState<RunTab>(tabs[0]!);
  const [checkpoint, setCheckpoint] = useState<string | undefined>();
  return (
    <div class="run-tabs">
      <div class="tabs" role="tablist">
        {tabs.map((name) => (
          <button
            type="button"
            role="tab"
            key={name}
            aria-selected={tab === name}
            class={tab === name ? "tab active" : "tab"}
            onClick={() => setTab(name)}
          >
            {TAB_NAMES[name]}
            {name === "events" && <span class="count">{model.events.length}</span>}
            {name === "checkpoints" && model.checkpoints.length > 0 && (
              <span class="count">{model.checkpoints.length}</span>
            )}
          </button>
        ))}
      </div>
      <div class="tab-body">
        {tab === "timeline" && <Timeline model={model} selected={checkpoint} />}
        {tab === "events" && <EventList model={model} />}
        {tab === "checkpoints" && (
          <Checkpoints model={model} selected={checkpoint} onSelect={setCheckpoint} onResumed={onResumed} />
        )}
        {tab === "policy" && <Policy runId={model.runId} />}
      </div>
    </div>
  );
}

function EventList({ model }: { model: RunModel }) {
  const start = model.startMs ?? model.events[0]?.timestampMs ?? 0;
  return (
    <ol class="events" data-testid="events">
      {model.events.map((chunk) => (
        <li key={chunk.sequence} data-seq={chunk.sequence}>
          <span class="seq">{chunk.sequence}</span>
          <span class="event-kind">{chunk.kind}</span>
          <span class="event-at">+{formatDuration(chunk.timestampMs - start)}</span>
          <code class="event-payload">{summary(chunk.payload)}</code>
        </li>
      ))}
    </ol>
  );
}

function summary(payload: Record<string, unknown>): string {
  const text = JSON.stringify(payload ?? {});
  return text.length > 140 ? `${text.slice(0, 140)}…` : text;
}

function Checkpoints({
  model,
  selected,
  onSelect,
  onResumed,
}: {
  model: RunModel;
  selected: string | undefined;
  onSelect: (id: string) => void;
  onResumed: (runId: string) => void;
}) {
  const [ids, setIds] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    getJson<{ checkpoints: string[] }>(`runs/${model.runId}/checkpoints`)
      .then((body) => setIds(body.checkpoints))
      .catch((caught: ApiError) => setError(caught.message));
  }, [model.runId, model.checkpoints.length]);
  if (error !== null) return <div class="error-box">{error}</div>;
  if (ids === null) return <div class="empty">Loading checkpoints…</div>;
  if (ids.length === 0)
    return (
      <div class="empty">
        No checkpoints. Durable runs checkpoint every step; other runs only when they suspend.
      </div>
    );
  const resume = async (checkpointId: string, branch: boolean) => {
    try {
      const { runId } = await postJson<{ runId: string }>(`runs/${model.runId}/resume`, {
        checkpointId,
        branch,
      });
      onResumed(runId);
    } catch (caught) {
      setError(caught instanceof ApiError ? `${caught.message}. ${caught.hint}` : String(caught));
    }
  };
  const live = model.phase === "running" || model.phase === "connecting";
  return (
    <div class="checkpoints" data-testid="checkpoints">
      {ids.map((id, index) => {
        const mark = model.checkpoints.find((candidate) => candidate.checkpointId === id);
        const latest = index === ids.length - 1;
        const open = selected === id;
        return (
          <div class={`checkpoint${open ? " open" : ""}`} key={id} data-checkpoint={id}>
            <button type="button" class="checkpoint-head" onClick={() => onSelect(id)}>
              <span class="checkpoint-step">Step {mark?.step ?? id.split(":").at(-1)}</span>
              <span class="checkpoint-phase">{mark?.phase ?? "checkpoint"}</span>
              {latest && <span class="pill">latest</span>}
              <span class="spacer" />
              <span class="muted">{mark ? formatWhen(mark.timestampMs) : ""}</span>
            </button>
            {open && (
              <div class="checkpoint-body">
                <dl class="facts">
                  <dt>Checkpoint</dt>
                  <dd>
                    <code>{id}</code>
                  </dd>
                  <dt>Messages</dt>
                  <dd>{mark?.transcriptLength ?? "–"}</dd>
                  <dt>After event</dt>
                  <dd>#{mark?.sequence ?? "–"}</dd>
                </dl>
                <div class="approval-actions">
                  {latest && (
                    <button
                      type="button"
                      class="button primary"
                      disabled={live}
                      onClick={() => void resume(id, false)}
                    >
                      Resume run
                    </button>
                  )}
                  <button type="button" class="button" onClick={() => void resume(id, true)}>
                    Branch a new run from here
                  </button>
                </div>
              </div>
            )}
          </div>
        );
      })}
      <p class="muted small">
        Run {shortId(model.runId)}: the latest checkpoint continues the run; any may branch.
      </p>
    </div>
  );
}

function Policy({ runId }: { runId: string }) {
  const [policy, setPolicy] = useState<EffectivePolicy | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    getJson<EffectivePolicy>(`runs/${runId}/policy`)
      .then(setPolicy)
      .catch((caught: ApiError) => setError(`${caught.message}. ${caught.hint}`));
  }, [runId]);
  if (error !== null) return <div class="error-box">{error}</div>;
  if (policy === null) return <div class="empty">Loading the policy…</div>;
  return (
    <div class="policy" data-testid="policy">
      <h3>Tools</h3>
      <table class="table">
        <thead>
          <tr>
            <th>Tool</th>
            <th>Decision</th>
            <th>Rule</th>
            <th>Source</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(policy.tools).map(([tool, verdict]) => (
            <tr key={tool}>
              <td>
                <code>{tool}</code>
              </td>
              <td>
                <span class={`effect effect-${verdict.effect}`}>{verdict.effect}</span>
              </td>
              <td>
                <code>{verdict.rule}</code>
              </td>
              <td>
                <span class={`source source-${verdict.source}`}>{verdict.source}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Rules</h3>
      <table class="table">
        <thead>
          <tr>
            <th>Rule</th>
            <th>Effect</th>
            <th>Source</th>
            <th>What it does</th>
          </tr>
        </thead>
        <tbody>
          {policy.rules.map((rule) => (
            <tr key={rule.rule}>
              <td>
                <code>{rule.rule}</code>
              </td>
              <td>
                <span class={`effect effect-${rule.effect}`}>{rule.effect}</span>
              </td>
              <td>
                <span class={`source source-${rule.source}`}>{rule.source}</span>
                <span class="muted small" title={policy.mergeRules[rule.mergeRule]}>
                  {" "}
                  rule {rule.mergeRule}
                </span>
              </td>
              <td>{rule.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted small">
        Capabilities enabled: {policy.enabled.length === 0 ? "none" : policy.enabled.join(", ")}
        {policy.skills.length > 0 ? ` · skills: ${policy.skills.join(", ")}` : ""}
      </p>
    </div>
  );
}
