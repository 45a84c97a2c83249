import { useEffect, useRef, useState } from "preact/hooks";
import { type AgentSummary, ApiError, postJson } from "../api.js";
import { formatCost, formatDuration, formatTokens } from "../format.js";
import { answerText, type RunModel } from "../run-model.js";
import { type RunHandle, useRun } from "../use-run.js";
import { ApprovalCard } from "./approval-card.js";
import { RunTabs } from "./run-tabs.js";
import { StatusBadge } from "./status-badge.js";

interface Turn {
  input: string;
  runId: string;
}

interface Conversation {
  sessionId: string;
  turns: Turn[];
}

const chatKey = (agentId: string) => `keel.console.chat:${agentId}`;

function loadConversation(agentId: string): Conversation {
  try {
    const saved = sessionStorage.getItem(chatKey(agentId));
    if (saved !== null) return JSON.parse(saved) as Conversation;
  } catch {
    // A damaged entry starts a new conversation.
  }
  return { sessionId: crypto.randomUUID(), turns: [] };
}

/**
 * Chat with an agent: each message is a run in the conversation's session; the answer streams in, the calls it
 * waits on are decided in place, and the latest run's timeline stands beside it.
 */
export function ChatView({ agent, navigate }: { agent: AgentSummary; navigate: (hash: string) => void }) {
  const [conversation, setConversation] = useState(() => loadConversation(agent.id));
  const [draft, setDraft] = useState("");
  const [durable, setDurable] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  useEffect(() => setConversation(loadConversation(agent.id)), [agent.id]);
  useEffect(
    () => sessionStorage.setItem(chatKey(agent.id), JSON.stringify(conversation)),
    [agent.id, conversation],
  );
  const latest = conversation.turns.at(-1);
  const live = useRun(latest?.runId ?? null);
  const busy = live.model !== null && (live.model.phase === "running" || live.model.phase === "connecting");
  const bottom = useRef<HTMLDivElement>(null);
  useEffect(() => bottom.current?.scrollIntoView({ block: "end" }));

  const send = async () => {
    const inputText = draft.trim();
    if (inputText === "" || busy) return;
    setError(null);
    try {
      const { runId } = await postJson<{ runId: string }>("runs", {
        agentId: agent.id,
        inputText,
        sessionId: conversation.sessionId,
        ...(durable ? { durable: true } : {}),
      });
      setDraft("");
      setConversation({ ...conversation, turns: [...conversation.turns, { input: inputText, runId }] });
    } catch (caught) {
      setError(caught instanceof ApiError ? caught : new ApiError(0, { message: String(caught) }));
    }
  };

  return (
    <div class="chat-layout">
      <section class="chat">
        <header class="page-header">
          <div>
            <h1>{agent.name}</h1>
            <div class="subtitle">
              <code>{agent.id}</code> · session <code>{conversation.sessionId.slice(0, 8)}</code>
            </div>
          </div>
          <button
            type="button"
            class="button ghost"
            onClick={() => setConversation({ sessionId: crypto.randomUUID(), turns: [] })}
          >
            New conversation
          </button>
        </header>
        <div class="messages" data-testid="messages">
          {conversation.turns.length === 0 && (
            <div class="welcome">
              <h2>Start a conversation</h2>
              <p>
                Messages run <strong>{agent.name}</strong> in one session. Its answer streams in here; its
                steps, model and tool calls draw on the timeline beside.
              </p>
            </div>
          )}
          {conversation.turns.map((turn, index) =>
            index === conversation.turns.length - 1 ? (
              <TurnView key={turn.runId} turn={turn} handle={live} navigate={navigate} />
            ) : (
              <PastTurn key={turn.runId} turn={turn} navigate={navigate} />
            ),
          )}
          <div ref={bottom} />
        </div>
        {error !== null && (
          <div class="error-box">
            {error.message} {error.hint && <span class="muted">— {error.hint}</span>}
          </div>
        )}
        <form
          class="composer"
          onSubmit={(event) => {
            event.preventDefault();
            void send();
          }}
        >
          <textarea
            rows={2}
            placeholder={`Message ${agent.name}…`}
            value={draft}
            onInput={(event) => setDraft((event.target as HTMLTextAreaElement).value)}
            onKeyDown={(event) => {
              if (event.key === "Enter" && !event.shiftKey) {
                event.preventDefault();
                void send();
              }
            }}
          />
          <div class="composer-bar">
            <label class="check">
              <input
                type="checkbox"
                checked={durable}
                onChange={(event) => setDurable((event.target as HTMLInputElement).checked)}
              />
              Durable (a checkpoint every step)
            </label>
            <span class="spacer" />
            <button type="submit" class="button primary" disabled={busy || draft.trim() === ""}>
              {busy ? "Running…" : "Send"}
            </button>
          </div>
        </form>
      </section>
      <aside class="inspector">
        {live.model === null ? (
          <div class="empty inspector-empty">The timeline of the latest run shows here.</div>
        ) : (
          <>
            <RunSummary model={live.model} connection={live.connection} navigate={navigate} />
            <RunTabs
              key={live.model.runId}
              model={live.model}
              tabs={["timeline", "events", "policy"]}
              onResumed={(runId) => navigate(`#/runs/${runId}`)}
            />
          </>
        )}
      </aside>
    </div>
  );
}

