import type { TerminationReason } from "../contracts/run-types.js";

/**
 * A run's cancellation: by the user (`cancel`), by a time limit, or by a budget. In-flight model and tool
 * calls register callbacks; an `AbortSignal` is made only when something asks for one.
 */
export class CancelScope {
  /** Why the run must stop; null while it may go on. */
  termination: TerminationReason | null = null;
  private single: ((reason: unknown) => void) | null = null;
  private callbacks: ((reason: unknown) => void)[] | null = null;
  private controller: AbortController | null = null;

  get cancelled(): boolean {
    return this.termination !== null;
  }

  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.termination !== null) this.controller.abort(this.termination);
    }
    return this.controller.signal;
  }

  /** Returns the unregister function. A callback registered after cancellation runs at once. */
  onCancel(callback: (reason: unknown) => void): () => void {
    if (this.termination !== null) {
      callback(this.termination);
      return noop;
    }
    // Most runs have one call waiting at a time: keep it in a slot, not an array that grows to 17 entries.
    if (this.single === null && this.callbacks === null) {
      this.single = callback;
      return () => {
        if (this.single === callback) this.single = null;
      };
    }
    if (this.callbacks === null) this.callbacks = [];
    const callbacks = this.callbacks;
    callbacks.push(callback);
    return () => {
      if (this.single === callback) {
        this.single = null;
        return;
      }
      const index = callbacks.indexOf(callback);
      if (index !== -1) callbacks.splice(index, 1);
    };
  }

  /** Stop the run with this termination; the first cancellation wins, later ones are harmless. */
  cancel(termination: TerminationReason): boolean {
    if (this.termination !== null) return false;
    this.termination = termination;
    this.controller?.abort(termination);
    const single = this.single;
    const callbacks = this.callbacks;
    this.single = null;
    this.callbacks = null;
    single?.(termination);
    if (callbacks) for (const callback of callbacks) callback(termination);
    return true;
  }
}

function noop(): void {}
