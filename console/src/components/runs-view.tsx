import { useEffect, useState } from "preact/hooks";
import { type AgentSummary, type ApiError, getJson, type RunRecord } from "../api.js";
import { formatWhen } from "../format.js";
import { StatusBadge } from "./status-badge.js";

const STATUSES = ["", "running", "waiting", "done", "created"];

/** Every run of this token's tenant, newest first, filtered by agent, status and session; it refreshes itself. */
export function RunsView({ agents, navigate }: { agents: AgentSummary[]; navigate: (hash: string) => void }) {
  const [agentId, setAgentId] = useState("");
  const [status, setStatus] = useState("");
  const [session, setSession] = useState("");
  const [runs, setRuns] = useState<RunRecord[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const query = new URLSearchParams();
    if (agentId) query.set("agentId", agentId);
    if (status) query.set("status", status);
    if (session.trim()) query.set("sessionId", session.trim());
    const load = () =>
      getJson<{ runs: RunRecord[] }>(`runs?${query}`)
        .then((body) => {
          setRuns(body.runs);
          setError(null);
        })
        .catch((caught: ApiError) => setError(`${caught.message}. ${caught.hint}`));
    void load();
    const timer = setInterval(load, 3000);
    return () => clearInterval(timer);
  }, [agentId, status, session]);
  return (
    <div class="page">
      <header class="page-header">
        <div>
          <h1>Runs</h1>
          <div class="subtitle">Every run started through this server with your token, newest first.</div>
        </div>
      </header>
      <div class="filters">
        <label>
          Agent
          <select value={agentId} onChange={(event) => setAgentId((event.target as HTMLSelectElement).value)}>
            <option value="">All agents</option>
            {agents.map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={status} onChange={(event) => setStatus((event.target as HTMLSelectElement).value)}>
            {STATUSES.map((name) => (
              <option key={name} value={name}>
                {name === "" ? "Any status" : name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Session
          <input
            type="search"
            placeholder="Session id"
            value={session}
            onInput={(event) => setSession((event.target as HTMLInputElement).value)}
          />
        </label>
      </div>
      {error !== null && <div class="error-box">{error}</div>}
      {runs !== null && runs.length === 0 && <div class="empty">No runs match.</div>}
      {runs !== null && runs.length > 0 && (
        <table class="table runs-table" data-testid="runs">
          <thead>
            <tr>
              <th>Status</th>
              <th>Run</th>
              <th>Agent</th>
              <th>Message</th>
              <th>Session</th>
              <th>Started</th>
              <th class="num">Events</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((run) => (
              <tr
                key={run.runId}
                class="clickable"
                data-run-id={run.runId}
                onClick={() => navigate(`#/runs/${run.runId}`)}
              >
                <td>
                  <StatusBadge status={run.status === "done" ? (run.stopReason ?? "done") : run.status} />
                </td>
                <td>
                  <code>{run.runId.slice(0, 8)}</code>
                  {run.parentRunId && <span class="muted small"> ↳ {run.parentRunId.slice(0, 8)}</span>}
                </td>
                <td>{agents.find((agent) => agent.id === run.agentId)?.name ?? run.agentId}</td>
                <td class="run-message" title={run.inputText}>
                  {run.inputText ?? <span class="muted">—</span>}
                </td>
                <td>
                  <code class="muted">{run.sessionId.slice(0, 12)}</code>
                </td>
                <td class="muted">{formatWhen(run.createdAt)}</td>
                <td class="num">{run.lastSequence}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