function PastTurn({ turn, navigate }: { turn: Turn; navigate: (hash: string) => void }) {
  return <TurnView turn={turn} handle={useRun(turn.runId)} navigate={navigate} />;
}

function TurnView({
  turn,
  handle,
  navigate,
}: {
  turn: Turn;
  handle: RunHandle;
  navigate: (hash: string) => void;
}) {
  const model = handle.model;
  const text = model === null ? "" : answerText(model);
  const tools = model?.spans.filter((span) => span.kind === "tool") ?? [];
  const working = model !== null && (model.phase === "running" || model.phase === "connecting");
  return (
    <div class="turn" data-run-id={turn.runId}>
      <div class="bubble user">{turn.input}</div>
      <div class="bubble assistant" data-testid="answer">
        {tools.length > 0 && (
          <div class="tool-chips">
            {tools.map((span) => (
              <span key={span.key} class={`chip chip-${span.state}`}>
                {span.label}
                {span.end !== null && <span class="muted"> {formatDuration(span.end - span.start)}</span>}
              </span>
            ))}
          </div>
        )}
        {text !== "" && <div class="answer-text">{text}</div>}
        {text === "" && working && <div class="typing">Thinking…</div>}
        {model?.result?.error && (
          <div class="error-box">
            {model.result.errorDetails?.message ?? model.result.error}
            {model.result.errorDetails?.hint && <div class="hint">{model.result.errorDetails.hint}</div>}
          </div>
        )}
        {model?.pending.map((call) => (
          <ApprovalCard
            key={call.toolCallId}
            call={call}
            onDecide={(decision) => void handle.decide([decision])}
          />
        ))}
        {handle.error !== null && <div class="error-box">{handle.error.message}</div>}
        <button type="button" class="link run-link" onClick={() => navigate(`#/runs/${turn.runId}`)}>
          Run {turn.runId.slice(0, 8)} →
        </button>
      </div>
    </div>
  );
}

/** The run's state and totals, above its timeline. */
export function RunSummary({
  model,
  connection,
  navigate,
}: {
  model: RunModel;
  connection: "live" | "reconnecting";
  navigate?: (hash: string) => void;
}) {
  const status = model.result?.stopReason ?? model.phase;
  const steps = model.spans.filter((span) => span.kind === "step").length;
  const tools = model.spans.filter((span) => span.kind === "tool").length;
  const duration = model.startMs === null ? null : (model.endMs ?? Date.now()) - model.startMs;
  return (
    <div class="summary" data-testid="run-summary" data-phase={model.phase}>
      <div class="summary-head">
        <StatusBadge status={status} />
        {connection === "reconnecting" && <span class="reconnecting">Reconnecting…</span>}
        <span class="spacer" />
        {navigate && (
          <button type="button" class="link" onClick={() => navigate(`#/runs/${model.runId}`)}>
            Open run
          </button>
        )}
      </div>
      <div class="stats">
        <Stat label="Duration" value={formatDuration(duration)} />
        <Stat label="Steps" value={String(steps)} />
        <Stat label="Tool calls" value={String(tools)} />
        <Stat label="Tokens" value={formatTokens(model.tokens)} />
        <Stat label="Cost" value={formatCost(model.costUsd)} />
      </div>
    </div>
  );
}

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div class="stat">
      <div class="stat-value">{value}</div>
      <div class="stat-label">{label}</div>
    </div>
  );
}
