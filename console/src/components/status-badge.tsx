const LABELS: Record<string, string> = {
  running: "Running",
  connecting: "Connecting",
  waiting: "Needs decision",
  created: "Created",
  done: "Done",
  completed: "Completed",
  failed: "Failed",
  cancelled: "Cancelled",
  timeout: "Timed out",
  max_steps: "Step limit",
  budget_exhausted: "Over budget",
  suspended: "Needs decision",
  finished: "Finished",
};

/** A run's state as a coloured pill: its stop reason once it has one, else its status. */
export function StatusBadge({ status }: { status: string }) {
  return (
    <span class={`badge badge-${status}`} data-status={status}>
      <span class="badge-dot" />
      {LABELS[status] ?? status}
    </span>
  );
}
