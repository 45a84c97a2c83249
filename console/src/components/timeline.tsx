import { useEffect, useState } from "preact/hooks";
import { formatCost, formatDuration } from "../format.js";
import type { RunModel, Span } from "../run-model.js";
import { JsonView } from "./json-view.js";

const KIND_LABEL: Record<string, string> = {
  step: "Step",
  model: "Model",
  tool: "Tool",
  suspension: "Waiting",
  decision: "Decision",
  error: "Error",
  checkpoint: "Checkpoint",
};

/** While the run goes on, its bars grow with the clock. */
function useNow(live: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [live]);
  return live ? Math.max(now, Date.now()) : now;
}

/**
 * The run drawn as a waterfall: a row per step, model call, tool call, suspension, decision and error, each a bar
 * placed and sized by its time on a shared axis; open a row for its arguments, result, tokens or hint.
 */
export function Timeline({ model, selected }: { model: RunModel; selected?: string | undefined }) {
  const live = model.phase === "running" || model.phase === "connecting";
  const now = useNow(live || model.phase === "waiting");
  const [open, setOpen] = useState<string | null>(null);
  if (model.spans.length === 0)
    return <div class="empty">{live ? "Waiting for the run's first event…" : "No events yet."}</div>;
  const start = model.startMs ?? model.spans[0]!.start;
  const end = Math.max(model.endMs ?? now, ...model.spans.map((span) => span.end ?? now));
  const total = Math.max(end - start, 1);
  const position = (at: number) => `${((at - start) / total) * 100}%`;
  return (
    <div class="timeline" data-testid="timeline">
      <div class="tl-row tl-axis">
        <div class="tl-label">Event</div>
        <div class="tl-track">
          {model.checkpoints.map((checkpoint) => (
            <span
              key={checkpoint.checkpointId}
              class={`tl-checkpoint${checkpoint.checkpointId === selected ? " chosen" : ""}`}
              style={{ left: position(checkpoint.timestampMs) }}
              title={`Checkpoint after step ${checkpoint.step}`}
            />
          ))}
          {[0, 0.25, 0.5, 0.75, 1].map((fraction) => (
            <span
              class={`tl-tick${fraction === 0 ? " first" : fraction === 1 ? " last" : ""}`}
              style={{ left: `${fraction * 100}%` }}
              key={fraction}
            >
              {fraction === 0 ? "0" : formatDuration(total * fraction)}
            </span>
          ))}
        </div>
      </div>
      {model.spans.map((span) => (
        <TimelineRow
          key={span.key}
          span={span}
          now={now}
          left={(span.start - start) / total}
          width={((span.end ?? now) - span.start) / total}
          open={open === span.key}
          onToggle={() => setOpen(open === span.key ? null : span.key)}
        />
      ))}
    </div>
  );
}

interface RowProps {
  span: Span;
  now: number;
  /** Where the bar starts and how long it is, as fractions of the axis. */
  left: number;
  width: number;
  open: boolean;
  onToggle: () => void;
}

const percent = (fraction: number) => `${fraction * 100}%`;

function TimelineRow({ span, now, left, width, open, onToggle }: RowProps) {
  const duration = (span.end ?? now) - span.start;
  const cost = span.detail.costUsd as number | undefined;
  const meta = [
    span.instant ? undefined : formatDuration(duration),
    span.note,
    cost !== undefined && cost > 0 ? formatCost(cost) : undefined,
  ].filter((part) => part !== undefined && part !== "");
  // Late on the axis the facts end where the bar ends, so they stay inside the track.
  const late = left > 0.55;
  const metaStyle = late
    ? { right: percent(Math.max(0, 1 - left - width)), textAlign: "right" as const }
    : { left: percent(left) };
  return (
    <>
      <button
        type="button"
        class={`tl-row tl-${span.kind} tl-state-${span.state} depth-${span.depth}${open ? " tl-open" : ""}`}
        data-kind={span.kind}
        data-label={span.label}
        data-seq={span.sequence}
        onClick={onToggle}
      >
        <div class="tl-label">
          <span class={`tl-kind kind-${span.kind}`}>{KIND_LABEL[span.kind]}</span>
          <span class="tl-name">{span.label}</span>
        </div>
        <div class="tl-track">
          {span.instant ? (
            <span class="tl-mark" style={{ left: percent(left) }} />
          ) : (
            <span class="tl-bar" style={{ left: percent(left), width: percent(width) }} />
          )}
          <span class="tl-meta" style={metaStyle}>
            {meta.join(" · ")}
          </span>
        </div>
      </button>
      {open && <SpanDetail span={span} duration={duration} />}
    </>
  );
}

function SpanDetail({ span, duration }: { span: Span; duration: number }) {
  const {
    arguments: args,
    result,
    error,
    hint,
    message,
    code,
    tokens,
    // An error's run, session and step are the row's own; whether it may be retried is the runtime's business.
    retryable: _retryable,
    context: _context,
    ...rest
  } = span.detail as Record<string, unknown>;
  return (
    <div class={`tl-detail tl-detail-${span.kind}`}>
      <dl class="facts">
        {!span.instant && (
          <>
            <dt>Duration</dt>
            <dd>{formatDuration(duration)}</dd>
          </>
        )}
        {code !== undefined && code !== null && (
          <>
            <dt>Code</dt>
            <dd>
              <code>{String(code)}</code>
            </dd>
          </>
        )}
        {tokens !== undefined && (
          <>
            <dt>Tokens</dt>
            <dd>{summariseTokens(tokens as Record<string, number>)}</dd>
          </>
        )}
      </dl>
      {typeof message === "string" && <p class="detail-message">{message}</p>}
      {typeof hint === "string" && hint !== "" && (
        <p class="hint">
          <strong>Hint</strong> {hint}
        </p>
      )}
      {args !== undefined && <JsonView label="Arguments" value={args} />}
      {result !== undefined && <JsonView label="Result" value={result} />}
      {error !== undefined && error !== null && <JsonView label="Error" value={error} />}
      {Object.keys(rest).length > 0 && span.kind !== "model" && <JsonView label="Details" value={rest} />}
    </div>
  );
}

function summariseTokens(tokens: Record<string, number>): string {
  const parts = [`${tokens.inputTokens ?? 0} in`, `${tokens.outputTokens ?? 0} out`];
  if (tokens.inputTokensCached) parts.push(`${tokens.inputTokensCached} cached`);
  if (tokens.reasoningTokens) parts.push(`${tokens.reasoningTokens} reasoning`);
  return parts.join(" · ");
}
