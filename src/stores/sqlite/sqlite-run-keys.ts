/** Run keys a manager remembers: more than the runs one process keeps writing at once. */
const RUN_KEYS_KEPT = 256;

/**
 * The keys (`run_keys`) of the runs a manager wrote lately, so a commit need not look its run's key up again. A
 * run's key never changes once given and is never deleted, so a remembered one stays right; the caller
 * remembers one only after the transaction that read or made it has committed. Bounded, oldest forgotten first.
 */
export class SqliteRunKeys {
  private readonly keys = new Map<string, number>();

  get(runId: string): number | undefined {
    return this.keys.get(runId);
  }

  /** After a commit: remember the run's key, if it has one. */
  remember(runId: string, key: number | undefined): void {
    if (key === undefined || this.keys.has(runId)) return;
    this.keys.set(runId, key);
    if (this.keys.size > RUN_KEYS_KEPT) this.keys.delete(this.keys.keys().next().value as string);
  }

  clear(): void {
    this.keys.clear();
  }
}
