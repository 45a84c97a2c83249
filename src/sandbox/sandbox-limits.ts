/** Bounds on what one call may read, write or list. */
export interface SandboxLimits {
  /** Most bytes one read returns (`max_read_bytes`, default 1 MiB). */
  maxReadBytes: number;
  /** Most bytes one write may carry (`max_write_bytes`, default 1 MiB). */
  maxWriteBytes: number;
  /** Most entries one listing returns (`max_list_entries`, default 1000). */
  maxListEntries: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  maxReadBytes: 1024 * 1024,
  maxWriteBytes: 1024 * 1024,
  maxListEntries: 1000,
});
